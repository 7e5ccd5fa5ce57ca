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
