package binder

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/exec"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

func bindParams(t *testing.T, sql string, declared ...types.Type) (plan.Node, *plan.Params, error) {
	t.Helper()
	st, err := parser.ParseOne(sql)
	if err != nil {
		t.Fatalf("parse %q: %v", sql, err)
	}
	b := New(catalog, sql, nil)
	ps := b.WithParams(declared)
	n, err := b.BindQuery(st.Node)
	return n, ps, err
}

// Parameter types are inferred from their context as Postgres infers
// them; the ones no context types are TEXT.
func TestParamInference(t *testing.T) {
	for _, tc := range []struct {
		sql      string
		declared []types.Type
		want     string // types of $1, $2, ...
	}{
		{"SELECT a FROM t WHERE a = $1", nil, "INTEGER"},
		{"SELECT price FROM bid WHERE auction = $1 AND channel = $2", nil, "BIGINT VARCHAR"},
		{"SELECT $1 + 1", nil, "INTEGER"},
		{"SELECT 1.5 * $1", nil, "NUMERIC"},
		{"SELECT $1", nil, "TEXT"},
		{"SELECT $1::int, $2::date", nil, "INTEGER DATE"},
		{"SELECT a FROM t WHERE $1", nil, "BOOLEAN"},
		{"SELECT a FROM t WHERE a IN ($1, $2)", nil, "INTEGER INTEGER"},
		{"SELECT coalesce(c, $1) FROM t", nil, "NUMERIC"},
		{"SELECT CASE WHEN a > $1 THEN b ELSE $2 END FROM t", nil, "INTEGER TEXT"},
		{"SELECT upper($1)", nil, "TEXT"},
		{"SELECT a FROM t WHERE $1 IS NULL OR a = $1", nil, "INTEGER"},
		{"SELECT a FROM t WHERE b = $1 OR $1 IS NULL", nil, "TEXT"},
		{"SELECT a FROM t WHERE a = $1 + 1", nil, "INTEGER"},
		{"SELECT a FROM t WHERE $1::text IS NULL", nil, "TEXT"},
		{"SELECT a FROM t WHERE $1 IS NULL", []types.Type{types.Int64}, "BIGINT"},
		{"SELECT a, $1 FROM t WHERE $1 IS NULL", nil, "TEXT"},
		{"SELECT date_time FROM bid WHERE date_time > $1", nil, "TIMESTAMP(3)"},
		{"SELECT count(*) FROM bid WHERE price BETWEEN $1 AND $2", nil, "BIGINT BIGINT"},
		// Declared types stand; the binder casts as for any expression.
		{"SELECT a FROM t WHERE a = $1", []types.Type{types.Int64}, "BIGINT"},
		{"SELECT a FROM t WHERE a = $1 AND b = $2", []types.Type{types.Unknown, types.Text}, "INTEGER TEXT"},
		{"SELECT * FROM (SELECT a, ROW_NUMBER() OVER (PARTITION BY b ORDER BY a) AS rn FROM t WHERE c > $1) WHERE rn <= 2", nil, "NUMERIC"},
	} {
		_, ps, err := bindParams(t, tc.sql, tc.declared...)
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		var got []string
		for _, ty := range ps.Types {
			got = append(got, ty.String())
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%s: parameter types %v, want %s", tc.sql, got, tc.want)
		}
	}
}

func TestParamErrors(t *testing.T) {
	for _, tc := range []struct {
		sql, code, msg string
		pos            int
	}{
		// Once typed, a parameter keeps its type, as in Postgres.
		{"SELECT a FROM t WHERE a = $1 AND b = $1", sqlerr.UndefinedFunction, "operator does not exist: text = integer", 36},
		// An occurrence bound while untyped and typed later must agree.
		{"SELECT greatest($1, length($1))", "42P08", "inconsistent types deduced for parameter $1: text versus integer", 8},
		// No context types the parameter: Postgres's 42P18.
		{"SELECT a FROM t WHERE $1 IS NULL", "42P18", "could not determine data type of parameter $1", 0},
		{"SELECT a FROM t WHERE $1 IS NOT NULL AND a = $2", "42P18", "could not determine data type of parameter $1", 0},
		{"SELECT a FROM t WHERE $2 = 1", "42P18", "could not determine data type of parameter $1", 0},
		{"SELECT a FROM t LIMIT $1", sqlerr.FeatureNotSupported, "LIMIT must be a constant", 23},
		{"SELECT a FROM t OFFSET -1", "2201X", "OFFSET must not be negative", 24},
		{"SELECT * FROM TUMBLE(bid, date_time, $1)", sqlerr.InvalidParameterValue, "window sizes of TUMBLE must be constant intervals", 15},
	} {
		_, _, err := bindParams(t, tc.sql)
		e := sqlerr.From(err)
		if e == nil {
			t.Errorf("%s: no error", tc.sql)
			continue
		}
		if e.Code != tc.code || !strings.Contains(e.Message, tc.msg) || (tc.pos != 0 && e.Position != tc.pos) {
			t.Errorf("%s: got %s %q at %d, want %s %q at %d", tc.sql, e.Code, e.Message, e.Position, tc.code, tc.msg, tc.pos)
		}
	}
	// Without WithParams (a view, a simple query) $n does not exist.
	_, err := bind(t, "SELECT a FROM t WHERE a = $1")
	if e := sqlerr.From(err); e == nil || e.Code != "42P02" || e.Message != "there is no parameter $1" || e.Position != 27 {
		t.Fatalf("parameter without WithParams: %v", err)
	}
}

type rowsScanner map[string][]types.Row

func (m rowsScanner) Scan(rel *plan.Relation) ([]types.Row, error) { return m[rel.Name], nil }

// A statement bound once runs with each execution's values.
func TestParamExecution(t *testing.T) {
	data := rowsScanner{"t": {
		{types.NewInt32(1), types.NewText("x"), types.Null},
		{types.NewInt32(2), types.NewText("y"), types.Null},
		{types.NewInt32(3), types.NewText("x"), types.Null},
	}}
	n, ps, err := bindParams(t, "SELECT a + $2, b FROM t WHERE b = $1 AND ($3 IS NULL OR a > $3) ORDER BY a")
	if err != nil {
		t.Fatal(err)
	}
	if got := typesText(ps.Types); got != "TEXT INTEGER INTEGER" {
		t.Fatalf("types %s", got)
	}
	run := func(vals ...types.Datum) string {
		t.Helper()
		if err := ps.Set(vals); err != nil {
			t.Fatal(err)
		}
		rows, err := exec.Run(&expr.Context{}, n, data)
		if err != nil {
			t.Fatal(err)
		}
		var parts []string
		for _, r := range rows {
			parts = append(parts, r.String())
		}
		return strings.Join(parts, " ")
	}
	if got := run(types.NewText("x"), types.NewInt32(10), types.Null); got != "(11, x) (13, x)" {
		t.Fatalf("first execution: %s", got)
	}
	if got := run(types.NewText("x"), types.NewInt32(100), types.NewInt32(1)); got != "(103, x)" {
		t.Fatalf("second execution: %s", got)
	}
	if got := run(types.NewText("y"), types.Null, types.Null); got != "(NULL, y)" {
		t.Fatalf("third execution: %s", got)
	}
	if err := ps.Set([]types.Datum{types.NewText("x")}); sqlerr.Code(err) != sqlerr.ProtocolViolation {
		t.Fatalf("wrong count: %v", err)
	}
	if err := ps.Set([]types.Datum{types.NewInt32(1), types.Null, types.Null}); sqlerr.Code(err) != sqlerr.InvalidParameterValue {
		t.Fatalf("wrong kind: %v", err)
	}

	// Before any Set, evaluation fails instead of reading nothing.
	n, _, err = bindParams(t, "SELECT $1::int + 1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.Run(&expr.Context{}, n, data); sqlerr.Code(err) != sqlerr.ProtocolViolation {
		t.Fatalf("execution without values: %v", err)
	}
}

func typesText(ts []types.Type) string {
	var s []string
	for _, t := range ts {
		s = append(s, t.String())
	}
	return strings.Join(s, " ")
}

// An INSERT's source takes its untyped values' types from the target
// columns, so parameters of INSERT ... VALUES get the columns' types.
func TestBindInsertSource(t *testing.T) {
	for _, tc := range []struct {
		sql    string
		params string // inferred parameter types
		cols   string // the bound query's column types
	}{
		{"VALUES ($1, $2)", "BIGINT DATE", "BIGINT DATE"},
		{"VALUES ($1, '2024-01-02'), (7, $2)", "BIGINT DATE", "BIGINT DATE"},
		{"SELECT $1, '2024-01-02'", "BIGINT", "BIGINT DATE"},
		{"VALUES (1.5, NULL)", "", "NUMERIC DATE"}, // typed values are left to the assignment cast
		{"SELECT $1 UNION ALL SELECT $2", "TEXT TEXT", "TEXT"},
		{"SELECT x FROM (SELECT $1 AS x) s", "TEXT", "TEXT"},
	} {
		st, err := parser.ParseOne(tc.sql)
		if err != nil {
			t.Fatal(err)
		}
		b := New(catalog, tc.sql, nil)
		ps := b.WithParams(nil)
		n, err := b.BindInsertSource(st.Node, []types.Type{types.Int64, types.Date})
		if err != nil {
			t.Errorf("%s: %v", tc.sql, err)
			continue
		}
		var cols []types.Type
		for _, c := range n.Schema() {
			cols = append(cols, c.Type)
		}
		if got := typesText(ps.Types); got != tc.params {
			t.Errorf("%s: parameter types %q, want %q", tc.sql, got, tc.params)
		}
		if got := typesText(cols); got != tc.cols {
			t.Errorf("%s: column types %q, want %q", tc.sql, got, tc.cols)
		}
	}

	sql := "VALUES ($1, $2), (3, '2024-03-01')"
	st, _ := parser.ParseOne(sql)
	b := New(catalog, sql, nil)
	ps := b.WithParams(nil)
	n, err := b.BindInsertSource(st.Node, []types.Type{types.Int64, types.Date})
	if err != nil {
		t.Fatal(err)
	}
	d, err := types.ParseText(types.Date, "2024-02-29", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := ps.Set([]types.Datum{types.NewInt64(1), d}); err != nil {
		t.Fatal(err)
	}
	rows, err := exec.Run(&expr.Context{}, n, rowsScanner{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].String() != "(1, 2024-02-29)" || rows[1].String() != "(3, 2024-03-01)" {
		t.Fatalf("rows %v", rows)
	}
}
