package olap

import "testing"

func TestSeriesAsPostgres(t *testing.T) {
	wrap := func(args string) string {
		return "(SELECT CAST(generate_series AS INTEGER) AS generate_series FROM generate_series(" + args + "))"
	}
	for _, c := range []struct{ in, want string }{
		{"SELECT * FROM generate_series(1, 3)", "SELECT * FROM " + wrap("1, 3")},
		{"SELECT g FROM generate_series(1, 3) g", "SELECT g FROM " + wrap("1, 3") + " g(g)"},
		{"SELECT i FROM t, generate_series(-5, 5, 2) AS g(i)", "SELECT i FROM t, " + wrap("-5, 5, 2") + " AS g(i)"},
		// bigint arguments, columns and WITH ORDINALITY keep DuckDB's call
		{"SELECT g FROM generate_series(1, 3000000000) g", "SELECT g FROM generate_series(1, 3000000000) g(g)"},
		{"SELECT g FROM t, generate_series(1, t.n) g", "SELECT g FROM t, generate_series(1, t.n) g(g)"},
		{"SELECT * FROM generate_series(1, 3) WITH ORDINALITY", "SELECT * FROM generate_series(1, 3) WITH ORDINALITY"},
		// not in FROM: untouched
		{"SELECT generate_series(1, 3), x FROM t", "SELECT generate_series(1, 3), x FROM t"},
		{"SELECT 'generate_series(1, 3)'", "SELECT 'generate_series(1, 3)'"},
	} {
		if got := seriesAsPostgres(c.in); got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
}
