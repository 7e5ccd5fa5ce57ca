package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
)

// Join is the streaming equi-join of two changelogs: inner, left, right or
// full outer, with an optional residual predicate (Flink's
// StreamingJoinOperator with its associations count for outer sides;
// RisingWave's HashJoinExecutor).
//
// Input i's rows are that side's columns followed by its join key columns
// (a Map before the hash exchange computes them), so that the exchange key
// and the state key are the same bytes. Output rows are the left columns
// followed by the right ones, NULL-padded for an unmatched row of a
// preserved (outer) side.
//
// A join without an equality between its sides (a cross or theta join)
// is planned with one constant key, so that one state key holds both
// sides and every pair is tested by the residual: a nested-loop join.
// Keys marked NullSafe (IS NOT DISTINCT FROM) match NULL to NULL.
//
// State, keyed by join key: for each side a map from the row (row codec)
// to its multiplicity and, for a preserved side, the number of rows of the
// other side it matches; when that number goes from zero to one the
// NULL-padded row is retracted, and back. A row with a NULL key matches
// nothing and is not stored: a preserved side emits and retracts its
// padded row directly.
//
// Output is consolidated per epoch: changes to the same output row within
// an epoch cancel, and OnEpoch emits the net changes, first every -D then
// every +I, each in the order of their encoding, so the epoch's output
// does not depend on the arrival order of its input and a sink keyed by a
// primary key sees a key's old row go before its new one comes. The pending changes are operator state,
// so a checkpoint in the middle of an epoch keeps them.
type Join struct {
	operator.Base
	Kind                  plan.JoinKind
	LeftTypes, RightTypes []types.Type
	// LeftKeys and RightKeys are the key columns of the input rows.
	LeftKeys, RightKeys []int
	KeyTypes            []types.Type
	// NullSafe marks the keys compared by IS NOT DISTINCT FROM, where NULL
	// matches NULL; nil means none (=, where a NULL key matches nothing).
	NullSafe []bool
	// Residual filters joined rows (left columns then right columns); nil
	// keeps every pair with equal keys.
	Residual expr.Expr
	Eval     *expr.Context
	// Interval, when set, makes this an interval join of two append-only
	// inputs with watermarks: rows are stored in event-time order and
	// dropped once the other side's watermark says that they can match
	// nothing more (interval.go).
	Interval *JoinInterval

	ctx     *operator.Context
	iv      intervalState
	outT    []types.Type
	pending map[string]int64
	key     []byte
}

const (
	joinPending = "join-pending"
	entryBytes  = 16
)

func sideName(side int) string { return [...]string{"join-left", "join-right"}[side] }

func (j *Join) preserved(side int) bool {
	switch j.Kind {
	case plan.LeftJoin:
		return side == 0
	case plan.RightJoin:
		return side == 1
	case plan.FullJoin:
		return true
	}
	return false
}

// Open implements operator.Operator.
func (j *Join) Open(ctx *operator.Context) error {
	j.ctx = ctx
	if j.Eval == nil {
		j.Eval = &expr.Context{}
	}
	j.outT = append(append([]types.Type(nil), j.LeftTypes...), j.RightTypes...)
	j.pending = map[string]int64{}
	b, ok, err := ctx.State.OperatorValue(joinPending).Get()
	if err != nil {
		return err
	}
	for ok && len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return j.corrupt("pending changes")
		}
		row := string(b[k : k+int(n)])
		b = b[k+int(n):]
		d, k2 := binary.Varint(b)
		if k2 <= 0 {
			return j.corrupt("pending count")
		}
		b = b[k2:]
		j.pending[row] = d
	}
	if j.Interval != nil {
		return j.openInterval()
	}
	return nil
}

func (j *Join) corrupt(what string) error {
	return fmt.Errorf("join %s subtask %d: %s: %w", j.ctx.Vertex, j.ctx.Subtask, what, base.ErrCorruption)
}

// delta records n more (or fewer) copies of an output row.
func (j *Join) delta(row types.Row, n int64) {
	if n == 0 {
		return
	}
	k := string(types.AppendRow(nil, row, j.outT))
	if v := j.pending[k] + n; v == 0 {
		delete(j.pending, k)
	} else {
		j.pending[k] = v
	}
}

func (j *Join) joined(side int, mine, other types.Row) types.Row {
	if side == 0 {
		return append(append(make(types.Row, 0, len(j.outT)), mine...), other...)
	}
	return append(append(make(types.Row, 0, len(j.outT)), other...), mine...)
}

func (j *Join) padded(side int, mine types.Row) types.Row {
	if side == 0 {
		return j.joined(0, mine, make(types.Row, len(j.RightTypes)))
	}
	return j.joined(1, mine, make(types.Row, len(j.LeftTypes)))
}

func encodeEntry(count, matches int64) []byte {
	var b [entryBytes]byte
	binary.BigEndian.PutUint64(b[:], uint64(count))
	binary.BigEndian.PutUint64(b[8:], uint64(matches))
	return b[:]
}

func (j *Join) decodeEntry(v []byte) (count, matches int64, err error) {
	if len(v) != entryBytes {
		return 0, 0, j.corrupt("row entry")
	}
	return int64(binary.BigEndian.Uint64(v)), int64(binary.BigEndian.Uint64(v[8:])), nil
}

// Process implements operator.Operator.
func (j *Join) Process(side int, c *types.Chunk) error {
	myTypes, keys := j.LeftTypes, j.LeftKeys
	otherTypes := j.RightTypes
	if side == 1 {
		myTypes, keys, otherTypes = j.RightTypes, j.RightKeys, j.LeftTypes
	}
	for r := range c.Len() {
		sign := int64(1)
		if c.Kinds[r].IsRetract() {
			sign = -1
		}
		full := c.Row(r)
		mine := full[:len(myTypes)]
		j.key = j.key[:0]
		nullKey := false
		for i, col := range keys {
			d := full[col]
			nullKey = nullKey || d.IsNull() && (i >= len(j.NullSafe) || !j.NullSafe[i])
			j.key = types.AppendKey(j.key, d, j.KeyTypes[i])
		}
		if j.Interval != nil {
			// A row without an event time matches nothing, as a NULL
			// key does: every time bound compares with NULL.
			noTime, err := j.observe(side, mine, c.Kinds[r])
			if err != nil {
				return err
			}
			nullKey = nullKey || noTime
		}
		if nullKey {
			if j.preserved(side) {
				j.delta(j.padded(side, mine), sign)
			}
			continue
		}
		if err := j.apply(side, mine, myTypes, otherTypes, sign, c.Kinds[r]); err != nil {
			return err
		}
	}
	return nil
}

type otherUpdate struct {
	key     []byte
	count   int64
	matches int64
}

func (j *Join) apply(side int, mine types.Row, myTypes, otherTypes []types.Type, sign int64, kind types.RowKind) error {
	j.ctx.State.SetCurrentKey(j.key)
	myState := j.ctx.State.Map(sideName(side))
	otherState := j.ctx.State.Map(sideName(1 - side))
	rowKey := j.storedKey(side, mine, myTypes)
	v, ok, err := myState.Get(rowKey)
	if err != nil {
		return err
	}
	var count int64
	if ok {
		if count, _, err = j.decodeEntry(v); err != nil {
			return err
		}
	}
	if sign < 0 && count == 0 {
		return fmt.Errorf("join %s: a %s retracts row %s that was never added: %w", j.ctx.Vertex, kind, mine, base.ErrInvalidArgument)
	}
	var matches int64
	var updates []otherUpdate
	err = otherState.Iterate(func(k, v []byte) error {
		other, rest, err := types.DecodeRow(j.storedRow(k), otherTypes)
		if err != nil || len(rest) != 0 {
			return j.corrupt("stored row")
		}
		oc, om, err := j.decodeEntry(v)
		if err != nil {
			return err
		}
		if j.Residual != nil {
			pv, err := j.Residual.Eval(j.Eval, j.joined(side, mine, other))
			if err != nil {
				return err
			}
			if pv.IsNull() || !pv.Bool() {
				return nil
			}
		}
		matches += oc
		j.delta(j.joined(side, mine, other), sign*oc)
		if j.preserved(1 - side) {
			nm := om + sign
			if om == 0 && nm > 0 {
				j.delta(j.padded(1-side, other), -oc)
			}
			if om > 0 && nm == 0 {
				j.delta(j.padded(1-side, other), oc)
			}
			updates = append(updates, otherUpdate{key: bytes.Clone(k), count: oc, matches: nm})
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, u := range updates {
		if err := otherState.Put(u.key, encodeEntry(u.count, u.matches)); err != nil {
			return err
		}
	}
	if j.preserved(side) && matches == 0 {
		j.delta(j.padded(side, mine), sign)
	}
	count += sign
	if count == 0 {
		return myState.Delete(rowKey)
	}
	if j.Interval != nil {
		j.addTimer(side, mine)
	}
	return myState.Put(rowKey, encodeEntry(count, matches))
}

// OnEpoch implements operator.Operator: emit the epoch's net changes,
// then (an interval join) drop the rows the watermarks have expired.
func (j *Join) OnEpoch(base.Epoch) error {
	if err := j.emitPending(); err != nil {
		return err
	}
	if j.Interval != nil {
		return j.expire()
	}
	return nil
}

func (j *Join) emitPending() error {
	if len(j.pending) == 0 {
		return nil
	}
	keys := make([]string, 0, len(j.pending))
	for k := range j.pending {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	// Retractions go first: a sink keyed differently from the join (a
	// table's primary key) must see a key's old row deleted before its new
	// row arrives, never the other way round.
	out := types.NewChunk(j.outT, len(keys))
	for _, retract := range []bool{true, false} {
		for _, k := range keys {
			n := j.pending[k]
			if (n < 0) != retract {
				continue
			}
			row, _, err := types.DecodeRow([]byte(k), j.outT)
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
	clear(j.pending)
	return j.ctx.Output.Emit(out)
}

// Snapshot implements operator.Operator: keep the open epoch's pending
// changes.
func (j *Join) Snapshot(base.CheckpointID) error {
	keys := make([]string, 0, len(j.pending))
	for k := range j.pending {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b []byte
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendVarint(b, j.pending[k])
	}
	if err := j.ctx.State.OperatorValue(joinPending).Set(b); err != nil {
		return err
	}
	if j.Interval != nil {
		return j.snapshotInterval()
	}
	return nil
}
