package operator_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

type fakeCommitter struct {
	prepared  []base.Epoch
	committed []string
}

func (f *fakeCommitter) Prepare(sub int, e base.Epoch, cs []*types.Chunk) ([]byte, error) {
	f.prepared = append(f.prepared, e)
	n := 0
	for _, c := range cs {
		n += c.Len()
	}
	return fmt.Appendf(nil, "epoch %d: %d rows", e, n), nil
}

func (f *fakeCommitter) Commit(sub int, e base.Epoch, desc []byte) error {
	f.committed = append(f.committed, string(desc))
	return nil
}

func rows(n int) *types.Chunk {
	c := types.NewChunk([]types.Type{types.Int64}, n)
	for i := range n {
		c.Append(types.Insert, types.Row{types.NewInt64(int64(i))})
	}
	return c
}

// TestTwoPhaseCommitSink walks the sink through prepare, checkpoints
// covering some epochs, a skipped notification, and a restore that
// re-commits what the restored checkpoint prepared and keeps the open
// epoch's rows.
func TestTwoPhaseCommitSink(t *testing.T) {
	b := heap.New()
	st := state.NewStore(b, state.RangeOf(0, 1, 8), 8)
	f := &fakeCommitter{}
	s := operator.NewTwoPhaseCommitSink(f)
	if err := s.Open(&operator.Context{Vertex: "sink", Parallelism: 1, State: st}); err != nil {
		t.Fatal(err)
	}
	step := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	step(s.Process(0, rows(2)))
	step(s.OnEpoch(1))
	step(s.Snapshot(1)) // covers epoch 1
	step(s.Process(0, rows(3)))
	step(s.OnEpoch(2))
	step(s.Process(0, rows(4))) // open epoch 3, mid-epoch checkpoint
	step(s.Snapshot(2))         // covers epochs 1, 2
	sn, err := b.Snapshot(2, nil)
	step(err)
	h := sn.Handle
	step(s.OnEpoch(3))
	step(s.Snapshot(3)) // covers 1..3
	if len(f.committed) != 0 {
		t.Fatalf("committed before any checkpoint completed: %v", f.committed)
	}
	// Notification of checkpoint 1 is skipped; 2 covers it.
	step(s.NotifyComplete(2))
	if want := []string{"epoch 1: 2 rows", "epoch 2: 3 rows"}; !slices.Equal(f.committed, want) {
		t.Fatalf("after complete 2: %v, want %v", f.committed, want)
	}
	step(s.NotifyComplete(3))
	if len(f.committed) != 3 || f.committed[2] != "epoch 3: 4 rows" {
		t.Fatalf("after complete 3: %v", f.committed)
	}

	// Restore from checkpoint 2: epochs 1 and 2 are re-committed, the open
	// epoch's 4 rows come back and close again as epoch 3.
	rb, err := heap.Restore(h, nil)
	step(err)
	f2 := &fakeCommitter{}
	s2 := operator.NewTwoPhaseCommitSink(f2)
	step(s2.Open(&operator.Context{Vertex: "sink", Parallelism: 1, State: state.NewStore(rb, state.RangeOf(0, 1, 8), 8), Restored: 2}))
	if want := []string{"epoch 1: 2 rows", "epoch 2: 3 rows"}; !slices.Equal(f2.committed, want) {
		t.Fatalf("re-commit after restore: %v, want %v", f2.committed, want)
	}
	step(s2.OnEpoch(3))
	step(s2.Snapshot(4))
	step(s2.NotifyComplete(4))
	if f2.committed[2] != "epoch 3: 4 rows" {
		t.Fatalf("epoch 3 after restore: %v", f2.committed)
	}
}

// batchCommitter records each CommitAll as one call.
type batchCommitter struct {
	fakeCommitter
	calls [][]base.Epoch
}

func (f *batchCommitter) Commit(int, base.Epoch, []byte) error {
	return fmt.Errorf("Commit called on a batch committer")
}

func (f *batchCommitter) CommitAll(_ int, ps []operator.PreparedEpoch) error {
	var es []base.Epoch
	for _, p := range ps {
		es = append(es, p.Epoch)
		f.committed = append(f.committed, string(p.Prepared))
	}
	f.calls = append(f.calls, es)
	return nil
}

// TestTwoPhaseCommitSinkCommitsABatchPerCheckpoint checks that a batch
// committer gets every epoch a completed checkpoint covers in one call, in
// order, and the restored epochs in one call after a restore.
func TestTwoPhaseCommitSinkCommitsABatchPerCheckpoint(t *testing.T) {
	b := heap.New()
	st := state.NewStore(b, state.RangeOf(0, 1, 8), 8)
	f := &batchCommitter{}
	s := operator.NewTwoPhaseCommitSink(f)
	step := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	step(s.Open(&operator.Context{Vertex: "sink", Parallelism: 1, State: st}))
	for e := base.Epoch(1); e <= 3; e++ {
		step(s.Process(0, rows(int(e))))
		step(s.OnEpoch(e))
	}
	step(s.Snapshot(1)) // covers 1..3
	sn, err := b.Snapshot(1, nil)
	step(err)
	step(s.OnEpoch(4))
	step(s.Snapshot(2)) // covers 1..4
	step(s.NotifyComplete(1))
	step(s.NotifyComplete(2))
	if want := [][]base.Epoch{{1, 2, 3}, {4}}; fmt.Sprint(f.calls) != fmt.Sprint(want) {
		t.Fatalf("CommitAll calls %v, want %v", f.calls, want)
	}
	if want := []string{"epoch 1: 1 rows", "epoch 2: 2 rows", "epoch 3: 3 rows", "epoch 4: 0 rows"}; !slices.Equal(f.committed, want) {
		t.Fatalf("committed %v, want %v", f.committed, want)
	}
	rb, err := heap.Restore(sn.Handle, nil)
	step(err)
	f2 := &batchCommitter{}
	s2 := operator.NewTwoPhaseCommitSink(f2)
	step(s2.Open(&operator.Context{Vertex: "sink", Parallelism: 1, State: state.NewStore(rb, state.RangeOf(0, 1, 8), 8), Restored: 1}))
	if want := [][]base.Epoch{{1, 2, 3}}; fmt.Sprint(f2.calls) != fmt.Sprint(want) {
		t.Fatalf("re-commit after restore: CommitAll calls %v, want %v", f2.calls, want)
	}
}

// closingCommitter counts its Close calls.
type closingCommitter struct {
	fakeCommitter
	closed int
}

func (c *closingCommitter) Close() error { c.closed++; return nil }

// Close closes a committer that is an io.Closer, and is a no-op for one
// that is not.
func TestTwoPhaseCommitSinkClosesItsCommitter(t *testing.T) {
	c := &closingCommitter{}
	if err := operator.NewTwoPhaseCommitSink(c).Close(); err != nil || c.closed != 1 {
		t.Fatalf("Close: %v, committer closed %d times, want 1", err, c.closed)
	}
	if err := operator.NewTwoPhaseCommitSink(&fakeCommitter{}).Close(); err != nil {
		t.Fatalf("Close of a sink whose committer has no Close: %v", err)
	}
}

// gatedCommitter is a ConcurrentCommitter whose CommitAll waits for a
// value on release (nil to commit, an error to fail) and reports each
// call's epochs on started.
type gatedCommitter struct {
	fakeCommitter
	started chan []base.Epoch
	release chan error
	mu      sync.Mutex
}

func (g *gatedCommitter) CommitsConcurrently() bool { return true }

func (g *gatedCommitter) CommitAll(_ int, ps []operator.PreparedEpoch) error {
	var es []base.Epoch
	for _, p := range ps {
		es = append(es, p.Epoch)
	}
	g.started <- es
	if err := <-g.release; err != nil {
		return err
	}
	g.mu.Lock()
	for _, p := range ps {
		g.committed = append(g.committed, string(p.Prepared))
	}
	g.mu.Unlock()
	return nil
}

func (g *gatedCommitter) committedNow() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.committed...)
}

// With a ConcurrentCommitter, NotifyComplete returns while the commit
// runs; a checkpoint taken meanwhile still holds the epochs in flight (a
// restore from it re-commits them); epochs handed over while a commit is
// busy go in the next CommitAll together; Close waits for the commit in
// flight; and a failed commit fails the sink's next call.
func TestTwoPhaseCommitSinkCommitsInTheBackground(t *testing.T) {
	step := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	b := heap.New()
	g := &gatedCommitter{started: make(chan []base.Epoch, 4), release: make(chan error)}
	s := operator.NewTwoPhaseCommitSink(g)
	step(s.Open(&operator.Context{Vertex: "sink", Parallelism: 1, State: state.NewStore(b, state.RangeOf(0, 1, 8), 8)}))
	step(s.Process(0, rows(1)))
	step(s.OnEpoch(1))
	step(s.Snapshot(1)) // covers 1
	step(s.NotifyComplete(1))
	if got := <-g.started; fmt.Sprint(got) != "[1]" {
		t.Fatalf("first CommitAll got epochs %v, want [1]", got)
	}
	// The commit of epoch 1 is held: the sink goes on.
	step(s.Process(0, rows(2)))
	step(s.OnEpoch(2))
	step(s.Snapshot(2)) // covers 1, 2: epoch 1 is not committed yet
	sn, err := b.Snapshot(2, nil)
	step(err)
	step(s.NotifyComplete(2))
	step(s.OnEpoch(3))
	step(s.Snapshot(3))
	step(s.NotifyComplete(3))
	if got := g.committedNow(); len(got) != 0 {
		t.Fatalf("committed %v while the commit was held", got)
	}
	g.release <- nil // epoch 1 commits; 2 and 3 were handed over meanwhile
	if got := <-g.started; fmt.Sprint(got) != "[2 3]" {
		t.Fatalf("second CommitAll got epochs %v, want [2 3]", got)
	}
	done := make(chan error)
	go func() { done <- s.Close() }()
	select {
	case err := <-done:
		t.Fatalf("Close returned (%v) while a commit was in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	g.release <- nil
	step(<-done)
	if want := []string{"epoch 1: 1 rows", "epoch 2: 2 rows", "epoch 3: 0 rows"}; !slices.Equal(g.committedNow(), want) {
		t.Fatalf("committed %v, want %v", g.committedNow(), want)
	}

	// Checkpoint 2 was taken with epoch 1 in flight: a restore from it
	// commits epochs 1 and 2 (the table's commit is idempotent).
	rb, err := heap.Restore(sn.Handle, nil)
	step(err)
	f2 := &batchCommitter{}
	s2 := operator.NewTwoPhaseCommitSink(f2)
	step(s2.Open(&operator.Context{Vertex: "sink", Parallelism: 1, State: state.NewStore(rb, state.RangeOf(0, 1, 8), 8), Restored: 2}))
	if want := "[[1 2]]"; fmt.Sprint(f2.calls) != want {
		t.Fatalf("re-commit after restore: CommitAll calls %v, want %v", f2.calls, want)
	}

	// A failed background commit fails the next call.
	g3 := &gatedCommitter{started: make(chan []base.Epoch, 4), release: make(chan error, 1)}
	s3 := operator.NewTwoPhaseCommitSink(g3)
	step(s3.Open(&operator.Context{Vertex: "sink", Parallelism: 1, State: state.NewStore(heap.New(), state.RangeOf(0, 1, 8), 8)}))
	step(s3.OnEpoch(1))
	step(s3.Snapshot(1))
	g3.release <- errors.New("disk full")
	step(s3.NotifyComplete(1))
	<-g3.started
	var failed error
	for i := 0; i < 200 && failed == nil; i++ {
		failed = s3.Process(0, rows(1))
		time.Sleep(time.Millisecond)
	}
	if failed == nil || !strings.Contains(failed.Error(), "disk full") || !strings.Contains(failed.Error(), "epochs 1 to 1") {
		t.Fatalf("call after a failed background commit: %v, want the commit's error", failed)
	}
	// Every later call, Close included, keeps failing with it; nothing
	// more is handed to the stopped goroutine.
	if err := s3.NotifyComplete(2); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("NotifyComplete after a failed background commit: %v", err)
	}
	if err := s3.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("Close after a failed background commit: %v", err)
	}
}
