package binder

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// The Top-N and deduplication patterns bind to a TopN below the
// subquery's projection; bounds the TopN implies disappear, the others
// stay as a Filter on the row number.
func TestBindTopN(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		// Top 3 bids per auction, row number not selected: no rank column.
		{"SELECT auction, price FROM (SELECT auction, price, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC) AS rn FROM bid) WHERE rn <= 3",
			`Project auction, price
  Project auction, price
    TopN n=3 partition=[auction] order=[price DESC]
      Scan bid
`},
		// Deduplication, keeping the first row per bidder; SELECT * keeps rn.
		{"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY bidder ORDER BY date_time) AS rn FROM bid) AS b WHERE rn = 1",
			`Project auction, bidder, price, channel, url, date_time, extra, rn
  Project auction, bidder, price, channel, url, date_time, extra, rn
    TopN n=1 partition=[bidder] order=[date_time] with row number rn
      Scan bid
`},
		// N >= rn, with another predicate that stays, and rn selected.
		{"SELECT auction, rn FROM (SELECT auction, price, ROW_NUMBER() OVER (PARTITION BY auction ORDER BY price DESC, bidder) AS rn FROM bid WHERE price > 10) WHERE 5 >= rn AND price < 100",
			`Project auction, rn
  Filter (price < 100)
    Project auction, price, rn
      TopN n=5 partition=[auction] order=[price DESC, bidder] with row number rn
        Filter (price > 10)
          Scan bid
`},
		// A cast integer literal is a bound.
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) AS rn FROM t) WHERE rn <= 2::bigint AND CAST(1 AS int) <= rn",
			`Project a
  Project a
    TopN n=2 partition=[b] order=[a]
      Scan t
`},
		// rn < N is rn <= N-1; BETWEEN 1 AND N; a qualified rn.
		{"SELECT a FROM (SELECT a, c, ROW_NUMBER() OVER (ORDER BY c DESC NULLS LAST) AS r FROM t) x WHERE x.r < 3",
			`Project a
  Project a, c
    TopN n=2 partition=[] order=[c DESC NULLS LAST]
      Scan t
`},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) AS rn FROM t) WHERE rn BETWEEN 1 AND 4",
			`Project a
  Project a
    TopN n=4 partition=[b] order=[a]
      Scan t
`},
		// rn > M AND rn <= N: the TopN keeps N rows, the Filter skips M.
		{"SELECT a, rn FROM (SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) AS rn FROM t) WHERE rn > 2 AND rn <= 5",
			`Project a, rn
  Filter (rn > 2)
    Project a, rn
      TopN n=5 partition=[b] order=[a] with row number rn
        Scan t
`},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) AS rn FROM t) WHERE rn BETWEEN 2 AND 3",
			`Project a
  Filter ((rn >= 2) AND (rn <= 3))
    Project a, rn
      TopN n=3 partition=[b] order=[a] with row number rn
        Scan t
`},
		// Top-N over a grouped subquery: the window orders by an aggregate.
		{"SELECT auction, n FROM (SELECT auction, count(*) AS n, ROW_NUMBER() OVER (ORDER BY count(*) DESC, auction) AS rn FROM bid GROUP BY auction) WHERE rn <= 10",
			`Project auction, n
  Project auction, count(*) AS n
    TopN n=10 partition=[] order=[count(*) DESC, auction]
      Aggregate group=[auction] aggs=[count(*)]
        Scan bid
`},
		// A column list on the subquery renames rn.
		{"SELECT k, x FROM (SELECT b, a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) FROM t) AS s(k, v, x) WHERE x = 1",
			`Project k, x
  Project b, a, row_number
    TopN n=1 partition=[b] order=[a] with row number row_number
      Scan t
`},
		// An upper bound below 1 leaves nothing.
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM t) WHERE rn < 1",
			`Project a
  Filter (rn < 1)
    Project a, rn
      TopN n=1 partition=[] order=[a] with row number rn
        Scan t
`},
		// ORDER BY ... LIMIT ... OFFSET stays Sort + Limit.
		{"SELECT a FROM t ORDER BY c DESC, a LIMIT 5 OFFSET 2",
			`Project a
  Limit 5 offset 2
    Sort c DESC, a
      Project a, c
        Scan t
`},
	} {
		n, err := bind(t, tc.sql)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		if got := plan.Explain(n); got != tc.want {
			t.Errorf("%s:\ngot:\n%swant:\n%s", tc.sql, got, tc.want)
		}
	}
}

func TestBindTopNSchema(t *testing.T) {
	n, err := bind(t, "SELECT * FROM (SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) AS rn FROM t) WHERE rn <= 2")
	if err != nil {
		t.Fatal(err)
	}
	s := n.Schema()
	if len(s) != 2 || s[1].Name != "rn" || s[1].Type.String() != "BIGINT" {
		t.Fatalf("schema %+v", s)
	}
	top := n.Inputs()[0].Inputs()[0].(*plan.TopN)
	if c := top.Cols[len(top.Cols)-1]; !top.RankCol || c.Name != "rn" || !c.NotNull || len(top.Cols) != 4 {
		t.Fatalf("TopN columns %+v", top.Cols)
	}
}

// Window functions outside the Top-N pattern are refused with 0A000, at
// the function's position, naming what is supported.
func TestBindTopNErrors(t *testing.T) {
	for _, tc := range []struct {
		sql, code, msg string
		pos            int
	}{
		{"SELECT a, ROW_NUMBER() OVER (ORDER BY a) FROM t", sqlerr.FeatureNotSupported, "ROW_NUMBER() is only supported as a Top-N", 11},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM t) s", sqlerr.FeatureNotSupported, "the enclosing query's WHERE must bound rn by an integer", 26},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM t) s WHERE rn > 2", sqlerr.FeatureNotSupported, "must bound rn", 26},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM t) s WHERE rn <= a", sqlerr.FeatureNotSupported, "must bound rn", 26},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM t) s WHERE rn = 1 OR rn = 2", sqlerr.FeatureNotSupported, "must bound rn", 26},
		{"SELECT a FROM (SELECT a, RANK() OVER (ORDER BY a) AS rn FROM t) s WHERE rn <= 2", sqlerr.FeatureNotSupported, "window function rank() is not supported; window functions are ROW_NUMBER()", 26},
		{"SELECT a, sum(a) OVER (PARTITION BY b ORDER BY a) FROM t", sqlerr.FeatureNotSupported, "window function sum() is not supported", 11},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (PARTITION BY b) AS rn FROM t) s WHERE rn <= 2", sqlerr.FeatureNotSupported, "needs ORDER BY in its OVER clause", 26},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM t ORDER BY a LIMIT 3) s WHERE rn <= 2", sqlerr.FeatureNotSupported, "DISTINCT, ORDER BY, LIMIT or OFFSET", 26},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY nope) AS rn FROM t) s WHERE rn <= 2", sqlerr.UndefinedColumn, `column "nope" does not exist`, 54},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM t GROUP BY a) s WHERE rn <= 2 AND b = 'x'", sqlerr.UndefinedColumn, `column "b" does not exist`, 102},
		{"SELECT a FROM (SELECT a, count(*), ROW_NUMBER() OVER (ORDER BY b) AS rn FROM t GROUP BY a) s WHERE rn <= 2", sqlerr.GroupingError, `column "b" must appear in the GROUP BY clause`, 36},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER w AS rn FROM t WINDOW w AS (ORDER BY a)) s WHERE rn <= 2", sqlerr.FeatureNotSupported, "WINDOW clauses are not supported", 0},
		{"SELECT a FROM (SELECT a, ROW_NUMBER() OVER (ORDER BY a) AS rn FROM t) s, t u WHERE rn <= 2", sqlerr.FeatureNotSupported, "ROW_NUMBER() is only supported as a Top-N", 26},
	} {
		_, err := bind(t, tc.sql)
		e := sqlerr.From(err)
		if e == nil {
			t.Errorf("%s: no error", tc.sql)
			continue
		}
		if e.Code != tc.code || !strings.Contains(e.Message, tc.msg) || (tc.pos != 0 && e.Position != tc.pos) {
			t.Errorf("%s: got %s %q at %d, want %s %q at %d", tc.sql, e.Code, e.Message, e.Position, tc.code, tc.msg, tc.pos)
		}
	}
}
