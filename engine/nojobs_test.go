package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestNoJobsDropsAView: an instance opened without its jobs (strata start
// --no-jobs, the way back in when a view's job brings the process down)
// reads tables and views as of their last commit, drops a view, and
// refuses a write that no job would commit (55000) instead of waiting
// forever; opened again with its jobs, the table takes writes and the
// view is gone.
func TestNoJobsDropsAView(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, av := catalog.Name(DefaultDatabase, "a"), catalog.Name(DefaultDatabase, "av")
	cols := []catalog.Column{{Name: "k", Type: types.Int64}}
	row := func(k int64) *types.Chunk {
		c := types.NewChunk([]types.Type{types.Int64}, 1)
		c.Append(types.Insert, types.Row{types.NewInt64(k)})
		return c
	}
	e := openTest(t, dir)
	if err := e.CreateTable(ctx, catalog.Table{Name: a, Columns: cols}, false); err != nil {
		t.Fatal(err)
	}
	ep, err := e.Apply(ctx, a, row(1))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, av, "SELECT count(*) AS n FROM a", nil, false); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitCommitted(ctx, av, ep); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e, err = Open(ctx, Options{Dir: dir, NoJobs: true, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if got := queryOne(t, e, "SELECT n FROM av"); got != "(1)" {
		t.Fatalf("av without jobs: %s, want (1)", got)
	}
	if got := queryOne(t, e, "SELECT name, status FROM strata_catalog.jobs"); got != "(dml-dev-a, STOPPED)\n(view-dev-av, STOPPED)" {
		t.Fatalf("jobs without jobs running: %s, want both STOPPED", got)
	}
	if _, err := e.Apply(ctx, a, row(2)); sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState {
		t.Fatalf("a write without jobs: %v, want 55000", err)
	}
	if err := e.Drop(ctx, "materialized view", av, false, false); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e = openTest(t, dir)
	defer e.Close()
	if _, err := e.Apply(ctx, a, row(2)); err != nil {
		t.Fatal(err)
	}
	if got := queryOne(t, e, "SELECT count(*) FROM a"); got != "(2)" {
		t.Fatalf("a after restart: %s, want (2)", got)
	}
	if _, err := e.Table(av); err == nil {
		t.Fatal("av is still there")
	}
}
