package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestReadOfFailingIngest: a file table whose job keeps failing on a bad
// line (errors = 'fail') is not read as if it were fine: a SELECT of it,
// and of a view over it, fails with 55000 naming the table, the job and
// the line, where it used to return the rows committed so far. The bad
// file arrives in a watched directory after the CREATE (a bad file
// present at the CREATE fails the CREATE: TestCreateFileTableWithBadLine).
func TestReadOfFailingIngest(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	// A restored job completes a checkpoint at its first epoch barrier,
	// before it meets the bad line again: that is not progress
	// (runningJob.failing), or the job would never count as failing.
	e := openTest(t, filepath.Join(dir, "data"))
	defer e.Close()
	name := catalog.Name(DefaultDatabase, "f")
	if err := e.CreateTable(ctx, catalog.Table{Name: name,
		Columns: []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "name", Type: types.Text}},
		Options: map[string]string{"connector": "file", "path": in, "watch": "true", "format": "csv", "csv.header": "true"}}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "fv"), "SELECT count(*) AS n FROM f", nil, false); err != nil {
		t.Fatal(err)
	}
	// Written aside and renamed in, as the file source wants (files-complete).
	if err := os.WriteFile(filepath.Join(in, "_in.csv"), []byte("id,name\n1,ann\nx,bob\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(in, "_in.csv"), filepath.Join(in, "in.csv")); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	var err error
	for time.Now().Before(deadline) {
		if err = e.SourceTableError(ctx, name); err != nil {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState || !strings.Contains(err.Error(), "cannot read f: its writer job ingest-") || !strings.Contains(err.Error(), "in.csv") {
		t.Fatalf("read of f: %v, want 55000 naming f, its job and the file", err)
	}
	var se *sqlerr.Error
	if !errors.As(err, &se) || !strings.Contains(se.Hint, "errors = 'skip'") {
		t.Fatalf("hint of %v: want the way out", err)
	}
	// The batch executor's read says the same.
	text := "SELECT * FROM f"
	st, perr := parser.ParseOne(text)
	if perr != nil {
		t.Fatal(perr)
	}
	_, _, _, err = e.Query(ctx, DefaultDatabase, st.Node, text, ReadSpec{Mode: version.Strong}, &expr.Context{}, nil)
	if sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState || !strings.Contains(err.Error(), "cannot read f") {
		t.Fatalf("SELECT * FROM f: %v, want 55000", err)
	}
	// A view over it: its lineage keeps failing.
	err = e.SourceTableError(ctx, catalog.Name(DefaultDatabase, "fv"))
	if sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState || !strings.Contains(err.Error(), "cannot read fv: job ingest-") || !strings.Contains(err.Error(), "(writing f)") {
		t.Fatalf("read of fv: %v, want 55000 naming the upstream job", err)
	}
}

// TestReadAfterOneRestart: one restart since the last checkpoint is a
// transient failure and does not break reads; two are, for the job and
// for every relation downstream of it.
func TestReadAfterOneRestart(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	a, v := catalog.Name(DefaultDatabase, "a"), catalog.Name(DefaultDatabase, "v")
	w := &runningJob{def: catalog.Job{Name: "ingest-dev-a", Writes: []catalog.ObjectName{a}}, failing: 1, restarts: 5, err: errors.New("line 3: bad")}
	vj := &runningJob{def: catalog.Job{Name: "view-dev-v", Reads: []catalog.ObjectName{a}, Writes: []catalog.ObjectName{v}}}
	e.mu.Lock()
	e.jobs[w.def.Name], e.jobs[vj.def.Name] = w, vj
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		delete(e.jobs, w.def.Name)
		delete(e.jobs, vj.def.Name)
		e.mu.Unlock()
	}()
	ctx := context.Background()
	if err := e.checkReadable(ctx, []catalog.ObjectName{a, v}); err != nil {
		t.Fatalf("one restart: %v", err)
	}
	w.mu.Lock()
	w.failing = 2
	w.mu.Unlock()
	err := e.checkReadable(ctx, []catalog.ObjectName{v})
	if sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState || !strings.Contains(err.Error(), "cannot read v: job ingest-dev-a upstream of it (writing a) keeps failing (2 restarts without progress): line 3: bad") {
		t.Fatalf("two restarts: %v", err)
	}
}
