package stream

import (
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
)

// Map filters and projects each row of its one input, keeping row kinds.
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
	if out.Len() == 0 {
		return nil
	}
	return m.ctx.Output.Emit(out)
}
