package nexmark

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	gen "github.com/stratadb/strata/connector/nexmark"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
)

// TestQueriesEqualDuckDB runs a few queries of different shapes (a join, a
// HOP window with a join of aggregates, a Top-N over a join, session
// windows, count distinct, a lookup join of bid with a side input, and the
// multiset views of bid joined with a window's maximum and auction) over a few thousand events with short
// intervals, and checks that each view equals DuckDB's batch result over
// Parquet of the same events (q12's windows over processing time against
// DuckDB over the stamps bid stores), and the ingest baseline is measured
// without a view.
func TestQueriesEqualDuckDB(t *testing.T) {
	qs, err := Select("q3,q5,q7,q9,q11,q12,q13,q15,q20,ingest")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{Events: 5000, Seed: 7, EpochInterval: 20 * time.Millisecond,
		CheckpointInterval: 50 * time.Millisecond, VsDuckDB: true, Dir: t.TempDir(), Timeout: time.Minute}, qs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(qs) {
		t.Fatalf("%d results for %d queries", len(res), len(qs))
	}
	for _, r := range res {
		if r.Query == "ingest" {
			if r.Status != StatusOK || r.CPUSeconds <= 0 || r.EqualToDuckDB != nil {
				t.Errorf("ingest: %+v", r)
			}
			continue
		}
		if r.Status != StatusOK || r.EqualToDuckDB == nil || !*r.EqualToDuckDB {
			t.Errorf("%s: status %s, error %q, diff %v", r.Query, r.Status, r.Error, r.Diff)
			continue
		}
		if r.ViewRows == 0 || r.ViewRows != r.DuckDBRows {
			t.Errorf("%s: %d view rows, %d DuckDB rows", r.Query, r.ViewRows, r.DuckDBRows)
		}
		if r.Events != 5000 || r.CPUSeconds <= 0 || r.PeakRSSBytes <= 0 || r.EventsPerCPUSec <= 0 {
			t.Errorf("%s: measures missing: %+v", r.Query, r)
		}
	}
}

// TestWriteParquet writes bid to Parquet and reads it back with DuckDB:
// the rows, in order, are the generator's.
func TestWriteParquet(t *testing.T) {
	cfg := gen.Config{Events: 500, Seed: 3}
	path := filepath.Join(t.TempDir(), "bid.parquet")
	if err := WriteParquet(path, gen.Bid, cfg); err != nil {
		t.Fatal(err)
	}
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, got, err := db.Query(context.Background(), "SELECT "+columnList(gen.Bid)+" FROM read_parquet('"+path+"')")
	if err != nil {
		t.Fatal(err)
	}
	g, err := gen.NewGenerator(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var want []types.Row
	for n := range cfg.Events {
		if tb, row := g.Row(n); tb == gen.Bid {
			want = append(want, row)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows read back, want %d", len(got), len(want))
	}
	for i := range want {
		if a, b := canonRow(got[i]), canonRow(want[i]); a != b {
			t.Fatalf("row %d: read back %s, generated %s", i, a, b)
		}
	}
}

func TestDiffRows(t *testing.T) {
	num := func(s string) types.Datum {
		d, err := types.ParseText(types.Type{Kind: types.KindNumeric}, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	row := func(ds ...types.Datum) types.Row { return types.Row(ds) }
	cases := []struct {
		name           string
		want, got      []types.Row
		missing, extra int
	}{
		{"equal across numeric kinds", []types.Row{row(types.NewInt64(3), types.NewFloat64(1.5))},
			[]types.Row{row(num("3"), num("1.50"))}, 0, 0},
		{"a copy missing", []types.Row{row(types.NewText("a")), row(types.NewText("a"))},
			[]types.Row{row(types.NewText("a"))}, 1, 0},
		{"one extra, one missing", []types.Row{row(types.NewInt64(1), types.Null)},
			[]types.Row{row(types.NewInt64(2), types.Null)}, 1, 1},
		{"NULL is not empty text", []types.Row{row(types.Null)}, []types.Row{row(types.NewText(""))}, 1, 1},
	}
	for _, c := range cases {
		m, e, ex := diffRows(c.want, c.got)
		if m != c.missing || e != c.extra {
			t.Errorf("%s: missing %d extra %d (%v), want %d and %d", c.name, m, e, ex, c.missing, c.extra)
		}
		if (m+e > 0) != (len(ex) > 0) || strings.Join(ex, "") == "" && m+e > 0 {
			t.Errorf("%s: examples %v", c.name, ex)
		}
	}
}

// TestParallelism runs a join with two aggregates at parallelism 2 and
// checks the view against DuckDB.
func TestParallelism(t *testing.T) {
	qs, err := Select("q4")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{Events: 5000, Seed: 11, Parallelism: 2, EpochInterval: 20 * time.Millisecond,
		CheckpointInterval: 50 * time.Millisecond, VsDuckDB: true, Dir: t.TempDir(), Timeout: time.Minute}, qs)
	if err != nil {
		t.Fatal(err)
	}
	if r := res[0]; r.Status != StatusOK || r.Parallelism != 2 || r.EqualToDuckDB == nil || !*r.EqualToDuckDB || r.ViewRows == 0 {
		t.Fatalf("q4 at parallelism 2: %+v", r)
	}
}

func TestTableDDL(t *testing.T) {
	got := tableDDL(gen.Bid, 1000, 5, []string{"auction", "extra"}, "bid.size", "300")
	want := "CREATE TABLE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR, date_time TIMESTAMP(3), extra VARCHAR, " +
		"PRIMARY KEY (auction, extra)) WITH (connector = 'nexmark', nexmark.table = 'bid', events = '1000', seed = '5', bid.size = '300')"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestSelect(t *testing.T) {
	all, err := Select("all")
	if err != nil || len(all) != 23 {
		t.Fatalf("all: %d queries, %v", len(all), err)
	}
	for i, q := range all {
		if want := "q" + strings.TrimPrefix(q.Name, "q"); q.Name != want || q.View == "" {
			t.Errorf("query %d: %+v", i, q)
		}
	}
	two, err := Select(" Q5, q7 ")
	if err != nil || len(two) != 2 || two[0].Name != "q5" || two[1].Name != "q7" {
		t.Fatalf("q5,q7: %v %v", two, err)
	}
	if _, err := Select("q23"); err == nil || !strings.Contains(err.Error(), "q23") {
		t.Fatalf("q23: %v", err)
	}
}

// TestInputSource runs stateless queries and a join with --input source:
// the inputs are sources read by the views' jobs, and each view must
// equal DuckDB's result over the same events; the ingest baseline and
// q12 (a stored processing-time column) are unsupported then, and
// --bid-key is refused.
func TestInputSource(t *testing.T) {
	qs, err := Select("q1,q2,q3,q22,q12,ingest")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), Config{Events: 4000, Seed: 9, EpochInterval: 20 * time.Millisecond,
		CheckpointInterval: 50 * time.Millisecond, VsDuckDB: true, Dir: t.TempDir(), Timeout: time.Minute, Input: InputSource}, qs)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(qs) {
		t.Fatalf("%d results for %d queries", len(res), len(qs))
	}
	for _, r := range res {
		if r.Input != InputSource {
			t.Errorf("%s: input %q", r.Query, r.Input)
		}
		switch r.Query {
		case "ingest":
			if r.Status != StatusUnsupported || !strings.Contains(r.Error, "nothing is stored") {
				t.Errorf("ingest with sources: %s %q", r.Status, r.Error)
			}
		case "q12":
			if r.Status != StatusUnsupported || !strings.Contains(r.Error, "CREATE SOURCE bid") {
				t.Errorf("q12 with sources: %s %q", r.Status, r.Error)
			}
		default:
			if r.Status != StatusOK || r.EqualToDuckDB == nil || !*r.EqualToDuckDB || r.ViewRows == 0 || r.ViewRows != r.DuckDBRows {
				t.Errorf("%s: status %s, error %q, %d view rows, %d DuckDB rows, diff %v", r.Query, r.Status, r.Error, r.ViewRows, r.DuckDBRows, r.Diff)
			}
			if r.CPUSeconds <= 0 || r.EventsPerCPUSec <= 0 {
				t.Errorf("%s: measures missing: %+v", r.Query, r)
			}
		}
	}
	if _, err := NewRunner(Config{Input: InputSource, BidKey: BidKeyColumns, Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "a source has none") {
		t.Errorf("--bid-key with sources: %v", err)
	}
	if _, err := NewRunner(Config{Input: "stream", Dir: t.TempDir()}); err == nil || !strings.Contains(err.Error(), `input "stream"`) {
		t.Errorf("unknown input: %v", err)
	}
}
