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
// computed once per row) on a Context the Map owns (expr.Context.Owned).
// Those with a vector form are evaluated a chunk at a time (expr.Batch),
// the others per row, Filter first, then Exprs in order; after an error
// the chunk is evaluated again row by row only, so the error is the one
// a plain row-by-row evaluation meets first.
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
	// batch evaluates pred (expression 0) and exprs (1..) column at a
	// time where they have a vector form (expr.Batch); anyVec tells that
	// one of them has.
	batch  *expr.Batch
	anyVec bool
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
	m.batch = expr.NewBatch(all)
	for j := range all {
		m.anyVec = m.anyVec || m.batch.Vectorized(j)
	}
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
//
// Filter and the Exprs that have a vector form are evaluated column at a
// time (expr.Batch), the others row by row on the rows Filter keeps.
// After an error from either, the chunk is evaluated again row by row
// only, which raises the first error of a row-by-row evaluation (the
// batch reports that something failed, not what comes first).
func (m *Map) project(c *types.Chunk) error {
	ts := make([]types.Type, len(m.Exprs))
	for i, e := range m.Exprs {
		ts[i] = e.Type()
	}
	m.copyCol = m.copyCol[:0]
	cols := m.needEval
	for j, r := range m.refCol {
		copied := r >= 0 && c.Cols[r].Type == ts[j]
		m.copyCol = append(m.copyCol, copied)
		if r >= 0 && !copied {
			cols = m.need // a ColumnRef evaluated as an expression reads its column
		}
	}
	batched := m.anyVec
	if batched {
		if out, ok := m.projectBatch(c, ts, cols); ok {
			return m.emitProjected(c, out)
		}
	}
	out, err := m.projectRows(c, ts, cols, false)
	if err != nil {
		return err
	}
	if batched {
		m.batchFailed()
	}
	return m.emitProjected(c, out)
}

// batchFailed turns column-at-a-time evaluation off after a chunk it
// could not evaluate but row-by-row evaluation could: a node gave up on
// values it cannot hold exactly (expr.Batch), which the next chunks
// would very likely meet again, each evaluated twice.
func (m *Map) batchFailed() { m.anyVec = false }

// projectRows evaluates the Exprs that are not copied on the rows of c
// Filter keeps, row by row, into a new chunk of types ts (the rows in
// m.sel); cols are the input columns they read. With batched, Filter
// and the Exprs that m.batch vectorizes are left out (the caller
// evaluates them), and only the rows already in m.sel are evaluated.
func (m *Map) projectRows(c *types.Chunk, ts []types.Type, cols []int, batched bool) (*types.Chunk, error) {
	out := types.NewChunk(ts, c.Len())
	if batched {
		rowExprs := false
		for j := range m.exprs {
			rowExprs = rowExprs || !m.copyCol[j] && !m.batch.Vectorized(j+1)
		}
		if !rowExprs {
			return out, nil
		}
		for _, i := range m.sel {
			m.fillCols(c, i, cols)
			m.memo.NextRow()
			for j, e := range m.exprs {
				if m.copyCol[j] || m.batch.Vectorized(j+1) {
					continue
				}
				v, err := e.Eval(m.ectx, m.row)
				if err != nil {
					return nil, err
				}
				out.Cols[j].Append(v)
			}
		}
		return out, nil
	}
	m.sel = m.sel[:0]
	for i := range c.Len() {
		m.fillCols(c, i, cols)
		m.memo.NextRow()
		if m.pred != nil {
			v, err := m.pred.Eval(m.ectx, m.row)
			if err != nil {
				return nil, err
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
				return nil, err
			}
			out.Cols[j].Append(v)
		}
	}
	return out, nil
}

// projectBatch is project's evaluation with m.batch: ok is false after
// any error, and the chunk must be evaluated row by row.
func (m *Map) projectBatch(c *types.Chunk, ts []types.Type, cols []int) (*types.Chunk, bool) {
	if !m.batchSelect(c) {
		return nil, false
	}
	out, err := m.projectRows(c, ts, cols, true)
	if err != nil {
		return nil, false
	}
	for j := range m.exprs {
		if m.copyCol[j] || !m.batch.Vectorized(j+1) {
			continue
		}
		v, err := m.batch.Eval(j+1, m.sel)
		if err != nil {
			return nil, false
		}
		if !sameRepr(v.Type, ts[j]) {
			return nil, false // the row path appends (or fails) as it does
		}
		out.Cols[j] = selectVector(v, m.sel)
		out.Cols[j].Type = ts[j]
	}
	return out, true
}

// batchSelect starts m.batch on c and sets m.sel to the rows Filter
// keeps, with the vector form of Filter or row by row; ok is false after
// an error.
func (m *Map) batchSelect(c *types.Chunk) bool {
	m.batch.Start(m.ectx, c)
	m.sel = m.sel[:0]
	switch {
	case m.pred == nil:
		m.sel = append(m.sel, m.batch.All()...)
	case m.batch.Vectorized(0):
		sel, err := m.batch.Select(0, m.batch.All(), m.sel)
		if err != nil {
			return false
		}
		m.sel = sel
	default:
		for i := range c.Len() {
			m.fill(c, i)
			m.memo.NextRow()
			v, err := m.pred.Eval(m.ectx, m.row)
			if err != nil {
				return false
			}
			if !v.IsNull() && v.Bool() {
				m.sel = append(m.sel, i)
			}
		}
	}
	return true
}

// sameRepr reports whether a vector of type a holds its values as one of
// type b does (the same kind, or two string kinds), so that its slices
// can become b's: where types.Vector.Append would take a's values into
// b unchanged.
func sameRepr(a, b types.Type) bool {
	str := func(k types.Kind) bool {
		return k == types.KindChar || k == types.KindVarchar || k == types.KindText
	}
	return a.Kind == b.Kind || str(a.Kind) && str(b.Kind)
}

// emitProjected completes out, the computed columns of the rows m.sel
// of c, with their row kinds and the copied columns, and emits it.
func (m *Map) emitProjected(c *types.Chunk, out *types.Chunk) error {
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

// selectRows sets m.sel to the rows of c that Filter keeps: with its
// vector form when it has one, and row by row without one or after an
// error of the vector form (which then raises the error row by row).
func (m *Map) selectRows(c *types.Chunk) error {
	if m.pred == nil || !m.anyVec || !m.batch.Vectorized(0) {
		return m.selectRowsByRow(c)
	}
	if m.batchSelect(c) {
		return nil
	}
	if err := m.selectRowsByRow(c); err != nil {
		return err
	}
	m.batchFailed()
	return nil
}

// selectRowsByRow is selectRows evaluating Filter row by row.
func (m *Map) selectRowsByRow(c *types.Chunk) error {
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
