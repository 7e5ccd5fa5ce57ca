package operator_test

import (
	"fmt"
	"slices"
	"testing"

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
