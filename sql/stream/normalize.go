package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Normalize turns an upsert changelog into a retract one (Flink's
// ChangelogNormalize, RisingWave's materialize with its conflict
// handling): it keeps the last row of every key, so that
//
//   - a +I or +U of a key with a row becomes -U of that row then +U of
//     the new one, and of a key without one, +I;
//   - a -D of a key with a row becomes -D of that row, whatever the -D's
//     other columns say (an upsert -D names its key; a Kafka tombstone has
//     no value); a -D of a key without a row is dropped, as a repeated
//     tombstone is;
//   - a -U is dropped: the +U after it replaces the row.
//
// Operators downstream (joins, aggregates) retract exactly what they
// added, which they cannot do over an upsert changelog: a join would keep
// the row a +U replaced and never see it go.
//
// Output is the epoch's net change per key, emitted in OnEpoch in key
// order: a key whose row ends the epoch as it began emits nothing (no
// -U x, +U x), one that appeared +I, one that went -D, one that changed
// -U old, +U new, each pair adjacent.
//
// State: keyed value normalize-row holds the key's last row (row codec);
// operator state normalize-changed holds, for the keys the open epoch
// changed, the row each had when the epoch began, so a checkpoint in the
// middle of an epoch keeps the epoch's net change.
type Normalize struct {
	operator.Base
	// Types are the row's types; KeyCols the primary key's columns, whose
	// memcomparable encoding is the state key (the exchange before is
	// hashed by them).
	Types    []types.Type
	KeyCols  []int
	KeyTypes []types.Type

	ctx *operator.Context
	// changed maps the key of each row changed in the open epoch to the
	// row it had when the epoch began (nil: none).
	changed map[string][]byte
	key     []byte
}

const (
	normalizeRow     = "normalize-row"
	normalizeChanged = "normalize-changed"
)

// Open implements operator.Operator.
func (n *Normalize) Open(ctx *operator.Context) error {
	n.ctx = ctx
	n.changed = map[string][]byte{}
	b, ok, err := ctx.State.OperatorValue(normalizeChanged).Get()
	if err != nil || !ok {
		return err
	}
	for len(b) > 0 {
		kl, k1 := binary.Uvarint(b)
		if k1 <= 0 || uint64(len(b)-k1) < kl {
			return n.corrupt("changed key")
		}
		key := string(b[k1 : k1+int(kl)])
		b = b[k1+int(kl):]
		if len(b) < 1 {
			return n.corrupt("changed flag")
		}
		had := b[0] == 1
		b = b[1:]
		var before []byte
		if had {
			rl, k2 := binary.Uvarint(b)
			if k2 <= 0 || uint64(len(b)-k2) < rl {
				return n.corrupt("changed row")
			}
			before = bytes.Clone(b[k2 : k2+int(rl)])
			b = b[k2+int(rl):]
		}
		n.changed[key] = before
	}
	return nil
}

func (n *Normalize) corrupt(what string) error {
	return fmt.Errorf("normalize %s subtask %d: %s: %w", n.ctx.Vertex, n.ctx.Subtask, what, base.ErrCorruption)
}

// Process implements operator.Operator.
func (n *Normalize) Process(_ int, c *types.Chunk) error {
	for r := range c.Len() {
		kind := c.Kinds[r]
		if kind == types.UpdateBefore {
			continue
		}
		row := c.Row(r)
		n.key = n.key[:0]
		for i, col := range n.KeyCols {
			n.key = types.AppendKey(n.key, row[col], n.KeyTypes[i])
		}
		n.ctx.State.SetCurrentKey(n.key)
		v := n.ctx.State.Value(normalizeRow)
		old, had, err := v.Get()
		if err != nil {
			return err
		}
		if _, seen := n.changed[string(n.key)]; !seen {
			var before []byte
			if had {
				before = bytes.Clone(old)
			}
			n.changed[string(n.key)] = before
		}
		if kind == types.Delete {
			if had {
				if err := v.Clear(); err != nil {
					return err
				}
			}
			continue
		}
		if err := v.Set(types.AppendRow(nil, row, n.Types)); err != nil {
			return err
		}
	}
	return nil
}

// OnEpoch implements operator.Operator: emit each changed key's net
// change, in key order.
func (n *Normalize) OnEpoch(base.Epoch) error {
	if len(n.changed) == 0 {
		return nil
	}
	keys := make([]string, 0, len(n.changed))
	for k := range n.changed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := types.NewChunk(n.Types, len(keys))
	decode := func(b []byte) (types.Row, error) {
		row, rest, err := types.DecodeRow(b, n.Types)
		if err != nil || len(rest) != 0 {
			return nil, n.corrupt("stored row")
		}
		return row, nil
	}
	for _, k := range keys {
		before := n.changed[k]
		n.ctx.State.SetCurrentKey([]byte(k))
		now, has, err := n.ctx.State.Value(normalizeRow).Get()
		if err != nil {
			return err
		}
		switch {
		case before == nil && has:
			r, err := decode(now)
			if err != nil {
				return err
			}
			out.Append(types.Insert, r)
		case before != nil && !has:
			r, err := decode(before)
			if err != nil {
				return err
			}
			out.Append(types.Delete, r)
		case before != nil && has && !bytes.Equal(before, now):
			old, err := decode(before)
			if err != nil {
				return err
			}
			r, err := decode(now)
			if err != nil {
				return err
			}
			out.Append(types.UpdateBefore, old)
			out.Append(types.UpdateAfter, r)
		}
	}
	clear(n.changed)
	if out.Len() == 0 {
		return nil
	}
	return n.ctx.Output.Emit(out)
}

// Snapshot implements operator.Operator: keep the open epoch's changed
// keys with their rows at the epoch's start.
func (n *Normalize) Snapshot(base.CheckpointID) error {
	keys := make([]string, 0, len(n.changed))
	for k := range n.changed {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		before := n.changed[k]
		if before == nil {
			b = append(b, 0)
			continue
		}
		b = append(b, 1)
		b = binary.AppendUvarint(b, uint64(len(before)))
		b = append(b, before...)
	}
	return n.ctx.State.OperatorValue(normalizeChanged).Set(b)
}
