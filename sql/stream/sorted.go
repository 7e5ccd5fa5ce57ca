package stream

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// sorted is the state shared by the operators that recompute a
// partition's output from its rows in order (TopN, SessionWindow), as
// Flink's retractable Top-N keeps a sorted map per partition and
// RisingWave's TopN cache keeps a sorted range of rows.
//
// Keyed state, under the partition key (the key of the exchange before
// the operator):
//
//	sorted-rows     Map: order key ++ row codec of the row -> uvarint
//	                multiplicity ++ row codec of the row, so iteration
//	                yields the rows in order (ties in row codec order:
//	                deterministic, not arrival order)
//	sorted-emitted  Value: the rows the partition last emitted, row codec
//	                after row codec, in output order
//
// Operator state sorted-changed lists the partitions the open epoch
// changed (uvarint length ++ key each), so a checkpoint in the middle of
// an epoch keeps them. At the epoch's end flush recomputes each changed
// partition, diffs the result with what it emitted before (as multisets
// of encoded rows) and emits the difference: every partition's -D rows
// first, then the +I rows, partitions in key order. A partition whose
// output did not change emits nothing.
type sorted struct {
	what       string // operator kind, for errors
	rowT, outT []types.Type
	ctx        *operator.Context
	changed    map[string]struct{}
	key        []byte
}

const (
	sortedRows    = "sorted-rows"
	sortedEmitted = "sorted-emitted"
	sortedChanged = "sorted-changed"
)

var errStopScan = errors.New("stop scan")

func (s *sorted) open(ctx *operator.Context) error {
	s.ctx = ctx
	s.changed = map[string]struct{}{}
	b, ok, err := ctx.State.OperatorValue(sortedChanged).Get()
	if err != nil {
		return err
	}
	for ok && len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return s.corrupt("changed-partition list")
		}
		s.changed[string(b[k:k+int(n)])] = struct{}{}
		b = b[k+int(n):]
	}
	return nil
}

func (s *sorted) corrupt(what string) error {
	return fmt.Errorf("%s %s subtask %d: %s: %w", s.what, s.ctx.Vertex, s.ctx.Subtask, what, base.ErrCorruption)
}

// add folds one row into partition part under orderKey: one more copy, or
// one fewer for a retraction. A retraction of a row the partition does not
// hold is an error naming the row.
func (s *sorted) add(part, orderKey []byte, row types.Row, kind types.RowKind) error {
	enc := types.AppendRow(nil, row, s.rowT)
	s.key = append(append(s.key[:0], orderKey...), enc...)
	return s.addKey(part, s.key, enc, row, kind, true)
}

// addKey is add with the row's state key (order key ++ enc) and its
// encoding enc given; mark false leaves the partition out of the epoch's
// changed partitions (the caller knows its output cannot change).
func (s *sorted) addKey(part, key, enc []byte, row types.Row, kind types.RowKind, mark bool) error {
	s.ctx.State.SetCurrentKey(part)
	m := s.ctx.State.Map(sortedRows)
	v, ok, err := m.Get(key)
	if err != nil {
		return err
	}
	var n uint64
	if ok {
		var k int
		if n, k = binary.Uvarint(v); k <= 0 {
			return s.corrupt("row multiplicity")
		}
	}
	if mark {
		s.changed[string(part)] = struct{}{}
	}
	if kind.IsRetract() {
		if n == 0 {
			return fmt.Errorf("%s %s: a %s retracts row %s that was never added: %w", s.what, s.ctx.Vertex, kind, row, base.ErrInvalidArgument)
		}
		if n == 1 {
			return m.Delete(key)
		}
		n--
	} else {
		n++
	}
	return m.Put(key, append(binary.AppendUvarint(nil, n), enc...))
}

// scan calls fn with partition part's rows in order and their
// multiplicities until fn returns stop.
func (s *sorted) scan(part []byte, fn func(row types.Row, n int64) (stop bool, err error)) error {
	return s.scanKeys(part, func(_ []byte, row types.Row, n int64) (bool, error) { return fn(row, n) })
}

// scanKeys is scan that also passes each row's state key (valid only
// during the call).
func (s *sorted) scanKeys(part []byte, fn func(key []byte, row types.Row, n int64) (stop bool, err error)) error {
	s.ctx.State.SetCurrentKey(part)
	err := s.ctx.State.Map(sortedRows).Iterate(func(key, v []byte) error {
		n, k := binary.Uvarint(v)
		if k <= 0 || n == 0 {
			return s.corrupt("row multiplicity")
		}
		row, rest, err := types.DecodeRow(v[k:], s.rowT)
		if err != nil {
			return err
		}
		if len(rest) != 0 {
			return s.corrupt("trailing row bytes")
		}
		stop, err := fn(key, row, int64(n))
		if err == nil && stop {
			return errStopScan
		}
		return err
	})
	if errors.Is(err, errStopScan) {
		return nil
	}
	return err
}

// evict deletes the rows of partition part whose state keys are keys.
func (s *sorted) evict(part []byte, keys [][]byte) error {
	s.ctx.State.SetCurrentKey(part)
	m := s.ctx.State.Map(sortedRows)
	for _, k := range keys {
		if err := m.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// flush emits the net change of every partition the epoch changed;
// compute returns a partition's output rows now.
func (s *sorted) flush(compute func(part []byte) ([]types.Row, error)) error {
	if len(s.changed) == 0 {
		return nil
	}
	keys := make([]string, 0, len(s.changed))
	for k := range s.changed {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	dels := types.NewChunk(s.outT, 0)
	ins := types.NewChunk(s.outT, 0)
	for _, k := range keys {
		part := []byte(k)
		now, err := compute(part)
		if err != nil {
			return err
		}
		s.ctx.State.SetCurrentKey(part)
		ev := s.ctx.State.Value(sortedEmitted)
		b, _, err := ev.Get()
		if err != nil {
			return err
		}
		var before []types.Row
		var beforeEnc []string
		for len(b) > 0 {
			row, rest, err := types.DecodeRow(b, s.outT)
			if err != nil {
				return err
			}
			before = append(before, row)
			beforeEnc = append(beforeEnc, string(b[:len(b)-len(rest)]))
			b = rest
		}
		var nowBytes []byte
		nowEnc := make([]string, len(now))
		for i, r := range now {
			n := len(nowBytes)
			nowBytes = types.AppendRow(nowBytes, r, s.outT)
			nowEnc[i] = string(nowBytes[n:])
		}
		if bytes.Equal(nowBytes, []byte(joinStrings(beforeEnc))) {
			continue // no net change
		}
		left := multiset(nowEnc)
		for i, e := range beforeEnc {
			if left[e] > 0 {
				left[e]--
				continue
			}
			dels.Append(types.Delete, before[i])
		}
		left = multiset(beforeEnc)
		for i, e := range nowEnc {
			if left[e] > 0 {
				left[e]--
				continue
			}
			ins.Append(types.Insert, now[i])
		}
		if len(nowBytes) == 0 {
			err = ev.Clear()
		} else {
			err = ev.Set(nowBytes)
		}
		if err != nil {
			return err
		}
	}
	clear(s.changed)
	out := types.NewChunk(s.outT, dels.Len()+ins.Len())
	for _, c := range []*types.Chunk{dels, ins} {
		for i := range c.Len() {
			out.Append(c.Kinds[i], c.Row(i))
		}
	}
	if out.Len() == 0 {
		return nil
	}
	return s.ctx.Output.Emit(out)
}

func joinStrings(ss []string) string {
	n := 0
	for _, s := range ss {
		n += len(s)
	}
	b := make([]byte, 0, n)
	for _, s := range ss {
		b = append(b, s...)
	}
	return string(b)
}

func multiset(encs []string) map[string]int {
	m := make(map[string]int, len(encs))
	for _, e := range encs {
		m[e]++
	}
	return m
}

// snapshot records the open epoch's changed partitions.
func (s *sorted) snapshot() error {
	keys := make([]string, 0, len(s.changed))
	for k := range s.changed {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b []byte
	for _, k := range keys {
		b = binary.AppendUvarint(b, uint64(len(k)))
		b = append(b, k...)
	}
	return s.ctx.State.OperatorValue(sortedChanged).Set(b)
}

// partKey returns the memcomparable key of row's partition columns.
func partKey(dst []byte, row types.Row, cols []int, ts []types.Type) []byte {
	for i, c := range cols {
		dst = types.AppendKey(dst, row[c], ts[i])
	}
	return dst
}
