package task_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/types"
)

// TestRestoreDirectoryLayout: a job restores from the checkpoints of a
// build before the single-file form, which kept every checkpoint, all its
// states inline, as chk-<id>/_metadata. The job ran to its end, so a
// restore from its final checkpoint emits nothing again, where a fresh
// start would emit every total; the restored job then goes on writing
// single files and retention deletes the old directory.
func TestRestoreDirectoryLayout(t *testing.T) {
	dir := t.TempDir()
	g := testkit.GeneratorConfig{Rows: 500, RowsPerEpoch: 100, ChunkSize: 50, Keys: 5}
	run := func() []string {
		var mu sync.Mutex
		var rows []string
		job := &graph.Job{Name: "old", Vertices: []graph.Vertex{
			{Name: "gen", Parallelism: 1, NewSource: func(int) operator.Source { return testkit.NewGenerator(g) }},
			{Name: "agg", Parallelism: 1, NewOperator: func(int) operator.Operator { return testkit.NewKeyedSum() }},
			{Name: "out", Parallelism: 1, NewOperator: func(int) operator.Operator { return testkit.NewCollector(&mu, &rows) }},
		}, Edges: []graph.Edge{
			{From: "gen", To: "agg", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
			{From: "agg", To: "out", Partitioning: graph.Forward},
		}}
		opts := task.Options{CheckpointInterval: 5 * time.Millisecond, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, dir, 1)}
		if err := task.Run(context.Background(), job, opts); err != nil {
			t.Fatal(err)
		}
		return rows
	}
	if rows := run(); len(rows) == 0 {
		t.Fatal("the first run emitted nothing")
	}
	files, err := filepath.Glob(filepath.Join(dir, "chk-*.metadata"))
	if err != nil || len(files) != 1 {
		t.Fatalf("single-file checkpoints %q (%v), want one", files, err)
	}
	old := strings.TrimSuffix(files[0], ".metadata")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(files[0], filepath.Join(old, "_metadata")); err != nil {
		t.Fatal(err)
	}
	if rows := run(); len(rows) != 0 {
		t.Fatalf("the run restored from %s emitted %d rows again: %q", old, len(rows), rows)
	}
	names, err := checkpoint.OSFS{}.List(dir)
	if err != nil || len(names) != 1 || !strings.HasSuffix(names[0], ".metadata") || names[0] == filepath.Base(files[0]) {
		t.Fatalf("root holds %q (%v), want one newer single-file checkpoint", names, err)
	}
}
