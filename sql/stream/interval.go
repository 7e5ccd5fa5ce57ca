package stream

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// JoinInterval turns a Join into an interval join (Flink's interval join,
// IntervalJoinOperator; RisingWave's temporal filter on a join): both
// inputs are append-only with a watermark, and ON bounds the difference
// of their event times, as in
//
//	a JOIN b ON a.k = b.k AND b.ts BETWEEN a.ts - INTERVAL '10' SECOND
//	                                   AND a.ts + INTERVAL '5' SECOND
//
// so that a row can only match rows of the other side within a bounded
// time of its own. Matching is the Join's (keys, then the whole residual
// ON); the interval only says when a stored row can match nothing more and
// is dropped from state:
//
//   - a left row at time l can only match right rows r with r <= l + Hi;
//     every right row still to come has r >= the right watermark, so the
//     left row goes once the right watermark passes l + Hi;
//   - a right row at time r can only match left rows with l <= r - Lo; it
//     goes once the left watermark passes r - Lo.
//
// Invariant (interval-expiry): a row is dropped only when no row that can
// still arrive on the other side satisfies the bounds; so the join's
// output is the regular join's over the rows the inputs admit, and an
// inner interval join's output is append-only (+I only). An outer one
// emits a preserved row NULL-padded at once and retracts the padding when
// a match arrives, as the regular join does (Flink instead waits for the
// watermark and emits the padded row once, append-only; that would make
// every epoch before the wait differ from the join over the epoch's rows,
// which DESIGN.md invariant 1 asks for).
//
// Watermarks. The operator does not see the runtime's watermark messages
// (dataflow's doc: operators do not see them yet); each subtask derives
// each side's watermark from the rows of that side it has received: the
// largest event time minus the side's Delay, the rule of the side's
// LateFilter. That is a safe lower bound of every time still to come on
// the side when the side's rows come from one LateFilter subtask (one
// source subtask) over forward steps and one hash exchange, which keep
// their order: every later row passed the LateFilter, whose own largest
// time is at least this subtask's. The planner plans an interval join
// only then. A row without an event time (NULL) matches nothing and is
// not stored; one at 'infinity' never raises the watermark (as in
// LateFilter) and is never dropped.
//
// Expiry runs in OnEpoch, after the epoch's output, so the epoch's
// output never depends on it. State: a side's rows are stored under the
// join key with their event time (8 bytes, order-preserving) before the
// row encoding, so a key's rows iterate in time order and expiry stops at
// the first row still needed; per side and join key the smallest
// deadline of its rows (a timer), and each side's largest time, are
// operator state written at each checkpoint. Expiry visits every timer
// once an epoch (a cost in the number of live join keys; a timer queue
// ordered by deadline would avoid it).
type JoinInterval struct {
	// TimeCols are the event-time columns (TIMESTAMP or TIMESTAMPTZ) of
	// the left and the right rows, positions among each side's columns.
	TimeCols [2]int
	// Lo and Hi bound right time minus left time, in microseconds: ON
	// holds for no pair outside Lo <= r - l <= Hi. They may be looser
	// than ON (a day of a TIMESTAMPTZ counts as 23 to 25 hours); the
	// residual decides what matches.
	Lo, Hi int64
	// Delay is each side's watermark delay in microseconds (>= 0).
	Delay [2]int64
}

// intervalState is an interval join's in-memory state.
type intervalState struct {
	seen [2]bool
	max  [2]int64
	// timers[s] maps each join key with rows of side s in state to the
	// smallest deadline of those rows.
	timers [2]map[string]int64
}

const (
	joinInterval        = "join-interval"
	joinIntervalVersion = 1
	timePrefix          = 8
)

var errStopIteration = errors.New("stop iteration")

// satAdd adds with saturation at the int64 bounds.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// deadline is the time a side's watermark must pass for a row of the
// other side at time t to be dropped: l + Hi for a left row (against the
// right watermark), r - Lo for a right row (against the left one).
func (j *Join) deadline(side int, t int64) int64 {
	switch t {
	case types.TimestampInfinity:
		return math.MaxInt64
	case types.TimestampNegInfinity:
		return math.MinInt64
	}
	if side == 0 {
		return satAdd(t, j.Interval.Hi)
	}
	if j.Interval.Lo == math.MinInt64 {
		return math.MaxInt64
	}
	return satAdd(t, -j.Interval.Lo)
}

// watermark returns side's watermark and whether it has one.
func (j *Join) watermark(side int) (int64, bool) {
	return satAdd(j.iv.max[side], -j.Interval.Delay[side]), j.iv.seen[side]
}

// observe checks that a row of an interval join's input is an insertion,
// raises its side's largest time, and reports whether its time is NULL.
func (j *Join) observe(side int, row types.Row, kind types.RowKind) (noTime bool, err error) {
	if kind != types.Insert {
		return false, fmt.Errorf("interval join %s: a %s in an append-only input: %w", j.ctx.Vertex, kind, base.ErrInvalidArgument)
	}
	d := row[j.Interval.TimeCols[side]]
	if d.IsNull() {
		return true, nil
	}
	t := d.Micros()
	if !infinite(t) && (!j.iv.seen[side] || t > j.iv.max[side]) {
		j.iv.max[side], j.iv.seen[side] = t, true
	}
	return false, nil
}

// appendStoredKey appends to dst the state's map key of a row of side:
// the row encoding, after its event time for an interval join.
func (j *Join) appendStoredKey(dst []byte, side int, row types.Row, ts []types.Type) []byte {
	if j.Interval == nil {
		return types.AppendRow(dst, row, ts)
	}
	t := row[j.Interval.TimeCols[side]].Micros()
	dst = binary.BigEndian.AppendUint64(dst, uint64(t)^1<<63)
	return types.AppendRow(dst, row, ts)
}

// storedRow returns the row encoding of a state map key.
func (j *Join) storedRow(k []byte) []byte {
	if j.Interval == nil || len(k) < timePrefix {
		return k
	}
	return k[timePrefix:]
}

func storedTime(k []byte) int64 { return int64(binary.BigEndian.Uint64(k) ^ 1<<63) }

// addTimer records that the current join key holds row of side.
func (j *Join) addTimer(side int, row types.Row) {
	d := j.deadline(side, row[j.Interval.TimeCols[side]].Micros())
	k := string(j.key)
	if cur, ok := j.iv.timers[side][k]; !ok || d < cur {
		j.iv.timers[side][k] = d
	}
}

// expire drops the rows of each side whose deadline the other side's
// watermark has passed (invariant interval-expiry).
func (j *Join) expire() error {
	for side := range 2 {
		wm, ok := j.watermark(1 - side)
		if !ok {
			continue
		}
		var due []string
		for k, d := range j.iv.timers[side] {
			if wm > d {
				due = append(due, k)
			}
		}
		sort.Strings(due)
		for _, k := range due {
			if err := j.expireKey(side, k, wm); err != nil {
				return err
			}
		}
	}
	return nil
}

// expireKey drops the rows of side under join key k whose deadline is
// below wm and resets the key's timer.
func (j *Join) expireKey(side int, k string, wm int64) error {
	j.ctx.State.SetCurrentKey([]byte(k))
	m := j.ctx.State.Map(sideName(side))
	var drop [][]byte
	next, more := int64(0), false
	err := m.Iterate(func(rk, _ []byte) error {
		if len(rk) < timePrefix {
			return j.corrupt("stored row time")
		}
		if d := j.deadline(side, storedTime(rk)); wm <= d {
			next, more = d, true
			return errStopIteration
		}
		drop = append(drop, append([]byte(nil), rk...))
		return nil
	})
	if err != nil && !errors.Is(err, errStopIteration) {
		return err
	}
	for _, rk := range drop {
		if err := m.Delete(rk); err != nil {
			return err
		}
	}
	if more {
		j.iv.timers[side][k] = next
	} else {
		delete(j.iv.timers[side], k)
	}
	return nil
}

func (j *Join) openInterval() error {
	iv := j.Interval
	if iv.Delay[0] < 0 || iv.Delay[1] < 0 || iv.Lo > iv.Hi {
		return fmt.Errorf("interval join %s: bounds [%d, %d] us, delays %v: %w", j.ctx.Vertex, iv.Lo, iv.Hi, iv.Delay, base.ErrInvalidArgument)
	}
	j.iv = intervalState{timers: [2]map[string]int64{{}, {}}}
	b, ok, err := j.ctx.State.OperatorValue(joinInterval).Get()
	if err != nil || !ok {
		return err
	}
	if len(b) < 1 || b[0] != joinIntervalVersion {
		return j.corrupt("interval state version")
	}
	b = b[1:]
	for side := range 2 {
		if len(b) < 1 || b[0] > 1 {
			return j.corrupt("interval watermark")
		}
		j.iv.seen[side] = b[0] == 1
		v, k := binary.Varint(b[1:])
		if k <= 0 {
			return j.corrupt("interval watermark")
		}
		j.iv.max[side] = v
		b = b[1+k:]
		n, k := binary.Uvarint(b)
		if k <= 0 {
			return j.corrupt("interval timers")
		}
		b = b[k:]
		for range n {
			l, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < l {
				return j.corrupt("interval timer key")
			}
			key := string(b[k : k+int(l)])
			b = b[k+int(l):]
			d, k2 := binary.Varint(b)
			if k2 <= 0 {
				return j.corrupt("interval timer deadline")
			}
			b = b[k2:]
			j.iv.timers[side][key] = d
		}
	}
	if len(b) != 0 {
		return j.corrupt("interval state length")
	}
	return nil
}

func (j *Join) snapshotInterval() error {
	b := []byte{joinIntervalVersion}
	for side := range 2 {
		seen := byte(0)
		if j.iv.seen[side] {
			seen = 1
		}
		b = append(b, seen)
		b = binary.AppendVarint(b, j.iv.max[side])
		keys := make([]string, 0, len(j.iv.timers[side]))
		for k := range j.iv.timers[side] {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b = binary.AppendUvarint(b, uint64(len(keys)))
		for _, k := range keys {
			b = binary.AppendUvarint(b, uint64(len(k)))
			b = append(b, k...)
			b = binary.AppendVarint(b, j.iv.timers[side][k])
		}
	}
	return j.ctx.State.OperatorValue(joinInterval).Set(b)
}
