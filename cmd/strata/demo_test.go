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

// TestDemoTooShortWarns: `strata demo --duration 1s` ends before the views
// are created and have committed their first epoch, so no consistency
// check runs: a warning line that says so and suggests a longer
// --duration comes just before the last line, which keeps its shape, and
// the exit status stays 0 (every view is verified).
func TestDemoTooShortWarns(t *testing.T) {
	out, err := run(t, "demo", "--data", filepath.Join(t.TempDir(), "data"), "--duration", "1s", "--rate", "100")
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(lines) < 2 {
		t.Fatalf("output:\n%s", out)
	}
	warn, last := lines[len(lines)-2], lines[len(lines)-1]
	if last != "consistency checks: 0 passed, 0 violated; views verified: 3 of 3" {
		t.Errorf("last line %q\n%s", last, out)
	}
	if !strings.HasPrefix(warn, "warning: no consistency check ran: --duration 1s is shorter than the time to create the views and commit their first epoch (") ||
		!strings.Contains(warn, "give a longer --duration, such as --duration ") {
		t.Errorf("the line before the last is %q, want the warning\n%s", warn, out)
	}
	if strings.Count(out, "no consistency check ran") != 1 {
		t.Errorf("the warning is not said once:\n%s", out)
	}
}
