package stream

import (
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
)

const sec = int64(1_000_000)

func TestAppendWindows(t *testing.T) {
	for _, c := range []struct {
		kind                   plan.WindowKind
		t, size, slide, offset int64
		want                   string
	}{
		{plan.Tumble, 0, 10, 0, 0, "[0,10)"},
		{plan.Tumble, 9, 10, 0, 0, "[0,10)"},
		{plan.Tumble, 10, 10, 0, 0, "[10,20)"}, // exactly at the end: next window
		{plan.Tumble, -1, 10, 0, 0, "[-10,0)"}, // before 1970: the window below
		{plan.Tumble, -10, 10, 0, 0, "[-10,0)"},
		{plan.Tumble, -11, 10, 0, 0, "[-20,-10)"},
		{plan.Tumble, 2, 10, 0, 3, "[-7,3)"},
		{plan.Tumble, 3, 10, 0, 3, "[3,13)"},
		{plan.Tumble, -8, 10, 0, 3, "[-17,-7)"},
		{plan.Hop, 5, 10, 5, 0, "[0,10) [5,15)"},
		{plan.Hop, 4, 10, 5, 0, "[-5,5) [0,10)"},
		{plan.Hop, -5, 15, 5, 0, "[-15,0) [-10,5) [-5,10)"},
		{plan.Hop, 7, 6, 2, 0, "[2,8) [4,10) [6,12)"},
		{plan.Cumulate, 0, 15, 5, 0, "[0,5) [0,10) [0,15)"},
		{plan.Cumulate, 5, 15, 5, 0, "[0,10) [0,15)"},
		{plan.Cumulate, 14, 15, 5, 0, "[0,15)"},
		{plan.Cumulate, -1, 15, 5, 0, "[-15,0)"},
		{plan.Cumulate, -15, 15, 5, 0, "[-15,-10) [-15,-5) [-15,0)"},
		{plan.Hop, 7, 6, 2, 1, "[3,9) [5,11) [7,13)"},
		{plan.Cumulate, 3, 15, 5, 4, "[-11,4)"},
		{plan.Cumulate, -8, 15, 5, 4, "[-11,-6) [-11,-1) [-11,4)"},
	} {
		var parts []string
		for _, w := range AppendWindows(nil, c.kind, c.t, c.size, c.slide, c.offset) {
			parts = append(parts, fmt.Sprintf("[%d,%d)", w.Start, w.End))
		}
		if got := strings.Join(parts, " "); got != c.want {
			t.Errorf("%s t=%d size=%d slide=%d offset=%d: %s, want %s", c.kind, c.t, c.size, c.slide, c.offset, got, c.want)
		}
	}
	if CheckWindow(plan.Hop, 10*sec, 4*sec) == nil || CheckWindow(plan.Cumulate, 10*sec, 3*sec) == nil || CheckWindow(plan.Tumble, 0, 0) == nil {
		t.Fatal("CheckWindow accepted a size that is not a multiple of the slide, or zero")
	}
	if _, err := WindowMicros(types.IntervalValue{Months: 1}); err == nil {
		t.Fatal("a window of one month was accepted")
	}
}

var bidTypes = []types.Type{types.Int64, types.Timestamp}

func bid(a int64, tsec int64) types.Row {
	return types.Row{types.NewInt64(a), types.NewTimestamp(tsec * sec)}
}

func bids(kind types.RowKind, rows ...types.Row) *types.Chunk {
	c := types.NewChunk(bidTypes, len(rows))
	for _, r := range rows {
		c.Append(kind, r)
	}
	return c
}

func TestWindowExpandKeepsKindsAndDropsNullTimes(t *testing.T) {
	out := &collector{}
	w := &WindowExpand{Kind: plan.Hop, InTypes: bidTypes, TimeCol: 1, Size: 10 * sec, Slide: 5 * sec}
	if err := w.Open(newContext(t, heap.New(), out, 0)); err != nil {
		t.Fatal(err)
	}
	c := bids(types.UpdateBefore, bid(1, 5))
	c.Append(types.UpdateAfter, types.Row{types.NewInt64(1), types.Null})
	c.Append(types.Insert, bid(2, -1))
	c.Append(types.Insert, types.Row{types.NewInt64(3), types.NewTimestamp(types.TimestampInfinity)})
	if err := w.Process(0, c); err != nil {
		t.Fatal(err)
	}
	want := "-U (1, 1970-01-01 00:00:05, 1970-01-01 00:00:00, 1970-01-01 00:00:10); " +
		"-U (1, 1970-01-01 00:00:05, 1970-01-01 00:00:05, 1970-01-01 00:00:15); " +
		"+I (2, 1969-12-31 23:59:59, 1969-12-31 23:59:50, 1970-01-01 00:00:00); " +
		"+I (2, 1969-12-31 23:59:59, 1969-12-31 23:59:55, 1970-01-01 00:00:05)"
	if got := strings.Join(out.rows(), "; "); got != want {
		t.Fatalf("expand:\n got %s\nwant %s", got, want)
	}
}

// harness drives an operator with snapshots and restores.
type harness struct {
	t       *testing.T
	backend state.Backend
	out     *collector
	n       int // rows already returned by step
}

func (h *harness) rowsSince() string {
	rows := h.out.rows()
	s := strings.Join(rows[h.n:], "; ")
	h.n = len(rows)
	return s
}

func TestSessionWindowMergesAndSplits(t *testing.T) {
	h := &harness{t: t, backend: heap.New(), out: &collector{}}
	s := &SessionWindow{InTypes: bidTypes, Width: 2, TimeCol: 1, Gap: 5 * sec}
	if err := s.Open(newContext(t, h.backend, h.out, 0)); err != nil {
		t.Fatal(err)
	}
	step := func(c *types.Chunk, e base.Epoch) string {
		t.Helper()
		if c != nil {
			if err := s.Process(0, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.OnEpoch(e); err != nil {
			t.Fatal(err)
		}
		return h.rowsSince()
	}
	ts := func(sec int) string { return fmt.Sprintf("1970-01-01 00:00:%02d", sec) }
	// Two sessions: {0, 3} ends at 8; {10} ends at 15.
	if got, want := step(bids(types.Insert, bid(1, 0), bid(2, 3), bid(3, 10)), 1),
		fmt.Sprintf("+I (1, %s, %s, %s); +I (2, %s, %s, %s); +I (3, %s, %s, %s)",
			ts(0), ts(0), ts(8), ts(3), ts(0), ts(8), ts(10), ts(10), ts(15)); got != want {
		t.Fatalf("epoch 1:\n got %s\nwant %s", got, want)
	}
	// 6 bridges the gap (6 < 8, 10 < 11): one session [0, 15).
	if got, want := step(bids(types.Insert, bid(4, 6)), 2),
		fmt.Sprintf("-D (1, %s, %s, %s); -D (2, %s, %s, %s); -D (3, %s, %s, %s); "+
			"+I (1, %s, %s, %s); +I (2, %s, %s, %s); +I (4, %s, %s, %s); +I (3, %s, %s, %s)",
			ts(0), ts(0), ts(8), ts(3), ts(0), ts(8), ts(10), ts(10), ts(15),
			ts(0), ts(0), ts(15), ts(3), ts(0), ts(15), ts(6), ts(0), ts(15), ts(10), ts(0), ts(15)); got != want {
		t.Fatalf("epoch 2 (merge):\n got %s\nwant %s", got, want)
	}
	// An event exactly at the gap's end (15 = 10 + 5) starts a new session.
	if got, want := step(bids(types.Insert, bid(5, 15)), 3), fmt.Sprintf("+I (5, %s, %s, %s)", ts(15), ts(15), ts(20)); got != want {
		t.Fatalf("epoch 3 (gap end):\n got %s\nwant %s", got, want)
	}
	// Snapshot, restore, then retract the bridge: the session splits again.
	if err := s.Snapshot(1); err != nil {
		t.Fatal(err)
	}
	snap, err := h.backend.Snapshot(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	restored, err := heap.Restore(snap.Handle, nil)
	if err != nil {
		t.Fatal(err)
	}
	s = &SessionWindow{InTypes: bidTypes, Width: 2, TimeCol: 1, Gap: 5 * sec}
	if err := s.Open(newContext(t, restored, h.out, 1)); err != nil {
		t.Fatal(err)
	}
	if got, want := step(bids(types.Delete, bid(4, 6)), 4),
		fmt.Sprintf("-D (1, %s, %s, %s); -D (2, %s, %s, %s); -D (4, %s, %s, %s); -D (3, %s, %s, %s); "+
			"+I (1, %s, %s, %s); +I (2, %s, %s, %s); +I (3, %s, %s, %s)",
			ts(0), ts(0), ts(15), ts(3), ts(0), ts(15), ts(6), ts(0), ts(15), ts(10), ts(0), ts(15),
			ts(0), ts(0), ts(8), ts(3), ts(0), ts(8), ts(10), ts(10), ts(15)); got != want {
		t.Fatalf("epoch 4 (split):\n got %s\nwant %s", got, want)
	}
	// A row added and retracted in one epoch changes nothing.
	if err := s.Process(0, bids(types.Insert, bid(9, 30))); err != nil {
		t.Fatal(err)
	}
	if got := step(bids(types.Delete, bid(9, 30)), 5); got != "" {
		t.Fatalf("epoch 5 emitted %s, want nothing", got)
	}
	if err := s.Process(0, bids(types.Delete, bid(9, 30))); err == nil {
		t.Fatal("a retraction of a row never added was accepted")
	}
}

func TestLateFilterWithinAndBeyondTheDelay(t *testing.T) {
	backend := heap.New()
	out := &collector{}
	counter := &LateCounter{}
	f := &LateFilter{TimeCol: 1, Delay: 2 * sec, Counter: counter}
	if err := f.Open(newContext(t, backend, out, 0)); err != nil {
		t.Fatal(err)
	}
	c := bids(types.Insert, bid(1, 10), bid(2, 9), bid(3, 8))
	c.Append(types.Insert, types.Row{types.NewInt64(4), types.NewTimestamp(7*sec + 999_999)})
	c.Append(types.Insert, types.Row{types.NewInt64(5), types.Null})
	if err := f.Process(0, c); err != nil {
		t.Fatal(err)
	}
	if err := f.Snapshot(1); err != nil {
		t.Fatal(err)
	}
	snap, err := backend.Snapshot(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Process(0, bids(types.Insert, bid(6, 20), bid(7, 17))); err != nil {
		t.Fatal(err)
	}
	want := "+I (1, 1970-01-01 00:00:10); +I (2, 1970-01-01 00:00:09); +I (3, 1970-01-01 00:00:08); +I (5, NULL); +I (6, 1970-01-01 00:00:20)"
	if got := strings.Join(out.rows(), "; "); got != want || counter.Load() != 2 {
		t.Fatalf("late filter: %s (%d late)\nwant %s (2 late)", got, counter.Load(), want)
	}
	if wm, ok := f.Watermark(); !ok || wm != 18*sec {
		t.Fatalf("watermark %d %v, want 18 s", wm, ok)
	}
	// Restore from the checkpoint: the maximum (10 s) and the count (1)
	// come back; the replay counts 17 s as late again exactly once.
	restored, err := heap.Restore(snap.Handle, nil)
	if err != nil {
		t.Fatal(err)
	}
	out2 := &collector{}
	f = &LateFilter{TimeCol: 1, Delay: 2 * sec, Counter: counter}
	if err := f.Open(newContext(t, restored, out2, 1)); err != nil {
		t.Fatal(err)
	}
	if counter.Load() != 1 {
		t.Fatalf("restored count %d, want 1", counter.Load())
	}
	if err := f.Process(0, bids(types.Insert, bid(8, 8), bid(6, 20), bid(7, 17))); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(out2.rows(), "; "), "+I (8, 1970-01-01 00:00:08); +I (6, 1970-01-01 00:00:20)"; got != want || counter.Load() != 2 {
		t.Fatalf("after restore: %s (%d late), want %s (2 late)", got, counter.Load(), want)
	}
	if err := f.Process(0, bids(types.Delete, bid(6, 20))); err == nil {
		t.Fatal("a retraction through a watermark was accepted")
	}
}

func TestValuesSourceEmitsOnce(t *testing.T) {
	backend := heap.New()
	v := &ValuesSource{Types: bidTypes, Rows: []types.Row{bid(1, 1), bid(2, 2)}}
	if err := v.Open(newContext(t, backend, nil, 0)); err != nil {
		t.Fatal(err)
	}
	if err := v.Snapshot(1); err != nil { // before the rows went out
		t.Fatal(err)
	}
	before, err := backend.Snapshot(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	it, err := v.Next()
	if err != nil || !it.Done || it.Chunk == nil || it.Chunk.Len() != 2 {
		t.Fatalf("first Next: %+v %v", it, err)
	}
	if err := v.Snapshot(2); err != nil {
		t.Fatal(err)
	}
	after, err := backend.Snapshot(2, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		handle []byte
		rows   int
	}{{before.Handle, 2}, {after.Handle, 0}} {
		b, err := heap.Restore(c.handle, nil)
		if err != nil {
			t.Fatal(err)
		}
		v := &ValuesSource{Types: bidTypes, Rows: []types.Row{bid(1, 1), bid(2, 2)}}
		if err := v.Open(newContext(t, b, nil, 1)); err != nil {
			t.Fatal(err)
		}
		it, err := v.Next()
		n := 0
		if it.Chunk != nil {
			n = it.Chunk.Len()
		}
		if err != nil || !it.Done || n != c.rows {
			t.Fatalf("after restore: %d rows, done %v, %v; want %d rows", n, it.Done, err, c.rows)
		}
	}
}

func TestFromWallTimeGapsAndOverlaps(t *testing.T) {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	wall := func(s string) int64 {
		tm, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixMicro()
	}
	for _, c := range []struct{ wall, utc string }{
		{"2024-06-01 12:00", "2024-06-01 16:00"},
		{"2024-01-15 00:00", "2024-01-15 05:00"},
		{"2024-03-10 02:30", "2024-03-10 07:30"}, // skipped: the offset before (EST)
		{"2024-03-10 03:00", "2024-03-10 07:00"},
		{"2024-11-03 01:30", "2024-11-03 06:30"}, // repeated: the later one (EST)
		{"2024-11-03 00:59", "2024-11-03 04:59"},
		{"2024-11-03 02:00", "2024-11-03 07:00"},
	} {
		got := FromWallTime(wall(c.wall), loc)
		if got != wall(c.utc) {
			t.Errorf("wall %s: %s UTC, want %s", c.wall, time.UnixMicro(got).UTC().Format("2006-01-02 15:04"), c.utc)
		}
		if back := WallTime(wall(c.utc), loc); c.wall != "2024-03-10 02:30" && back != wall(c.wall) {
			t.Errorf("WallTime(%s UTC) = %s, want %s", c.utc, time.UnixMicro(back).UTC().Format("2006-01-02 15:04"), c.wall)
		}
	}
}

// TestSessionWindowPartitions: with partition columns, sessions of
// different keys do not merge.
func TestSessionWindowPartitions(t *testing.T) {
	out := &collector{}
	ts := []types.Type{types.Int64, types.Timestamp, types.Int64}
	s := &SessionWindow{InTypes: ts, Width: 2, PartCols: []int{2}, PartTypes: []types.Type{types.Int64}, TimeCol: 1, Gap: 5 * sec}
	if err := s.Open(newContext(t, heap.New(), out, 0)); err != nil {
		t.Fatal(err)
	}
	c := types.NewChunk(ts, 3)
	for _, r := range [][2]int64{{1, 0}, {2, 3}, {1, 4}} {
		c.Append(types.Insert, types.Row{types.NewInt64(r[0]), types.NewTimestamp(r[1] * sec), types.NewInt64(r[0])})
	}
	if err := s.Process(0, c); err != nil {
		t.Fatal(err)
	}
	if err := s.OnEpoch(1); err != nil {
		t.Fatal(err)
	}
	want := "+I (1, 1970-01-01 00:00:00, 1970-01-01 00:00:00, 1970-01-01 00:00:09); " +
		"+I (1, 1970-01-01 00:00:04, 1970-01-01 00:00:00, 1970-01-01 00:00:09); " +
		"+I (2, 1970-01-01 00:00:03, 1970-01-01 00:00:03, 1970-01-01 00:00:08)"
	if got := strings.Join(out.rows(), "; "); got != want {
		t.Fatalf("partitioned sessions:\n got %s\nwant %s", got, want)
	}
}

// TestLateFilterInfinity: 'infinity' passes without moving the watermark;
// '-infinity' is late once there is one.
func TestLateFilterInfinity(t *testing.T) {
	out := &collector{}
	f := &LateFilter{TimeCol: 1, Delay: sec, Counter: &LateCounter{}}
	if err := f.Open(newContext(t, heap.New(), out, 0)); err != nil {
		t.Fatal(err)
	}
	c := bids(types.Insert, bid(1, 10))
	c.Append(types.Insert, types.Row{types.NewInt64(2), types.NewTimestamp(types.TimestampInfinity)})
	c.Append(types.Insert, bid(3, 9))
	c.Append(types.Insert, types.Row{types.NewInt64(4), types.NewTimestamp(types.TimestampNegInfinity)})
	if err := f.Process(0, c); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(out.rows(), "; "), "+I (1, 1970-01-01 00:00:10); +I (2, infinity); +I (3, 1970-01-01 00:00:09)"; got != want || f.Counter.Load() != 1 {
		t.Fatalf("%s (%d late), want %s (1 late)", got, f.Counter.Load(), want)
	}
}
