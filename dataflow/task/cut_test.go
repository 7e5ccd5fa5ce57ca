package task_test

import (
	"context"
	"strings"
	"sync/atomic"
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

// TestAlignedCheckpointsBetweenTheSameEpochsOnEverySource runs two sources
// whose epoch barriers leave them at different times (one is paced far
// slower) into a two-input operator, under the aligned policy with no
// tolerable checkpoint failure. Were a checkpoint barrier to leave the
// fast source after epoch barrier E and the slow one before it, the
// operator would hold one input blocked by the epoch and the other by the
// checkpoint, and would have to decline it; each source therefore emits
// the barrier between the same two epoch barriers, and every checkpoint
// completes.
func TestAlignedCheckpointsBetweenTheSameEpochsOnEverySource(t *testing.T) {
	fast := testkit.GeneratorConfig{Rows: 40000, RowsPerEpoch: 2000, ChunkSize: 64, Keys: 50, WithEpoch: true}
	slow := testkit.GeneratorConfig{Rows: 4000, RowsPerEpoch: 200, ChunkSize: 20, Keys: 50, WithEpoch: true,
		Pace: func() { time.Sleep(300 * time.Microsecond) }}
	var completed, aborted atomic.Int32
	// The sources wait at their end until ten checkpoints completed, so
	// that a loaded machine cannot end the job before that.
	fast.Hold = func() bool { return completed.Load() < 10 }
	slow.Hold = fast.Hold
	store := testkit.NewStore()
	key := []types.Type{types.Int64}
	job := &graph.Job{
		Name: "cut",
		Vertices: []graph.Vertex{
			{Name: "fast", Parallelism: 2, NewSource: func(int) operator.Source { return testkit.NewGenerator(fast) }},
			{Name: "slow", Parallelism: 1, NewSource: func(int) operator.Source { return testkit.NewGenerator(slow) }},
			{Name: "rec", Parallelism: 2, NewOperator: func(int) operator.Operator { return testkit.NewEpochRecorder(2) }},
			{Name: "sink", Parallelism: 2, NewOperator: func(int) operator.Operator {
				return operator.NewTwoPhaseCommitSink(store.Committer())
			}},
		},
		Edges: []graph.Edge{
			{From: "fast", To: "rec", Input: 0, Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: key},
			{From: "slow", To: "rec", Input: 1, Partitioning: graph.Broadcast},
			{From: "rec", To: "sink", Partitioning: graph.Forward},
		},
	}
	var lastAbort atomic.Value
	opts := task.Options{
		Policy: barrier.PolicyAligned, CheckpointInterval: 2 * time.Millisecond, TolerableFailures: 0,
		QueueCapacity: 64, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
		OnEvent: func(e task.Event) {
			switch e.Kind {
			case task.CheckpointCompleted:
				completed.Add(1)
			case task.CheckpointAborted:
				aborted.Add(1)
				lastAbort.Store(e.Cause.Error())
			}
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := task.Run(ctx, job, opts); err != nil {
		t.Fatalf("%v (%d checkpoints completed)", err, completed.Load())
	}
	if n := aborted.Load(); n > 0 {
		t.Fatalf("%d checkpoints aborted, the last: %v", n, lastAbort.Load())
	}
	if n := completed.Load(); n < 10 {
		t.Fatalf("only %d checkpoints completed", n)
	}
	if lines := strings.Count(store.Dump(), "\n") + 1; lines < 20 {
		t.Fatalf("only %d committed rows:\n%s", lines, store.Dump())
	}
	t.Logf("%d checkpoints completed", completed.Load())
}
