package stream

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"unsafe"

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
	pending changes
	key     []byte
	// Scratch space of the per-row path, reused from row to row: the
	// input row, the stored key of the row, a joined row for the
	// residual, a joined row's encoding and a state entry.
	row    types.Row
	rowKey []byte
	out    types.Row
	enc    []byte
	entry  [entryBytes]byte
}

// changes is the open epoch's net changes to output rows: per row
// encoding, the number of copies added (negative: removed). A row whose
// count returns to zero keeps its slot until reset and is skipped. The
// index makes the per-row update a lookup without allocation; a row new
// to the epoch allocates its encoding once, as the index's key, which
// the slot shares (one large buffer of all encodings cost more in its
// regrowth than it saved).
type changes struct {
	index map[string]int
	rows  []string
	n     []int64
}

func (c *changes) add(enc []byte, d int64) {
	if i, ok := c.index[string(enc)]; ok {
		c.n[i] += d
		return
	}
	if d == 0 {
		return
	}
	k := string(enc)
	c.index[k] = len(c.n)
	c.rows = append(c.rows, k)
	c.n = append(c.n, d)
}

// row returns slot i's encoding, read-only: it shares the index key's
// bytes.
func (c *changes) row(i int) []byte {
	return unsafe.Slice(unsafe.StringData(c.rows[i]), len(c.rows[i]))
}

// live returns the slots with a non-zero count, in order of their rows'
// encodings.
func (c *changes) live() []int {
	out := make([]int, 0, len(c.n))
	for i, n := range c.n {
		if n != 0 {
			out = append(out, i)
		}
	}
	slices.SortFunc(out, func(a, b int) int { return strings.Compare(c.rows[a], c.rows[b]) })
	return out
}

func (c *changes) reset() {
	clear(c.index)
	clear(c.rows)
	c.rows = c.rows[:0]
	c.n = c.n[:0]
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
	j.pending = changes{index: map[string]int{}}
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
		j.pending.add([]byte(row), d)
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
	j.enc = types.AppendRow(j.enc[:0], row, j.outT)
	j.pending.add(j.enc, n)
}

// deltaJoined records n more (or fewer) copies of the output row that
// joins a row of side (encoded mine) with one of the other side (encoded
// other), encoded without decoding either (appendJoined).
func (j *Join) deltaJoined(side int, mine, other []byte, n int64) error {
	if n == 0 {
		return nil
	}
	left, right, nl, nr := mine, other, len(j.LeftTypes), len(j.RightTypes)
	if side == 1 {
		left, right = other, mine
	}
	var err error
	if j.enc, err = appendJoined(j.enc[:0], left, right, nl, nr); err != nil {
		return j.corrupt("stored row")
	}
	j.pending.add(j.enc, n)
	return nil
}

// appendJoined appends to dst the row encoding (types.AppendRow) of the
// row made of the nl columns encoded in left followed by the nr columns
// encoded in right, byte for byte what AppendRow gives for the joined
// row: one header (version, column count, NULL bitmap) and both sides'
// values in column order. A side encoded with fewer columns (written
// before columns were added) has the missing ones NULL, as DecodeRow
// reads it.
func appendJoined(dst, left, right []byte, nl, nr int) ([]byte, error) {
	lbm, lvals, ln, err := rowParts(left, nl)
	if err != nil {
		return dst, err
	}
	rbm, rvals, rn, err := rowParts(right, nr)
	if err != nil {
		return dst, err
	}
	n := nl + nr
	dst = binary.AppendUvarint(append(dst, types.RowCodecVersion), uint64(n))
	bm := len(dst)
	for range (n + 7) / 8 {
		dst = append(dst, 0)
	}
	for i := range nl {
		if i >= ln || lbm[i/8]&(1<<(i%8)) != 0 {
			dst[bm+i/8] |= 1 << (i % 8)
		}
	}
	for i := range nr {
		if i >= rn || rbm[i/8]&(1<<(i%8)) != 0 {
			o := nl + i
			dst[bm+o/8] |= 1 << (o % 8)
		}
	}
	return append(append(dst, lvals...), rvals...), nil
}

// rowParts splits one row encoding of at most width columns into its
// NULL bitmap, its values and its column count.
func rowParts(b []byte, width int) (bitmap, values []byte, n int, err error) {
	if len(b) < 1 || b[0] != types.RowCodecVersion {
		return nil, nil, 0, base.ErrCorruption
	}
	c, k := binary.Uvarint(b[1:])
	if k <= 0 || c > uint64(width) {
		return nil, nil, 0, base.ErrCorruption
	}
	b = b[1+k:]
	nb := int(c+7) / 8
	if len(b) < nb {
		return nil, nil, 0, base.ErrCorruption
	}
	return b[:nb], b[nb:], int(c), nil
}

func (j *Join) joined(side int, mine, other types.Row) types.Row {
	return j.joinedTo(make(types.Row, 0, len(j.outT)), side, mine, other)
}

// joinedTo appends the joined row of mine (a row of side) and other to
// dst.
func (j *Join) joinedTo(dst types.Row, side int, mine, other types.Row) types.Row {
	if side == 0 {
		return append(append(dst, mine...), other...)
	}
	return append(append(dst, other...), mine...)
}

func (j *Join) padded(side int, mine types.Row) types.Row {
	if side == 0 {
		return j.joined(0, mine, make(types.Row, len(j.RightTypes)))
	}
	return j.joined(1, mine, make(types.Row, len(j.LeftTypes)))
}

// encodeEntry encodes a stored row's entry into the scratch entry (the
// state backends copy what they are given).
func (j *Join) encodeEntry(count, matches int64) []byte {
	binary.BigEndian.PutUint64(j.entry[:], uint64(count))
	binary.BigEndian.PutUint64(j.entry[8:], uint64(matches))
	return j.entry[:]
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
		j.row = c.AppendRowTo(j.row[:0], r)
		full := j.row
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
	j.rowKey = j.appendStoredKey(j.rowKey[:0], side, mine, myTypes)
	rowKey := j.rowKey
	mineEnc := j.storedRow(rowKey)
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
	// The other side's rows are decoded only when something needs their
	// values (the residual, a NULL-padded row); the joined row's encoding
	// is spliced from both sides' encodings.
	decode := j.Residual != nil || j.preserved(1-side)
	err = otherState.Iterate(func(k, v []byte) error {
		otherEnc := j.storedRow(k)
		var other types.Row
		if decode {
			var rest []byte
			var err error
			if other, rest, err = types.DecodeRow(otherEnc, otherTypes); err != nil || len(rest) != 0 {
				return j.corrupt("stored row")
			}
		}
		oc, om, err := j.decodeEntry(v)
		if err != nil {
			return err
		}
		if j.Residual != nil {
			j.out = j.joinedTo(j.out[:0], side, mine, other)
			pv, err := j.Residual.Eval(j.Eval, j.out)
			if err != nil {
				return err
			}
			if pv.IsNull() || !pv.Bool() {
				return nil
			}
		}
		matches += oc
		if err := j.deltaJoined(side, mineEnc, otherEnc, sign*oc); err != nil {
			return err
		}
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
		if err := otherState.Put(u.key, j.encodeEntry(u.count, u.matches)); err != nil {
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
	return myState.Put(rowKey, j.encodeEntry(count, matches))
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
	live := j.pending.live()
	if len(live) == 0 {
		j.pending.reset()
		return nil
	}
	// Retractions go first: a sink keyed differently from the join (a
	// table's primary key) must see a key's old row deleted before its new
	// row arrives, never the other way round.
	out := types.NewChunk(j.outT, len(live))
	for _, retract := range []bool{true, false} {
		for _, i := range live {
			n := j.pending.n[i]
			if (n < 0) != retract {
				continue
			}
			row, _, err := types.DecodeRow(j.pending.row(i), j.outT)
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
	j.pending.reset()
	return j.ctx.Output.Emit(out)
}

// Snapshot implements operator.Operator: keep the open epoch's pending
// changes.
func (j *Join) Snapshot(base.CheckpointID) error {
	var b []byte
	for _, i := range j.pending.live() {
		k := j.pending.row(i)
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
		b = binary.AppendVarint(b, j.pending.n[i])
	}
	if err := j.ctx.State.OperatorValue(joinPending).Set(b); err != nil {
		return err
	}
	if j.Interval != nil {
		return j.snapshotInterval()
	}
	return nil
}
