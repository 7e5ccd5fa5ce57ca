package tablesource

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
	"github.com/stratadb/strata/table/scan"
	"github.com/stratadb/strata/table/schema"
)

func row(k, v int64) types.Row { return types.Row{types.NewInt64(k), types.NewInt64(v)} }

// A table with epochs 1 (two inserts), 2 (nothing), 3 (an update), 4
// (nothing, committed).
func newTable(t *testing.T) *table.Table {
	t.Helper()
	tb, err := table.Create(fileio.NewMem(), "wh/dev/t", []schema.Field{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64, Nullable: true}},
		[]string{"k"}, map[string]string{"bucket": "1"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := tb.NewWriter("w")
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(w.Write(1, types.Insert, row(1, 10)))
	must(w.Write(1, types.Insert, row(2, 20)))
	must(w.Write(3, types.UpdateAfter, row(1, 11)))
	msgs, err := w.PrepareCommit(4)
	must(err)
	_, err = tb.Commit(msgs)
	must(err)
	return tb
}

func drain(t *testing.T, s *Source, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		it, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case it.Done:
			return append(out, "done")
		case it.Epoch != base.NoEpoch:
			out = append(out, fmt.Sprintf("epoch %d", it.Epoch))
		case it.Chunk != nil:
			out = append(out, strings.TrimSuffix(strings.ReplaceAll(it.Chunk.String(), "\n", "; "), "; "))
		}
	}
	return out
}

func TestEpochsInOrderWithoutGapsAndRestore(t *testing.T) {
	tb := newTable(t)
	cfg := Config{Table: tb, Name: "t", Types: []types.Type{types.Int64, types.Int64}, UntilEpoch: 4}
	backend := heap.New()
	ctx := &operator.Context{Vertex: "src", Parallelism: 1, State: state.NewStore(backend, state.RangeOf(0, 1, 128), 128)}
	s := New(cfg)
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	first := drain(t, s, 2)
	if err := s.Snapshot(1); err != nil {
		t.Fatal(err)
	}
	snap, err := backend.Snapshot(1, nil)
	if err != nil {
		t.Fatal(err)
	}
	rest := drain(t, s, 10)
	want := "+I (1, 10); +I (2, 20) | epoch 1 | epoch 2 | -U (1, 10); +U (1, 11) | epoch 3 | epoch 4 | done"
	if got := strings.Join(append(first, rest...), " | "); got != want {
		t.Fatalf("items:\n got %s\nwant %s", got, want)
	}
	// A restored source resumes after the checkpoint: nothing twice.
	restored, err := heap.Restore(snap.Handle, nil)
	if err != nil {
		t.Fatal(err)
	}
	s2 := New(cfg)
	if err := s2.Open(&operator.Context{Vertex: "src", Parallelism: 1, Restored: 1, State: state.NewStore(restored, state.RangeOf(0, 1, 128), 128)}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(drain(t, s2, 10), " | "); got != strings.Join(rest, " | ") {
		t.Fatalf("after restore:\n got %s\nwant %s", got, strings.Join(rest, " | "))
	}
}

// TestFreshSourceStartsFromTheFullSnapshotAtStartAfter expires a table's
// first snapshots, then starts a source after epoch 5: it emits the table
// as of epoch 5 as inserts and streams what follows, registers its consumer
// at the start snapshot and moves it only when a checkpoint completes; a
// source restored in the middle of the full content emits only the rest.
func TestFreshSourceStartsFromTheFullSnapshotAtStartAfter(t *testing.T) {
	tb, err := table.Create(fileio.NewMem(), "wh/dev/s", []schema.Field{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64, Nullable: true}},
		[]string{"k"}, map[string]string{"bucket": "1"})
	if err != nil {
		t.Fatal(err)
	}
	w, err := tb.NewWriter("w")
	if err != nil {
		t.Fatal(err)
	}
	for e := base.Epoch(1); e <= 6; e++ {
		if err := w.Write(e, types.Insert, row(int64(e), int64(e)*10)); err != nil {
			t.Fatal(err)
		}
		if e == 4 {
			if err := w.Write(e, types.UpdateAfter, row(1, 11)); err != nil {
				t.Fatal(err)
			}
		}
		msgs, err := w.PrepareCommit(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Commit(msgs); err != nil {
			t.Fatal(err)
		}
	}
	snaps := tb.Store().Snapshots
	res, err := maintain.Expire(tb.Store(), maintain.ExpireOptions{RetainMin: 1, RetainMax: 3, TimeRetained: time.Hour})
	if err != nil || fmt.Sprint(res.Expired) != "[1 2 3]" {
		t.Fatalf("expired %v (%v), want [1 2 3]", res.Expired, err)
	}
	cfg := Config{Table: tb, Name: "s", Types: []types.Type{types.Int64, types.Int64}, Consumer: "view", StartAfter: 5, UntilEpoch: 6}
	ctx := func() *operator.Context {
		return &operator.Context{Vertex: "src", Parallelism: 1, State: state.NewStore(heap.New(), state.RangeOf(0, 1, 128), 128)}
	}
	s := New(cfg)
	if err := s.Open(ctx()); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(drain(t, s, 10), " | ")
	want := "+I (1, 11); +I (2, 20); +I (3, 30); +I (4, 40); +I (5, 50) | +I (6, 60) | epoch 6 | done"
	if got != want {
		t.Fatalf("items:\n got %s\nwant %s", got, want)
	}
	consumer := func() base.SnapshotID {
		t.Helper()
		c, ok, err := snaps.Consumer("view")
		if err != nil || !ok {
			t.Fatalf("consumer: %v, %v", ok, err)
		}
		return c
	}
	if c := consumer(); c != 5 {
		t.Fatalf("consumer at snapshot %d before any checkpoint completed, want 5 (the start)", c)
	}
	if err := s.Snapshot(1); err != nil {
		t.Fatal(err)
	}
	if c := consumer(); c != 5 {
		t.Fatalf("consumer moved to %d before the checkpoint completed", c)
	}
	if err := s.NotifyComplete(1); err != nil {
		t.Fatal(err)
	}
	if c := consumer(); c != 7 {
		t.Fatalf("consumer at snapshot %d after checkpoint 1 completed, want 7", c)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if c := consumer(); c != 7 {
		t.Fatalf("closing the source moved its consumer to %d", c)
	}

	// With ConsumerEvery, a checkpoint completed sooner than that after
	// the last registration leaves the older position registered.
	slow := cfg
	slow.Consumer, slow.ConsumerEvery = "slow", time.Hour
	s3 := New(slow)
	if err := s3.Open(ctx()); err != nil {
		t.Fatal(err)
	}
	drain(t, s3, 10)
	if err := s3.Snapshot(1); err != nil {
		t.Fatal(err)
	}
	if err := s3.NotifyComplete(1); err != nil {
		t.Fatal(err)
	}
	if c, ok, err := snaps.Consumer("slow"); err != nil || !ok || c != 5 {
		t.Fatalf("consumer with ConsumerEvery an hour: %d (%v, %v), want 5, the start", c, ok, err)
	}
	if err := s3.Close(); err != nil {
		t.Fatal(err)
	}

	// Restored with two rows of the full content out.
	b, _ := json.Marshal(persisted{Position: scan.Position{Snapshot: 5, Offset: 2}, Closed: 5, CloseTo: 5, Full: 5})
	c := ctx()
	if err := c.State.OperatorValue(stateKey).Set(b); err != nil {
		t.Fatal(err)
	}
	c.Restored = 1
	s2 := New(cfg)
	if err := s2.Open(c); err != nil {
		t.Fatal(err)
	}
	got = strings.Join(drain(t, s2, 10), " | ")
	want = "+I (3, 30); +I (4, 40); +I (5, 50) | +I (6, 60) | epoch 6 | done"
	if got != want {
		t.Fatalf("after restore:\n got %s\nwant %s", got, want)
	}
}

// poll calls Next n times and keeps what the calls returned (an empty item
// means the source had nothing to give out yet).
func poll(t *testing.T, s *Source, n int) string {
	t.Helper()
	var out []string
	for range n {
		it, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case it.Epoch != base.NoEpoch:
			out = append(out, fmt.Sprintf("epoch %d", it.Epoch))
		case it.Chunk != nil:
			out = append(out, strings.TrimSuffix(strings.ReplaceAll(it.Chunk.String(), "\n", "; "), "; "))
		}
	}
	return strings.Join(out, " | ")
}

// TestGroupClosesEachEpochTogether checks invariant close-with-group: of
// two sources of one job, over a table that committed epoch 4 and one that
// commits later, neither closes an epoch before the other is ready to
// (has given out its changes up to it, its table having committed it); the
// changes of the epoch after the last closed one may go out meanwhile.
// Polling stands in for the job's subtasks, which run the two at once.
func TestGroupClosesEachEpochTogether(t *testing.T) {
	fast := newTable(t) // epochs 1 (inserts), 2, 3 (an update), 4
	slow, err := table.Create(fileio.NewMem(), "wh/dev/slow", []schema.Field{{Name: "k", Type: types.Int64}}, []string{"k"}, map[string]string{"bucket": "1"})
	if err != nil {
		t.Fatal(err)
	}
	open := func(tb *table.Table, name string, g *Group) *Source {
		s := New(Config{Table: tb, Name: name, Types: []types.Type{types.Int64, types.Int64}, Idle: time.Millisecond})
		s.JoinGroup(g, name)
		if err := s.Open(&operator.Context{Vertex: name, Parallelism: 1, State: state.NewStore(heap.New(), state.RangeOf(0, 1, 128), 128)}); err != nil {
			t.Fatal(err)
		}
		return s
	}
	g := NewGroup()
	s, other := open(fast, "fast", g), open(slow, "slow", g)
	advance := func(e base.Epoch) {
		if err := slow.Store().Snapshots.AdvanceCommittedEpoch(e, "w"); err != nil {
			t.Fatal(err)
		}
	}
	for i, step := range []struct {
		advance base.Epoch // the slow table commits up to it first
		src     *Source
		want    string
	}{
		{0, s, "+I (1, 10); +I (2, 20)"},
		{0, other, ""},
		{2, other, "epoch 1"}, // fast is ready for 1 only
		{0, s, "epoch 1 | epoch 2 | -U (1, 10); +U (1, 11)"},
		{0, other, "epoch 2"},
		{0, s, ""},            // ready for 3, slow is not
		{6, other, "epoch 3"}, // fast has not looked past epoch 3 yet
		{0, s, "epoch 3 | epoch 4"},
		{0, other, "epoch 4"},
	} {
		if step.advance != 0 {
			advance(step.advance)
		}
		name := "fast"
		if step.src == other {
			name = "slow"
		}
		if got := poll(t, step.src, 8); got != step.want {
			t.Fatalf("step %d, %s source:\n got %q\nwant %q", i, name, got, step.want)
		}
	}
	// A new attempt's source replaces the member of the same name: it
	// starts unready, and holds the other back until it catches up.
	s2 := open(fast, "fast", g)
	advance(8)
	if got := poll(t, other, 8); got != "" {
		t.Fatalf("slow source with a new fast source at epoch 0: got %q, want nothing", got)
	}
	if got, want := poll(t, s2, 12), "+I (1, 10); +I (2, 20) | epoch 1 | epoch 2 | -U (1, 10); +U (1, 11) | epoch 3 | epoch 4"; got != want {
		t.Fatalf("new fast source:\n got %q\nwant %q", got, want)
	}
	if got := poll(t, other, 8); got != "" {
		t.Fatalf("slow source closed %q past the fast table's committed epoch 4", got)
	}
}
