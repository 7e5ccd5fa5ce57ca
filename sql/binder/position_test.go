package binder

import (
	"testing"

	"github.com/stratadb/strata/sql/sqlerr"
)

// Every binder error carries a SQLSTATE and the position of the construct
// that caused it (1-based characters, as Postgres reports).
func TestErrorPositions(t *testing.T) {
	for _, tc := range []struct {
		sql, code string
		pos       int
	}{
		{"SELECT a FROM t WHERE a", sqlerr.DatatypeMismatch, 23},
		{"SELECT a FROM t GROUP BY a HAVING b", sqlerr.DatatypeMismatch, 35},
		{"SELECT a FROM t, t", sqlerr.DuplicateObject, 18},
		{"SELECT * FROM auction a JOIN person a ON true", sqlerr.DuplicateObject, 30},
		{"SELECT 1 FROM auction FULL JOIN person USING (nope)", sqlerr.UndefinedColumn, 33},
		{"SELECT 1 FROM bid JOIN person USING (nope)", sqlerr.UndefinedColumn, 24},
		{"SELECT a FROM t INTERSECT SELECT a, b FROM t", sqlerr.SyntaxError, 34},
		{"SELECT a FROM t UNION ALL SELECT a, b FROM t", sqlerr.SyntaxError, 34},
		{"SELECT a FROM t UNION ALL SELECT b FROM t", sqlerr.DatatypeMismatch, 34},
		{"SELECT a FROM t UNION ALL SELECT a FROM t ORDER BY a", sqlerr.FeatureNotSupported, 52},
		{"SELECT a FROM t WINDOW w AS (ORDER BY a)", sqlerr.FeatureNotSupported, 29},
		{"SELECT a FROM t HAVING a > 1", sqlerr.FeatureNotSupported, 24},
		{"SELECT DISTINCT ON (a) a FROM t", sqlerr.FeatureNotSupported, 21},
		{"SELECT DISTINCT a FROM t ORDER BY b", sqlerr.InvalidColumnReference, 35},
		{"SELECT a FROM t GROUP BY a ORDER BY b", sqlerr.GroupingError, 37},
		{"SELECT a FROM t GROUP BY a HAVING b = 'x'", sqlerr.GroupingError, 35},
		{"VALUES (1, 2), (3)", sqlerr.SyntaxError, 17},
		{"VALUES (1), ('x')", sqlerr.InvalidTextRepresentation, 0},
		{"SELECT * FROM (SELECT 1) AS s(a, b)", sqlerr.InvalidColumnReference, 23},
		{"SELECT * FROM LATERAL (SELECT 1) s", sqlerr.FeatureNotSupported, 31},
		{"SELECT a FROM t LIMIT -1", "2201W", 23},
		{"SELECT a FROM t LIMIT a", sqlerr.UndefinedColumn, 23},
	} {
		_, err := bind(t, tc.sql)
		e := sqlerr.From(err)
		if e == nil {
			t.Errorf("%s: no error", tc.sql)
			continue
		}
		if e.Code != tc.code || (tc.pos != 0 && e.Position != tc.pos) || e.Position == 0 {
			t.Errorf("%s: got %s %q at %d, want %s at %d", tc.sql, e.Code, e.Message, e.Position, tc.code, tc.pos)
		}
	}
}
