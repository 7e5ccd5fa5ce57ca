package olap

import "testing"

func TestQuoteDuckKeywords(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT by FROM px", `SELECT "by" FROM px`},
		{"SELECT px.BY, k FROM px ORDER BY by", `SELECT px."by", k FROM px ORDER BY "by"`},
		{"SELECT sum(k) OVER (PARTITION BY by ORDER BY k) FROM px GROUP BY by, k", `SELECT sum(k) OVER (PARTITION BY "by" ORDER BY k) FROM px GROUP BY "by", k`},
		{"SELECT ts AT TIME ZONE 'UTC', at FROM t", `SELECT ts AT TIME ZONE 'UTC', "at" FROM t`},
		{"SELECT columns, generated, map FROM t AS semi", `SELECT "columns", "generated", "map" FROM t AS "semi"`},
		{"SELECT map(1) FROM t", "SELECT map(1) FROM t"},
		{`SELECT "by", 'by' /* by */ FROM t -- by`, `SELECT "by", 'by' /* by */ FROM t -- by`},
		{"SELECT k FROM t", "SELECT k FROM t"},
	} {
		if got := quoteDuckKeywords(c.in); got != c.want {
			t.Errorf("quoteDuckKeywords(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
