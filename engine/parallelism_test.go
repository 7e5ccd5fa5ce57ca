package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestViewKeepsItsParallelism: a view created at one parallelism keeps
// it when the engine restarts at another (2 to 1, then 1 to 3), so its
// keyed state is restored whole and it stays equal to a recomputation;
// a view created after the change runs at the new parallelism.
func TestViewKeepsItsParallelism(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(p int) *Engine {
		e, err := Open(ctx, Options{Dir: dir, Parallelism: p, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	kv := catalog.Name(DefaultDatabase, "kv")
	next := 0
	insert := func(e *Engine, n int, views ...string) {
		t.Helper()
		c := types.NewChunk([]types.Type{types.Int64, types.Int64}, n)
		for range n {
			c.Append(types.Insert, types.Row{types.NewInt64(int64(next % 37)), types.NewInt64(int64(next))})
			next++
		}
		ep, err := e.Apply(ctx, kv, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range views {
			if err := e.WaitCommitted(ctx, catalog.Name(DefaultDatabase, v), ep); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(e *Engine, view string) {
		t.Helper()
		want := fmt.Sprintf("(37, %d)", next)
		if got := queryOne(t, e, "SELECT count(*), sum(n) FROM "+view); got != want {
			t.Fatalf("%s: count, sum %s, want %s", view, got, want)
		}
		q := "SELECT count(*) FROM " + view + " c JOIN (SELECT k, count(*) AS n FROM kv GROUP BY k) r ON c.k = r.k AND c.n = r.n"
		if got := queryOne(t, e, q); got != "(37)" {
			t.Fatalf("%s: groups equal to a recomputation: %s, want (37)", view, got)
		}
	}

	e := open(2)
	if err := e.CreateTable(ctx, catalog.Table{Name: kv, Columns: []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "cnt"), "SELECT k, count(*) AS n FROM kv GROUP BY k", nil, false); err != nil {
		t.Fatal(err)
	}
	insert(e, 2000, "cnt")
	check(e, "cnt")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = open(1)
	insert(e, 300, "cnt")
	check(e, "cnt")
	if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "cnt1"), "SELECT k, count(*) AS n FROM kv GROUP BY k", nil, false); err != nil {
		t.Fatal(err)
	}
	insert(e, 300, "cnt", "cnt1")
	check(e, "cnt1")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = open(3)
	defer e.Close()
	insert(e, 300, "cnt", "cnt1")
	check(e, "cnt")
	check(e, "cnt1")
	if got := queryOne(t, e, "SELECT name FROM strata_catalog.jobs WHERE status <> 'RUNNING'"); got != "" {
		t.Fatalf("jobs not running: %s", got)
	}
}

// checkpointShape finds the step whose subtasks differ from those a
// checkpoint holds state for, and skips sources and stateless steps.
func TestCheckpointShape(t *testing.T) {
	g := &graph.Job{Vertices: []graph.Vertex{
		{Name: "source", Parallelism: 4, NewSource: func(int) operator.Source { return nil }},
		{Name: "map", Parallelism: 2},
		{Name: "agg", Parallelism: 2},
	}}
	m := &checkpoint.Metadata{Checkpoint: 7, Subtasks: []checkpoint.FileInfo{
		{Vertex: "source", Subtask: 0}, {Vertex: "agg", Subtask: 0}, {Vertex: "agg", Subtask: 1},
	}}
	if v, _, _ := checkpointShape(g, m); v != "" {
		t.Fatalf("matching shape reported %q", v)
	}
	m.Subtasks = append(m.Subtasks, checkpoint.FileInfo{Vertex: "agg", Subtask: 2})
	if v, want, have := checkpointShape(g, m); v != "agg" || want != 2 || have != 3 {
		t.Fatalf("got %q %d %d, want agg 2 3", v, want, have)
	}
	m.Subtasks = m.Subtasks[:2]
	if v, want, have := checkpointShape(g, m); v != "agg" || want != 2 || have != 1 {
		t.Fatalf("got %q %d %d, want agg 2 1", v, want, have)
	}
}

// A view job of a catalog written before jobs held their parallelism is
// rebuilt at the parallelism of its checkpoint when the engine's differs.
func TestUnpinnedJobTakesItsCheckpointParallelism(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e, err := Open(ctx, Options{Dir: dir, Parallelism: 2, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	kv, cnt := catalog.Name(DefaultDatabase, "kv"), catalog.Name(DefaultDatabase, "cnt")
	if err := e.CreateTable(ctx, catalog.Table{Name: kv, Columns: []catalog.Column{{Name: "k", Type: types.Int64}}}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, cnt, "SELECT k, count(*) AS n FROM kv GROUP BY k", nil, false); err != nil {
		t.Fatal(err)
	}
	c := types.NewChunk([]types.Type{types.Int64}, 100)
	for i := range 100 {
		c.Append(types.Insert, types.Row{types.NewInt64(int64(i))})
	}
	ep, err := e.Apply(ctx, kv, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.WaitCommitted(ctx, cnt, ep); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e, err = Open(ctx, Options{Dir: dir, Parallelism: 1, NoJobs: true, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	def, err := cat.Job(viewJobName(cnt))
	if err != nil {
		t.Fatal(err)
	}
	if def.Options[jobOptParallelism] != "2" {
		t.Fatalf("view job options %v, want parallelism 2", def.Options)
	}
	delete(def.Options, jobOptParallelism) // as written before the option
	g, side, err := e.buildJob(cat, def)
	if err != nil {
		t.Fatal(err)
	}
	g, side, def, err = e.matchCheckpoint(cat, def, g, side)
	if err != nil {
		t.Fatal(err)
	}
	if side != nil && side.close != nil {
		defer side.close()
	}
	if def.Options[jobOptParallelism] != "2" {
		t.Fatalf("rebuilt job options %v, want parallelism 2", def.Options)
	}
	stateful := 0
	for _, v := range g.Vertices {
		if v.NewSource == nil && v.Parallelism == 2 {
			stateful++
		}
	}
	if stateful == 0 {
		t.Fatalf("no step of the rebuilt job runs 2 subtasks: %+v", g.Vertices)
	}
}
