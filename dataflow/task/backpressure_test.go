package task_test

import (
	"context"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/types"
)

// throttledJob is generator -> hash -> sink, the sink sleeping before
// every chunk so that it runs at far below 1% of the generator's speed and
// every queue stays full.
func throttledJob(store *testkit.Store, in *testkit.Injector) *graph.Job {
	g := testkit.GeneratorConfig{Rows: 2400, RowsPerEpoch: 240, ChunkSize: 8, Keys: 1000}
	return &graph.Job{
		Name: "throttled",
		Vertices: []graph.Vertex{
			{Name: "gen", Parallelism: 1, NewSource: func(int) operator.Source { return testkit.NewGenerator(g) }},
			{Name: "sink", Parallelism: 2, NewOperator: func(int) operator.Operator {
				return testkit.Failing{Operator: testkit.Throttle{
					Operator: operator.NewTwoPhaseCommitSink(store.Committer()), Delay: time.Millisecond}, In: in, Where: "sink"}
			}},
		},
		Edges: []graph.Edge{
			{From: "gen", To: "sink", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
		},
	}
}

// TestUnalignedUnderBackpressure is the third "done when":
// unaligned checkpoints complete while the queues are full, with channel
// state, and recovery from them loses and duplicates nothing. The timeout
// policy, with a timeout far shorter than the time to drain the queues,
// must behave the same way: its checkpoints turn unaligned.
func TestUnalignedUnderBackpressure(t *testing.T) {
	for _, p := range []barrier.Policy{barrier.PolicyUnaligned, barrier.PolicyAlignedTimeout} {
		t.Run(p.String(), func(t *testing.T) { underBackpressure(t, p) })
	}
}

func underBackpressure(t *testing.T, policy barrier.Policy) {
	run := func(in *testkit.Injector) (*testkit.Store, []task.Event) {
		store := testkit.NewStore()
		var events []task.Event
		opts := task.Options{
			Policy: policy, CheckpointInterval: 15 * time.Millisecond, TolerableFailures: 10,
			AlignmentTimeout: 2 * time.Millisecond,
			QueueCapacity:    4, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 3),
			Restart: task.RestartStrategy{MaxAttempts: 10, Delay: time.Millisecond},
			OnEvent: func(e task.Event) {
				events = append(events, e)
				if e.Kind == task.CheckpointCompleted {
					in.CheckpointCompleted()
				}
			},
		}
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		if err := task.Run(ctx, throttledJob(store, in), opts); err != nil {
			t.Fatal(err)
		}
		return store, events
	}
	ref, events := run(nil)
	withState := 0
	for _, e := range events {
		if e.Kind == task.CheckpointCompleted && e.ChannelStateBytes > 0 {
			withState++
		}
	}
	if withState < 3 {
		t.Fatalf("only %d unaligned checkpoints completed with channel state under backpressure", withState)
	}
	if n := count(events, task.CheckpointAborted); n != 0 {
		t.Fatalf("%d unaligned checkpoints aborted under backpressure", n)
	}
	if ref.Epochs() != 20 {
		t.Fatalf("committed %d (subtask, epoch) pairs, want 20", ref.Epochs())
	}

	// Failures after checkpoints with channel state have completed.
	in := testkit.NewInjector(3, 3, 5, 40*time.Millisecond, 80*time.Millisecond)
	got, events := run(in)
	if r := count(events, task.Restarting); r < 2 {
		t.Fatalf("only %d restarts", r)
	}
	if got.Dump() != ref.Dump() {
		t.Fatalf("recovery from unaligned checkpoints changed the committed output")
	}
	restoredWithState := false
	seenState := false
	for _, e := range events {
		if e.Kind == task.CheckpointCompleted && e.ChannelStateBytes > 0 {
			seenState = true
		}
		if e.Kind == task.Restarting && seenState {
			restoredWithState = true
		}
	}
	if !restoredWithState {
		t.Fatal("no restart happened after a checkpoint with channel state")
	}
}

// TestProbeShowsBackpressure: while a throttled sink holds the job back,
// the probe reports the sink's input queues full, and nothing once the job
// has ended.
func TestProbeShowsBackpressure(t *testing.T) {
	store := testkit.NewStore()
	probe := &task.Probe{}
	var maxFill float64 // the highest fill seen while the job ran
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			if f := probe.QueueFill(); f != nil && f["sink"] > maxFill {
				maxFill = f["sink"]
			}
		}
	}()
	opts := task.Options{Policy: barrier.PolicyUnaligned, CheckpointInterval: 15 * time.Millisecond, QueueCapacity: 4,
		Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 3), Probe: probe}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	err := task.Run(ctx, throttledJob(store, nil), opts)
	close(stop)
	<-watched
	if err != nil {
		t.Fatal(err)
	}
	if maxFill < 0.5 {
		t.Fatalf("the sink's queues never looked full: highest fill %.2f", maxFill)
	}
	if f := probe.QueueFill(); f != nil {
		t.Fatalf("queue fill after the job ended: %v", f)
	}
}
