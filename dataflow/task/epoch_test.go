package task_test

import (
	"context"
	"fmt"
	"strings"
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

// TestEpochAlignment is the second "done when": a two-input
// operator fed by two sources with different speeds, epoch lengths and
// parallelism records the epoch of every input row; everything it emits at
// epoch E stems from rows of epoch E only. Checkpoints are unaligned (they
// overtake epoch barriers) and panics are injected, so alignment has to
// survive restores of partial epochs too.
func TestEpochAlignment(t *testing.T) {
	a := testkit.GeneratorConfig{Rows: 80000, RowsPerEpoch: 4000, ChunkSize: 64, Keys: 50, WithEpoch: true}
	b := testkit.GeneratorConfig{Rows: 16000, RowsPerEpoch: 800, ChunkSize: 7, Keys: 50, WithEpoch: true}
	const epochs = 20
	store := testkit.NewStore()
	in := testkit.NewInjector(7, 8, 30, 2*time.Millisecond, 6*time.Millisecond)
	// The sources wait at their end until every failure happened.
	a.Hold, b.Hold = in.Pending, in.Pending
	key := []types.Type{types.Int64}
	job := &graph.Job{
		Name: "epochs",
		Vertices: []graph.Vertex{
			{Name: "a", Parallelism: 2, NewSource: func(int) operator.Source { return testkit.NewGenerator(a) }},
			{Name: "b", Parallelism: 1, NewSource: func(int) operator.Source { return testkit.NewGenerator(b) }},
			{Name: "rec", Parallelism: 2, NewOperator: func(int) operator.Operator {
				return testkit.Failing{Operator: testkit.NewEpochRecorder(2), In: in, Where: "recorder"}
			}},
			{Name: "sink", Parallelism: 2, NewOperator: func(int) operator.Operator {
				return operator.NewTwoPhaseCommitSink(store.Committer())
			}},
		},
		Edges: []graph.Edge{
			{From: "a", To: "rec", Input: 0, Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: key},
			{From: "b", To: "rec", Input: 1, Partitioning: graph.Broadcast},
			{From: "rec", To: "sink", Partitioning: graph.Forward},
		},
	}
	var restarts int
	opts := task.Options{
		Policy: barrier.PolicyUnaligned, CheckpointInterval: 3 * time.Millisecond, TolerableFailures: 100,
		QueueCapacity: 2, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
		Restart: task.RestartStrategy{MaxAttempts: 100, Delay: time.Millisecond},
		OnEvent: func(e task.Event) {
			switch e.Kind {
			case task.Restarting:
				restarts++
			case task.CheckpointCompleted:
				in.CheckpointCompleted()
			}
		},
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := task.Run(ctx, job, opts); err != nil {
		t.Fatal(err)
	}
	// Committed rows: "+I (input, E, min, max, rows)" per sink subtask and
	// epoch.
	rows := map[string]int64{}
	for _, line := range strings.Split(store.Dump(), "\n") {
		var s, e, input, ep, lo, hi, n int64
		if _, err := fmt.Sscanf(line, "s%d e%d +I (%d, %d, %d, %d, %d)", &s, &e, &input, &ep, &lo, &hi, &n); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if ep != e || lo != e || hi != e {
			t.Fatalf("at epoch %d input %d saw rows of epochs %d..%d", e, input, lo, hi)
		}
		rows[fmt.Sprintf("input %d epoch %d", input, e)] += n
	}
	for e := 1; e <= epochs; e++ {
		// Input 0: two subtasks of a, RowsPerEpoch each, spread by hash.
		if got := rows[fmt.Sprintf("input 0 epoch %d", e)]; got != 2*a.RowsPerEpoch {
			t.Fatalf("input 0 epoch %d: %d rows, want %d", e, got, 2*a.RowsPerEpoch)
		}
		// Input 1: b's rows broadcast to both recorder subtasks.
		if got := rows[fmt.Sprintf("input 1 epoch %d", e)]; got != 2*b.RowsPerEpoch {
			t.Fatalf("input 1 epoch %d: %d rows, want %d", e, got, 2*b.RowsPerEpoch)
		}
	}
	if restarts < 6 {
		t.Fatalf("only %d restarts", restarts)
	}
	t.Logf("%d restarts", restarts)
}
