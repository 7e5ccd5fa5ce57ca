package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
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

// TestNoJobsRefusesAViewOverAStoppedJob: without its jobs, a new
// materialized view or sink over a table whose writer is not running
// would wait forever for its first epoch; both are refused at once
// (55000, as a write to that table) and leave nothing behind, while a view
// over a table created in that instance, whose job runs, is created.
func TestNoJobsRefusesAViewOverAStoppedJob(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := catalog.Name(DefaultDatabase, "a"), catalog.Name(DefaultDatabase, "b")
	cols := []catalog.Column{{Name: "k", Type: types.Int64}}
	e := openTest(t, dir)
	for _, n := range []catalog.ObjectName{a, b} {
		if err := e.CreateTable(ctx, catalog.Table{Name: n, Columns: cols}, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "av"), "SELECT k FROM a", nil, false); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	e, err := Open(ctx, Options{Dir: dir, NoJobs: true, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, c := range []struct {
		what, name, query, input string
	}{
		{"materialized view", "v", "SELECT count(*) AS n FROM a", `"a"`},
		{"materialized view", "v", "SELECT k FROM av", `"av"`},
		{"sink", "s", "SELECT k FROM a", `"a"`},
	} {
		tctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		name := catalog.Name(DefaultDatabase, c.name)
		if c.what == "sink" {
			err = e.CreateSink(tctx, name, b, c.query, false)
		} else {
			err = e.CreateView(tctx, name, c.query, nil, false)
		}
		cancel()
		if sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState || !strings.Contains(err.Error(), "--no-jobs") || !strings.Contains(err.Error(), c.input) {
			t.Fatalf("%s %s AS %s without jobs: %v, want 55000 naming %s and --no-jobs", c.what, c.name, c.query, err, c.input)
		}
		cat, err := e.Catalog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cat.Table(name); err == nil {
			t.Fatalf("%s %s is in the catalog after its refusal", c.what, c.name)
		}
		for _, j := range cat.Jobs() {
			if strings.HasSuffix(j.Name, "-"+c.name) {
				t.Fatalf("job %s is in the catalog after the refusal of %s %s", j.Name, c.what, c.name)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, "warehouse", DefaultDatabase, c.name)); !os.IsNotExist(err) {
			t.Fatalf("%s %s left storage behind: %v", c.what, c.name, err)
		}
	}
	if _, err := cat0(t, e).Job(dmlJobName(b)); err != nil {
		t.Fatalf("b lost its DML job to the refused sink: %v", err)
	}

	// A table created in this instance has a running writer: a view over
	// it starts and fills.
	n := catalog.Name(DefaultDatabase, "n")
	if err := e.CreateTable(ctx, catalog.Table{Name: n, Columns: cols}, false); err != nil {
		t.Fatal(err)
	}
	row := types.NewChunk([]types.Type{types.Int64}, 1)
	row.Append(types.Insert, types.Row{types.NewInt64(7)})
	ep, err := e.Apply(ctx, n, row)
	if err != nil {
		t.Fatal(err)
	}
	nv := catalog.Name(DefaultDatabase, "nv")
	if err := e.CreateView(ctx, nv, "SELECT count(*) AS c FROM n", nil, false); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := e.WaitCommitted(wctx, nv, ep); err != nil {
		t.Fatal(err)
	}
	if got := queryOne(t, e, "SELECT c FROM nv"); got != "(1)" {
		t.Fatalf("nv: %s, want (1)", got)
	}
}

func cat0(t *testing.T, e *Engine) *catalog.Catalog {
	t.Helper()
	cat, err := e.Catalog(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return cat
}
