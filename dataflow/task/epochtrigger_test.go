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
	first  *firstEmits
}

// firstEmits records when the first source subtask emitted each epoch
// barrier, to tell a stalled run from a wrong count.
type firstEmits struct {
	mu sync.Mutex
	at map[base.Epoch]time.Time
}

func (f *firstEmits) note(e base.Epoch) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.at[e]; !ok {
		f.at[e] = time.Now()
	}
}

// stalls counts the epochs whose first barrier came at least gap after
// the previous epoch's: each lets the coordinator's clock fallback (one
// and a half intervals after the last trigger) trigger a checkpoint that
// covers no new epoch.
func (f *firstEmits) stalls(epochs base.Epoch, gap time.Duration) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for e := base.Epoch(2); e <= epochs; e++ {
		if f.at[e].Sub(f.at[e-1]) >= gap {
			n++
		}
	}
	return n
}

func (s *clockSource) Open(*operator.Context) error { s.next = 1; return nil }

func (s *clockSource) Next() (operator.Item, error) {
	if s.next > s.epochs {
		return operator.Item{Done: true}, nil
	}
	if time.Now().Before(s.start.Add(time.Duration(s.next) * s.period)) {
		return operator.Item{}, nil
	}
	s.first.note(s.next)
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
	first := &firstEmits{at: make(map[base.Epoch]time.Time)}
	job := &graph.Job{
		Name: "clock",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: 3, NewSource: func(i int) operator.Source {
				// Each subtask a fifth of a period after the one before.
				return &clockSource{start: start.Add(time.Duration(i) * period / 5), period: period, epochs: epochs, first: first}
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
	// One per epoch and the final one, and one more for each stall of
	// the sources long enough for the clock's fallback. Fewer when the
	// machine is busy: an epoch that comes while a checkpoint is still
	// in flight is covered by the next one (26 to 34 over 60 epochs with
	// four busy loops beside the test on two cores), so the lower bound
	// only says that epochs trigger checkpoints at all.
	got := completed.Load()
	stalls := first.stalls(epochs, period+period/4)
	t.Logf("%d checkpoints over %d epochs; %d snapshots at the sinks followed no new epoch; %d stalls of the sources", got, epochs, empty.Load(), stalls)
	if got < epochs/6 || got > int64(epochs+4+stalls) {
		t.Fatalf("%d checkpoints over %d epochs with %d stalls, want one per epoch", got, epochs, stalls)
	}
	// Each sink subtask sees a checkpoint barrier behind each epoch
	// barrier (the checkpoint is triggered at the first source's barrier
	// and follows the epoch on every source), and few that follow none:
	// the final checkpoint's, one per sink, and a clock fallback's if the
	// machine stalled. Counted per barrier, about a third of the
	// checkpoints covered no new epoch (24 to 36 such snapshots in
	// 60 epochs); counted once, 6 to 9 on a quiet machine. On a busy one
	// the sources stall, and each stall long enough for the clock's
	// fallback (measured from the first barrier of each epoch, with a
	// quarter interval for the coordinator's tick) may add a checkpoint
	// that follows no epoch at each of the three sinks.
	if len(lags) == 0 {
		t.Fatal("no epoch was followed by a checkpoint at the sinks")
	}
	slices.Sort(lags)
	t.Logf("epoch to checkpoint at the sinks: median %v, 90th percentile %v", lags[len(lags)/2], lags[len(lags)*9/10])
	limit := int64(15 + 3*stalls)
	if n := empty.Load(); n > limit {
		t.Fatalf("%d checkpoint snapshots at the sinks followed no new epoch barrier, want at most %d (15, and 3 for each of %d stalls of the sources)", n, limit, stalls)
	}
}
