package engine

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	gen "github.com/stratadb/strata/connector/nexmark"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/sqlerr"
)

var pTime = catalog.Column{Name: "p_time", Type: types.TimestampTZ, Generated: catalog.GeneratedProcTime}

// withinClock checks that every row's column col is a TIMESTAMPTZ between
// the clock reads before and after (microseconds, both included).
func withinClock(t *testing.T, what string, rows []types.Row, col int, before, after time.Time) {
	t.Helper()
	for _, r := range rows {
		d := r[col]
		if d.Kind() != types.KindTimestampTZ || d.Micros() < before.UnixMicro() || d.Micros() > after.UnixMicro() {
			t.Fatalf("%s: row %v: p_time %v is not a stamp between %v and %v", what, r, d, before, after)
		}
	}
}

// waitIngested waits until the ingest job of table name has closed an
// epoch past the end of its input (done tells from the position) and the
// table has committed it; it returns that epoch.
func waitIngested(t *testing.T, e *Engine, name catalog.ObjectName, done func(pos uint64) bool) base.Epoch {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		p := e.IngestPosition(IngestJobName(name))
		if p.Epoch > 0 && done(p.Position) {
			if err := e.WaitCommitted(ctx, name, p.Epoch); err != nil {
				t.Fatal(err)
			}
			return p.Epoch
		}
		select {
		case <-ctx.Done():
			t.Fatalf("table %s: input not consumed: %v", name.Name, ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// TestProcTimeConnectorTable feeds a Nexmark bid table with a
// processing-time column, checks that every row was stamped between the
// clock reads around its ingestion, that a TUMBLE view over the stamps
// verifies and equals a count recomputed here from the stored rows, and
// that the stored stamps survive a restart unchanged.
func TestProcTimeConnectorTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	e := openTest(t, dir)
	cols := []catalog.Column{}
	for _, c := range gen.Bid.Schema().Columns {
		cols = append(cols, catalog.Column{Name: c.Name, Type: c.Type})
	}
	// The stamp goes between the connector's columns.
	cols = slices.Insert(cols, 2, pTime)
	bid := catalog.Name(DefaultDatabase, "bid")
	const events = 3000
	before := time.Now()
	if err := e.CreateTable(ctx, catalog.Table{Name: bid, Columns: cols,
		Options: map[string]string{"connector": "nexmark", "nexmark.table": "bid", "events": fmt.Sprint(events), "rate": "20000"}}, false); err != nil {
		t.Fatal(err)
	}
	view := catalog.Name(DefaultDatabase, "per_second")
	if err := e.CreateView(ctx, view, "SELECT bidder, count(*) AS n, window_start, window_end FROM TUMBLE(bid, p_time, INTERVAL '100 milliseconds') GROUP BY bidder, window_start, window_end", nil, false); err != nil {
		t.Fatal(err)
	}
	rd, err := gen.NewReader(gen.Bid, gen.Config{Events: events})
	if err != nil {
		t.Fatal(err)
	}
	ep := waitIngested(t, e, bid, rd.Exhausted)
	after := time.Now()
	names, rows, at, err := e.ReadAt(ctx, bid, ep)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 || names[2] != "p_time" || at != ep {
		t.Fatalf("bid at %d: columns %v, %d rows", at, names, len(rows))
	}
	withinClock(t, "bid", rows, 2, before, after)
	stamps := map[int64]bool{}
	for _, r := range rows {
		stamps[r[2].Micros()] = true
	}
	if len(stamps) < 2 {
		t.Errorf("%d rows ingested over %v share %d stamps; want one per chunk", len(rows), after.Sub(before), len(stamps))
	}

	// The view: its own count, recomputed here, and Verify.
	if err := e.WaitCommitted(ctx, view, ep); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for _, r := range rows {
		w := r[2].Micros() / 100_000 * 100_000
		want[fmt.Sprintf("%d|%d", r[1].Int64(), w)]++
	}
	vcols, vrows, _, err := e.ReadAt(ctx, view, ep)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range vrows {
		if r[3].Micros()-r[2].Micros() != 100_000 {
			t.Fatalf("view row %v (%v): window is not 100 ms", r, vcols)
		}
		got[fmt.Sprintf("%d|%d", r[0].Int64(), r[2].Micros())] += r[1].Int64()
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("view %v differs from the count of stored stamps:\n got %v\nwant %v", vcols, got, want)
	}
	v, err := e.Verify(ctx, view, ep)
	if err != nil {
		t.Fatal(err)
	}
	if !v.OK() {
		t.Fatalf("verify: %s", v)
	}

	// A restart reads the same stored stamps.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	defer e.Close()
	_, again, _, err := e.ReadAt(ctx, bid, ep)
	if err != nil {
		t.Fatal(err)
	}
	if sorted(again) != sorted(rows) {
		t.Fatal("bid's rows at the same epoch changed across a restart")
	}
	if v, err := e.Verify(ctx, view, ep); err != nil || !v.OK() {
		t.Fatalf("verify after restart: %v %v", v, err)
	}
}

// TestProcTimeFileTable stamps the rows of a CSV file read by the file
// connector, with the generated column in the middle of the table and a
// watermark on it.
func TestProcTimeFileTable(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "in.csv")
	if err := os.WriteFile(path, []byte("1,ann\n2,bob\n3,cy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e := openTest(t, filepath.Join(dir, "data"))
	defer e.Close()
	name := catalog.Name(DefaultDatabase, "people")
	before := time.Now()
	if err := e.CreateTable(ctx, catalog.Table{Name: name,
		Columns: []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, pTime, {Name: "name", Type: types.Text}},
		Options: map[string]string{"connector": "file", "path": path, "format": "csv",
			OptionWatermarkColumn: "p_time", OptionWatermarkDelay: "1s"}}, false); err != nil {
		t.Fatal(err)
	}
	// A watermark on the stamps lets event-time windows run over them.
	if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "w"), "SELECT window_start, count(*) AS n FROM TUMBLE(people, p_time, INTERVAL '1 second') GROUP BY window_start", nil, false); err != nil {
		t.Fatal(err)
	}
	var rows []types.Row
	deadline := time.Now().Add(30 * time.Second)
	for len(rows) < 3 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		_, rows, _, _ = e.ReadAt(ctx, name, base.NoEpoch)
	}
	after := time.Now()
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	withinClock(t, "people", rows, 1, before, after)
	slices.SortFunc(rows, func(a, b types.Row) int { return int(a[0].Int64() - b[0].Int64()) })
	for i, want := range []string{"ann", "bob", "cy"} {
		if rows[i][0].Int64() != int64(i+1) || rows[i][2].Str() != want {
			t.Fatalf("row %d: %v", i, rows[i])
		}
	}
}

// TestProcTimeDML checks INSERT's stamps (one per statement, between the
// clock reads around it), DEFAULT and omitted generated columns, the
// 428C9 refusals of INSERT and UPDATE, that UPDATE keeps a row's stamp
// and that SET p_time = DEFAULT stamps it again.
func TestProcTimeDML(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	name := catalog.Name(DefaultDatabase, "t")
	if err := e.CreateTable(ctx, catalog.Table{Name: name,
		Columns:    []catalog.Column{{Name: "k", Type: types.Int64, NotNull: true}, {Name: "v", Type: types.Text}, pTime},
		PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
	ectx := &expr.Context{}
	run := func(text string) error {
		st, err := parser.ParseOne(text)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case st.Node.GetInsertStmt() != nil:
			_, _, err = e.Insert(ctx, DefaultDatabase, st.Node.GetInsertStmt(), text, ectx, nil)
		case st.Node.GetUpdateStmt() != nil:
			_, _, err = e.Update(ctx, DefaultDatabase, st.Node.GetUpdateStmt(), text, ectx, nil)
		default:
			t.Fatalf("not INSERT or UPDATE: %s", text)
		}
		return err
	}
	read := func() map[int64]types.Row {
		_, rows, _, err := e.ReadAt(ctx, name, base.NoEpoch)
		if err != nil {
			t.Fatal(err)
		}
		out := map[int64]types.Row{}
		for _, r := range rows {
			out[r[0].Int64()] = r
		}
		return out
	}
	stamped := func(text string, keys ...int64) {
		t.Helper()
		before := time.Now()
		if err := run(text); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		after := time.Now()
		rows := read()
		var got []types.Row
		for _, k := range keys {
			if rows[k] == nil {
				t.Fatalf("%s: no row %d", text, k)
			}
			got = append(got, rows[k])
		}
		withinClock(t, text, got, 2, before, after)
		for _, r := range got[1:] {
			if r[2].Micros() != got[0][2].Micros() {
				t.Fatalf("%s: rows of one statement have different stamps: %v", text, got)
			}
		}
	}
	stamped("INSERT INTO t VALUES (1, 'a'), (2, 'b')", 1, 2)
	stamped("INSERT INTO t VALUES (3, 'c', DEFAULT)", 3)
	stamped("INSERT INTO t (v, k, p_time) VALUES ('d', 4, DEFAULT), ('e', 5, DEFAULT)", 4, 5)
	stamped("INSERT INTO t (k) SELECT k + 10 FROM t WHERE k < 3", 11, 12)
	stamped("INSERT INTO t SELECT k + 20, v FROM t WHERE k < 3", 21, 22)

	for _, bad := range []string{
		"INSERT INTO t VALUES (6, 'f', now())",
		"INSERT INTO t (k, p_time) VALUES (6, '2024-01-01 00:00:00+00')",
		"INSERT INTO t (k, p_time) VALUES (6, DEFAULT), (7, now())",
		"INSERT INTO t SELECT k + 30, v, p_time FROM t",
		"UPDATE t SET p_time = now() WHERE k = 1",
	} {
		err := run(bad)
		if sqlerr.Code(err) != generatedAlways {
			t.Errorf("%s: %v (code %s), want 428C9", bad, err, sqlerr.Code(err))
		}
	}
	if _, ok := read()[6]; ok {
		t.Fatal("a refused INSERT wrote a row")
	}

	old := read()[1][2]
	if err := run("UPDATE t SET v = 'z' WHERE k = 1"); err != nil {
		t.Fatal(err)
	}
	if r := read()[1]; r[1].Str() != "z" || r[2].Micros() != old.Micros() {
		t.Fatalf("UPDATE of v: row %v, want v z and the stamp %v kept", r, old)
	}
	stamped("UPDATE t SET p_time = DEFAULT WHERE k = 1", 1)
	if r := read()[1]; r[1].Str() != "z" || r[2].Micros() < old.Micros() {
		t.Fatalf("UPDATE SET p_time = DEFAULT: row %v", r)
	}
}

// TestStampChunk inserts stamps at the start, middle and end of a chunk
// and refuses a chunk of the wrong width.
func TestStampChunk(t *testing.T) {
	c := types.NewChunk([]types.Type{types.Int64, types.Text}, 2)
	c.Append(types.Insert, types.Row{types.NewInt64(1), types.NewText("a")})
	c.Append(types.Delete, types.Row{types.NewInt64(2), types.NewText("b")})
	ts := []types.Type{types.TimestampTZ, types.Int64, types.TimestampTZ, types.Text, types.TimestampTZ}
	out, err := stampChunk(c, []int{0, 2, 4}, ts, 42)
	if err != nil {
		t.Fatal(err)
	}
	if out.Width() != 5 || out.Len() != 2 {
		t.Fatalf("chunk %dx%d, want 5 columns and 2 rows", out.Width(), out.Len())
	}
	for i, name := range []string{"a", "b"} {
		r := out.Row(i)
		if r[0].Micros() != 42 || r[2].Micros() != 42 || r[4].Micros() != 42 || r[1].Int64() != int64(i+1) || r[3].Str() != name {
			t.Fatalf("row %d: %v", i, r)
		}
	}
	if out.Kind(1) != types.Delete {
		t.Fatalf("row kinds lost: %v", out.Kinds)
	}
	if _, err := stampChunk(c, []int{0}, ts, 42); err == nil {
		t.Fatal("a chunk of the wrong width was stamped")
	}
}
