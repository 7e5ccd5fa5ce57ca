package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/sqlerr"
)

// windowViews are window views over ev(k, ts TIMESTAMP, tz TIMESTAMPTZ, g):
// every kind, offsets, intervals with days (calendar days of the view's
// zone for TIMESTAMPTZ), aliases and column renames, plain expansions and
// GROUP BYs.
var windowViews = []string{
	"SELECT k, ts, window_start, window_end FROM TUMBLE(ev, ts, INTERVAL '7' MINUTE)",
	"SELECT k, ts, window_start, window_end FROM TUMBLE(ev, ts, INTERVAL '7' MINUTE, INTERVAL '2' MINUTE)",
	"SELECT k, tz, window_start, window_end FROM TUMBLE(ev, tz, INTERVAL '1' HOUR, INTERVAL '30' MINUTE)",
	"SELECT k, tz, window_start, window_end FROM TUMBLE(ev, tz, INTERVAL '1' DAY, INTERVAL '3' HOUR)",
	"SELECT k, ts, window_start, window_end FROM TUMBLE(ev, ts, INTERVAL '1' DAY)",
	"SELECT k, ts, window_start, window_end FROM HOP(ev, ts, INTERVAL '10' MINUTE, INTERVAL '30' MINUTE)",
	"SELECT k, tz, window_start, window_end FROM HOP(ev, tz, INTERVAL '1' HOUR, INTERVAL '3' HOUR)",
	"SELECT k, tz, window_start, window_end FROM HOP(ev, tz, INTERVAL '1' DAY, INTERVAL '2' DAY)",
	"SELECT k, ts, window_start, window_end FROM CUMULATE(ev, ts, INTERVAL '15' MINUTE, INTERVAL '1' HOUR)",
	"SELECT k, tz, window_start, window_end FROM CUMULATE(ev, tz, INTERVAL '6' HOUR, INTERVAL '1' DAY)",
	"SELECT w.k, w.window_end FROM TUMBLE(ev, DESCRIPTOR(tz), INTERVAL '45' MINUTE) AS w WHERE w.k % 2 = 0",
	"SELECT a, ws, we FROM HOP(ev, ts, INTERVAL '5' MINUTE, INTERVAL '20' MINUTE) x(a, b, c, d, ws, we)",
	"SELECT window_start, window_end, count(*) AS n, sum(k) AS s FROM HOP(ev, ts, INTERVAL '5' MINUTE, INTERVAL '10' MINUTE) GROUP BY window_start, window_end",
	"SELECT window_start, window_end, count(*) AS n FROM CUMULATE(ev, tz, INTERVAL '1' HOUR, INTERVAL '1' DAY) GROUP BY window_start, window_end",
	"SELECT k, ts, window_start, window_end FROM SESSION(ev, ts, INTERVAL '25' MINUTE)",
	"SELECT g, window_start, window_end, count(*) AS n FROM SESSION(ev, tz, INTERVAL '12' MINUTE, partition_by => g) GROUP BY g, window_start, window_end",
}

// evChunk makes n random rows of ev around the spring and autumn clock
// changes of 2024 in Europe and before 1970 (negative times), with NULL
// and infinite times among them.
func evChunk(r *rand.Rand, n int, k0 int64) *types.Chunk {
	c := types.NewChunk([]types.Type{types.Int64, types.Timestamp, types.TimestampTZ, types.Int64}, n)
	centers := []time.Time{
		time.Date(2024, 3, 31, 1, 0, 0, 0, time.UTC),
		time.Date(2024, 10, 27, 1, 0, 0, 0, time.UTC),
		time.Date(1969, 12, 31, 22, 0, 0, 0, time.UTC),
	}
	tm := func() types.Datum {
		switch r.IntN(40) {
		case 0:
			return types.Null
		case 1:
			return types.NewTimestamp(types.TimestampInfinity)
		}
		c := centers[r.IntN(len(centers))]
		return types.NewTimestamp(c.UnixMicro() + r.Int64N(3*86_400_000_000) - 3*43_200_000_000)
	}
	for i := range n {
		ts, tz := tm(), tm()
		if !tz.IsNull() {
			tz = types.NewTimestampTZ(tz.Micros())
		}
		c.Append(types.Insert, types.Row{types.NewInt64(k0 + int64(i)), ts, tz, types.NewInt64(r.Int64N(3))})
	}
	return c
}

// TestVerifyWindowsInDuckDB checks that window views verify in DuckDB
// (the window TVFs written as DuckDB subqueries) and that DuckDB and the
// batch executor, which shares the streaming operator's window
// arithmetic, agree on each, over random TIMESTAMP and TIMESTAMPTZ times
// in three time zones (SESSION views against the streaming operator
// alone); and that a deliberately different query is
// reported as different.
func TestVerifyWindowsInDuckDB(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	ev := catalog.Name(DefaultDatabase, "ev")
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "ts", Type: types.Timestamp}, {Name: "tz", Type: types.TimestampTZ}, {Name: "g", Type: types.Int64}}
	if err := e.CreateTable(ctx, catalog.Table{Name: ev, Columns: cols}, false); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 11))
	if _, err := e.Apply(ctx, ev, evChunk(r, 150, 0)); err != nil {
		t.Fatal(err)
	}
	zones := []string{"", "Europe/Berlin", "Asia/Kolkata"}
	var views []catalog.ObjectName
	for i, q := range windowViews {
		zone := zones[i%len(zones)]
		name := catalog.Name(DefaultDatabase, fmt.Sprintf("wv%d", i))
		opts := map[string]string{}
		if zone != "" {
			opts["timezone"] = zone
		}
		if err := e.CreateView(ctx, name, q, opts, false); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		views = append(views, name)
	}
	// Changes after the views started: streamed, not backfilled.
	ep, err := e.Apply(ctx, ev, evChunk(r, 150, 1000))
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range views {
		if err := e.WaitCommitted(ctx, name, ep); err != nil {
			t.Fatal(err)
		}
		v, err := e.Verify(ctx, name, ep)
		if err != nil {
			t.Fatalf("%s: %v", windowViews[i], err)
		}
		if !v.OK() || v.By != "duckdb" || v.Rows == 0 {
			t.Errorf("%s (zone %q): %s", windowViews[i], zones[i%len(zones)], v)
		}
		cat, err := e.meta.Catalog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := cat.Table(name)
		if err != nil {
			t.Fatal(err)
		}
		var loc *time.Location
		if def, err := cat.Job(viewJobName(name)); err == nil {
			loc = jobZone(def)
		}
		// The batch executor recomputes the same view to the same rows
		// (SESSION windows it cannot compute: those compare with the
		// streaming operator's view only).
		if !strings.Contains(tbl.Query, "SESSION(") {
			b, err := e.verifyBatch(name, tbl, ep, &relations{cat: cat, db: DefaultDatabase}, &expr.Context{Loc: loc})
			if err != nil {
				t.Fatal(err)
			}
			if !b.OK() || b.Rows != v.Rows {
				t.Errorf("%s: batch executor: %s; DuckDB: %d rows", windowViews[i], b, v.Rows)
			}
		}
		// A different window (another offset, size or zone) is reported.
		wrong := tbl
		wrong.Query = strings.NewReplacer("INTERVAL '7' MINUTE", "INTERVAL '8' MINUTE", "INTERVAL '1' DAY", "INTERVAL '2' DAY",
			"INTERVAL '30' MINUTE", "INTERVAL '20' MINUTE", "INTERVAL '3' HOUR", "INTERVAL '4' HOUR", "INTERVAL '5' MINUTE", "INTERVAL '10' MINUTE",
			"INTERVAL '45' MINUTE", "INTERVAL '40' MINUTE", "INTERVAL '15' MINUTE", "INTERVAL '20' MINUTE",
			"INTERVAL '25' MINUTE", "INTERVAL '50' MINUTE", "INTERVAL '12' MINUTE", "INTERVAL '40' MINUTE").Replace(tbl.Query)
		tb, err := e.Table(name)
		if err != nil {
			t.Fatal(err)
		}
		rels := &relations{cat: cat, db: DefaultDatabase}
		d, ok, err := e.verifyOLAP(ctx, name, wrong, tb, ep, loc, rels, &expr.Context{Loc: loc})
		if err != nil || !ok {
			t.Fatalf("%s: %v %v", wrong.Query, ok, err)
		}
		if d.OK() {
			t.Errorf("%s against the view of %s: reported equal", wrong.Query, tbl.Query)
		}
	}
}

// TestVerifyBeforeViewStart checks that verifying a view at an epoch
// before its first is refused (not reported as a difference), naming the
// first epoch, as is an epoch the view has not committed.
func TestVerifyBeforeViewStart(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	if err := e.CreateTable(ctx, catalog.Table{Name: tName, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
	c := types.NewChunk([]types.Type{types.Int64, types.Int64}, 4)
	for k := range int64(4) {
		c.Append(types.Insert, types.Row{types.NewInt64(k), types.NewInt64(k)})
	}
	first, err := e.Apply(ctx, tName, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Meta().WaitEpoch(ctx, first+20); err != nil {
		t.Fatal(err)
	}
	if err := e.CreateView(ctx, v1Name, v1Query, nil, false); err != nil {
		t.Fatal(err)
	}
	start := e.ViewStartEpoch(ctx, v1Name)
	if start <= first+1 {
		t.Fatalf("view starts at epoch %d, before the clock's present (table written at %d)", start, first)
	}
	if err := e.WaitCommitted(ctx, v1Name, start); err != nil {
		t.Fatal(err)
	}
	if v, err := e.Verify(ctx, v1Name, 0); err != nil || !v.OK() {
		t.Fatalf("at the committed epoch: %v %v", v, err)
	}
	if v, err := e.Verify(ctx, v1Name, start); err != nil || !v.OK() || v.Rows != 3 {
		t.Fatalf("at the start epoch %d: %v %v", start, v, err)
	}
	_, err = e.Verify(ctx, v1Name, first+1)
	if sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState || !strings.Contains(err.Error(), fmt.Sprintf("starts at epoch %d", start)) {
		t.Fatalf("at epoch %d before the view's start %d: %v", first+1, start, err)
	}
}

// TestVerifyEpoch is verifyEpoch's table: the epoch it picks or why it
// cannot verify.
func TestVerifyEpoch(t *testing.T) {
	v := catalog.Name(DefaultDatabase, "v")
	for _, c := range []struct {
		at, committed, start base.Epoch
		want                 base.Epoch
		err                  string
	}{
		{at: 0, committed: 40, start: 30, want: 40},
		{at: 35, committed: 40, start: 30, want: 35},
		{at: 30, committed: 40, start: 30, want: 30},
		{at: 29, committed: 40, start: 30, err: "starts at epoch 30"},
		{at: 0, committed: 0, start: 30, err: "committed no epoch"},
		// Committed below the start: catching up (or a stale marker).
		{at: 0, committed: 25, start: 30, err: "has not committed its first epoch 30"},
		{at: 12, committed: 40, start: 0, want: 12},
		{at: 999999, committed: 491, start: 30, err: `materialized view "v": epoch 999999 is above its committed epoch 491; verify it at 491 or below`},
		{at: 41, committed: 40, start: 0, err: "epoch 41 is above its committed epoch 40"},
		{at: 5, committed: 0, start: 0, err: "has committed no epoch yet: it has no content to verify at epoch 5"},
	} {
		got, err := verifyEpoch(v, c.at, c.committed, c.start)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState {
				t.Errorf("%+v: %v, want an error with %q", c, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%+v: %d %v, want %d", c, got, err, c.want)
		}
	}
}
