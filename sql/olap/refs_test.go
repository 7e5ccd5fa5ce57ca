package olap

import (
	"context"
	"strings"
	"testing"

	"github.com/stratadb/strata/sql/sqlerr"
)

func TestReferencedTables(t *testing.T) {
	e := newEngine(t)
	for _, c := range []struct{ sql, want, code string }{
		{"SELECT * FROM t1", "t1", ""},
		{`WITH c AS (SELECT * FROM Orders) SELECT * FROM c JOIN dev.Accounts a ON true WHERE x IN (SELECT y FROM "Mixed"."T") AND EXISTS (SELECT 1 FROM orders)`,
			`orders,dev.accounts,Mixed.T`, ""},
		{"SELECT * FROM range(10), generate_series(1, 2) g", "", ""},
		// Bare names fold ASCII letters only; quoted ones are exact.
		{`SELECT * FROM Вид, "ÄB", ÄB, "MixedCase", MixedCase`, `Вид,ÄB,Äb,MixedCase,mixedcase`, ""},
		{`WITH äb AS (SELECT 1) SELECT * FROM "ÄB", äb`, `ÄB`, ""},
		{"SELECT * FROM a UNION ALL SELECT * FROM b ORDER BY 1", "a,b", ""},
		{"SELEC 1", "", sqlerr.SyntaxError},
		{"INSERT INTO t VALUES (1)", "", sqlerr.FeatureNotSupported},
		{"SELECT 1; SELECT 2", "", sqlerr.FeatureNotSupported},
	} {
		got, err := e.ReferencedTables(context.Background(), c.sql)
		if c.code != "" {
			if sqlerr.Code(err) != c.code {
				t.Errorf("%s: %v, want %s", c.sql, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.sql, err)
			continue
		}
		if g := strings.Join(got, ","); g != c.want {
			t.Errorf("%s: %s, want %s", c.sql, g, c.want)
		}
	}
}
