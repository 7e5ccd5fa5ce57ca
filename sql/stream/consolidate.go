package stream

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Consolidate passes the changes of all its inputs on, consolidated per
// epoch: it counts each row's additions minus retractions in the open
// epoch and, in OnEpoch, emits the net changes, every -D before every +I,
// each in the order of the rows' exact encoding (as Join emits its
// output). It is the UNION ALL vertex: a row that one branch retracts and
// another adds in the same epoch emits nothing (DESIGN.md: no -U x, +U x
// noise), and the epoch's output does not depend on the order in which
// the branches' changes arrived.
//
// State: operator state consolidate-pending holds the open epoch's
// pending counts at a checkpoint, so that a checkpoint in the middle of
// an epoch keeps them. Memory holds one entry per distinct row changed in
// the open epoch.
type Consolidate struct {
	operator.Base
	Types []types.Type

	ctx     *operator.Context
	pending map[string]int64
	buf     []byte
	row     types.Row
}

const consolidatePending = "consolidate-pending"

// Open implements operator.Operator: restore the open epoch's pending
// counts.
func (c *Consolidate) Open(ctx *operator.Context) error {
	c.ctx = ctx
	c.pending = map[string]int64{}
	b, ok, err := ctx.State.OperatorValue(consolidatePending).Get()
	if err != nil {
		return err
	}
	for ok && len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return c.corrupt()
		}
		row := string(b[k : k+int(n)])
		b = b[k+int(n):]
		d, k2 := binary.Varint(b)
		if k2 <= 0 || d == 0 {
			return c.corrupt()
		}
		b = b[k2:]
		c.pending[row] = d
	}
	return nil
}

func (c *Consolidate) corrupt() error {
	return fmt.Errorf("consolidate %s subtask %d: pending changes: %w", c.ctx.Vertex, c.ctx.Subtask, base.ErrCorruption)
}

// Process implements operator.Operator: count each change.
func (c *Consolidate) Process(_ int, ch *types.Chunk) error {
	for i := range ch.Len() {
		c.row = ch.AppendRowTo(c.row[:0], i)
		c.buf = types.AppendRow(c.buf[:0], c.row, c.Types)
		d := int64(1)
		if ch.Kinds[i].IsRetract() {
			d = -1
		}
		k := string(c.buf)
		if v := c.pending[k] + d; v == 0 {
			delete(c.pending, k)
		} else {
			c.pending[k] = v
		}
	}
	return nil
}

// OnEpoch implements operator.Operator: emit the epoch's net changes.
func (c *Consolidate) OnEpoch(base.Epoch) error {
	if len(c.pending) == 0 {
		return nil
	}
	keys := make([]string, 0, len(c.pending))
	for k := range c.pending {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := types.NewChunk(c.Types, len(keys))
	for _, retract := range []bool{true, false} {
		for _, k := range keys {
			n := c.pending[k]
			if (n < 0) != retract {
				continue
			}
			row, _, err := types.DecodeRow([]byte(k), c.Types)
			if err != nil {
				return err
			}
			kind := types.Insert
			if n < 0 {
				kind, n = types.Delete, -n
			}
			for range n {
				out.Append(kind, row)
			}
		}
	}
	clear(c.pending)
	return c.ctx.Output.Emit(out)
}

// Snapshot implements operator.Operator: keep the open epoch's pending
// counts.
func (c *Consolidate) Snapshot(base.CheckpointID) error {
	keys := make([]string, 0, len(c.pending))
	for k := range c.pending {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendVarint(b, c.pending[k])
	}
	return c.ctx.State.OperatorValue(consolidatePending).Set(b)
}
