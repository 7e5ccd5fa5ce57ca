package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/agg"
)

// AggCall is one aggregate of a GroupAgg over input columns.
type AggCall struct {
	Spec agg.Spec
	// ArgCols are the input columns of the arguments (none for count(*)).
	ArgCols []int
	// FilterCol is the BOOLEAN input column of FILTER (WHERE ...), or -1.
	FilterCol int
}

// GroupAgg maintains GROUP BY aggregates over a retract changelog; see the
// package doc. Its output row is the key columns followed by the aggregate
// results.
//
// State: per group, keyed by the memcomparable key of the key columns, one
// value holding the group's row count, the row it last emitted and each
// accumulator's state; in operator state, the keys the open epoch changed.
// A write-back cache in front of keyed state (as RisingWave's managed
// state cache) makes the per-row path a map lookup; Snapshot writes the
// dirty groups back. The cache is not bounded yet.
//
// Among key values that compare equal but are written differently (1.5 and
// 1.50 in an unconstrained NUMERIC column), the first one the group saw
// represents the group in its output.
type GroupAgg struct {
	operator.Base
	KeyCols  []int
	KeyTypes []types.Type
	Aggs     []AggCall

	ctx     *operator.Context
	outT    []types.Type
	cache   map[string]*group
	changed []*group
	key     []byte
	args    []types.Datum
}

type group struct {
	key     string
	keys    types.Row
	rows    int64
	accs    []agg.Accumulator
	emitted types.Row // nil: nothing emitted yet
	dirty   bool      // differs from keyed state
	changed bool      // changed in the open epoch
}

const (
	groupState   = "group"
	changedState = "changed"
	stateVersion = 1
)

func (g *GroupAgg) global() bool { return len(g.KeyCols) == 0 }

// OutputTypes returns the output row's types: key types, then the
// aggregates' result types.
func (g *GroupAgg) OutputTypes() ([]types.Type, error) {
	out := append([]types.Type(nil), g.KeyTypes...)
	for _, a := range g.Aggs {
		t, err := a.Spec.ResultType()
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// Open implements operator.Operator: restore the groups the open epoch
// had changed before the checkpoint this subtask restarts from.
func (g *GroupAgg) Open(ctx *operator.Context) error {
	g.ctx = ctx
	g.cache = map[string]*group{}
	var err error
	if g.outT, err = g.OutputTypes(); err != nil {
		return err
	}
	b, ok, err := ctx.State.OperatorValue(changedState).Get()
	if err != nil {
		return err
	}
	for ok && len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return g.corrupt("changed-key list")
		}
		gr, err := g.load(string(b[k:k+int(n)]), nil)
		if err != nil {
			return err
		}
		g.markChanged(gr)
		b = b[k+int(n):]
	}
	if g.global() {
		gr, err := g.load("", nil)
		if err != nil {
			return err
		}
		if gr.emitted == nil {
			g.markChanged(gr) // the global row appears at the first epoch
		}
	}
	return nil
}

func (g *GroupAgg) corrupt(what string) error {
	return fmt.Errorf("group aggregation %s subtask %d: %s: %w", g.ctx.Vertex, g.ctx.Subtask, what, base.ErrCorruption)
}

func (g *GroupAgg) markChanged(gr *group) {
	if !gr.changed {
		gr.changed = true
		g.changed = append(g.changed, gr)
	}
}

func (g *GroupAgg) newAccs() ([]agg.Accumulator, error) {
	accs := make([]agg.Accumulator, len(g.Aggs))
	for i, a := range g.Aggs {
		acc, err := agg.New(a.Spec)
		if err != nil {
			return nil, err
		}
		accs[i] = acc
	}
	return accs, nil
}

// load returns the group of key from the cache or keyed state; keys is
// the group's key row when the caller has it (nil on restore).
func (g *GroupAgg) load(key string, keys types.Row) (*group, error) {
	if gr := g.cache[key]; gr != nil {
		return gr, nil
	}
	accs, err := g.newAccs()
	if err != nil {
		return nil, err
	}
	gr := &group{key: key, keys: keys, accs: accs}
	g.ctx.State.SetCurrentKey([]byte(key))
	b, ok, err := g.ctx.State.Value(groupState).Get()
	if err != nil {
		return nil, err
	}
	if ok {
		if err := g.decodeGroup(gr, b); err != nil {
			return nil, err
		}
	}
	if gr.keys == nil {
		if gr.keys, err = g.keysFromKey(key); err != nil {
			return nil, err
		}
	}
	g.cache[key] = gr
	return gr, nil
}

// keysFromKey decodes a key row (canonical form) for a group restored
// without its stored key row.
func (g *GroupAgg) keysFromKey(key string) (types.Row, error) {
	b := []byte(key)
	row := make(types.Row, len(g.KeyTypes))
	for i, t := range g.KeyTypes {
		var err error
		if row[i], b, err = types.DecodeKey(b, t); err != nil {
			return nil, err
		}
	}
	return row, nil
}

// Group state: version, rows (varint), key row, has-emitted byte and the
// emitted row (row codec), then each accumulator's state with its length.
func (g *GroupAgg) encodeGroup(gr *group) []byte {
	b := binary.AppendVarint([]byte{stateVersion}, gr.rows)
	b = types.AppendRow(b, gr.keys, g.KeyTypes)
	if gr.emitted == nil {
		b = append(b, 0)
	} else {
		b = types.AppendRow(append(b, 1), gr.emitted, g.outT)
	}
	for _, a := range gr.accs {
		st := a.AppendState(nil)
		b = binary.AppendUvarint(b, uint64(len(st)))
		b = append(b, st...)
	}
	return b
}

func (g *GroupAgg) decodeGroup(gr *group, b []byte) error {
	if len(b) < 1 || b[0] != stateVersion {
		return g.corrupt("group state version")
	}
	b = b[1:]
	rows, k := binary.Varint(b)
	if k <= 0 {
		return g.corrupt("group row count")
	}
	gr.rows = rows
	b = b[k:]
	keys, rest, err := types.DecodeRow(b, g.KeyTypes)
	if err != nil {
		return err
	}
	gr.keys, b = keys, rest
	if len(b) < 1 {
		return g.corrupt("group emitted flag")
	}
	if b[0] == 1 {
		row, rest, err := types.DecodeRow(b[1:], g.outT)
		if err != nil {
			return err
		}
		gr.emitted, b = row, rest
	} else {
		b = b[1:]
	}
	for _, a := range gr.accs {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return g.corrupt("accumulator state length")
		}
		if err := a.LoadState(b[k : k+int(n)]); err != nil {
			return err
		}
		b = b[k+int(n):]
	}
	if len(b) != 0 {
		return g.corrupt("trailing group state")
	}
	return nil
}

// Process implements operator.Operator: fold each row into its group.
func (g *GroupAgg) Process(_ int, c *types.Chunk) error {
	keys := make(types.Row, len(g.KeyCols))
	for r := range c.Len() {
		g.key = g.key[:0]
		for i, col := range g.KeyCols {
			keys[i] = c.Datum(col, r)
			g.key = types.AppendKey(g.key, keys[i], g.KeyTypes[i])
		}
		gr, err := g.load(string(g.key), keys.Copy())
		if err != nil {
			return err
		}
		retract := c.Kinds[r].IsRetract()
		if retract {
			gr.rows--
		} else {
			gr.rows++
		}
		if gr.rows < 0 {
			return fmt.Errorf("group aggregation %s: a %s retracts a row of group %s that was never added: %w",
				g.ctx.Vertex, c.Kinds[r], gr.keys, base.ErrInvalidArgument)
		}
		for i, a := range g.Aggs {
			if a.FilterCol >= 0 {
				f := c.Datum(a.FilterCol, r)
				if f.IsNull() || !f.Bool() {
					continue
				}
			}
			g.args = g.args[:0]
			for _, col := range a.ArgCols {
				g.args = append(g.args, c.Datum(col, r))
			}
			if retract {
				err = gr.accs[i].Retract(g.args)
			} else {
				err = gr.accs[i].Add(g.args)
			}
			if err != nil {
				return fmt.Errorf("group aggregation %s, group %s, %s: %w", g.ctx.Vertex, gr.keys, a.Spec.Func, err)
			}
		}
		gr.dirty = true
		g.markChanged(gr)
	}
	return nil
}

// OnEpoch implements operator.Operator: emit each changed group's net
// change, in key order.
func (g *GroupAgg) OnEpoch(base.Epoch) error {
	if len(g.changed) == 0 {
		return nil
	}
	slices.SortFunc(g.changed, func(a, b *group) int { return strings.Compare(a.key, b.key) })
	out := types.NewChunk(g.outT, 2*len(g.changed))
	for _, gr := range g.changed {
		gr.changed = false
		var now types.Row
		if gr.rows > 0 || g.global() {
			now = append(types.Row(nil), gr.keys...)
			for _, a := range gr.accs {
				v, err := a.Result()
				if err != nil {
					return fmt.Errorf("group aggregation %s, group %s: %w", g.ctx.Vertex, gr.keys, err)
				}
				now = append(now, v)
			}
		}
		switch {
		case gr.emitted == nil && now != nil:
			out.Append(types.Insert, now)
		case gr.emitted != nil && now == nil:
			out.Append(types.Delete, gr.emitted)
		case gr.emitted != nil && now != nil:
			if bytes.Equal(types.AppendRow(nil, gr.emitted, g.outT), types.AppendRow(nil, now, g.outT)) {
				break // no net change: emit nothing
			}
			out.Append(types.UpdateBefore, gr.emitted)
			out.Append(types.UpdateAfter, now)
		}
		gr.emitted = now
		gr.dirty = true
	}
	clear(g.changed)
	g.changed = g.changed[:0]
	if out.Len() == 0 {
		return nil
	}
	return g.ctx.Output.Emit(out)
}

// Snapshot implements operator.Operator: write dirty groups to keyed state
// (deleting those without rows and output) and record the open epoch's
// changed keys.
func (g *GroupAgg) Snapshot(base.CheckpointID) error {
	for key, gr := range g.cache {
		if !gr.dirty {
			continue
		}
		g.ctx.State.SetCurrentKey([]byte(key))
		v := g.ctx.State.Value(groupState)
		if gr.rows == 0 && gr.emitted == nil && !gr.changed && !g.global() {
			if err := v.Clear(); err != nil {
				return err
			}
			delete(g.cache, key)
			continue
		}
		if err := v.Set(g.encodeGroup(gr)); err != nil {
			return err
		}
		gr.dirty = false
	}
	var b []byte
	for _, gr := range g.changed {
		b = binary.AppendUvarint(b, uint64(len(gr.key)))
		b = append(b, gr.key...)
	}
	return g.ctx.State.OperatorValue(changedState).Set(b)
}
