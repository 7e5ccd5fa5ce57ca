package stream

import (
	"slices"

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
// column, without evaluating anything per row but the filter.
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
	// refs are the input columns of Exprs when every one is a ColumnRef
	// of its column's type (nil otherwise): the output copies them.
	refs []int
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
func (m *Map) fill(c *types.Chunk, i int) {
	for _, j := range m.need {
		m.row[j] = c.Cols[j].Get(i)
	}
}

// Open implements operator.Operator.
func (m *Map) Open(ctx *operator.Context) error {
	m.ctx = ctx
	if m.Eval == nil {
		m.Eval = &expr.Context{}
	}
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
	ts := make([]types.Type, len(m.Exprs))
	for i, e := range m.Exprs {
		ts[i] = e.Type()
	}
	out := types.NewChunk(ts, c.Len())
	projected := make(types.Row, len(m.Exprs))
	for i := range c.Len() {
		m.fill(c, i)
		if m.Filter != nil {
			v, err := m.Filter.Eval(m.Eval, m.row)
			if err != nil {
				return err
			}
			if v.IsNull() || !v.Bool() {
				continue
			}
		}
		for j, e := range m.Exprs {
			v, err := e.Eval(m.Eval, m.row)
			if err != nil {
				return err
			}
			projected[j] = v
		}
		out.Append(c.Kinds[i], projected)
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
			out.Cols[j] = cloneVector(col)
			continue
		}
		for _, i := range m.sel {
			out.Cols[j].Append(col.Get(i))
		}
	}
	out = cancelNoise(out)
	if out.Len() == 0 {
		return nil
	}
	return m.ctx.Output.Emit(out)
}

// cloneVector copies v's values (a NUMERIC's decimals are shared, as
// Vector.Get and Append share them).
func cloneVector(v *types.Vector) types.Vector {
	return types.Vector{Type: v.Type, Nulls: slices.Clone(v.Nulls), Ints: slices.Clone(v.Ints), Aux: slices.Clone(v.Aux),
		Floats: slices.Clone(v.Floats), Decimals: slices.Clone(v.Decimals), Strs: slices.Clone(v.Strs)}
}

// filter emits the rows of c that Filter keeps (all of them without one).
func (m *Map) filter(c *types.Chunk) error {
	if err := m.selectRows(c); err != nil {
		return err
	}
	if len(m.sel) == 0 {
		return nil
	}
	return m.ctx.Output.Emit(c.Select(m.sel))
}

// selectRows sets m.sel to the rows of c that Filter keeps.
func (m *Map) selectRows(c *types.Chunk) error {
	m.sel = m.sel[:0]
	for i := range c.Len() {
		if m.Filter != nil {
			m.fill(c, i)
			v, err := m.Filter.Eval(m.Eval, m.row)
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
