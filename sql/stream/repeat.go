package stream

import (
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/types"
)

// Repeat emits each input row as many times as its last column (BIGINT)
// says, without that column, keeping its row kind: a change of a row's
// count from 3 to 4 (-U x 3, +U x 4) becomes -U x three times and +U x
// four times, of which all but one +I cancel within the chunk as in Map
// (invariant quiet-projection). A NULL or a count below one emits
// nothing. It is stateless and keeps its input's parallelism.
type Repeat struct {
	operator.Base
	// Types are the output column types (the input's without the last).
	Types []types.Type

	ctx *operator.Context
	row types.Row
}

// Open implements operator.Operator.
func (r *Repeat) Open(ctx *operator.Context) error {
	r.ctx = ctx
	return nil
}

// Process implements operator.Operator.
func (r *Repeat) Process(_ int, c *types.Chunk) error {
	w := len(r.Types)
	out := types.NewChunk(r.Types, c.Len())
	for i := range c.Len() {
		n := c.Datum(w, i)
		if n.IsNull() || n.Int64() < 1 {
			continue
		}
		r.row = c.AppendRowTo(r.row[:0], i)
		for range n.Int64() {
			out.Append(c.Kinds[i], r.row[:w])
		}
	}
	out = cancelNoise(out)
	if out.Len() == 0 {
		return nil
	}
	return r.ctx.Output.Emit(out)
}
