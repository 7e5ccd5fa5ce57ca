package exec

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

type memCatalog map[string]*plan.Relation

func (c memCatalog) Relation(name string) (*plan.Relation, error) {
	if r, ok := c[name]; ok {
		return r, nil
	}
	return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

type memScanner map[string][]types.Row

func (m memScanner) Scan(rel *plan.Relation) ([]types.Row, error) { return m[rel.Name], nil }

func query(t *testing.T, sql string) string {
	t.Helper()
	cat := memCatalog{
		"l": {Name: "l", Columns: []plan.Column{{Name: "k", Type: types.Int32}, {Name: "v", Type: types.Text}}},
		"r": {Name: "r", Columns: []plan.Column{{Name: "k", Type: types.Int32}, {Name: "w", Type: types.Int64}}},
	}
	data := memScanner{
		"l": {{types.NewInt32(1), types.NewText("a")}, {types.NewInt32(2), types.NewText("b")}, {types.NewInt32(2), types.NewText("c")}, {types.Null, types.NewText("n")}},
		"r": {{types.NewInt32(2), types.NewInt64(20)}, {types.NewInt32(3), types.NewInt64(30)}},
	}
	st, err := parser.ParseOne(sql)
	if err != nil {
		t.Fatal(err)
	}
	n, err := binder.New(cat, sql, nil).BindQuery(st.Node)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	rows, err := Run(&expr.Context{}, n, data)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var parts []string
	for _, r := range rows {
		parts = append(parts, r.String())
	}
	return strings.Join(parts, " ")
}

// Expected results are what Postgres 15 returns for the same data.
func TestRun(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"SELECT 1 + 1, 'x' || 'y'", "(2, xy)"},
		{"SELECT k, count(*), string_agg(v, ',') FROM l GROUP BY k ORDER BY k", "(1, 1, a) (2, 2, b,c) (NULL, 1, n)"},
		{"SELECT count(*), sum(k), avg(k), max(v) FROM l", "(4, 5, 1.6666666666666667, n)"},
		{"SELECT count(*), sum(k) FROM l WHERE k > 100", "(0, NULL)"},
		{"SELECT l.v, r.w FROM l JOIN r ON l.k = r.k ORDER BY v", "(b, 20) (c, 20)"},
		{"SELECT l.v, r.w FROM l LEFT JOIN r ON l.k = r.k ORDER BY v", "(a, NULL) (b, 20) (c, 20) (n, NULL)"},
		{"SELECT l.v, r.k FROM l FULL JOIN r ON l.k = r.k ORDER BY r.k, v", "(b, 2) (c, 2) (NULL, 3) (a, NULL) (n, NULL)"},
		{"SELECT v FROM l ORDER BY k DESC NULLS LAST, v LIMIT 2 OFFSET 1", "(c) (a)"},
		{"SELECT DISTINCT k FROM l ORDER BY k NULLS FIRST", "(NULL) (1) (2)"},
		{"SELECT k FROM l WHERE k = 1 UNION ALL SELECT k FROM r", "(1) (2) (3)"},
		{"VALUES (1, 'a'), (2, NULL)", "(1, a) (2, NULL)"},
	} {
		if got := query(t, tc.sql); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.sql, got, tc.want)
		}
	}
}

// Cases from review against Postgres 15.
func TestPostgresResolutionRules(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"SELECT '1' + 1, NULL + 1, 1 + NULL", "(2, NULL, NULL)"},
		{"SELECT coalesce(NULL, 1, 1/0), CASE WHEN 1 = 1 THEN 1 ELSE 1/0 END", "(1, 1)"},
		{"SELECT k FROM l WHERE k / 0 = 1 AND false", ""},
		{"SELECT 0.1::float4 + 0.1, 0.1::float4 = 0.1, 'NaN'::float8 / 0", "(0.20000000149011612, f, NaN)"},
		{"SELECT -2147483648", "(-2147483648)"},
		{"SELECT 'a' || 1 || true, concat('x', 2, NULL, 3.5)", "(a1true, x23.5)"},
	} {
		if got := query(t, tc.sql); got != tc.want {
			t.Errorf("%s\n got %s\nwant %s", tc.sql, got, tc.want)
		}
	}
	// -2147483648 - 1 overflows INTEGER, as in Postgres.
	st, _ := parser.ParseOne("SELECT -2147483648 - 1")
	n, err := binder.New(memCatalog{}, "SELECT -2147483648 - 1", nil).BindQuery(st.Node)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(&expr.Context{}, n, nil); sqlerr.Code(err) != sqlerr.NumericValueOutOfRange {
		t.Fatalf("-2147483648 - 1: %v", err)
	}
	if n.Schema()[0].Type != types.Int32 {
		t.Fatalf("type %s", n.Schema()[0].Type)
	}
	st, _ = parser.ParseOne("SELECT 1::float4 + 1.5")
	n, err = binder.New(memCatalog{}, "SELECT 1::float4 + 1.5", nil).BindQuery(st.Node)
	if err != nil || n.Schema()[0].Type != types.Float64 {
		t.Fatalf("real + numeric: %v %v", n, err)
	}
}
