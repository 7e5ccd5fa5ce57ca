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
	var out *types.Chunk
	if m.Exprs == nil {
		out = types.NewChunk(c.Types(), c.Len())
	} else {
		ts := make([]types.Type, len(m.Exprs))
		for i, e := range m.Exprs {
			ts[i] = e.Type()
		}
		out = types.NewChunk(ts, c.Len())
	}
	projected := make(types.Row, len(m.Exprs))
	for i := range c.Len() {
		m.row = c.AppendRowTo(m.row[:0], i)
		if m.Filter != nil {
			v, err := m.Filter.Eval(m.Eval, m.row)
			if err != nil {
				return err
			}
			if v.IsNull() || !v.Bool() {
				continue
			}
		}
		if m.Exprs == nil {
			out.Append(c.Kinds[i], m.row)
			continue
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
	if m.Exprs != nil {
		out = cancelNoise(out)
	}
	if out.Len() == 0 {
		return nil
	}
	return m.ctx.Output.Emit(out)
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
