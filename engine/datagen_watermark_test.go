package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestDatagenWatermark feeds views from datagen tables that declare a
// watermark on a timestamp column and counts the rows each view's job
// drops as late (stream.LateCounter): none when the column takes the
// connector's default (its rows' generation times), not even with a
// delay of 0; none with max-past 5 s under a delay of 5 s; and, as a
// control that the count sees drops, many for an explicit range of
// thirty years, the connector's former default.
func TestDatagenWatermark(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	ts3, err := types.ParseType("timestamp(3)")
	if err != nil {
		t.Fatal(err)
	}
	cols := []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "ts", Type: ts3}}
	const rows = 3000
	before := time.Now()
	for _, c := range []struct {
		name, delay string
		more        map[string]string
	}{
		{"now", "0s", nil},
		{"past", "5s", map[string]string{"fields.ts.max-past": "5 s"}},
		{"wide", "5s", map[string]string{"fields.ts.min": "2000-01-01 00:00:00", "fields.ts.max": "2030-12-31 23:59:59"}},
	} {
		opts := map[string]string{"connector": "datagen", "number-of-rows": "3000", "rows-per-second": "20000", "seed": "11",
			"fields.id.kind": "sequence", "fields.id.start": "1",
			OptionWatermarkColumn: "ts", OptionWatermarkDelay: c.delay}
		for k, v := range c.more {
			opts[k] = v
		}
		if err := e.CreateTable(ctx, catalog.Table{Name: catalog.Name(DefaultDatabase, c.name), Columns: cols, Options: opts}, false); err != nil {
			t.Fatal(err)
		}
		if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, c.name+"_n"), "SELECT count(*) AS n FROM "+c.name, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	dropped := map[string]int64{}
	for _, name := range []string{"now", "past", "wide"} {
		tn, vn := catalog.Name(DefaultDatabase, name), catalog.Name(DefaultDatabase, name+"_n")
		ep := waitIngested(t, e, tn, func(pos uint64) bool { return pos >= rows })
		if err := e.WaitCommitted(ctx, vn, ep); err != nil {
			t.Fatal(err)
		}
		after := time.Now()
		_, stored, _, err := e.ReadAt(ctx, tn, ep)
		if err != nil {
			t.Fatal(err)
		}
		if len(stored) != rows {
			t.Fatalf("%s: %d rows stored, want %d", name, len(stored), rows)
		}
		if name != "wide" {
			// Generation times lie between the clock readings around
			// the ingestion, less max-past.
			lo := before.Add(-5 * time.Second).UnixMicro()
			if name == "now" {
				lo = before.UnixMicro() / 1000 * 1000
			}
			for _, r := range stored {
				if ts := r[1].Micros(); ts < lo || ts > after.UnixMicro() {
					t.Fatalf("%s: row %v: ts not between %d and %v", name, r, lo, after)
				}
			}
		}
		e.mu.Lock()
		late := e.late[viewJobName(vn)]
		e.mu.Unlock()
		if late[name] == nil {
			t.Fatalf("%s: the view's job counts no late rows of %s (counters %v)", name, name, late)
		}
		dropped[name] = late[name].Load()
		_, vrows, _, err := e.ReadAt(ctx, vn, ep)
		if err != nil {
			t.Fatal(err)
		}
		if len(vrows) != 1 || vrows[0][0].Int64() != rows-dropped[name] {
			t.Fatalf("%s: view %v, want a count of %d rows less the %d dropped", name, vrows, rows, dropped[name])
		}
	}
	t.Logf("late rows dropped: %v", dropped)
	if dropped["now"] != 0 || dropped["past"] != 0 {
		t.Fatalf("late rows dropped: %v; want none from now and past", dropped)
	}
	// Thirty years at random: after the first rows nearly every row is
	// below the largest time so far less 5 s.
	if dropped["wide"] < rows/2 {
		t.Fatalf("the explicit thirty-year range dropped %d of %d rows; want most", dropped["wide"], rows)
	}
}

// TestDatagenTimesAcrossRestart stops the engine while a datagen table
// with a default TIMESTAMP column is being fed and opens it again: the
// ingest job resumes from its checkpoint with the start time kept there,
// so row id k's time is row 1's plus (k-1)/rows-per-second exactly, with
// no jump where the restart was, and the view's watermark (delay 0)
// dropped nothing.
func TestDatagenTimesAcrossRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	name := catalog.Name(DefaultDatabase, "gen")
	const rows = 4000
	if err := e.CreateTable(ctx, catalog.Table{Name: name,
		Columns: []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "ts", Type: types.Timestamp}},
		Options: map[string]string{"connector": "datagen", "number-of-rows": "4000", "rows-per-second": "2000",
			"fields.id.kind": "sequence", "fields.id.start": "1", OptionWatermarkColumn: "ts", OptionWatermarkDelay: "0s"}}, false); err != nil {
		t.Fatal(err)
	}
	view := catalog.Name(DefaultDatabase, "gen_n")
	if err := e.CreateView(ctx, view, "SELECT count(*) AS n FROM gen", nil, false); err != nil {
		t.Fatal(err)
	}
	// Stop once part of the rows is committed.
	mid := waitIngested(t, e, name, func(pos uint64) bool { return pos >= 1000 })
	_, part, _, err := e.ReadAt(ctx, name, mid)
	if err != nil {
		t.Fatal(err)
	}
	if len(part) == 0 || len(part) >= rows {
		t.Fatalf("%d rows before the restart; want some, not all", len(part))
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	defer e.Close()
	ep := waitIngested(t, e, name, func(pos uint64) bool { return pos >= rows })
	if err := e.WaitCommitted(ctx, view, ep); err != nil {
		t.Fatal(err)
	}
	_, all, _, err := e.ReadAt(ctx, name, ep)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != rows {
		t.Fatalf("%d rows, want %d", len(all), rows)
	}
	ts := make([]int64, rows+1)
	for _, r := range all {
		ts[r[0].Int64()] = r[1].Micros()
	}
	for k := 2; k <= rows; k++ {
		if want := ts[1] + int64(k-1)*500; ts[k] != want {
			t.Fatalf("row %d: ts %d, want row 1's %d plus %d µs (%d rows committed before the restart)", k, ts[k], ts[1], (k-1)*500, len(part))
		}
	}
	// The rows committed before the restart kept their values.
	for _, r := range part {
		if ts[r[0].Int64()] != r[1].Micros() {
			t.Fatalf("row %v changed across the restart", r)
		}
	}
	e.mu.Lock()
	late := e.late[viewJobName(view)]
	e.mu.Unlock()
	_, vrows, _, err := e.ReadAt(ctx, view, ep)
	if err != nil {
		t.Fatal(err)
	}
	if late["gen"] == nil || late["gen"].Load() != 0 || len(vrows) != 1 || vrows[0][0].Int64() != rows {
		t.Fatalf("view %v; late counter %v", vrows, late)
	}
}
