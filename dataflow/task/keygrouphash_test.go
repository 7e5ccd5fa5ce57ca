package task_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// TestKeyGroupHashVersionChecked: a checkpoint records the key-group hash
// version its keyed state was written with, and a job refuses to restore
// one written with another version (here version 1, the metadata without
// the field), naming the checkpoint, instead of looking its keys up in the
// wrong key groups.
func TestKeyGroupHashVersionChecked(t *testing.T) {
	dir := t.TempDir()
	var completed atomic.Int32
	g := testkit.GeneratorConfig{Rows: 2000, RowsPerEpoch: 500, ChunkSize: 100, Keys: 50,
		Hold: func() bool { return completed.Load() == 0 }}
	job := &graph.Job{Name: "versioned", Vertices: []graph.Vertex{
		{Name: "gen", Parallelism: 2, NewSource: func(int) operator.Source { return testkit.NewGenerator(g) }},
		{Name: "agg", Parallelism: 2, NewOperator: func(int) operator.Operator { return testkit.NewKeyedSum() }},
	}, Edges: []graph.Edge{
		{From: "gen", To: "agg", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
	}}
	opts := task.Options{CheckpointInterval: 5 * time.Millisecond, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, dir, 1),
		OnEvent: func(e task.Event) {
			if e.Kind == task.CheckpointCompleted {
				completed.Add(1)
			}
		}}
	if err := task.Run(context.Background(), job, opts); err != nil {
		t.Fatal(err)
	}
	ms, err := checkpoint.NewStorage(checkpoint.OSFS{}, dir, 1).Completed()
	if err != nil || len(ms) != 1 {
		t.Fatalf("%d completed checkpoints (%v), want one", len(ms), err)
	}
	path := ms[0].Path()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if v, ok := m["key_group_hash"].(float64); !ok || int(v) != state.KeyGroupHash {
		t.Fatalf("metadata key_group_hash %v, want %d: %s", m["key_group_hash"], state.KeyGroupHash, data)
	}

	// The same checkpoint as an older build wrote it.
	delete(m, "key_group_hash")
	if data, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	chk, err := filepath.Rel(dir, path) // chk-<id>.metadata or chk-<id>/_metadata
	if err != nil || !strings.HasPrefix(chk, "chk-") {
		t.Fatalf("metadata %s is not a checkpoint's in %s (%v)", path, dir, err)
	}
	err = task.Run(context.Background(), job, opts)
	if !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), chk) ||
		!strings.Contains(err.Error(), "key-group hash version 1") {
		t.Fatalf("Run over a version-1 checkpoint = %v, want a refusal naming %s and version 1", err, chk)
	}
}
