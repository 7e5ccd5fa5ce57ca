package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/sqlerr"
)

// queryOne runs a one-shot SELECT on e at the strong version and returns
// its rows, sorted and printed.
func queryOne(t *testing.T, e *Engine, text string) string {
	t.Helper()
	st, err := parser.ParseOne(text)
	if err != nil {
		t.Fatal(err)
	}
	_, rows, _, err := e.Query(context.Background(), DefaultDatabase, st.Node, text, ReadSpec{Mode: version.Strong}, &expr.Context{}, nil)
	if err != nil {
		t.Fatalf("%s: %v", text, err)
	}
	return sorted(rows)
}

// writeCSV writes n rows (id, v) with ids from first on, v = id*3, to
// path, with a header.
func writeCSV(t *testing.T, path string, first, n int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("id,v\n")
	for i := first; i < first+n; i++ {
		fmt.Fprintf(&b, "%d,%d\n", i, i*3)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestCreateFileTableReturnsWithItsFiles: CREATE TABLE of a file table
// returns once the rows of the files present at the CREATE are committed,
// so that a SELECT right after it sees them all (as after CREATE TABLE on
// a CDC source); a file added afterwards to a watched directory arrives
// as the job reads it.
func TestCreateFileTableReturnsWithItsFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	if err := os.Mkdir(in, 0o755); err != nil {
		t.Fatal(err)
	}
	// Three files of several transactions each (chunk.rows 500), one of
	// them empty.
	writeCSV(t, filepath.Join(in, "a.csv"), 0, 3000)
	writeCSV(t, filepath.Join(in, "b.csv"), 3000, 0)
	writeCSV(t, filepath.Join(in, "c.csv"), 3000, 4000)
	e := openTest(t, filepath.Join(dir, "data"))
	defer e.Close()
	cols := []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	for _, watch := range []string{"false", "true"} {
		name := catalog.Name(DefaultDatabase, "f_watch_"+watch)
		if err := e.CreateTable(ctx, catalog.Table{Name: name, Columns: cols,
			Options: map[string]string{"connector": "file", "path": in, "format": "csv", "csv.header": "true", "chunk.rows": "500", "watch": watch}}, false); err != nil {
			t.Fatal(err)
		}
		if got, want := queryOne(t, e, "SELECT count(*), sum(v), max(id) FROM "+name.Name), "(7000, 73489500, 6999)"; got != want {
			t.Fatalf("right after CREATE TABLE %s: %s, want %s", name.Name, got, want)
		}
	}
}

// TestCreateFileTableWithBadLine: a file table whose present input the job
// cannot read (a bad line, errors = 'fail') is not created: CREATE fails
// with 55000 naming the table, the file and the line, and leaves no table
// behind, so that it can be created again with errors = 'skip'.
func TestCreateFileTableWithBadLine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(path, []byte("id,v\n1,3\nx,6\n3,9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := openTest(t, filepath.Join(dir, "data"))
	defer e.Close()
	name := catalog.Name(DefaultDatabase, "f")
	cols := []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	opts := map[string]string{"connector": "file", "path": path, "format": "csv", "csv.header": "true"}
	err := e.CreateTable(ctx, catalog.Table{Name: name, Columns: cols, Options: opts}, false)
	if sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState || !strings.Contains(err.Error(), "table f was not created") ||
		!strings.Contains(err.Error(), "in.csv line 3") {
		t.Fatalf("CREATE TABLE over a bad line: %v, want 55000 naming the table and the line", err)
	}
	if _, err := e.Table(name); err == nil {
		t.Fatal("table f exists after its CREATE failed")
	}
	opts["errors"] = "skip"
	if err := e.CreateTable(ctx, catalog.Table{Name: name, Columns: cols, Options: opts}, false); err != nil {
		t.Fatal(err)
	}
	if got, want := queryOne(t, e, "SELECT id, v FROM f"), "(1, 3)\n(3, 9)"; got != want {
		t.Fatalf("right after CREATE TABLE with errors = 'skip': %s, want %s", got, want)
	}
}
