package planner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	_ "time/tzdata"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Window boundaries in DuckDB, computed independently with floor modulo
// over epoch microseconds: ws(us, size) is the start of us's tumbling
// window.
func ws(us string, size int64) string {
	return fmt.Sprintf("((%s) - (((%s) %% %d) + %d) %% %d)", us, us, size, size, size)
}

// TestWindowViewsEqualDuckDB runs window TVF views (TUMBLE with and
// without offset, HOP, CUMULATE, SESSION) over random append-only streams
// and over a changelog with updates and deletes, with event times on
// window boundaries and before 1970, and compares each result with DuckDB
// computing the windows from the same rows with its own arithmetic.
func TestWindowViewsEqualDuckDB(t *testing.T) {
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const us = "epoch_us(date_time)"
	cases := []struct{ view, oracle string }{
		{
			"SELECT window_start, window_end, auction, count(*) FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY 1, 2, 3",
			fmt.Sprintf("SELECT make_timestamp(%[1]s), make_timestamp(%[1]s + 10000000), auction, count(*) FROM bid WHERE date_time IS NOT NULL GROUP BY 1, 2, 3", ws(us, 10*sec)),
		},
		{
			// The expansion itself, row by row.
			"SELECT auction, price, date_time, window_start, window_end FROM TUMBLE(bid, date_time, INTERVAL '2' SECOND)",
			fmt.Sprintf("SELECT auction, price, date_time, make_timestamp(%[1]s), make_timestamp(%[1]s + 2000000) FROM bid WHERE date_time IS NOT NULL", ws(us, 2*sec)),
		},
		{
			"SELECT window_start, window_end, sum(price), max(price) FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND, INTERVAL '3' SECOND) GROUP BY 1, 2",
			fmt.Sprintf("SELECT make_timestamp(%[1]s + 3000000), make_timestamp(%[1]s + 13000000), sum(price), max(price) FROM bid WHERE date_time IS NOT NULL GROUP BY 1, 2",
				ws(us+" - 3000000", 10*sec)),
		},
		{
			"SELECT window_start, window_end, auction, count(*), min(price) FROM HOP(bid, date_time, INTERVAL '5' SECOND, INTERVAL '15' SECOND) GROUP BY 1, 2, 3",
			fmt.Sprintf("SELECT make_timestamp(%[1]s - i * 5000000), make_timestamp(%[1]s - i * 5000000 + 15000000), auction, count(*), min(price) FROM bid, range(0, 3) r(i) WHERE date_time IS NOT NULL GROUP BY 1, 2, 3", ws(us, 5*sec)),
		},
		{
			"SELECT window_start, window_end, count(*), sum(price) FROM CUMULATE(bid, date_time, INTERVAL '5' SECOND, INTERVAL '20' SECOND) GROUP BY 1, 2",
			fmt.Sprintf("SELECT make_timestamp(%[1]s), make_timestamp(%[1]s + k * 5000000), count(*), sum(price) FROM bid, range(1, 5) r(k) WHERE date_time IS NOT NULL AND %[1]s + k * 5000000 > %[2]s GROUP BY 1, 2", ws(us, 20*sec), us),
		},
		{
			"SELECT window_start, window_end, count(*), sum(price) FROM SESSION(bid, date_time, INTERVAL '3' SECOND) GROUP BY 1, 2",
			`WITH w AS (SELECT price, epoch_us(date_time) AS us FROM bid WHERE date_time IS NOT NULL),
			 g AS (SELECT *, CASE WHEN us - lag(us) OVER (ORDER BY us) < 3000000 THEN 0 ELSE 1 END AS brk FROM w),
			 s AS (SELECT *, sum(brk) OVER (ORDER BY us, brk DESC ROWS UNBOUNDED PRECEDING) AS sid FROM g),
			 b AS (SELECT sid, min(us) AS st, max(us) + 3000000 AS en FROM s GROUP BY sid)
			 SELECT make_timestamp(st), make_timestamp(en), count(*), sum(price) FROM s JOIN b USING (sid) GROUP BY 1, 2`,
		},
		{
			// Windows over a changelog with updates and deletes.
			"SELECT window_start, window_end, k, count(*), sum(v) FROM TUMBLE(tr, ts, INTERVAL '4' SECOND) GROUP BY 1, 2, 3",
			fmt.Sprintf("SELECT make_timestamp(%[1]s), make_timestamp(%[1]s + 4000000), k, count(*), sum(v) FROM tr WHERE ts IS NOT NULL GROUP BY 1, 2, 3", ws("epoch_us(ts)", 4*sec)),
		},
		{
			"SELECT window_start, window_end, count(*) FROM HOP(tr, ts, INTERVAL '2' SECOND, INTERVAL '6' SECOND) WHERE v > 1 GROUP BY 1, 2",
			fmt.Sprintf("SELECT make_timestamp(%[1]s - i * 2000000), make_timestamp(%[1]s - i * 2000000 + 6000000), count(*) FROM tr, range(0, 3) r(i) WHERE ts IS NOT NULL AND v > 1 GROUP BY 1, 2", ws("epoch_us(ts)", 2*sec)),
		},
		{
			"SELECT window_start, window_end, count(*), sum(v) FROM SESSION(tr, ts, INTERVAL '1' SECOND) GROUP BY 1, 2",
			`WITH w AS (SELECT v, epoch_us(ts) AS us FROM tr WHERE ts IS NOT NULL),
			 g AS (SELECT *, CASE WHEN us - lag(us) OVER (ORDER BY us) < 1000000 THEN 0 ELSE 1 END AS brk FROM w),
			 s AS (SELECT *, sum(brk) OVER (ORDER BY us, brk DESC ROWS UNBOUNDED PRECEDING) AS sid FROM g),
			 b AS (SELECT sid, min(us) AS st, max(us) + 1000000 AS en FROM s GROUP BY sid)
			 SELECT make_timestamp(st), make_timestamp(en), count(*), sum(v) FROM s JOIN b USING (sid) GROUP BY 1, 2`,
		},
		{
			// SESSION partitioned by auction: each auction's bids form
			// their own sessions.
			"SELECT auction, window_start, window_end, count(*), sum(price) FROM SESSION(bid, date_time, INTERVAL '3' SECOND, auction) GROUP BY 1, 2, 3",
			`WITH w AS (SELECT auction, price, epoch_us(date_time) AS us FROM bid WHERE date_time IS NOT NULL),
			 g AS (SELECT *, CASE WHEN us - lag(us) OVER (PARTITION BY auction ORDER BY us) < 3000000 THEN 0 ELSE 1 END AS brk FROM w),
			 s AS (SELECT *, sum(brk) OVER (PARTITION BY auction ORDER BY us, brk DESC ROWS UNBOUNDED PRECEDING) AS sid FROM g),
			 b AS (SELECT auction, sid, min(us) AS st, max(us) + 3000000 AS en FROM s GROUP BY auction, sid)
			 SELECT auction, make_timestamp(st), make_timestamp(en), count(*), sum(price) FROM s JOIN b USING (auction, sid) GROUP BY 1, 2, 3`,
		},
	}
	for seed := range uint64(3) {
		cat := relCatalog{"bid": bidScript(bidRel("bid"), seed, 30), "tr": tsScript(seed, 30)}
		loadDuck(t, db, cat)
		for _, c := range cases {
			got, job := runPlan(t, cat, bindSQL(t, cat, c.view), 2)
			sameRows(t, fmt.Sprintf("seed %d: %s", seed, c.view), got, duckRows(t, db, c.oracle), job.Explain)
		}
	}
}

// TestWindowEdges checks single events against the windows they must land
// in: an event exactly at a window's end opens the next window, an event
// before 1970 falls in the window below it, not the one toward zero.
func TestWindowEdges(t *testing.T) {
	for _, c := range []struct {
		view  string
		times []int64 // event times in seconds
		want  []string
	}{
		{"SELECT window_start, window_end, count(*) FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY 1, 2",
			[]int64{0, 10, 9, -1, -10, -11},
			[]string{
				"1969-12-31 23:59:40|1969-12-31 23:59:50|1",
				"1969-12-31 23:59:50|1970-01-01 00:00:00|2",
				"1970-01-01 00:00:00|1970-01-01 00:00:10|2",
				"1970-01-01 00:00:10|1970-01-01 00:00:20|1",
			}},
		{"SELECT window_start, window_end, count(*) FROM HOP(bid, date_time, INTERVAL '5' SECOND, INTERVAL '10' SECOND) GROUP BY 1, 2",
			[]int64{5, -5},
			[]string{
				"1969-12-31 23:59:50|1970-01-01 00:00:00|1",
				"1969-12-31 23:59:55|1970-01-01 00:00:05|1",
				"1970-01-01 00:00:00|1970-01-01 00:00:10|1",
				"1970-01-01 00:00:05|1970-01-01 00:00:15|1",
			}},
		{"SELECT window_start, window_end, count(*) FROM CUMULATE(bid, date_time, INTERVAL '5' SECOND, INTERVAL '15' SECOND) GROUP BY 1, 2",
			[]int64{5, -1},
			[]string{
				"1969-12-31 23:59:45|1970-01-01 00:00:00|1",
				"1970-01-01 00:00:00|1970-01-01 00:00:10|1",
				"1970-01-01 00:00:00|1970-01-01 00:00:15|1",
			}},
	} {
		in := &input{rel: bidRel("bid")}
		for _, s := range c.times {
			in.evs = append(in.evs, event{kind: types.Insert, row: types.Row{types.NewInt64(1), types.NewInt64(1), types.NewTimestamp(s * sec)}})
		}
		in.evs = append(in.evs, event{epoch: 1})
		cat := relCatalog{"bid": in}
		got, job := runPlan(t, cat, bindSQL(t, cat, c.view), 1)
		sameRows(t, c.view, got, c.want, job.Explain)
	}
}

// TestHopSizeNotMultipleOfSlide: Flink refuses a HOP whose size is not a
// multiple of its slide; so does the binder, and so does the planner for a
// plan built without the binder.
func TestHopSizeNotMultipleOfSlide(t *testing.T) {
	cat := relCatalog{"bid": &input{rel: bidRel("bid")}}
	q := "SELECT window_start, count(*) FROM HOP(bid, date_time, INTERVAL '4' SECOND, INTERVAL '10' SECOND) GROUP BY 1"
	st, err := parser.ParseOne(q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := binder.New(cat, q, nil).BindQuery(st.Node); sqlerr.Code(err) != sqlerr.InvalidParameterValue {
		t.Fatalf("binder: %v", err)
	}
	scan := plan.NewScan(cat["bid"].rel, "")
	tt := types.Timestamp
	for _, kind := range []plan.WindowKind{plan.Hop, plan.Cumulate} {
		w := &plan.WindowTVF{Input: scan, Kind: kind, TimeCol: 2,
			Size:  types.IntervalValue{Micros: 10 * sec},
			Slide: types.IntervalValue{Micros: 4 * sec},
			Cols: append(append([]plan.Column(nil), scan.Schema()...),
				plan.Column{Name: "window_start", Type: tt}, plan.Column{Name: "window_end", Type: tt})}
		_, err := Build("v", w, &anyEndpoints{cat: cat}, Options{})
		if sqlerr.Code(err) != sqlerr.InvalidParameterValue {
			t.Fatalf("%s with size 10s, slide 4s: %v", kind, err)
		}
	}
}

// TestWindowExplain: a windowed aggregate plans as expand (computing the
// aggregate's keys and arguments), then the aggregate, which frees
// closed windows (window + size + delay); ORDER BY ... LIMIT as a Top-N of one subtask,
// whose key Map also computes the projection below it.
func TestWindowExplain(t *testing.T) {
	rel := bidRel("bid")
	rel.Watermark = &plan.Watermark{Column: 2, Delay: types.IntervalValue{Micros: 5 * sec}}
	cat := relCatalog{"bid": &input{rel: rel}}
	for _, c := range []struct{ q, want string }{
		{"SELECT window_start, window_end, auction, count(*) FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY 1, 2, 3",
			`1-scan-bid (parallelism 1, append-only)
2-watermark date_time - '00:00:05', late rows dropped (parallelism 1, append-only)
3-window TUMBLE(date_time, size '00:00:10'), then keys and arguments (parallelism 1, append-only)
4-aggregate [count(*)], groups freed once window_start + 15s <= its largest value seen (parallelism 2, retract)
5-project window_start, window_end, auction, count(*) (parallelism 2, retract)
6-sink (parallelism 2)
`},
		{"SELECT auction, price FROM bid ORDER BY price DESC LIMIT 3",
			`1-scan-bid (parallelism 1, append-only)
2-watermark date_time - '00:00:05', late rows dropped (parallelism 1, append-only)
3-top-n-keys columns auction, price (2 of 3), partition and order keys (parallelism 1, append-only)
4-top-n n=3 offset=0 partition=[] order=[price DESC], keeps only the top (parallelism 1, retract)
5-sink (parallelism 1)
`},
	} {
		job, err := Build("v", bindSQL(t, cat, c.q), &anyEndpoints{cat: cat}, Options{Parallelism: 2})
		if err != nil {
			t.Fatal(err)
		}
		if job.Explain != c.want {
			t.Fatalf("%s:\n%s\nwant:\n%s", c.q, job.Explain, c.want)
		}
	}
}

// TestDayWindowsOnDSTDays: one-day windows over a TIMESTAMPTZ in the
// session time zone America/New_York run from local midnight to local
// midnight, 23 hours on 2024-03-10 and 25 on 2024-11-03, as DuckDB's
// date_trunc('day', ...) + INTERVAL 1 DAY in that zone; hour windows
// stay aligned in UTC.
func TestDayWindowsOnDSTDays(t *testing.T) {
	loc, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rel := &plan.Relation{Name: "ev", IsSource: true, Columns: []plan.Column{
		{Name: "id", Type: types.Int64}, {Name: "ts", Type: types.TimestampTZ}}}
	in := &input{rel: rel}
	rng := rand.New(rand.NewPCG(1, 2))
	for e, day := range []string{"2024-03-09", "2024-03-10", "2024-03-11", "2024-11-02", "2024-11-03", "2024-11-04"} {
		d, err := time.Parse("2006-01-02", day)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 40 {
			// From 20:00 UTC the day before to 08:00 UTC the day after, in
			// quarter hours, including local midnights exactly.
			us := d.UnixMicro() - 4*3600*sec + int64(rng.IntN(36*4))*900*sec
			r := types.Row{types.NewInt64(int64(e*100 + i)), types.NewTimestampTZ(us)}
			in.evs = append(in.evs, event{kind: types.Insert, row: r})
			in.live = append(in.live, r)
		}
		in.evs = append(in.evs, event{epoch: base.Epoch(e + 1)})
	}
	cat := relCatalog{"ev": in}
	loadDuck(t, db, cat)
	if err := db.Exec(context.Background(), "SET TimeZone = 'America/New_York'"); err != nil {
		t.Fatal(err)
	}
	opts := Options{Parallelism: 2, Eval: &expr.Context{Loc: loc}}
	for _, c := range []struct{ view, oracle string }{
		{"SELECT window_start, window_end, count(*) FROM TUMBLE(ev, ts, INTERVAL '1' DAY) GROUP BY 1, 2",
			"SELECT date_trunc('day', ts), date_trunc('day', ts) + INTERVAL 1 DAY, count(*) FROM ev GROUP BY 1, 2"},
		{"SELECT window_start, window_end, count(*) FROM HOP(ev, ts, INTERVAL '1' DAY, INTERVAL '2' DAY) GROUP BY 1, 2",
			`SELECT s, s + INTERVAL 2 DAY, count(*) FROM (SELECT date_trunc('day', ts) - INTERVAL 1 DAY * i AS s FROM ev, range(0, 2) r(i)) GROUP BY 1, 2`},
		{"SELECT window_start, window_end, count(*) FROM TUMBLE(ev, ts, INTERVAL '1' HOUR) GROUP BY 1, 2",
			"SELECT to_timestamp(0) + to_microseconds((epoch_us(ts) // 3600000000) * 3600000000), to_timestamp(0) + to_microseconds((epoch_us(ts) // 3600000000 + 1) * 3600000000), count(*) FROM ev GROUP BY 1, 2"},
	} {
		got, job := runPlanWith(t, cat, bindSQL(t, cat, c.view), opts)
		sameRows(t, c.view, got, duckRows(t, db, c.oracle), job.Explain)
	}
	// The DST days' windows last 23 and 25 hours.
	got, _ := runPlanWith(t, cat, bindSQL(t, cat, "SELECT window_start, window_end - window_start FROM TUMBLE(ev, ts, INTERVAL '1' DAY) GROUP BY 1, 2"), opts)
	long := map[string]bool{}
	for _, r := range got {
		long[r] = true
	}
	if !long["2024-03-10 05:00:00+00|23:00:00"] || !long["2024-11-03 04:00:00+00|1 day 01:00:00"] {
		t.Fatalf("DST day windows: %v", got)
	}
}
