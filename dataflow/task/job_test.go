package task_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// TestNoCheckpoints runs a job with checkpoints off to its end: every
// operator finishes and the collected totals are complete.
func TestNoCheckpoints(t *testing.T) {
	g := testkit.GeneratorConfig{Rows: 5000, RowsPerEpoch: 5000, ChunkSize: 128, Keys: 10}
	var mu sync.Mutex
	var rows []string
	job := &graph.Job{Name: "plain", Vertices: []graph.Vertex{
		{Name: "gen", Parallelism: 3, NewSource: func(int) operator.Source { return testkit.NewGenerator(g) }},
		{Name: "agg", Parallelism: 2, NewOperator: func(int) operator.Operator { return testkit.NewKeyedSum() }},
		{Name: "out", Parallelism: 1, NewOperator: func(int) operator.Operator { return testkit.NewCollector(&mu, &rows) }},
	}, Edges: []graph.Edge{
		{From: "gen", To: "agg", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
		{From: "agg", To: "out", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
	}}
	if err := task.Run(context.Background(), job, task.Options{}); err != nil {
		t.Fatal(err)
	}
	want := map[int64][2]int64{}
	for s := range 3 {
		for n := range g.Rows {
			k, v := g.Row(s, n)
			w := want[k]
			want[k] = [2]int64{w[0] + v, w[1] + 1}
		}
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows for %d keys: %v", len(rows), len(want), rows)
	}
	for k, w := range want {
		line := fmt.Sprintf("+U (%d, %d, %d)", k, w[0], w[1])
		found := false
		for _, r := range rows {
			found = found || r == line
		}
		if !found {
			t.Fatalf("missing %q in %v", line, rows)
		}
	}
}

type alwaysFails struct{ operator.Base }

func (alwaysFails) Process(int, *types.Chunk) error {
	return fmt.Errorf("disk on fire: %w", base.ErrCorruption)
}

// TestRestartStrategyGivesUp: after MaxAttempts restarts the job is FAILED
// with the operator's error as the cause.
func TestRestartStrategyGivesUp(t *testing.T) {
	g := testkit.GeneratorConfig{Rows: 100, RowsPerEpoch: 10, ChunkSize: 10, Keys: 3}
	job := &graph.Job{Name: "doomed", Vertices: []graph.Vertex{
		{Name: "gen", Parallelism: 1, NewSource: func(int) operator.Source { return testkit.NewGenerator(g) }},
		{Name: "bad", Parallelism: 1, NewOperator: func(int) operator.Operator { return alwaysFails{} }},
	}, Edges: []graph.Edge{{From: "gen", To: "bad", Partitioning: graph.Forward}}}
	restarts := 0
	err := task.Run(context.Background(), job, task.Options{
		CheckpointInterval: time.Millisecond, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 1),
		Restart: task.RestartStrategy{MaxAttempts: 3, Delay: time.Millisecond},
		OnEvent: func(e task.Event) {
			if e.Kind == task.Restarting {
				restarts++
			}
		},
	})
	var failed *task.FailedError
	if !errors.As(err, &failed) || failed.Attempts != 4 || !errors.Is(err, base.ErrCorruption) ||
		!strings.Contains(err.Error(), "bad subtask 0") || !strings.Contains(err.Error(), "FAILED") {
		t.Fatalf("Run = %v, want FAILED after 4 attempts with the operator's error", err)
	}
	if restarts != 3 {
		t.Fatalf("%d restarts, want 3", restarts)
	}
}
