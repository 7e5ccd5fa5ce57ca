package stream

import (
	"fmt"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// UpsertMaterializer sits in front of a sink whose primary key (KeyCols)
// is not the unique key of the changelog it receives, as Flink's
// SinkUpsertMaterializer does: several input rows may then share a sink
// key, and a retraction of one of them must not delete the key while
// another still holds it. Per sink key it keeps, in keyed state, the live
// input rows in arrival order; the sink sees an upsert of the newest live
// row whenever that row changes, and a delete when the last one goes. So
// an email that changes A -> B -> A ends with exactly one row for A.
//
// It wraps the sink operator (Inner) and hands it the rewritten chunks; the
// job runs it where every change of a sink key arrives (parallelism 1 or
// an exchange by KeyCols).
type UpsertMaterializer struct {
	Inner   operator.Operator
	Types   []types.Type
	KeyCols []int

	ctx      *operator.Context
	keyTypes []types.Type
}

const materializedRows = "upsert-materializer-rows"

// Open implements operator.Operator.
func (m *UpsertMaterializer) Open(ctx *operator.Context) error {
	m.ctx = ctx
	m.keyTypes = make([]types.Type, len(m.KeyCols))
	for i, c := range m.KeyCols {
		m.keyTypes[i] = m.Types[c]
	}
	return m.Inner.Open(ctx)
}

func (m *UpsertMaterializer) load() ([]types.Row, error) {
	b, ok, err := m.ctx.State.Value(materializedRows).Get()
	if err != nil || !ok {
		return nil, err
	}
	var rows []types.Row
	for len(b) > 0 {
		r, rest, err := types.DecodeRow(b, m.Types)
		if err != nil {
			return nil, fmt.Errorf("upsert materializer state: %w", err)
		}
		rows = append(rows, r)
		b = rest
	}
	return rows, nil
}

func (m *UpsertMaterializer) store(rows []types.Row) error {
	if len(rows) == 0 {
		return m.ctx.State.Value(materializedRows).Clear()
	}
	var b []byte
	for _, r := range rows {
		b = types.AppendRow(b, r, m.Types)
	}
	return m.ctx.State.Value(materializedRows).Set(b)
}

// Process implements operator.Operator.
func (m *UpsertMaterializer) Process(input int, c *types.Chunk) error {
	out := types.NewChunk(m.Types, c.Len())
	var key []byte
	for i := 0; i < c.Len(); i++ {
		row := c.Row(i)
		key = types.EncodeKey(key[:0], row, m.KeyCols, m.keyTypes)
		m.ctx.State.SetCurrentKey(key)
		rows, err := m.load()
		if err != nil {
			return err
		}
		switch k := c.Kind(i); k {
		case types.Insert, types.UpdateAfter:
			kind := types.UpdateAfter
			if len(rows) == 0 {
				kind = types.Insert
			}
			rows = append(rows, row)
			out.Append(kind, row)
		default: // UpdateBefore, Delete: retract one equal live row
			at := -1
			for j := len(rows) - 1; j >= 0; j-- {
				if types.CompareRows(rows[j], row, nil) == 0 {
					at = j
					break
				}
			}
			if at < 0 {
				continue // a retraction of a row never seen: nothing to undo
			}
			last := at == len(rows)-1
			rows = append(rows[:at], rows[at+1:]...)
			switch {
			case len(rows) == 0:
				out.Append(types.Delete, row)
			case last:
				out.Append(types.UpdateAfter, rows[len(rows)-1])
			}
		}
		if err := m.store(rows); err != nil {
			return err
		}
	}
	if out.Len() == 0 {
		return nil
	}
	return m.Inner.Process(input, out)
}

// OnEpoch implements operator.Operator.
func (m *UpsertMaterializer) OnEpoch(e base.Epoch) error { return m.Inner.OnEpoch(e) }

// Snapshot implements operator.Operator.
func (m *UpsertMaterializer) Snapshot(id base.CheckpointID) error { return m.Inner.Snapshot(id) }

// NotifyComplete implements operator.Operator.
func (m *UpsertMaterializer) NotifyComplete(id base.CheckpointID) error {
	return m.Inner.NotifyComplete(id)
}

// Finish implements operator.Operator.
func (m *UpsertMaterializer) Finish() error { return m.Inner.Finish() }

// Close implements operator.Operator.
func (m *UpsertMaterializer) Close() error { return m.Inner.Close() }
