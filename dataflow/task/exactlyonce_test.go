package task_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state/pebble"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/types"
)

// sumJob is generator -> hash(key) -> keyed SUM/COUNT -> 2PC sink, with
// failures injected into the aggregation and the sink when in is not nil.
func sumJob(g testkit.GeneratorConfig, store *testkit.Store, in *testkit.Injector) *graph.Job {
	return &graph.Job{
		Name: "sum",
		Vertices: []graph.Vertex{
			{Name: "gen", Parallelism: 2, NewSource: func(int) operator.Source { return testkit.NewGenerator(g) }},
			{Name: "agg", Parallelism: 2, NewOperator: func(int) operator.Operator {
				return testkit.Failing{Operator: testkit.NewKeyedSum(), In: in, Where: "agg"}
			}},
			{Name: "sink", Parallelism: 2, NewOperator: func(int) operator.Operator {
				return testkit.Failing{Operator: operator.NewTwoPhaseCommitSink(store.Committer()), In: in, Where: "sink"}
			}},
		},
		Edges: []graph.Edge{
			{From: "gen", To: "agg", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
			{From: "agg", To: "sink", Partitioning: graph.Forward},
		},
	}
}

func runSum(t *testing.T, g testkit.GeneratorConfig, policy barrier.Policy, backend task.StateBackend, in *testkit.Injector, mod ...func(*task.Options)) (*testkit.Store, []task.Event) {
	t.Helper()
	store := testkit.NewStore()
	var events []task.Event
	opts := task.Options{
		Policy:             policy,
		CheckpointInterval: 3 * time.Millisecond,
		AlignmentTimeout:   time.Millisecond,
		TolerableFailures:  1000,
		QueueCapacity:      4,
		Storage:            checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
		Backend:            backend,
		Restart:            task.RestartStrategy{MaxAttempts: 1000, Delay: time.Millisecond},
		OnEvent: func(e task.Event) {
			events = append(events, e)
			if e.Kind == task.CheckpointCompleted {
				in.CheckpointCompleted()
			}
		},
	}
	for _, m := range mod {
		m(&opts)
	}
	// While failures are to come the sources run slowly, so that the
	// failures hit the middle of the data, and wait at their end; then
	// they go at full speed.
	g.Hold = in.Pending
	g.Pace = func() {
		if in.Pending() {
			time.Sleep(time.Millisecond)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := task.Run(ctx, sumJob(g, store, in), opts); err != nil {
		t.Fatalf("%s: %v", policy, err)
	}
	return store, events
}

// reference runs the job without failures and checks its final totals
// against a direct computation over the generator's rows.
func reference(t *testing.T, g testkit.GeneratorConfig) *testkit.Store {
	ref, _ := runSum(t, g, barrier.PolicyAligned, task.HeapBackend{}, nil)
	if want := 2 * int(g.Rows/g.RowsPerEpoch); ref.Epochs() != want {
		t.Fatalf("failure-free run committed %d (subtask, epoch) pairs, want %d", ref.Epochs(), want)
	}
	direct := map[int64][2]int64{}
	for s := range 2 {
		for n := range g.Rows {
			k, v := g.Row(s, n)
			d := direct[k]
			direct[k] = [2]int64{d[0] + v, d[1] + 1}
		}
	}
	final := ref.Final()
	if len(final) != len(direct) {
		t.Fatalf("reference has %d keys, want %d", len(final), len(direct))
	}
	for k, d := range direct {
		if got, w := final[fmt.Sprint(k)], fmt.Sprintf("%d, %d", d[0], d[1]); got != w {
			t.Fatalf("key %d: reference total %q, want %q", k, got, w)
		}
	}
	return ref
}

func count(events []task.Event, k task.EventKind) int {
	n := 0
	for _, e := range events {
		if e.Kind == k {
			n++
		}
	}
	return n
}

// TestExactlyOnceUnderFailures is the first "done when": for each
// checkpoint mode and state backend, at least 20 injected panics, and the
// committed output equals a failure-free run exactly, epoch by epoch.
func TestExactlyOnceUnderFailures(t *testing.T) {
	backends := []struct {
		name  string
		new   func(t *testing.T) task.StateBackend
		gen   testkit.GeneratorConfig
		pause time.Duration
	}{
		{"heap", func(*testing.T) task.StateBackend { return task.HeapBackend{} },
			testkit.GeneratorConfig{Rows: 100000, RowsPerEpoch: 2000, ChunkSize: 100, Keys: 97}, 4 * time.Millisecond},
		// A pebble attempt costs more to open, restore and checkpoint:
		// longer pauses between failures.
		{"pebble", func(t *testing.T) task.StateBackend { return pebble.Factory{Dir: t.TempDir()} },
			testkit.GeneratorConfig{Rows: 100000, RowsPerEpoch: 2000, ChunkSize: 100, Keys: 97}, 8 * time.Millisecond},
	}
	for bi, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ref := reference(t, b.gen)
			for i, p := range []barrier.Policy{barrier.PolicyAligned, barrier.PolicyUnaligned, barrier.PolicyAlignedTimeout} {
				t.Run(p.String(), func(t *testing.T) {
					// Two subtasks may panic in the same attempt: inject
					// more panics than the 20 restarts required.
					in := testkit.NewInjector(uint64(10*bi+i)+1, 26, 10, b.pause, 3*b.pause)
					got, events := runSum(t, b.gen, p, b.new(t), in)
					checkRun(t, p, in, events)
					if got.Dump() != ref.Dump() {
						t.Fatalf("committed output differs from the failure-free run (%d vs %d epochs)", got.Epochs(), ref.Epochs())
					}
				})
			}
		})
	}
}

// checkRun checks that a run with injected failures tested something: at
// least 20 restarts, most of them from a completed checkpoint, and channel
// state stored by unaligned checkpoints.
func checkRun(t *testing.T, p barrier.Policy, in *testkit.Injector, events []task.Event) {
	t.Helper()
	if r := count(events, task.Restarting); r < 20 || r > in.Failed() {
		t.Fatalf("%d restarts for %d injected panics, want 20..%d", r, in.Failed(), in.Failed())
	}
	restored, completed := 0, 0
	var chBytes int64
	for _, e := range events {
		switch e.Kind {
		case task.CheckpointCompleted:
			completed++
			chBytes += e.ChannelStateBytes
		case task.Restarting:
			if completed > 0 {
				restored++
			}
		}
	}
	if restored < 15 {
		t.Fatalf("only %d restarts restored a completed checkpoint", restored)
	}
	if p == barrier.PolicyUnaligned && chBytes == 0 {
		t.Fatal("no unaligned checkpoint stored any channel state: the test exercises nothing")
	}
	t.Logf("%s: %d failures, %d restarts from a checkpoint, %d checkpoints completed, %d aborted, %d bytes of channel state",
		p, in.Failed(), restored, completed, count(events, task.CheckpointAborted), chBytes)
}

// TestExactlyOnceWithEpochTriggeredCheckpoints runs the same job with its
// checkpoints triggered by the sources' epoch barriers
// (Options.CheckpointOnEpoch, as the engine runs its jobs), under the
// timeout policy, with injected panics: the committed output equals the
// failure-free run's.
func TestExactlyOnceWithEpochTriggeredCheckpoints(t *testing.T) {
	g := testkit.GeneratorConfig{Rows: 100000, RowsPerEpoch: 2000, ChunkSize: 100, Keys: 97}
	ref := reference(t, g)
	in := testkit.NewInjector(77, 26, 10, 4*time.Millisecond, 12*time.Millisecond)
	got, events := runSum(t, g, barrier.PolicyAlignedTimeout, task.HeapBackend{}, in, func(o *task.Options) {
		// Epochs come about every 20 ms while failures are pending (a
		// chunk of 100 rows a millisecond): the epochs trigger, not the
		// clock's fallback after 30 ms.
		o.CheckpointOnEpoch, o.CheckpointInterval = true, 20*time.Millisecond
	})
	checkRun(t, barrier.PolicyAlignedTimeout, in, events)
	if got.Dump() != ref.Dump() {
		t.Fatalf("committed output differs from the failure-free run (%d vs %d epochs)", got.Epochs(), ref.Epochs())
	}
}
