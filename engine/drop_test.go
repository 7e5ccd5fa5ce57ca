package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/sqlerr"
)

// warehouseEntries lists what the warehouse's database directory holds.
func warehouseEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(filepath.Join(dir, "warehouse", DefaultDatabase))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// waitGone waits until path no longer exists.
func waitGone(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := os.Stat(path); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is still there", path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDropRemovesDirectories: DROP of a table and of a view over it
// leaves nothing of them in the warehouse, neither files nor empty
// directories; a table still pinned by a reader keeps its files until
// the pin is released ([drop-after-readers]).
func TestDropRemovesDirectories(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	defer e.Close()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	for _, n := range []string{"t", "keep"} {
		if err := e.CreateTable(ctx, catalog.Table{Name: catalog.Name(DefaultDatabase, n), Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
			t.Fatal(err)
		}
	}
	c := types.NewChunk([]types.Type{types.Int64, types.Int64}, 2)
	c.Append(types.Insert, types.Row{types.NewInt64(1), types.NewInt64(10)})
	c.Append(types.Insert, types.Row{types.NewInt64(2), types.NewInt64(20)})
	ep, err := e.Apply(ctx, tName, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, v1Name, v1Query, nil, false); err != nil {
		t.Fatal(err)
	}
	if err := e.WaitCommitted(ctx, v1Name, max(ep, e.ViewStartEpoch(ctx, v1Name))); err != nil {
		t.Fatal(err)
	}
	if got := warehouseEntries(t, dir); len(got) != 3 {
		t.Fatalf("warehouse before DROP: %v", got)
	}
	if err := e.Drop(ctx, "table", tName, false, true); err != nil {
		t.Fatal(err)
	}
	waitGone(t, filepath.Join(dir, "warehouse", DefaultDatabase, "t"))
	waitGone(t, filepath.Join(dir, "warehouse", DefaultDatabase, "v1"))
	if got := warehouseEntries(t, dir); len(got) != 1 || got[0] != "keep" {
		t.Fatalf("warehouse after DROP ... CASCADE: %v", got)
	}

	// A reader's pin keeps the files of a dropped table until released.
	keep := catalog.Name(DefaultDatabase, "keep")
	if _, err := e.Apply(ctx, keep, c); err != nil {
		t.Fatal(err)
	}
	v, err := e.Meta().AcquireVersion(ctx, meta.VersionRequest{Tables: []catalog.ObjectName{keep}, Mode: version.Weak, Holder: "test reader"})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Drop(ctx, "table", keep, false, false); err != nil {
		t.Fatal(err)
	}
	snapshots := filepath.Join(dir, "warehouse", DefaultDatabase, "keep", "snapshot")
	time.Sleep(200 * time.Millisecond)
	if es, err := os.ReadDir(snapshots); err != nil || len(es) == 0 {
		t.Fatalf("a pinned dropped table's snapshots are gone: %v %v", es, err)
	}
	if err := e.Meta().ReleasePin(ctx, v.Pin); err != nil {
		t.Fatal(err)
	}
	waitGone(t, filepath.Join(dir, "warehouse", DefaultDatabase, "keep"))
}

// TestDropNamesEveryDependent: DROP without CASCADE names every object
// that depends on the table, through views too (gv2 and gv3 read gv,
// which reads g; sink k reads gv2), with a DETAIL line per dependent;
// CASCADE then drops them all.
func TestDropNamesEveryDependent(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	for _, n := range []string{"g", "out"} {
		if err := e.CreateTable(ctx, catalog.Table{Name: catalog.Name(DefaultDatabase, n), Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
			t.Fatal(err)
		}
	}
	for _, v := range [][2]string{{"gv", "SELECT k, v FROM g"}, {"gv2", "SELECT k, v FROM gv"}, {"gv3", "SELECT k, v + 1 AS v FROM gv"}} {
		if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, v[0]), v[1], nil, false); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.CreateSink(ctx, catalog.Name(DefaultDatabase, "k"), catalog.Name(DefaultDatabase, "out"), "SELECT k, v FROM gv2", false); err != nil {
		t.Fatal(err)
	}
	err := e.Drop(ctx, "table", catalog.Name(DefaultDatabase, "g"), false, false)
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.DependentObjectsStillExist || !strings.Contains(se.Message, "cannot drop table g because gv, gv2, gv3, sink k depend on it") {
		t.Fatalf("DROP TABLE g: %v", err)
	}
	wantDetail := "materialized view gv depends on table g\nmaterialized view gv2 depends on materialized view gv\nmaterialized view gv3 depends on materialized view gv\nsink k depends on materialized view gv2"
	if se.Detail != wantDetail {
		t.Fatalf("detail %q, want %q", se.Detail, wantDetail)
	}
	err = e.Drop(ctx, "view", catalog.Name(DefaultDatabase, "gv2"), false, false)
	if sqlerr.Code(err) != sqlerr.DependentObjectsStillExist || !strings.Contains(err.Error(), "because sink k depends on it") {
		t.Fatalf("DROP VIEW gv2: %v", err)
	}
	if err := e.Drop(ctx, "table", catalog.Name(DefaultDatabase, "g"), false, true); err != nil {
		t.Fatal(err)
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"g", "gv", "gv2", "gv3"} {
		if _, err := cat.Table(catalog.Name(DefaultDatabase, n)); err == nil {
			t.Errorf("%s is still there after CASCADE", n)
		}
	}
	if len(dependentsOf(cat, catalog.Name(DefaultDatabase, "out"))) != 0 {
		t.Error("out still has dependents")
	}
}

// planWorld is a catalog for planDrop: table t with view a over it and
// view b over a; table c with view d over c and t, and view f over c
// with view g over f; sink k reading b into table out; external sink x
// reading d; tables p1, p2 and p3 fed by CDC source pg.
func planWorld(t *testing.T) *catalog.Catalog {
	t.Helper()
	n := func(s string) catalog.ObjectName { return catalog.Name(DefaultDatabase, s) }
	cols := []catalog.Column{{Name: "k", Type: types.Int64, NotNull: true}}
	cat, err := catalog.New().CreateDatabase(catalog.Database{Name: DefaultDatabase})
	if err != nil {
		t.Fatal(err)
	}
	must := func(c *catalog.Catalog, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		cat = c
	}
	must(cat.CreateSource(catalog.Source{Name: n("pg"), Connector: PostgresCDC}))
	for _, s := range []string{"t", "c", "out", "p1", "p2", "p3"} {
		tb := catalog.Table{Name: n(s), Kind: catalog.KindTable, Columns: cols, PrimaryKey: []string{"k"}}
		if s[0] == 'p' {
			tb.Options = map[string]string{OptionSource: n("pg").String(), OptionSourceTable: "public." + s}
		} else if s != "out" {
			must(cat.CreateTable(tb))
			must(cat.CreateJob(dmlJobDef(n(s))))
			continue
		}
		must(cat.CreateTable(tb))
	}
	must(cat.CreateJob(cdcJobDef(cat, n("pg"))))
	for _, v := range [][]string{{"a", "t"}, {"b", "a"}, {"d", "c", "t"}, {"f", "c"}, {"g", "f"}} {
		must(cat.CreateTable(catalog.Table{Name: n(v[0]), Kind: catalog.KindView, Columns: cols, PrimaryKey: []string{"k"}, Query: "SELECT k FROM " + v[1]}))
		var reads []catalog.ObjectName
		for _, r := range v[1:] {
			reads = append(reads, n(r))
		}
		must(cat.CreateJob(catalog.Job{Name: viewJobName(n(v[0])), Kind: catalog.JobView, Reads: reads, Writes: []catalog.ObjectName{n(v[0])}}))
	}
	must(cat.CreateJob(catalog.Job{Name: sinkJobName(n("k")), Kind: catalog.JobSink, Reads: []catalog.ObjectName{n("b")}, Writes: []catalog.ObjectName{n("out")}, Options: map[string]string{jobOptSink: "k"}}))
	must(cat.CreateJob(catalog.Job{Name: sinkJobName(n("x")), Kind: catalog.JobSink, Reads: []catalog.ObjectName{n("d")}, Options: map[string]string{jobOptSink: "x"}}))
	return cat
}

// TestPlanDrop: what one DROP statement removes and registers, in one
// change ([drop-atomic]), and what it refuses before changing anything.
func TestPlanDrop(t *testing.T) {
	n := func(s string) catalog.ObjectName { return catalog.Name(DefaultDatabase, s) }
	names := func(ss ...string) []catalog.ObjectName {
		var out []catalog.ObjectName
		for _, s := range ss {
			out = append(out, n(s))
		}
		return out
	}
	str := func(v any) string { return fmt.Sprint(v) }
	for _, tc := range []struct {
		name     string
		what     string
		drop     []catalog.ObjectName
		ifExists bool
		cascade  bool
		// want is the change, "jobs | tables | registered jobs", or the
		// error's code and a part of its message.
		want string
	}{
		{"cascade through views and sinks", "table", names("t"), false, true,
			"[sink-dev-x sink-dev-k dml-dev-t view-dev-a view-dev-b view-dev-d] | [dev.t dev.a dev.d dev.b] | [dml-dev-out]"},
		{"a view alone", "view", names("b"), false, true,
			"[sink-dev-k view-dev-b] | [dev.b] | [dml-dev-out]"},
		{"refused without cascade", "table", names("t"), false, false,
			"2BP01 cannot drop table t because a, b, d, sink k, sink x depend on it"},
		{"views named together need no cascade", "view", names("g", "f"), false, false,
			"[view-dev-f view-dev-g] | [dev.g dev.f] | []"},
		{"a sink is no view to name", "view", names("b", "a"), false, false,
			"2BP01 cannot drop view b because sink k depends on it"},
		{"a view and its reader named together", "view", names("d", "a"), false, false,
			"2BP01 cannot drop view d because sink x depends on it"},
		{"a missing name drops nothing", "view", names("a", "nope"), false, true,
			"42P01 materialized view \"nope\" does not exist"},
		{"a missing name under IF EXISTS", "view", names("nope", "b"), true, true,
			"[sink-dev-k view-dev-b] | [dev.b] | [dml-dev-out]"},
		{"the wrong kind", "view", names("b", "t"), false, true,
			"42809 \"t\" is not a materialized view"},
		{"one CDC table of three", "table", names("p2"), false, false,
			"[cdc-dev-pg] | [dev.p2] | [cdc-dev-pg [dev.p1 dev.p3]]"},
		{"every CDC table", "table", names("p3", "p1", "p2"), false, false,
			"[cdc-dev-pg] | [dev.p3 dev.p1 dev.p2] | []"},
		{"a sink into a named table", "table", names("out"), false, false,
			"2BP01 cannot drop table out because sink k writes it"},
		{"a sink into a named table, cascade", "table", names("out"), false, true,
			"[sink-dev-k] | [dev.out] | []"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cat := planWorld(t)
			p, err := planDrop(cat, tc.what, tc.drop, tc.ifExists, tc.cascade)
			var got string
			if err != nil {
				got = sqlerr.Code(err) + " " + err.Error()
			} else {
				var reg []string
				for _, j := range p.change.RegisterJobs {
					s := j.Name
					if isCDCJob(j) {
						s += " " + str(j.Writes)
					}
					reg = append(reg, s)
				}
				got = str(p.change.DropJobs) + " | " + str(p.change.DropTables) + " | " + str(reg)
			}
			if !strings.HasPrefix(got, tc.want) {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			if err != nil {
				return
			}
			// The change applies to the catalog it was planned on.
			next := cat
			for _, j := range p.change.DropJobs {
				if next, err = next.DropJob(j); err != nil {
					t.Fatal(err)
				}
			}
			for _, tb := range p.change.DropTables {
				if next, err = next.DropTable(tb); err != nil {
					t.Fatal(err)
				}
			}
			for _, j := range p.change.RegisterJobs {
				if next, err = next.CreateJob(j); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// TestPlanDropSinks: DROP SINK k, x is one change that gives table out,
// which k wrote, its DML job back; a missing sink is refused before
// anything changes unless IF EXISTS.
func TestPlanDropSinks(t *testing.T) {
	cat := planWorld(t)
	names := []catalog.ObjectName{catalog.Name(DefaultDatabase, "k"), catalog.Name(DefaultDatabase, "nope"), catalog.Name(DefaultDatabase, "x")}
	p, err := planDropSinks(cat, names, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(p.change.DropJobs, p.change.DropTables, p.dmlBack, len(p.change.RegisterJobs)), "[sink-dev-k sink-dev-x] [] [dev.out] 1"; got != want {
		t.Fatalf("plan %s, want %s", got, want)
	}
	if j := p.change.RegisterJobs[0]; j.Name != dmlJobName(catalog.Name(DefaultDatabase, "out")) || fmt.Sprint(j.Writes) != "[dev.out]" {
		t.Fatalf("registers %+v", j)
	}
	if _, err := planDropSinks(cat, names, false); sqlerr.Code(err) != sqlerr.UndefinedObject || !strings.Contains(err.Error(), `sink "nope" does not exist`) {
		t.Fatalf("DROP SINK k, nope, x: %v", err)
	}
}
