package stream

import (
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
)

// Map filters and projects each row of its one input, keeping row kinds.
//
// A projection cancels noise (operator invariant quiet-projection): when
// a chunk retracts and adds the same projected row (exactly, by
// types.AppendRow), as a join's -D/+I or an aggregate's -U/+U does when
// only a dropped column changed, both are dropped, so that an unchanged
// output emits nothing (DESIGN.md: no -U x, +U x noise). Upstream
// operators emit an epoch's net changes as one chunk, so cancelling
// within a chunk keeps every epoch's net changes; the rows that remain
// keep their order. An adjacent -U x, +U x pair is cancelled first; then
// for each row value the first retractions are paired with the first
// additions. A -U whose +U was cancelled becomes a -D, a +U whose -U was
// cancelled a +I, so that every -U is still followed by its +U.
//
// Only the input columns that Filter and Exprs read are taken out of a
// chunk for each row (Nexmark's bid carries two long strings that most
// projections drop); a Map that only filters, or whose expressions are
// all input columns of their own types, copies the kept rows column by
// column, without evaluating anything per row but the filter. In a Map
// that also computes, each output that is an input column of its own
// type is copied the same way after the row loop, which fills and
// evaluates only the rest. Filter and Exprs are evaluated in the forms
// expr.Specialize and expr.Memoize give (repeated sub-expressions
// computed once per row) on a Context the Map owns (expr.Context.Owned);
// per row, Filter first, then Exprs in order, so the first error is the
// one a plain row-by-row evaluation meets first.
type Map struct {
	operator.Base
	// Filter keeps the rows for which it is TRUE; nil keeps all.
	Filter expr.Expr
	// Exprs compute the output columns; nil passes rows through.
	Exprs []expr.Expr
	// Eval is the evaluation context (session time zone of the view).
	Eval *expr.Context

	ctx *operator.Context
	row types.Row
	// need are the input columns Filter and Exprs read (ColumnRef is the
	// only expression that reads the row), found on the first chunk.
	need    []int
	planned bool
	sel     []int
	// pred and exprs are Filter and Exprs as evaluated, made by plan:
	// their expr.Specialize forms, with the sub-expressions they repeat
	// shared (expr.Memoize).
	pred  expr.Expr
	exprs []expr.Expr
	// refs are the input columns of Exprs when every one is a ColumnRef
	// of its column's type (nil otherwise): the output copies them.
	refs []int
	// refCol[j] is the input column of Exprs[j] when it is a ColumnRef,
	// else -1; needEval are the input columns Filter and the other Exprs
	// read. A ColumnRef output of its column's type is copied column by
	// column after the row loop, which then fills and evaluates only the
	// rest.
	refCol   []int
	needEval []int
	// ectx is Eval owned by this operator (expr.Context.Owned), so that
	// calls take their arguments from its stack.
	ectx *expr.Context
	// memo is the row counter of the sub-expressions pred and exprs share
	// (expr.Memoize); NextRow before each row.
	memo expr.Memo
	// copyCol[j] tells, for the current chunk, that output j is copied.
	copyCol []bool
}

// plan finds the columns m reads out of a chunk of width columns.
func (m *Map) plan(width int) {
	m.planned = true
	seen := make([]bool, width)
	mark := func(e expr.Expr) {
		expr.Walk(e, func(x expr.Expr) bool {
			if c, ok := x.(*expr.ColumnRef); ok && c.Index < width {
				seen[c.Index] = true
			}
			return true
		})
	}
	if m.Filter != nil {
		mark(m.Filter)
	}
	for _, e := range m.Exprs {
		mark(e)
	}
	for i, s := range seen {
		if s {
			m.need = append(m.need, i)
		}
	}
	evalSeen := make([]bool, width)
	markEval := func(e expr.Expr) {
		expr.Walk(e, func(x expr.Expr) bool {
			if c, ok := x.(*expr.ColumnRef); ok && c.Index < width {
				evalSeen[c.Index] = true
			}
			return true
		})
	}
	if m.Filter != nil {
		markEval(m.Filter)
	}
	for _, e := range m.Exprs {
		if c, ok := e.(*expr.ColumnRef); ok && c.Index < width {
			m.refCol = append(m.refCol, c.Index)
			continue
		}
		m.refCol = append(m.refCol, -1)
		markEval(e)
	}
	for i, s := range evalSeen {
		if s {
			m.needEval = append(m.needEval, i)
		}
	}
	// Specialized forms first (they replace whole shapes), then one shared
	// node for each sub-expression that Filter and Exprs repeat.
	all := []expr.Expr{nil}
	if m.Filter != nil {
		all[0] = expr.Specialize(m.Filter)
	}
	for _, e := range m.Exprs {
		all = append(all, expr.Specialize(e))
	}
	all = expr.Memoize(all, &m.memo)
	m.pred, m.exprs = all[0], all[1:]
	for _, e := range m.Exprs {
		c, ok := e.(*expr.ColumnRef)
		if !ok || c.Index >= width {
			m.refs = nil
			return
		}
		m.refs = append(m.refs, c.Index)
	}
}

// fill sets the needed columns of m.row to row i of c.
func (m *Map) fill(c *types.Chunk, i int) { m.fillCols(c, i, m.need) }

// fillCols sets columns cols of m.row to row i of c.
func (m *Map) fillCols(c *types.Chunk, i int, cols []int) {
	for _, j := range cols {
		m.row[j] = c.Cols[j].Get(i)
	}
}

// Open implements operator.Operator.
func (m *Map) Open(ctx *operator.Context) error {
	m.ctx = ctx
	if m.Eval == nil {
		m.Eval = &expr.Context{}
	}
	m.ectx = m.Eval.Owned()
	return nil
}

// Process implements operator.Operator.
func (m *Map) Process(_ int, c *types.Chunk) error {
	if !m.planned {
		m.plan(c.Width())
	}
	if len(m.row) != c.Width() {
		m.row = make(types.Row, c.Width())
	}
	if m.Exprs == nil {
		return m.filter(c)
	}
	if m.refs != nil && m.sameTypes(c) {
		return m.copyColumns(c)
	}
	return m.project(c)
}

// project emits, for each row of c that Filter keeps, the values of
// Exprs. Per row it evaluates Filter, then the Exprs in order (so the
// first error is the one a row-by-row projection meets first), but a
// ColumnRef of its column's type is not evaluated: its column is copied
// for the kept rows after the loop.
func (m *Map) project(c *types.Chunk) error {
	ts := make([]types.Type, len(m.Exprs))
	for i, e := range m.Exprs {
		ts[i] = e.Type()
	}
	out := types.NewChunk(ts, c.Len())
	m.copyCol = m.copyCol[:0]
	cols := m.needEval
	for j, r := range m.refCol {
		copied := r >= 0 && c.Cols[r].Type == ts[j]
		m.copyCol = append(m.copyCol, copied)
		if r >= 0 && !copied {
			cols = m.need // a ColumnRef evaluated as an expression reads its column
		}
	}
	m.sel = m.sel[:0]
	for i := range c.Len() {
		m.fillCols(c, i, cols)
		m.memo.NextRow()
		if m.pred != nil {
			v, err := m.pred.Eval(m.ectx, m.row)
			if err != nil {
				return err
			}
			if v.IsNull() || !v.Bool() {
				continue
			}
		}
		m.sel = append(m.sel, i)
		for j, e := range m.exprs {
			if m.copyCol[j] {
				continue
			}
			v, err := e.Eval(m.ectx, m.row)
			if err != nil {
				return err
			}
			out.Cols[j].Append(v)
		}
	}
	all := len(m.sel) == c.Len()
	for _, i := range m.sel {
		out.Kinds = append(out.Kinds, c.Kinds[i])
	}
	for j, copied := range m.copyCol {
		if !copied {
			continue
		}
		col := &c.Cols[m.refCol[j]]
		if all {
			out.Cols[j] = shareVector(col)
			continue
		}
		out.Cols[j] = selectVector(col, m.sel)
	}
	out = cancelNoise(out)
	if out.Len() == 0 {
		return nil
	}
	return m.ctx.Output.Emit(out)
}

// sameTypes reports whether each column Exprs copy has the type its
// ColumnRef gives (a copy keeps the column's type).
func (m *Map) sameTypes(c *types.Chunk) bool {
	for j, r := range m.refs {
		if c.Cols[r].Type != m.Exprs[j].Type() {
			return false
		}
	}
	return true
}

// copyColumns emits the rows of c that Filter keeps, with the columns
// refs names.
func (m *Map) copyColumns(c *types.Chunk) error {
	if err := m.selectRows(c); err != nil {
		return err
	}
	if len(m.sel) == 0 {
		return nil
	}
	ts := make([]types.Type, len(m.refs))
	for j, r := range m.refs {
		ts[j] = c.Cols[r].Type
	}
	out := types.NewChunk(ts, len(m.sel))
	for _, i := range m.sel {
		out.Kinds = append(out.Kinds, c.Kinds[i])
	}
	all := len(m.sel) == c.Len()
	for j, r := range m.refs {
		col := &c.Cols[r]
		if all {
			out.Cols[j] = shareVector(col)
			continue
		}
		out.Cols[j] = selectVector(col, m.sel)
	}
	out = cancelNoise(out)
	if out.Len() == 0 {
		return nil
	}
	return m.ctx.Output.Emit(out)
}

// shareVector returns v with its slices shared, not copied: input chunks
// are immutable and Map does not borrow them (operator doc,
// invariant chunk-immutable), so the output may hold the same values.
// Each slice is capped at its length, so that an append to either vector
// can never write into the other's array.
func shareVector(v *types.Vector) types.Vector {
	return types.Vector{Type: v.Type, Nulls: capped(v.Nulls), Ints: capped(v.Ints), Aux: capped(v.Aux),
		Floats: capped(v.Floats), Decimals: capped(v.Decimals), Strs: capped(v.Strs)}
}

// capped returns s with its capacity cut to its length.
func capped[T any](s []T) []T { return s[:len(s):len(s)] }

// filter emits the rows of c that Filter keeps (all of them without one).
func (m *Map) filter(c *types.Chunk) error {
	if err := m.selectRows(c); err != nil {
		return err
	}
	if len(m.sel) == 0 {
		return nil
	}
	return m.ctx.Output.Emit(selectRows(c, m.sel))
}

// selectRows returns c.Select(sel), copying each column's slices by
// index instead of going through a Datum per value: a chunk's vector
// fills only the slices of its type's representation, one slot per row,
// and a NULL row's slot holds the zero value, which the copy keeps so
// (types.Vector).
func selectRows(c *types.Chunk, sel []int) *types.Chunk {
	out := &types.Chunk{Kinds: make([]types.RowKind, len(sel)), Cols: make([]types.Vector, len(c.Cols))}
	for j, i := range sel {
		out.Kinds[j] = c.Kinds[i]
	}
	for k := range c.Cols {
		out.Cols[k] = selectVector(&c.Cols[k], sel)
	}
	return out
}

// selectVector returns the rows sel of v.
func selectVector(v *types.Vector, sel []int) types.Vector {
	out := types.Vector{Type: v.Type, Nulls: make([]bool, len(sel))}
	for j, i := range sel {
		out.Nulls[j] = v.Nulls[i]
	}
	out.Ints = gather(v.Ints, sel, out.Nulls)
	out.Aux = gather(v.Aux, sel, out.Nulls)
	out.Floats = gather(v.Floats, sel, out.Nulls)
	out.Decimals = gather(v.Decimals, sel, out.Nulls)
	out.Strs = gather(v.Strs, sel, out.Nulls)
	return out
}

// gather returns src's values at sel (nil for an unused, empty src), the
// zero value where nulls is set.
func gather[T any](src []T, sel []int, nulls []bool) []T {
	if len(src) == 0 {
		return nil
	}
	dst := make([]T, len(sel))
	for j, i := range sel {
		if !nulls[j] {
			dst[j] = src[i]
		}
	}
	return dst
}

// selectRows sets m.sel to the rows of c that Filter keeps.
func (m *Map) selectRows(c *types.Chunk) error {
	m.sel = m.sel[:0]
	for i := range c.Len() {
		if m.pred != nil {
			m.fill(c, i)
			m.memo.NextRow()
			v, err := m.pred.Eval(m.ectx, m.row)
			if err != nil {
				return err
			}
			if v.IsNull() || !v.Bool() {
				continue
			}
		}
		m.sel = append(m.sel, i)
	}
	return nil
}

// cancelNoise drops the retractions and additions of c that cancel out
// (see Map); it returns c itself when there are none.
func cancelNoise(c *types.Chunk) *types.Chunk {
	n := c.Len()
	retracts, adds := false, false
	for _, k := range c.Kinds {
		if k.IsRetract() {
			retracts = true
		} else {
			adds = true
		}
	}
	if !retracts || !adds {
		return c
	}
	ts := c.Types()
	keys := make([]string, n)
	var buf []byte
	var row types.Row
	for i := range n {
		row = c.AppendRowTo(row[:0], i)
		buf = types.AppendRow(buf[:0], row, ts)
		keys[i] = string(buf)
	}
	drop := make([]bool, n)
	dropped := 0
	for i := 0; i+1 < n; i++ {
		if c.Kinds[i] == types.UpdateBefore && c.Kinds[i+1] == types.UpdateAfter && keys[i] == keys[i+1] {
			drop[i], drop[i+1] = true, true
			dropped += 2
			i++
		}
	}
	type changes struct{ retracts, adds []int }
	byRow := map[string]*changes{}
	var order []string
	for i := range n {
		if drop[i] {
			continue
		}
		ch := byRow[keys[i]]
		if ch == nil {
			ch = &changes{}
			byRow[keys[i]] = ch
			order = append(order, keys[i])
		}
		if c.Kinds[i].IsRetract() {
			ch.retracts = append(ch.retracts, i)
		} else {
			ch.adds = append(ch.adds, i)
		}
	}
	for _, k := range order {
		ch := byRow[k]
		for j := range min(len(ch.retracts), len(ch.adds)) {
			drop[ch.retracts[j]], drop[ch.adds[j]] = true, true
			dropped += 2
		}
	}
	if dropped == 0 {
		return c
	}
	keep := make([]int, 0, n-dropped)
	for i := range n {
		if drop[i] {
			continue
		}
		if c.Kinds[i] == types.UpdateBefore && (i+1 == n || c.Kinds[i+1] != types.UpdateAfter || drop[i+1]) {
			c.Kinds[i] = types.Delete
		}
		if c.Kinds[i] == types.UpdateAfter && (i == 0 || c.Kinds[i-1] != types.UpdateBefore || drop[i-1]) {
			c.Kinds[i] = types.Insert
		}
		keep = append(keep, i)
	}
	return c.Select(keep)
}
