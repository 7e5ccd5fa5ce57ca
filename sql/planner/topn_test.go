package planner

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// topNPlan builds, as the binder will once it binds ROW_NUMBER() OVER,
// the plan of SELECT *[, rn] FROM (SELECT *, ROW_NUMBER() OVER
// (PARTITION BY partition ORDER BY order) AS rn FROM rel) WHERE rn <= n.
func topNPlan(rel *plan.Relation, partition []int, order []plan.SortKey, n int64, rank bool) plan.Node {
	scan := plan.NewScan(rel, "")
	cols := scan.Schema()
	ref := func(i int) expr.Expr { return &expr.ColumnRef{Index: i, Typ: cols[i].Type, Name: cols[i].Name} }
	tn := &plan.TopN{Input: scan, N: n, RankCol: rank, Cols: append([]plan.Column(nil), cols...)}
	for _, p := range partition {
		tn.Partition = append(tn.Partition, ref(p))
	}
	tn.Order = order
	if rank {
		tn.Cols = append(tn.Cols, plan.Column{Name: "rn", Type: types.Int64, NotNull: true})
	}
	return tn
}

func sortKey(rel *plan.Relation, col int, desc bool) plan.SortKey {
	c := rel.Columns[col]
	// Postgres's default: NULLS FIRST exactly when descending.
	return plan.SortKey{Expr: &expr.ColumnRef{Index: col, Typ: c.Type, Name: c.Name}, Desc: desc, NullsFirst: desc}
}

// TestTopNEqualsDuckDB runs Top-N, deduplication and ORDER BY ... LIMIT
// views over changelogs with updates and deletes (which push rows out of
// the top and bring the next ones in) and compares them with DuckDB's
// ROW_NUMBER() and LIMIT over the final rows.
func TestTopNEqualsDuckDB(t *testing.T) {
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// tr columns: 0 id, 1 k, 2 v, 3 ts.
	cases := []struct {
		name   string
		plan   func() plan.Node
		sql    string // bound by the binder when plan is nil
		oracle string
	}{
		{name: "top 2 per k by v desc, with rn",
			plan: func() plan.Node {
				return topNPlan(tsRel, []int{1}, []plan.SortKey{sortKey(tsRel, 2, true), sortKey(tsRel, 0, false)}, 2, true)
			},
			oracle: "SELECT id, k, v, ts, rn FROM (SELECT *, row_number() OVER (PARTITION BY k ORDER BY v DESC NULLS FIRST, id) AS rn FROM tr) WHERE rn <= 2"},
		{name: "top 3 per k by ts, NULLs last, without rn",
			plan: func() plan.Node {
				return topNPlan(tsRel, []int{1}, []plan.SortKey{sortKey(tsRel, 3, false), sortKey(tsRel, 0, true)}, 3, false)
			},
			oracle: "SELECT id, k, v, ts FROM (SELECT *, row_number() OVER (PARTITION BY k ORDER BY ts NULLS LAST, id DESC) AS rn FROM tr) WHERE rn <= 3"},
		{name: "dedup: keep the first row per v by arrival (id)",
			plan: func() plan.Node {
				return topNPlan(tsRel, []int{2}, []plan.SortKey{sortKey(tsRel, 0, false)}, 1, false)
			},
			oracle: "SELECT id, k, v, ts FROM (SELECT *, row_number() OVER (PARTITION BY v ORDER BY id) AS rn FROM tr) WHERE rn = 1"},
		{name: "dedup: keep the latest row per k by event time",
			plan: func() plan.Node {
				return topNPlan(tsRel, []int{1}, []plan.SortKey{sortKey(tsRel, 3, true), sortKey(tsRel, 0, true)}, 1, true)
			},
			oracle: "SELECT id, k, v, ts, rn FROM (SELECT *, row_number() OVER (PARTITION BY k ORDER BY ts DESC NULLS FIRST, id DESC) AS rn FROM tr) WHERE rn = 1"},
		{name: "global ORDER BY LIMIT",
			sql:    "SELECT id, v FROM tr ORDER BY v DESC, id LIMIT 5",
			oracle: "SELECT id, v FROM tr ORDER BY v DESC NULLS FIRST, id LIMIT 5"},
		{name: "global ORDER BY LIMIT OFFSET over a hidden sort column",
			sql:    "SELECT id FROM tr ORDER BY k + v, id DESC LIMIT 4 OFFSET 2",
			oracle: "SELECT id FROM tr ORDER BY k + v NULLS LAST, id DESC LIMIT 4 OFFSET 2"},
		{name: "Top-N of an aggregate",
			sql:    "SELECT k, count(*) AS n FROM tr GROUP BY k ORDER BY n DESC, k LIMIT 2",
			oracle: "SELECT k, count(*) AS n FROM tr GROUP BY k ORDER BY n DESC, k LIMIT 2"},
	}
	for seed := range uint64(4) {
		cat := relCatalog{"tr": tsScript(seed+20, 40)}
		loadDuck(t, db, cat)
		for _, c := range cases {
			var p plan.Node
			if c.plan != nil {
				p = c.plan()
			} else {
				p = bindSQL(t, cat, c.sql)
			}
			got, job := runPlan(t, cat, p, 2)
			sameRows(t, fmt.Sprintf("seed %d: %s", seed, c.name), got, duckRows(t, db, c.oracle), job.Explain)
		}
	}
}

// TestLimitRefusals: a view's rows have no order, so LIMIT without ORDER
// BY and ORDER BY without LIMIT are refused.
func TestLimitRefusals(t *testing.T) {
	cat := relCatalog{"tr": &input{rel: tsRel}}
	for _, q := range []string{"SELECT id FROM tr LIMIT 3", "SELECT id FROM tr ORDER BY id", "SELECT id FROM tr ORDER BY id OFFSET 2"} {
		_, err := Build("v", bindSQL(t, cat, q), &anyEndpoints{cat: cat}, Options{})
		if sqlerr.Code(err) != sqlerr.FeatureNotSupported {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// TestAppendOnlyTopNEqualsDuckDB: over an append-only stream the Top-N
// keeps only the top rows in state; its results still equal DuckDB's.
func TestAppendOnlyTopNEqualsDuckDB(t *testing.T) {
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rel := bidRel("bid")
	// bid columns: 0 auction, 1 price, 2 date_time.
	cases := []struct {
		name   string
		plan   plan.Node
		oracle string
	}{
		{"top 3 bids per auction", topNPlan(rel, []int{0}, []plan.SortKey{sortKey(rel, 1, true), sortKey(rel, 2, false)}, 3, true),
			"SELECT auction, price, date_time, rn FROM (SELECT *, row_number() OVER (PARTITION BY auction ORDER BY price DESC NULLS FIRST, date_time NULLS LAST) AS rn FROM bid) WHERE rn <= 3"},
		{"first bid per auction", topNPlan(rel, []int{0}, []plan.SortKey{sortKey(rel, 2, false), sortKey(rel, 1, false)}, 1, false),
			"SELECT auction, price, date_time FROM (SELECT *, row_number() OVER (PARTITION BY auction ORDER BY date_time NULLS LAST, price) AS rn FROM bid) WHERE rn = 1"},
	}
	for seed := range uint64(3) {
		cat := relCatalog{"bid": bidScript(rel, seed+50, 30)}
		loadDuck(t, db, cat)
		for _, c := range cases {
			got, job := runPlan(t, cat, c.plan, 2)
			if !strings.Contains(job.Explain, "keeps only the top") {
				t.Fatalf("append-only Top-N not planned as such:\n%s", job.Explain)
			}
			sameRows(t, fmt.Sprintf("seed %d: %s", seed, c.name), got, duckRows(t, db, c.oracle), job.Explain)
		}
	}
}
