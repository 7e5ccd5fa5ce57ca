package stream

import (
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// ValuesSource is a bounded source of constant rows (VALUES, or the one
// empty row of a SELECT without FROM): it emits Rows as +I in one chunk,
// then ends. It places no epoch barriers, so it never invents an epoch
// (DESIGN.md "The epoch protocol"); an operator that aligns epochs counts
// its ended input as having delivered every epoch, so the rows belong to
// the first epoch that the job's other sources close. A job whose only
// sources are ValuesSources closes no epoch at all, and the planner
// refuses it.
//
// State: operator state values-emitted records that the rows went out, so
// a restore from a later checkpoint does not emit them again and one from
// an earlier checkpoint does.
type ValuesSource struct {
	Types []types.Type
	Rows  []types.Row

	ctx     *operator.Context
	emitted bool
}

const valuesState = "values-emitted"

// Open implements operator.Source.
func (v *ValuesSource) Open(ctx *operator.Context) error {
	v.ctx = ctx
	b, ok, err := ctx.State.OperatorValue(valuesState).Get()
	if err != nil {
		return err
	}
	v.emitted = ok && len(b) == 1 && b[0] == 1
	return nil
}

// Next implements operator.Source.
func (v *ValuesSource) Next() (operator.Item, error) {
	if v.emitted || len(v.Rows) == 0 {
		v.emitted = true
		return operator.Item{Done: true}, nil
	}
	c := types.NewChunk(v.Types, len(v.Rows))
	for _, r := range v.Rows {
		c.Append(types.Insert, r)
	}
	v.emitted = true
	return operator.Item{Chunk: c, Done: true}, nil
}

// Snapshot implements operator.Source.
func (v *ValuesSource) Snapshot(base.CheckpointID) error {
	b := []byte{0}
	if v.emitted {
		b[0] = 1
	}
	return v.ctx.State.OperatorValue(valuesState).Set(b)
}

// NotifyComplete implements operator.Source.
func (v *ValuesSource) NotifyComplete(base.CheckpointID) error { return nil }

// Close implements operator.Source.
func (v *ValuesSource) Close() error { return nil }
