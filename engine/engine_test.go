package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/sqlerr"
)

func openTest(t *testing.T, dir string) *Engine {
	t.Helper()
	e, err := Open(context.Background(), Options{Dir: dir, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func sorted(rows []types.Row) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

var (
	tName  = catalog.Name(DefaultDatabase, "t")
	v1Name = catalog.Name(DefaultDatabase, "v1")
	v2Name = catalog.Name(DefaultDatabase, "v2")
)

const (
	v1Query = "SELECT k % 3 AS g, sum(v) AS s, count(*) AS n FROM t GROUP BY k % 3"
	v2Query = "SELECT t.k, t.v, v1.s FROM t JOIN v1 ON t.k % 3 = v1.g"
)

// changes makes a random transaction over keys 0..keys-1 against the
// current state (upserts as -U/+U pairs, deletes as -D).
func changes(r *rand.Rand, state map[int64]int64, keys int64, n int) *types.Chunk {
	c := types.NewChunk([]types.Type{types.Int64, types.Int64}, n)
	for range n {
		k := r.Int64N(keys)
		old, ok := state[k]
		switch {
		case ok && r.IntN(4) == 0:
			c.Append(types.Delete, types.Row{types.NewInt64(k), types.NewInt64(old)})
			delete(state, k)
		case ok:
			v := r.Int64N(100)
			c.Append(types.UpdateBefore, types.Row{types.NewInt64(k), types.NewInt64(old)})
			c.Append(types.UpdateAfter, types.Row{types.NewInt64(k), types.NewInt64(v)})
			state[k] = v
		default:
			v := r.Int64N(100)
			c.Append(types.Insert, types.Row{types.NewInt64(k), types.NewInt64(v)})
			state[k] = v
		}
	}
	return c
}

// checkViews reads t, v1 and v2 at one consistent version and compares
// both views with DuckDB's answer to their SQL over t at that version.
func checkViews(t *testing.T, e *Engine, db *duckdb.DB) base.Epoch {
	t.Helper()
	ctx := context.Background()
	r, err := e.ReadConsistent(ctx, []catalog.ObjectName{tName, v1Name, v2Name}, version.Strong, "test")
	if err != nil {
		t.Fatal(err)
	}
	ep := r.Version.Epochs[tName]
	if r.Version.Epochs[v1Name] != ep || r.Version.Epochs[v2Name] != ep {
		t.Fatalf("related tables read at different epochs: %v", r.Version.Epochs)
	}
	if err := db.Exec(ctx, "DROP TABLE IF EXISTS t; CREATE TABLE t (k BIGINT PRIMARY KEY, v BIGINT)"); err != nil {
		t.Fatal(err)
	}
	for _, row := range r.Rows[tName] {
		if err := db.Exec(ctx, "INSERT INTO t VALUES (?, ?)", row[0].Int64(), row[1].Int64()); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Exec(ctx, "DROP VIEW IF EXISTS v1; CREATE VIEW v1 AS "+v1Query); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name catalog.ObjectName
		q    string
	}{{v1Name, v1Query}, {v2Name, v2Query}} {
		_, want, err := db.Query(ctx, c.q)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := sorted(r.Rows[c.name]), sorted(want); a != b {
			t.Fatalf("epoch %d: %s\n%s\nDuckDB over t at the same epoch:\n%s", ep, c.name, a, b)
		}
	}
	return ep
}

// TestTablesViewsAndRestart creates a table written by Apply and two
// levels of views over it, checks both views against DuckDB at consistent
// versions while the table changes, closes and reopens the engine, and
// checks that the jobs resume: later changes reach both views.
func TestTablesViewsAndRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	if err := e.CreateTable(ctx, catalog.Table{Name: tName, Columns: cols, PrimaryKey: []string{"k"}, Options: map[string]string{"bucket": "2"}}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, v1Name, v1Query, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, v2Name, v2Query, nil, false); err != nil {
		t.Fatal(err)
	}
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := rand.New(rand.NewPCG(1, 2))
	state := map[int64]int64{}
	apply := func(e *Engine) base.Epoch {
		ep, err := e.Apply(ctx, tName, changes(r, state, 20, 1+r.IntN(8)))
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	for range 15 {
		ep := apply(e)
		if err := e.WaitCommitted(ctx, v2Name, ep); err != nil {
			t.Fatal(err)
		}
		if got := checkViews(t, e, db); got < ep {
			t.Fatalf("read at epoch %d after the views committed %d", got, ep)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	defer e.Close()
	for range 10 {
		ep := apply(e)
		if err := e.WaitCommitted(ctx, v2Name, ep); err != nil {
			t.Fatal(err)
		}
		checkViews(t, e, db)
	}
	for _, v := range []catalog.ObjectName{v1Name, v2Name} {
		res, err := e.Verify(ctx, v, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !res.OK() || res.Rows == 0 {
			t.Fatalf("verify: %s", res)
		}
	}
	rows, err := e.ReadConsistent(ctx, []catalog.ObjectName{tName}, version.Strong, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := len(rows.Rows[tName]); got != len(state) {
		t.Fatalf("t has %d rows after the restart, want %d", got, len(state))
	}
}

// TestRefusals checks that bad definitions are refused with a SQLSTATE and
// leave the catalog as it was.
func TestRefusals(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	if err := e.CreateTable(ctx, catalog.Table{Name: tName, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
	before, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		do   func() error
		code string
	}{
		{"duplicate table", func() error {
			return e.CreateTable(ctx, catalog.Table{Name: tName, Columns: cols, PrimaryKey: []string{"k"}}, false)
		}, sqlerr.DuplicateTable},
		{"unknown column", func() error { return e.CreateView(ctx, v1Name, "SELECT nope FROM t", nil, false) }, sqlerr.UndefinedColumn},
		{"unknown table", func() error { return e.CreateView(ctx, v1Name, "SELECT k FROM nope", nil, false) }, sqlerr.UndefinedTable},
		{"multiset view with a column named as the hidden count", func() error {
			return e.CreateView(ctx, v1Name, "SELECT v AS _strata_count FROM t", nil, false)
		}, sqlerr.DuplicateColumn},
		{"unnamed column", func() error { return e.CreateView(ctx, v1Name, "SELECT k, v + 1 FROM t", nil, false) }, sqlerr.InvalidColumnDefinition},
		{"unknown option", func() error {
			return e.CreateTable(ctx, catalog.Table{Name: catalog.Name("dev", "u"), Columns: cols, PrimaryKey: []string{"k"}, Options: map[string]string{"colour": "red"}}, false)
		}, sqlerr.InvalidParameterValue},
		{"unknown connector", func() error {
			return e.CreateTable(ctx, catalog.Table{Name: catalog.Name("dev", "u"), Columns: cols, Options: map[string]string{"connector": "magic"}}, false)
		}, sqlerr.InvalidParameterValue},
		{"bad bucket", func() error {
			return e.CreateTable(ctx, catalog.Table{Name: catalog.Name("dev", "u"), Columns: cols, PrimaryKey: []string{"k"}, Options: map[string]string{"bucket": "0"}}, false)
		}, sqlerr.InvalidParameterValue},
		{"drop missing", func() error { return e.Drop(ctx, "view", v1Name, false, false) }, sqlerr.UndefinedTable},
		{"drop table as view", func() error { return e.Drop(ctx, "view", tName, false, false) }, sqlerr.WrongObjectType},
	}
	for _, c := range cases {
		err := c.do()
		if got := sqlerr.Code(err); got != c.code {
			t.Errorf("%s: got %v (%s), want SQLSTATE %s", c.name, err, got, c.code)
		}
		if c.name == "unknown connector" && (err == nil || !strings.Contains(err.Error(), `unknown connector "magic" (connectors of tables: `) || !strings.Contains(err.Error(), "kafka")) {
			t.Errorf("unknown connector: %v, want the connectors of tables and the external sinks named", err)
		}
	}
	after, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if after.Version() != before.Version() {
		t.Fatalf("catalog changed from version %d to %d", before.Version(), after.Version())
	}
	// Two views depend on t: dropping t is refused naming both, CASCADE
	// drops all three.
	if err := e.CreateView(ctx, v1Name, v1Query, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, v2Name, v1Query, nil, false); err != nil {
		t.Fatal(err)
	}
	err = e.Drop(ctx, "table", tName, false, false)
	if sqlerr.Code(err) != sqlerr.DependentObjectsStillExist || !strings.Contains(err.Error(), "because v1, v2 depend on it") {
		t.Fatalf("drop of a table two views read: %v", err)
	}
	if err := e.Drop(ctx, "table", tName, false, true); err != nil {
		t.Fatal(err)
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(cat.Tables()) + len(cat.Jobs()); n != 0 {
		t.Fatalf("after DROP CASCADE the catalog holds %d tables and jobs: %v %v", n, cat.Tables(), cat.Jobs())
	}
	if _, err := fmt.Println(); err != nil {
		t.Fatal(err)
	}
}
