package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
)

// quotientTable creates table t (k BIGINT, x NUMERIC(10,2), i BIGINT)
// with rows whose quotients PostgreSQL and DuckDB write differently:
// x / 2 at a rounding boundary (2.05, 0.29), x / 3 repeating, and
// sum(i) / count(*) with a fractional mean.
func quotientTable(t *testing.T, e *Engine) base.Epoch {
	t.Helper()
	ctx := context.Background()
	num, _ := types.ParseType("NUMERIC(10,2)")
	name := catalog.Name(DefaultDatabase, "t")
	if err := e.CreateTable(ctx, catalog.Table{Name: name, Columns: []catalog.Column{
		{Name: "k", Type: types.Int64}, {Name: "x", Type: num}, {Name: "i", Type: types.Int64}}}, false); err != nil {
		t.Fatal(err)
	}
	c := types.NewChunk([]types.Type{types.Int64, num, types.Int64}, 8)
	for n, v := range []string{"2.05", "0.29", "10.00", "33.33", "1.07", "123456.78"} {
		x, err := types.Cast(types.NewText(v), num, types.CastContext{Explicit: true})
		if err != nil {
			t.Fatal(err)
		}
		c.Append(types.Insert, types.Row{types.NewInt64(int64(n % 2)), x, types.NewInt64(int64(n*n + 1))})
	}
	ep, err := e.Apply(ctx, name, c)
	if err != nil {
		t.Fatal(err)
	}
	return ep
}

// TestVerifyDecimalQuotients: views whose NUMERIC columns are quotients
// verify equal to DuckDB's recomputation, which divides in DOUBLE
// PRECISION, at DuckDB's scales or as integers where PostgreSQL (and the
// view) divide exactly: the values agree to the precision of the less
// precise side.
func TestVerifyDecimalQuotients(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	ep := quotientTable(t, e)
	for i, q := range []string{
		"SELECT k, sum(i) / count(*) AS mean FROM t GROUP BY k",
		"SELECT k, sum(x) / count(*) AS mean FROM t GROUP BY k",
		"SELECT k, CAST(x / 2 AS NUMERIC(10,2)) AS half FROM t",
		"SELECT k, (x / 3)::numeric AS third FROM t",
		"SELECT k, CAST(sum(x) / count(*) AS NUMERIC(30,16)) AS mean FROM t GROUP BY k",
		"SELECT k, sum(x) AS total, sum(i) AS n, max(x) * 2 AS twice FROM t GROUP BY k",
	} {
		v := catalog.Name(DefaultDatabase, fmt.Sprintf("q%d", i))
		if err := e.CreateView(ctx, v, q, nil, false); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if err := e.WaitCommitted(ctx, v, ep); err != nil {
			t.Fatal(err)
		}
		res, err := e.Verify(ctx, v, 0)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if !res.OK() || res.By != "duckdb" {
			t.Errorf("%s:\n%s", q, res)
		}
	}
}

// TestQuotientColumns: the columns marked as quotients are the NUMERIC
// ones a division or avg computes, through casts, CASE results,
// aggregates and subqueries; sums, integers, exact arithmetic and a CASE
// whose condition alone divides are not.
func TestQuotientColumns(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	quotientTable(t, e)
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rels := &relations{cat: cat, db: DefaultDatabase}
	for _, tc := range []struct {
		query string
		want  []bool
	}{
		{"SELECT k, sum(x) / count(*) AS a, sum(x) AS s, count(*) AS n, avg(x) AS m FROM t GROUP BY k", []bool{false, true, false, false, true}},
		{"SELECT k, CASE WHEN x / 2 > 1 THEN x ELSE 0 END AS c, CASE WHEN k > 0 THEN x / 2 END AS d, round(x / 7, 2) AS r, k / 2 AS ik FROM t", []bool{false, false, true, true, false}},
		{"SELECT k, max(q) AS m, sum(x) AS s FROM (SELECT k, x, x / 3 AS q FROM t) s GROUP BY k", []bool{false, true, false}},
		{"SELECT a.k, a.x * 2 AS y, b.q FROM t a JOIN (SELECT k, x / 3 AS q FROM t) b ON a.k = b.k", []bool{false, false, true}},
		{"SELECT k, x / 3 AS q FROM t UNION ALL SELECT k, x FROM t", []bool{false, true}},
	} {
		st, err := parser.ParseOne(tc.query)
		if err != nil {
			t.Fatal(err)
		}
		p, err := binder.New(rels, tc.query, &expr.Context{}).BindQuery(st.Node)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		if got := quotientColumns(p); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.query, got, tc.want)
		}
	}
}
