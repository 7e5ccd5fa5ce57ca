package engine

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
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
