package testkit

import (
	"encoding/binary"
	"fmt"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// RecorderSchema is EpochRecorder's output: (input, epoch, min input
// epoch, max input epoch, rows), all BIGINT.
var RecorderSchema = []types.Type{types.Int64, types.Int64, types.Int64, types.Int64, types.Int64}

// EpochRecorder is a multi-input operator over EpochSchema rows that
// records the epoch of every input row it sees. When epoch E closes it
// emits, per input, (input, E, min epoch seen, max epoch seen, rows seen)
// for the rows processed since epoch E-1 closed. With correct epoch
// alignment min = max = E. It keeps what it saw in operator state so that
// a restore does not lose the open epoch's record.
type EpochRecorder struct {
	operator.Base
	ctx    *operator.Context
	inputs int
	seen   []inputRecord
}

type inputRecord struct{ min, max, rows int64 }

// NewEpochRecorder returns the operator for a vertex with inputs inputs.
func NewEpochRecorder(inputs int) *EpochRecorder {
	r := &EpochRecorder{inputs: inputs}
	r.reset()
	return r
}

func (r *EpochRecorder) reset() {
	r.seen = make([]inputRecord, r.inputs)
	for i := range r.seen {
		r.seen[i] = inputRecord{min: 1 << 62, max: -1}
	}
}

const recorderState = "epoch-recorder"

// Open implements operator.Operator.
func (r *EpochRecorder) Open(ctx *operator.Context) error {
	r.ctx = ctx
	b, ok, err := ctx.State.OperatorValue(recorderState).Get()
	if err != nil || !ok {
		return err
	}
	if len(b) != 24*r.inputs {
		return fmt.Errorf("epoch recorder %s subtask %d: state of %d bytes: %w", ctx.Vertex, ctx.Subtask, len(b), base.ErrCorruption)
	}
	for i := range r.seen {
		r.seen[i] = inputRecord{
			min:  int64(binary.BigEndian.Uint64(b[24*i:])),
			max:  int64(binary.BigEndian.Uint64(b[24*i+8:])),
			rows: int64(binary.BigEndian.Uint64(b[24*i+16:])),
		}
	}
	return nil
}

// Process implements operator.Operator.
func (r *EpochRecorder) Process(input int, c *types.Chunk) error {
	s := &r.seen[input]
	for _, e := range c.Cols[2].Ints {
		s.min = min(s.min, e)
		s.max = max(s.max, e)
	}
	s.rows += int64(c.Len())
	return nil
}

// OnEpoch implements operator.Operator.
func (r *EpochRecorder) OnEpoch(e base.Epoch) error {
	out := types.NewChunk(RecorderSchema, r.inputs)
	for i, s := range r.seen {
		if s.rows == 0 {
			continue
		}
		out.Append(types.Insert, types.Row{types.NewInt64(int64(i)), types.NewInt64(int64(e)),
			types.NewInt64(s.min), types.NewInt64(s.max), types.NewInt64(s.rows)})
	}
	r.reset()
	return r.ctx.Output.Emit(out)
}

// Snapshot implements operator.Operator.
func (r *EpochRecorder) Snapshot(base.CheckpointID) error {
	b := make([]byte, 0, 24*r.inputs)
	for _, s := range r.seen {
		b = binary.BigEndian.AppendUint64(b, uint64(s.min))
		b = binary.BigEndian.AppendUint64(b, uint64(s.max))
		b = binary.BigEndian.AppendUint64(b, uint64(s.rows))
	}
	return r.ctx.State.OperatorValue(recorderState).Set(b)
}
