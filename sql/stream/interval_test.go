package stream

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
)

// ivRow is a row of either side of the interval join test: key, event
// time (seconds), then the key again as the join key column.
func ivRow(k int64, secs int64) types.Row {
	return types.Row{types.NewInt64(k), types.NewTimestamp(secs * 1_000_000), types.NewInt64(k)}
}

var ivTypes = []types.Type{types.Int64, types.Timestamp}

func newIntervalJoin(kind plan.JoinKind) *Join {
	return &Join{Kind: kind, LeftTypes: ivTypes, RightTypes: ivTypes, LeftKeys: []int{2}, RightKeys: []int{2},
		KeyTypes: []types.Type{types.Int64},
		Interval: &JoinInterval{TimeCols: [2]int{1, 1}, Lo: -10_000_000, Hi: 5_000_000}}
}

func ivChunk(kind types.RowKind, rows ...types.Row) *types.Chunk {
	c := types.NewChunk(append(append([]types.Type(nil), ivTypes...), types.Int64), len(rows))
	for _, r := range rows {
		c.Append(kind, r)
	}
	return c
}

// stored counts the rows of side under join key k.
func stored(t *testing.T, j *Join, side int, k int64) int {
	t.Helper()
	j.ctx.State.SetCurrentKey(types.AppendKey(nil, types.NewInt64(k), types.Int64))
	n := 0
	if err := j.ctx.State.Map(sideName(side)).Iterate(func(_, _ []byte) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestIntervalJoinExpiresState: a left row leaves the state once the
// right watermark passes its time plus Hi, a right row once the left
// watermark passes its time minus Lo; the timers and the largest times
// survive a snapshot and a reopen.
func TestIntervalJoinExpiresState(t *testing.T) {
	b := heap.New()
	out := &collector{}
	j := newIntervalJoin(plan.InnerJoin)
	if err := j.Open(newContext(t, b, out, 0)); err != nil {
		t.Fatal(err)
	}
	step := func(side int, rows ...types.Row) {
		t.Helper()
		if err := j.Process(side, ivChunk(types.Insert, rows...)); err != nil {
			t.Fatal(err)
		}
	}
	epoch := func(e uint64) {
		t.Helper()
		if err := j.OnEpoch(0); err != nil {
			t.Fatal(err)
		}
	}
	step(0, ivRow(1, 100))
	step(1, ivRow(1, 95))
	epoch(1)
	if got, want := strings.Join(out.rows(), "; "), "+I (1, 1970-01-01 00:01:40, 1, 1970-01-01 00:01:35)"; got != want {
		t.Fatalf("epoch 1: %s, want %s", got, want)
	}
	// The right watermark reaches 200 s: the left row (last match at
	// 105 s) goes; the right row at 95 s can still meet left rows up to
	// 105 s and the left watermark is 100 s: it stays.
	step(1, ivRow(2, 200))
	epoch(2)
	if l, r := stored(t, j, 0, 1), stored(t, j, 1, 1); l != 0 || r != 1 {
		t.Fatalf("after right watermark 200 s: %d left and %d right rows of key 1, want 0 and 1", l, r)
	}
	if len(j.iv.timers[0]) != 0 || len(j.iv.timers[1]) != 2 {
		t.Fatalf("timers %v", j.iv.timers)
	}
	// A left row at exactly 105 s still meets the right row at 95 s.
	step(0, ivRow(1, 105))
	epoch(3)
	if got := out.rows(); len(got) != 2 || got[1] != "+I (1, 1970-01-01 00:01:45, 1, 1970-01-01 00:01:35)" {
		t.Fatalf("row on the bound: %v", got)
	}
	if err := j.Snapshot(1); err != nil {
		t.Fatal(err)
	}
	// That left row left the state at once (the right watermark is past
	// 110 s). Reopen from the state: same timers and largest times.
	j2 := newIntervalJoin(plan.InnerJoin)
	if err := j2.Open(newContext(t, b, out, 1)); err != nil {
		t.Fatal(err)
	}
	if j2.iv.max != j.iv.max || j2.iv.seen != j.iv.seen || len(j2.iv.timers[0]) != 0 || len(j2.iv.timers[1]) != 2 {
		t.Fatalf("restored %+v, had %+v", j2.iv, j.iv)
	}
	j = j2
	// The left watermark reaches 300 s: every right row goes.
	step(0, ivRow(3, 300))
	epoch(4)
	if r1, r2 := stored(t, j, 1, 1), stored(t, j, 1, 2); r1 != 0 || r2 != 0 {
		t.Fatalf("after left watermark 300 s: %d and %d right rows", r1, r2)
	}
	if len(j.iv.timers[1]) != 0 {
		t.Fatalf("right timers left: %v", j.iv.timers[1])
	}
	// An interval join's inputs are append-only.
	if err := j.Process(0, ivChunk(types.Delete, ivRow(3, 300))); err == nil || !strings.Contains(err.Error(), "append-only") {
		t.Fatalf("retraction: %v", err)
	}
}

// TestIntervalJoinOuterNullTime: a preserved row without an event time
// comes NULL-padded and is not stored; 'infinity' never expires and never
// raises the watermark.
func TestIntervalJoinOuterNullTime(t *testing.T) {
	out := &collector{}
	j := newIntervalJoin(plan.LeftJoin)
	if err := j.Open(newContext(t, heap.New(), out, 0)); err != nil {
		t.Fatal(err)
	}
	c := ivChunk(types.Insert, ivRow(1, 0), ivRow(2, 0))
	c2 := types.NewChunk(append(append([]types.Type(nil), ivTypes...), types.Int64), 2)
	c2.Append(types.Insert, types.Row{types.NewInt64(1), types.Null, types.NewInt64(1)})
	c2.Append(types.Insert, types.Row{types.NewInt64(5), types.NewTimestamp(types.TimestampInfinity), types.NewInt64(5)})
	if err := j.Process(0, c); err != nil {
		t.Fatal(err)
	}
	if err := j.Process(0, c2); err != nil {
		t.Fatal(err)
	}
	if err := j.Process(1, ivChunk(types.Insert, ivRow(9, 1000))); err != nil {
		t.Fatal(err)
	}
	if err := j.OnEpoch(1); err != nil {
		t.Fatal(err)
	}
	if got := len(out.rows()); got != 4 {
		t.Fatalf("want 4 padded left rows, got %v", out.rows())
	}
	if j.iv.max[0] != 0 {
		t.Fatalf("infinity raised the left watermark to %d", j.iv.max[0])
	}
	if stored(t, j, 0, 1) != 0 || stored(t, j, 0, 5) != 1 {
		t.Fatalf("left state: key 1 %d rows (want 0), key 5 %d rows (want 1)", stored(t, j, 0, 1), stored(t, j, 0, 5))
	}
}
