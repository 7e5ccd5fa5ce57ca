package demo

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestDemoRefusesUsedDataFirst: a data directory that holds tables is
// refused before any of its jobs starts: the job of a file table whose
// file is gone would otherwise log that it cannot start.
func TestDemoRefusesUsedDataFirst(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(path, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eopts := engine.Options{Dir: filepath.Join(dir, "data"), EpochInterval: 50 * time.Millisecond, CheckpointInterval: 50 * time.Millisecond}
	e, err := engine.Open(ctx, eopts)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.CreateTable(ctx, catalog.Table{Name: catalog.Name(engine.DefaultDatabase, "f"),
		Columns: []catalog.Column{{Name: "id", Type: types.Int64}},
		Options: map[string]string{"connector": "file", "path": path, "format": "csv"}}, false); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	var logs, out bytes.Buffer
	eopts.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	_, err = Run(ctx, Options{Engine: eopts, Duration: time.Second, Rate: 100, Out: &out})
	if err == nil || !strings.Contains(err.Error(), "already holds tables; the demo needs a fresh one") {
		t.Fatalf("Run over a used directory: %v", err)
	}
	if logs.Len() > 0 || out.Len() > 0 {
		t.Fatalf("something ran before the refusal:\nlog: %s\nout: %s", logs.String(), out.String())
	}
}
