package olap

import "testing"

func TestAvgAsNumeric(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT avg(x) FROM t", "SELECT strata_avg(x) FROM t"},
		{"SELECT AVG(a + b), round(avg(f(x)), 2) FROM t", "SELECT strata_avg(a + b), round(strata_avg(f(x)), 2) FROM t"},
		{"SELECT avg(x) OVER (PARTITION BY g), avg(DISTINCT x), avg(x) FILTER (WHERE x > 1) FROM t",
			"SELECT avg(x) OVER (PARTITION BY g), avg(DISTINCT x), avg(x) FILTER (WHERE x > 1) FROM t"},
		{`SELECT "avg"(x), t.avg, 'avg(x)' FROM t`, `SELECT "avg"(x), t.avg, 'avg(x)' FROM t`},
		{"SELECT avg FROM t", "SELECT avg FROM t"},
	} {
		if got := avgAsNumeric(c.in); got != c.want {
			t.Errorf("avgAsNumeric(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
