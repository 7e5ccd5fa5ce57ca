package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestDemoRefusesUsedDataFirst: `strata demo --data DIR` over a
// directory that another strata process holds, or that holds tables,
// fails with the reason and prints nothing before it: no banner.
func TestDemoRefusesUsedDataFirst(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "data")
	e, err := engine.Open(ctx, engine.Options{Dir: dir, EpochInterval: 50 * time.Millisecond, CheckpointInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed {
			e.Close()
		}
	}()
	if err := e.CreateTable(ctx, catalog.Table{Name: catalog.Name(engine.DefaultDatabase, "mine"),
		Columns: []catalog.Column{{Name: "id", Type: types.Int64}}}, false); err != nil {
		t.Fatal(err)
	}
	demo := []string{"demo", "--data", dir, "--duration", "1s", "--rate", "100"}
	out, err := run(t, demo...)
	if err == nil || !strings.Contains(err.Error(), "is locked: another strata process is using this data directory") || out != "" {
		t.Fatalf("demo over a directory in use: %v, output %q", err, out)
	}
	closed = true
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	out, err = run(t, demo...)
	if err == nil || !strings.Contains(err.Error(), "data directory "+dir+" already holds tables; the demo needs a fresh one") || out != "" {
		t.Fatalf("demo over a directory with tables: %v, output %q", err, out)
	}
}
