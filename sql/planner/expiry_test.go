package planner

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/stream"
)

// longBids is an append-only stream of bids over many epochs whose event
// times rise by 0.25 s a row with up to 2 s of disorder, some NULL, so
// that with a 1 s watermark delay some rows are late and many windows
// close while the stream runs.
func longBids(rel *plan.Relation, seed uint64, epochs int) *input {
	rng := rand.New(rand.NewPCG(seed, 31))
	in := &input{rel: rel}
	i := int64(0)
	for e := 1; e <= epochs; e++ {
		for range rng.IntN(12) {
			tm := types.NewTimestamp(i*250_000 - int64(rng.IntN(21))*100_000)
			if rng.IntN(25) == 0 {
				tm = types.Null
			}
			i++
			r := types.Row{types.NewInt64(int64(rng.IntN(4))), types.NewInt64(int64(rng.IntN(50))), tm}
			in.evs = append(in.evs, event{kind: types.Insert, row: r})
			in.live = append(in.live, r)
		}
		in.evs = append(in.evs, event{epoch: base.Epoch(e)})
	}
	return in
}

// admitted is DuckDB's view of the rows of bidw a LateFilter of 1 s
// delay admits (time not below the largest earlier time minus 1 s), with
// their time in microseconds us.
const admitted = `(SELECT *, epoch_us(date_time) AS us FROM
	(SELECT *, epoch_us(date_time) < max(epoch_us(date_time)) OVER (ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) - 1000000 AS late FROM bidw)
	WHERE late IS NOT TRUE)`

// expiryCases are windowed views over bidw (1 s watermark delay) whose
// GROUP BY frees closed windows, with DuckDB oracles over the admitted
// rows computing the windows with their own arithmetic.
func expiryCases() []struct{ name, view, oracle, freed string } {
	return []struct{ name, view, oracle, freed string }{
		{"date_bin", "SELECT auction, date_bin(INTERVAL '2 seconds', date_time, TIMESTAMP '2000-01-01') AS ws, count(*), sum(price) FROM bidw GROUP BY 1, 2",
			fmt.Sprintf(`SELECT auction, CASE WHEN us IS NULL THEN NULL ELSE make_timestamp(%s) END, count(*), sum(price) FROM %s GROUP BY 1, 2`, ws("us", 2*sec), admitted),
			"groups freed once date_bin('00:00:02'::interval, date_time, '2000-01-01 00:00:00'::timestamp) + 3s <= its largest value seen"},
		{"tumble", "SELECT window_start, window_end, auction, count(*), sum(price) FROM TUMBLE(bidw, date_time, INTERVAL '2' SECOND) GROUP BY 1, 2, 3",
			fmt.Sprintf(`SELECT make_timestamp(%[1]s), make_timestamp(%[1]s + 2000000), auction, count(*), sum(price) FROM %[2]s WHERE us IS NOT NULL GROUP BY 1, 2, 3`, ws("us", 2*sec), admitted),
			"groups freed once window_start + 3s <= its largest value seen"},
		{"hop by window_end", "SELECT window_end, count(*), max(price) FROM HOP(bidw, date_time, INTERVAL '1' SECOND, INTERVAL '3' SECOND) GROUP BY window_end",
			fmt.Sprintf(`SELECT make_timestamp(%s + 3000000 - k * 1000000), count(*), max(price) FROM %s CROSS JOIN range(3) r(k) WHERE us IS NOT NULL GROUP BY 1`, ws("us", sec), admitted),
			"groups freed once window_end + 4s <= its largest value seen"},
		{"cumulate", "SELECT auction, window_start, window_end, count(*) FROM CUMULATE(bidw, date_time, INTERVAL '1' SECOND, INTERVAL '4' SECOND) WHERE price > 10 GROUP BY 1, 2, 3",
			fmt.Sprintf(`SELECT auction, make_timestamp(%[1]s), make_timestamp(%[1]s + k * 1000000), count(*) FROM %[2]s CROSS JOIN range(1, 5) r(k)
				WHERE us IS NOT NULL AND price > 10 AND us < %[1]s + k * 1000000 GROUP BY 1, 2, 3`, ws("us", 4*sec), admitted),
			"groups freed once window_start + 5s <= its largest value seen"},
		{"date_trunc", "SELECT date_trunc('second', date_time) AS s, count(*) FROM bidw GROUP BY 1",
			fmt.Sprintf(`SELECT CASE WHEN us IS NULL THEN NULL ELSE make_timestamp(%s) END, count(*) FROM %s GROUP BY 1`, ws("us", sec), admitted),
			"groups freed once date_trunc('second'::text, date_time) + 2s <= its largest value seen"},
	}
}

// TestWindowGroupsFreedEqualDuckDB runs each windowed view over long
// streams with a watermark: the plan frees closed windows (EXPLAIN says
// so), the result equals DuckDB's over the admitted rows, and the
// aggregation's subtasks freed groups and hold only a few at the end.
func TestWindowGroupsFreedEqualDuckDB(t *testing.T) {
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range expiryCases() {
		for seed := range uint64(2) {
			rel := bidRel("bidw")
			rel.Watermark = &plan.Watermark{Column: 2, Delay: types.IntervalValue{Micros: sec}}
			cat := relCatalog{"bidw": longBids(rel, seed, 150)}
			loadDuck(t, db, cat)
			var mu sync.Mutex
			var aggs []*stream.GroupAgg
			got, job := runPlanWith(t, cat, bindSQL(t, cat, c.view), Options{Parallelism: 2, Wrap: func(kind string, op operator.Operator) operator.Operator {
				if g, ok := op.(*stream.GroupAgg); ok {
					mu.Lock()
					aggs = append(aggs, g)
					mu.Unlock()
				}
				return op
			}})
			what := fmt.Sprintf("%s, seed %d", c.name, seed)
			sameRows(t, what, got, duckRows(t, db, c.oracle), job.Explain)
			if !strings.Contains(job.Explain, c.freed) {
				t.Fatalf("%s: plan does not say %q:\n%s", what, c.freed, job.Explain)
			}
			freed, held := int64(0), 0
			for _, g := range aggs {
				freed += g.FreedGroups()
				held += g.Groups()
			}
			if freed == 0 || held > len(got)/4 {
				t.Fatalf("%s: %d groups freed, %d held of %d rows", what, freed, held, len(got))
			}
			t.Logf("%s: %d rows, %d groups freed, %d held at the end", what, len(got), freed, held)
		}
	}
}

// TestNoExpiryWithoutWindowOfWatermark: a GROUP BY gets no expiry when no
// key is a window bound of the event time, when the relation has no
// watermark, when its source has several subtasks (rows of several
// LateFilters interleave), or when its input is not insert-only (an
// aggregate over an aggregate); the inner aggregate of the last keeps
// its own.
func TestNoExpiryWithoutWindowOfWatermark(t *testing.T) {
	wm := bidRel("bidw")
	wm.Watermark = &plan.Watermark{Column: 2, Delay: types.IntervalValue{Micros: sec}}
	plain := bidRel("bid")
	cat := relCatalog{"bidw": {rel: wm}, "bid": {rel: plain}}
	cases := []struct {
		view  string
		freed int
		ep    Endpoints
	}{
		{"SELECT auction, count(*) FROM bidw GROUP BY auction", 0, nil},
		{"SELECT date_time + INTERVAL '1' SECOND, count(*) FROM bidw GROUP BY 1", 0, nil},
		{"SELECT date_bin(INTERVAL '2 seconds', date_time, TIMESTAMP '2000-01-01'), count(*) FROM bid GROUP BY 1", 0, nil},
		{"SELECT date_trunc('month', date_time), count(*) FROM bidw GROUP BY 1", 1, nil},
		{"SELECT date_trunc('dow', date_time), count(*) FROM bidw GROUP BY 1", 0, nil},
		{"SELECT window_start, count(*) FROM SESSION(bidw, date_time, INTERVAL '1' SECOND) GROUP BY 1", 0, nil},
		{"SELECT date_bin(INTERVAL '2 seconds', date_time, TIMESTAMP '2000-01-01'), count(*) FROM bidw GROUP BY 1", 0, &parEndpoints{anyEndpoints{cat: cat}}},
		{"SELECT ws, count(*), sum(n) FROM (SELECT auction, date_bin(INTERVAL '2 seconds', date_time, TIMESTAMP '2000-01-01') AS ws, count(*) AS n FROM bidw GROUP BY 1, 2) x GROUP BY ws", 1, nil},
		{"SELECT count(*) FROM bidw", 0, nil},
	}
	for _, c := range cases {
		ep := c.ep
		if ep == nil {
			ep = &anyEndpoints{cat: cat}
		}
		job, err := Build("v", bindSQL(t, cat, c.view), ep, Options{Parallelism: 2})
		if err != nil {
			t.Fatalf("%s: %v", c.view, err)
		}
		if n := strings.Count(job.Explain, "groups freed"); n != c.freed {
			t.Fatalf("%s: %d aggregates free groups, want %d:\n%s", c.view, n, c.freed, job.Explain)
		}
	}
}

// parEndpoints reads every relation with two source subtasks.
type parEndpoints struct{ anyEndpoints }

func (e *parEndpoints) SourceParallelism(*plan.Relation) int { return 2 }

// TestWindowGroupsFreedExactlyOnceUnderFailures runs the windowed views
// through the runtime with checkpoints every few milliseconds, aligned
// and unaligned, while at least 20 panics hit the watermark, the
// aggregation and the sink: every restore brings back the largest window
// seen and the lists of open windows' groups, and the committed result
// equals DuckDB's.
func TestWindowGroupsFreedExactlyOnceUnderFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the runtime with injected failures")
	}
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rel := bidRel("bidw")
	rel.Watermark = &plan.Watermark{Column: 2, Delay: types.IntervalValue{Micros: sec}}
	cat := relCatalog{"bidw": longBids(rel, 7, 120)}
	loadDuck(t, db, cat)
	for i, c := range expiryCases()[:3] {
		policy := []barrier.Policy{barrier.PolicyAligned, barrier.PolicyUnaligned}[i%2]
		want := duckRows(t, db, c.oracle)
		for j, l := range want {
			want[j] = "(" + strings.ReplaceAll(l, "|", ", ") + ")"
		}
		sort.Strings(want)
		in := testkit.NewInjector(uint64(i+41), 20, 40, time.Millisecond, 5*time.Millisecond)
		ep := &anyFailingEndpoints{cat: cat, store: testkit.NewStore(), in: in}
		job, err := Build("view", bindSQL(t, cat, c.view), ep, Options{Parallelism: 2, Wrap: func(kind string, op operator.Operator) operator.Operator {
			switch kind {
			case "aggregate", "watermark":
				return testkit.Failing{Operator: op, In: in, Where: kind}
			}
			return op
		}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(job.Explain, c.freed) {
			t.Fatalf("%s: plan does not say %q:\n%s", c.name, c.freed, job.Explain)
		}
		got := runWithFailures(t, c.name, job, policy, in, ep.store)
		sameRows(t, fmt.Sprintf("%s, %s after %d failures", c.name, policy, in.Failed()), got, want, job.Explain)
		t.Logf("%s, %s: %d failures, result equals DuckDB", c.name, policy, in.Failed())
	}
}
