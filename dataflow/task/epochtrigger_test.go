package task_test

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/base"
)

// clockSource closes epoch e at start + e*period, as a view's table
// source closes each epoch when its input table commits it (a view reading
// two tables closes an epoch in one source when the first table commits
// it, in the other when the second does), and has no data: only the epoch
// barriers matter here.
type clockSource struct {
	start  time.Time
	period time.Duration
	epochs base.Epoch
	next   base.Epoch
}

func (s *clockSource) Open(*operator.Context) error { s.next = 1; return nil }

func (s *clockSource) Next() (operator.Item, error) {
	if s.next > s.epochs {
		return operator.Item{Done: true}, nil
	}
	if time.Now().Before(s.start.Add(time.Duration(s.next) * s.period)) {
		return operator.Item{}, nil
	}
	s.next++
	return operator.Item{Epoch: s.next - 1}, nil
}

func (s *clockSource) Snapshot(base.CheckpointID) error { return nil }

// lagSink records, for each epoch barrier it receives, how long after it
// the next checkpoint barrier came (its Snapshot call).
type lagSink struct {
	testkit.Discard
	mu    *sync.Mutex
	lags  *[]time.Duration
	epoch time.Time     // when the last epoch barrier came; zero once a checkpoint followed it
	empty *atomic.Int64 // checkpoints that followed no new epoch barrier
}

func (s *lagSink) OnEpoch(base.Epoch) error {
	s.epoch = time.Now()
	return nil
}

func (s *lagSink) Snapshot(base.CheckpointID) error {
	if !s.epoch.IsZero() {
		s.mu.Lock()
		*s.lags = append(*s.lags, time.Since(s.epoch))
		s.mu.Unlock()
		s.epoch = time.Time{}
	} else {
		s.empty.Add(1)
	}
	return nil
}
func (s *clockSource) NotifyComplete(base.CheckpointID) error { return nil }
func (s *clockSource) Close() error                           { return nil }

// With checkpoints triggered by epochs (Options.CheckpointOnEpoch, as the
// engine runs its jobs), a job whose three source subtasks each emit every
// epoch barrier, a little apart, checkpoints once per epoch, not once per
// barrier: counted
// per barrier, the second and third of an epoch made the coordinator
// trigger a checkpoint three quarters of an interval later that covered
// no new epoch and held the next epoch's checkpoint back.
func TestCheckpointOnEpochCountsEachEpochOnce(t *testing.T) {
	const epochs = 60
	period := 50 * time.Millisecond
	start := time.Now().Add(100 * time.Millisecond)
	var mu sync.Mutex
	var lags []time.Duration
	var empty atomic.Int64
	job := &graph.Job{
		Name: "clock",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: 3, NewSource: func(i int) operator.Source {
				// Each subtask a fifth of a period after the one before.
				return &clockSource{start: start.Add(time.Duration(i) * period / 5), period: period, epochs: epochs}
			}},
			{Name: "sink", Parallelism: 3, NewOperator: func(int) operator.Operator { return &lagSink{mu: &mu, lags: &lags, empty: &empty} }},
		},
		Edges: []graph.Edge{{From: "src", To: "sink", Partitioning: graph.Forward}},
	}
	var completed atomic.Int64
	opts := task.Options{
		Policy: barrier.PolicyAligned, CheckpointInterval: period, CheckpointOnEpoch: true,
		Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
		OnEvent: func(e task.Event) {
			if e.Kind == task.CheckpointCompleted {
				completed.Add(1)
			}
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := task.Run(ctx, job, opts); err != nil {
		t.Fatal(err)
	}
	// One per epoch and the final one; a few more if the machine stalled
	// the sources past one and a half intervals (the clock's fallback).
	got := completed.Load()
	t.Logf("%d checkpoints over %d epochs; %d snapshots at the sinks followed no new epoch", got, epochs, empty.Load())
	if got < epochs/2 || got > epochs+4 {
		t.Fatalf("%d checkpoints over %d epochs, want one per epoch", got, epochs)
	}
	// Each sink subtask sees a checkpoint barrier behind each epoch
	// barrier (the checkpoint is triggered at the first source's barrier
	// and follows the epoch on every source), and few that follow none:
	// the final checkpoint's, one per sink, and a clock fallback's if the
	// machine stalled. Counted per barrier, about a third of the
	// checkpoints covered no new epoch (24 to 36 such snapshots in
	// 60 epochs); counted once, 6 to 9.
	slices.Sort(lags)
	if len(lags) < epochs {
		t.Fatalf("%d epochs followed by a checkpoint at the sinks, want %d or more", len(lags), epochs)
	}
	t.Logf("epoch to checkpoint at the sinks: median %v, 90th percentile %v", lags[len(lags)/2], lags[len(lags)*9/10])
	if n := empty.Load(); n > 15 {
		t.Fatalf("%d checkpoint snapshots at the sinks followed no new epoch barrier, want at most 15", n)
	}
}
