package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// failingReader is an ingest reader whose every read fails with an error
// that wraps a base marker, as connectors' errors do.
type failingReader struct{}

func (failingReader) Next(pos uint64) (*types.Chunk, uint64, error) {
	return nil, pos, fmt.Errorf("record at %d: column v: not a number: %w", pos, base.ErrInvalidArgument)
}

// TestSystemJobsErrorWithoutMarkers: the error column of
// strata_catalog.jobs says what went wrong in the job's words, without
// the bare text of the marker the error wraps (base.UserMessage).
func TestSystemJobsErrorWithoutMarkers(t *testing.T) {
	ctx := context.Background()
	e, err := Open(ctx, Options{Dir: t.TempDir(), EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond,
		Connectors: map[string]Connector{"failing": func(catalog.Table, map[string]string) ([]ingest.Reader, error) {
			return []ingest.Reader{failingReader{}}, nil
		}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	name := catalog.Name(DefaultDatabase, "f")
	cols := []catalog.Column{{Name: "v", Type: types.Int64}}
	if err := e.CreateTable(ctx, catalog.Table{Name: name, Columns: cols, Options: map[string]string{"connector": "failing"}}, false); err != nil {
		t.Fatal(err)
	}
	job := IngestJobName(name)
	deadline := time.Now().Add(30 * time.Second)
	for {
		rows, err := e.systemRows(ctx, "jobs")
		if err != nil {
			t.Fatal(err)
		}
		var got *types.Row
		for i, r := range rows {
			if r[0].Str() == job && !r[10].IsNull() {
				got = &rows[i]
			}
		}
		if got != nil {
			msg := (*got)[10].Str()
			if !strings.Contains(msg, "column v: not a number") || strings.Contains(msg, base.ErrInvalidArgument.Error()) || strings.Contains(msg, "strata: ") {
				t.Fatalf("strata_catalog.jobs error of %s: %q, want the reader's words without marker text", job, msg)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("strata_catalog.jobs shows no error for %s: %v", job, rows)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
