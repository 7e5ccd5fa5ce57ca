package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
)

// wideBid and person are Nexmark-like relations: a wide append-only bid
// stream with long strings that no query below reads, and a keyed person
// table.
var (
	wideBid = &plan.Relation{Name: "bid", IsSource: true, Columns: []plan.Column{
		{Name: "auction", Type: types.Int64}, {Name: "bidder", Type: types.Int64},
		{Name: "price", Type: types.Int64}, {Name: "url", Type: types.Text},
		{Name: "date_time", Type: types.Timestamp}, {Name: "extra", Type: types.Text},
	}}
	personRel = &plan.Relation{Name: "person", PrimaryKey: []int{0}, Columns: []plan.Column{
		{Name: "id", Type: types.Int64, NotNull: true}, {Name: "name", Type: types.Text},
		{Name: "email", Type: types.Text}, {Name: "city", Type: types.Text},
	}}
)

// TestPruneExplain: the join of the LEFT JOIN ... GROUP BY view receives
// only the columns it and the aggregate above it read, computed in the
// join's key Maps (no vertex added), and EXPLAIN says which.
func TestPruneExplain(t *testing.T) {
	cat := relCatalog{"bid": {rel: wideBid}, "person": {rel: personRel}}
	p := bindSQL(t, cat, "SELECT b.auction, count(*) AS n FROM bid b LEFT JOIN person p ON b.bidder = p.id GROUP BY b.auction")
	job, err := Build("v", p, &anyEndpoints{cat: cat}, Options{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := `1-scan-bid (parallelism 1, append-only)
2-scan-person (parallelism 1, retract)
3-join-keys columns b.auction, b.bidder (2 of 6), join keys (parallelism 1, append-only)
4-join-keys columns p.id (1 of 4), join keys (parallelism 1, retract)
5-join LeftJoin on (b.bidder = p.id) (parallelism 2, retract)
6-pre-aggregate keys and arguments (parallelism 2, retract)
7-aggregate [count(*)] (parallelism 2, retract)
8-project b.auction, count(*) (parallelism 2, retract)
9-sink (parallelism 2)
`
	if job.Explain != want {
		t.Fatalf("explain:\n%s\nwant:\n%s", job.Explain, want)
	}

	// The logical rewrite: a Project of the used columns below the join,
	// the plan's output unchanged.
	pruned := job.Plan
	ex := plan.Explain(pruned)
	for _, line := range []string{"      Project b.auction AS auction, b.bidder AS bidder\n        Scan bid AS b\n", "      Project p.id AS id\n        Scan person AS p\n"} {
		if !strings.Contains(ex, line) {
			t.Errorf("pruned plan has no\n%s\n%s", line, ex)
		}
	}
	if got, want := fmt.Sprint(pruned.Schema()), fmt.Sprint(p.Schema()); got != want {
		t.Errorf("pruned plan's columns %s, want %s", got, want)
	}

	// Columns read only by ON, by a filter above the join, by a Top-N's
	// order and by a window's time column are kept; the strings are not.
	for _, c := range []struct{ q, want string }{
		{"SELECT b.auction FROM bid b JOIN person p ON b.bidder = p.id AND p.city <> b.url WHERE b.price > 10",
			"columns b.auction, b.bidder, b.price, b.url (4 of 6)"},
		{"SELECT b.auction, p.name FROM bid b JOIN person p ON b.bidder = p.id ORDER BY b.date_time DESC, b.auction LIMIT 3",
			"columns p.id, p.name (2 of 4)"},
	} {
		p := bindSQL(t, cat, c.q)
		job, err := Build("v", p, &anyEndpoints{cat: cat}, Options{Parallelism: 2})
		if err != nil {
			t.Fatalf("%s: %v", c.q, err)
		}
		if !strings.Contains(job.Explain, c.want) {
			t.Errorf("%s:\n%s\nwant a line with: %s", c.q, job.Explain, c.want)
		}
	}
	p = bindSQL(t, cat, "SELECT b.auction, p.name FROM bid b JOIN person p ON b.bidder = p.id ORDER BY b.date_time DESC, b.auction LIMIT 3")
	ex = plan.Explain(prunePlan(p))
	if !strings.Contains(ex, "Project b.auction AS auction, b.bidder AS bidder, b.date_time AS date_time\n") {
		t.Errorf("the Top-N's order column is not kept below the join:\n%s", ex)
	}
	p = bindSQL(t, cat, "SELECT window_start, count(*) FROM SESSION(bid, date_time, INTERVAL '5' SECOND) GROUP BY window_start")
	ex = plan.Explain(prunePlan(p))
	if !strings.Contains(ex, "SESSION(date_time,") || !strings.Contains(ex, "Project bid.date_time AS date_time\n        Scan bid\n") {
		t.Errorf("the SESSION window does not read only its time column:\n%s", ex)
	}
}

// TestPruneEqualsDuckDB runs views whose joins, Top-N and unions get
// narrowed inputs over changelogs with updates and deletes, and compares
// them with DuckDB over the final rows: pruning changes what flows, not
// what the view holds.
func TestPruneEqualsDuckDB(t *testing.T) {
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// tr columns: 0 id, 1 k, 2 v, 3 ts.
	cases := []struct{ q, oracle string }{
		{q: "SELECT a.k, count(*) AS n FROM tr a LEFT JOIN tr b ON a.k = b.id GROUP BY a.k"},
		{q: "SELECT a.id, count(b.v) AS n FROM tr a LEFT JOIN tr b ON a.k = b.k GROUP BY a.id"},
		{q: "SELECT a.id, b.id FROM tr a JOIN tr b ON a.k = b.k WHERE a.v > b.v"},
		{q: "SELECT a.id, b.ts FROM tr a FULL JOIN tr b ON a.k = b.v AND a.ts < b.ts"},
		{q: "SELECT id, v FROM tr WHERE k IN (SELECT v FROM tr WHERE id > 2)"},
		{q: "SELECT id FROM tr t WHERE NOT EXISTS (SELECT 1 FROM tr u WHERE u.k = t.v + 2)"},
		{q: "SELECT count(*) AS n FROM tr a CROSS JOIN tr b"},
		{q: "SELECT a.id FROM tr a JOIN tr b ON a.k = b.k ORDER BY a.v DESC, a.id, b.id LIMIT 3",
			oracle: "SELECT a.id FROM tr a JOIN tr b ON a.k = b.k ORDER BY a.v DESC NULLS FIRST, a.id, b.id LIMIT 3"},
		{q: "SELECT a.id FROM tr a JOIN tr b ON a.k = b.k UNION ALL SELECT id FROM tr WHERE v > 1"},
		{q: "SELECT k, n FROM (SELECT a.k, b.id AS n, ROW_NUMBER() OVER (PARTITION BY a.k ORDER BY b.id DESC) AS rn FROM tr a JOIN tr b ON a.v = b.k) WHERE rn <= 2"},
	}
	rows := make([]int, len(cases))
	for seed := range uint64(3) {
		cat := relCatalog{"tr": tsScript(seed+40, 30)}
		loadDuck(t, db, cat)
		for i, c := range cases {
			oracle := c.oracle
			if oracle == "" {
				oracle = c.q
			}
			got, job := runPlan(t, cat, bindSQL(t, cat, c.q), 2)
			rows[i] += len(got)
			sameRows(t, fmt.Sprintf("seed %d: %s", seed, c.q), got, duckRows(t, db, oracle), job.Explain)
		}
	}
	for i, n := range rows {
		if n == 0 {
			t.Errorf("%s: no rows in any seed, the comparison says nothing", cases[i].q)
		}
	}
}

// TestPruneKeepsReuse: a subtree read by two consumers that need
// different columns is pruned to the union of both, so that it stays one
// subtree and is built once.
func TestPruneKeepsReuse(t *testing.T) {
	cat := relCatalog{"tr": {rel: tsRel}}
	q := "SELECT x.k, z.v FROM (SELECT k, v, count(*) AS n FROM tr GROUP BY k, v) x JOIN (SELECT k, v, count(*) AS n FROM tr GROUP BY k, v) z ON x.n = z.n"
	job, err := Build("v", bindSQL(t, cat, q), &anyEndpoints{cat: cat}, Options{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(job.Explain, "aggregate [count(*)]"); n != 1 {
		t.Errorf("the subquery read twice has %d aggregates, want 1:\n%s", n, job.Explain)
	}
}

// TestPruneUpsertScan: the scan of an upsert relation is narrowed before
// its Normalize, which then keeps only the columns used above and the
// primary key; upserts without -U and deletes by key (their other columns
// NULL) still apply, as DuckDB over the final rows says.
func TestPruneUpsertScan(t *testing.T) {
	ua := &plan.Relation{Name: "ua", PrimaryKey: []int{0}, Columns: []plan.Column{
		{Name: "id", Type: types.Int64, NotNull: true}, {Name: "k", Type: types.Int64}}}
	ub := &plan.Relation{Name: "ub", PrimaryKey: []int{0}, Upsert: true, Columns: []plan.Column{
		{Name: "id", Type: types.Int64, NotNull: true}, {Name: "tag", Type: types.Text},
		{Name: "k", Type: types.Int64}, {Name: "note", Type: types.Text}}}
	i64, txt := types.NewInt64, types.NewText
	ev := func(kind types.RowKind, vals ...types.Datum) event { return event{kind: kind, row: types.Row(vals)} }
	tick := func(e int) event { return event{epoch: base.Epoch(e)} }
	cat := relCatalog{
		"ua": {rel: ua, evs: []event{ev(types.Insert, i64(1), i64(10)), ev(types.Insert, i64(2), i64(20)), ev(types.Insert, i64(3), i64(30)),
			tick(1), tick(2), tick(3), tick(4), tick(5)},
			live: []types.Row{{i64(1), i64(10)}, {i64(2), i64(20)}, {i64(3), i64(30)}}},
		"ub": {rel: ub, evs: []event{
			ev(types.Insert, i64(7), txt("x"), i64(10), txt("a long note")), ev(types.Insert, i64(9), txt("q"), i64(30), txt("n")), tick(1),
			ev(types.UpdateAfter, i64(7), txt("y"), i64(10), txt("another note")), tick(2),
			ev(types.UpdateAfter, i64(7), txt("z"), i64(20), txt("n")), tick(3),
			ev(types.Delete, i64(9), types.Null, types.Null, types.Null), ev(types.UpdateAfter, i64(8), txt("w"), i64(10), txt("n")), tick(4),
			ev(types.UpdateAfter, i64(8), txt("v"), i64(10), txt("m")), tick(5)},
			live: []types.Row{{i64(7), txt("z"), i64(20), txt("n")}, {i64(8), txt("v"), i64(10), txt("m")}}},
	}
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	loadDuck(t, db, cat)
	for _, c := range []struct{ q, narrowed string }{
		{"SELECT ua.id, count(ub.id) AS n FROM ua LEFT JOIN ub ON ua.k = ub.k GROUP BY ua.id", "project columns id, k (2 of 4)"},
		{"SELECT ua.id, ub.tag FROM ua LEFT JOIN ub ON ua.k = ub.k", "project columns id, tag, k (3 of 4)"},
		{"SELECT k, count(*) AS n FROM ub GROUP BY k", "project columns id, k (2 of 4)"},
	} {
		got, job := runPlan(t, cat, bindSQL(t, cat, c.q), 2)
		if !strings.Contains(job.Explain, c.narrowed+" (parallelism 1, upsert)\n") || !strings.Contains(job.Explain, "normalize upsert changelog by (id) to retract") {
			t.Errorf("%s: the scan of ub is not narrowed before its normalization:\n%s\nwant a line with: %s", c.q, job.Explain, c.narrowed)
		}
		sameRows(t, c.q, got, duckRows(t, db, c.q), job.Explain)
	}
}
