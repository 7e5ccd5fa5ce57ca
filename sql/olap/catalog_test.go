package olap

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
)

// psqlQueries reads testdata/psql15.sql: the catalog queries psql 15
// sends, by name.
func psqlQueries(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/psql15.sql")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, part := range strings.Split(string(b), "-- name: ")[1:] {
		name, q, _ := strings.Cut(part, "\n")
		out[name] = strings.TrimSpace(q)
	}
	return out
}

func catalogObjects() []TableInfo {
	num, _ := types.NumericType(10, 2)
	vc, _ := types.VarcharType(20)
	return []TableInfo{
		{Name: "t1", Owner: "root", PrimaryKey: []string{"k"}, Columns: []ColumnInfo{
			{Name: "k", Type: types.Int64}, {Name: "a", Type: types.Int32, NotNull: true}, {Name: "s", Type: types.Text},
			{Name: "n", Type: num}, {Name: "b", Type: types.Bool}, {Name: "d", Type: types.Date},
			{Name: "ts", Type: types.Timestamp}, {Name: "tz", Type: types.TimestampTZ}, {Name: "iv", Type: types.Interval},
			{Name: "j", Type: types.JSONB}, {Name: "by", Type: types.Bytea}, {Name: "v", Type: vc},
		}},
		{Name: "t2", Owner: "root", PrimaryKey: []string{"id", "name"}, Columns: []ColumnInfo{
			{Name: "id", Type: types.Int32}, {Name: "name", Type: types.Text},
		}},
		{Name: "mv", Kind: KindMaterializedView, Owner: "root", Columns: []ColumnInfo{
			{Name: "id", Type: types.Int32}, {Name: "n", Type: types.Int64},
		}},
	}
}

func catalogQuery(t *testing.T, e *Engine, objects []TableInfo, q string) *Result {
	t.Helper()
	if !IsCatalogQuery(q) {
		t.Errorf("IsCatalogQuery is false for %s", q)
	}
	res, err := e.CatalogQuery(context.Background(), objects, q)
	if err != nil {
		t.Fatalf("%v\n%s", err, q)
	}
	return res
}

func TestPsqlListTables(t *testing.T) {
	e := newEngine(t)
	qs := psqlQueries(t)
	res := catalogQuery(t, e, catalogObjects(), qs["dt"])
	var names []string
	for _, c := range res.Columns {
		names = append(names, c.Name)
	}
	if got := strings.Join(names, ","); got != "Schema,Name,Type,Owner" {
		t.Errorf("columns %s", got)
	}
	if got, want := text(res.Rows), "public|t1|table|root\npublic|t2|table|root\n"; got != want {
		t.Errorf(`\dt:
%s
want
%s`, got, want)
	}
	res = catalogQuery(t, e, catalogObjects(), qs["d_list"])
	if got, want := text(res.Rows), "public|mv|materialized view|root\npublic|t1|table|root\npublic|t2|table|root\n"; got != want {
		t.Errorf(`\d:
%s
want
%s`, got, want)
	}
}

// describe runs psql's \d name sequence and returns what psql prints from
// it: the relation kind, "column|type|not null" lines and index lines.
func describe(t *testing.T, e *Engine, objects []TableInfo, name string) (kind string, cols, indexes []string) {
	t.Helper()
	qs := psqlQueries(t)
	look := catalogQuery(t, e, objects, strings.Replace(qs["d_lookup"], "^(t1)$", "^("+name+")$", 1))
	if len(look.Rows) != 1 {
		t.Fatalf(`\d %s: lookup gives %d rows`, name, len(look.Rows))
	}
	oid := types.FormatText(look.Rows[0][0], nil)
	if got := types.FormatText(look.Rows[0][1], nil) + "." + types.FormatText(look.Rows[0][2], nil); got != "public."+name {
		t.Errorf("lookup: %s", got)
	}
	withOID := func(q string) string { return strings.ReplaceAll(q, "$OID", oid) }
	info := catalogQuery(t, e, objects, withOID(qs["d_relinfo"]))
	if len(info.Rows) != 1 {
		t.Fatalf("relinfo: %d rows", len(info.Rows))
	}
	kind = types.FormatText(info.Rows[0][1], nil)
	attrs := catalogQuery(t, e, objects, withOID(qs["d_columns"]))
	for _, r := range attrs.Rows {
		nn := ""
		if r[3].Bool() {
			nn = "not null"
		}
		cols = append(cols, types.FormatText(r[0], nil)+"|"+types.FormatText(r[1], nil)+"|"+nn)
	}
	idx := catalogQuery(t, e, objects, withOID(qs["d_indexes"]))
	for _, r := range idx.Rows {
		def := types.FormatText(r[5], nil)
		if i := strings.Index(def, " USING "); i >= 0 {
			def = def[i+7:]
		}
		label := ""
		if r[1].Bool() {
			label = " PRIMARY KEY,"
		}
		indexes = append(indexes, `"`+types.FormatText(r[0], nil)+`"`+label+" "+def+" contype="+types.FormatText(r[7], nil))
	}
	for _, q := range []string{"d_policies", "d_statistics", "d_publications", "d_inherits", "d_partitions"} {
		if res := catalogQuery(t, e, objects, withOID(qs[q])); len(res.Rows) != 0 {
			t.Errorf("%s: %d rows, want none", q, len(res.Rows))
		}
	}
	return kind, cols, indexes
}

func TestPsqlDescribeTable(t *testing.T) {
	e := newEngine(t)
	kind, cols, indexes := describe(t, e, catalogObjects(), "t1")
	if kind != "r" {
		t.Errorf("relkind %s", kind)
	}
	want := []string{
		"k|bigint|not null", "a|integer|not null", "s|text|", "n|numeric(10,2)|", "b|boolean|", "d|date|",
		"ts|timestamp without time zone|", "tz|timestamp with time zone|", "iv|interval|", "j|jsonb|", "by|bytea|",
		"v|character varying(20)|",
	}
	if strings.Join(cols, "\n") != strings.Join(want, "\n") {
		t.Errorf("columns:\n%s\nwant\n%s", strings.Join(cols, "\n"), strings.Join(want, "\n"))
	}
	if got := strings.Join(indexes, "\n"); got != `"t1_pkey" PRIMARY KEY, btree (k) contype=p` {
		t.Errorf("indexes: %s", got)
	}
	_, _, indexes = describe(t, e, catalogObjects(), "t2")
	if got := strings.Join(indexes, "\n"); got != `"t2_pkey" PRIMARY KEY, btree (id, name) contype=p` {
		t.Errorf("indexes: %s", got)
	}
	kind, cols, indexes = describe(t, e, catalogObjects(), "mv")
	if kind != "m" || strings.Join(cols, ",") != "id|integer|,n|bigint|" || len(indexes) != 0 {
		t.Errorf("mv: %s %v %v", kind, cols, indexes)
	}
}

func TestCatalogRewrite(t *testing.T) {
	objs := catalogObjects()
	cases := []struct{ in, want string }{
		{"SELECT c.relname OPERATOR(pg_catalog.~) '^(t1)$' COLLATE pg_catalog.default FROM pg_catalog.pg_class c",
			`SELECT c.relname ~ '(?s).*(?:^(t1)$).*'  FROM "S".pg_class c`},
		{"SELECT 't1'::regclass, 'public.t2'::pg_catalog.regclass", "SELECT 16384, 16387"},
		{"SELECT c.oid::pg_catalog.regclass::pg_catalog.text FROM pg_class c",
			`SELECT (SELECT relname FROM "S".pg_class WHERE oid = (c.oid))::text FROM "S".pg_class c`},
		{"SELECT pg_get_expr(x, y), pg_catalog.array_to_string(a, ','), '{0}' = p, s FROM pg_catalog.generate_series(0, 3) s",
			`SELECT "S".pg_get_expr(x, y), array_to_string(a, ','), [0] = p, s FROM generate_series(0, 3) s(s)`},
		{"SELECT '16384'::pg_catalog.oid, 'pg_class' AS pg_class_name", "SELECT '16384'::BIGINT, 'pg_class' AS pg_class_name"},
		{"SELECT relname AS pg_class FROM pg_class", `SELECT relname AS pg_class FROM "S".pg_class`},
	}
	for _, c := range cases {
		got, err := rewriteCatalog(c.in, "S", objs)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s\n got %s\nwant %s", c.in, got, c.want)
		}
	}
	if _, err := rewriteCatalog("SELECT 'nope'::regclass", "S", objs); err == nil || !strings.Contains(err.Error(), `"nope" does not exist`) {
		t.Errorf("unknown relation: %v", err)
	}
}

func TestIsCatalogQuery(t *testing.T) {
	for q, want := range map[string]bool{
		"SELECT * FROM pg_catalog.pg_class":           true,
		"select relname from pg_class":                true,
		"SELECT * FROM t1":                            false,
		"SELECT 'pg_class' FROM t1":                   false,
		`SELECT "pg_catalog" FROM t1 -- pg_namespace`: true,
	} {
		if got := IsCatalogQuery(q); got != want {
			t.Errorf("%s: %v", q, got)
		}
	}
}

// TestMorePsqlQueries runs every other query psql 15 sends for \l, \dn,
// \dv, \dm, \di, \d+ and \dt+ and checks that each runs.
func TestMorePsqlQueries(t *testing.T) {
	e := newEngine(t)
	b, err := os.ReadFile("testdata/psql15-more.sql")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, q := range strings.Split(string(b), "-- query\n")[1:] {
		q = strings.ReplaceAll(strings.TrimSpace(q), "$OID", "16385")
		if _, err := e.CatalogQuery(context.Background(), catalogObjects(), q); err != nil {
			t.Errorf("%v\n%s", err, q)
		}
		n++
	}
	if n < 20 {
		t.Errorf("only %d queries in testdata/psql15-more.sql", n)
	}
}

func TestInformationSchema(t *testing.T) {
	e := newEngine(t)
	objs := append(catalogObjects(), TableInfo{Name: "v", Kind: KindView, Columns: []ColumnInfo{{Name: "x", Type: types.Int32}}})
	res := catalogQuery(t, e, objs, `SELECT table_schema, table_name, table_type FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`)
	if got, want := text(res.Rows), "public|t1|BASE TABLE\npublic|t2|BASE TABLE\npublic|v|VIEW\n"; got != want {
		t.Errorf("tables:\n%s\nwant\n%s", got, want)
	}
	res = catalogQuery(t, e, objs, `SELECT column_name, data_type, is_nullable, character_maximum_length, numeric_precision, numeric_scale
		FROM information_schema.columns WHERE table_name = 't1' AND column_name IN ('k', 'n', 'v', 'ts') ORDER BY ordinal_position`)
	want := "k|bigint|NO|NULL|64|0\nn|numeric|YES|NULL|10|2\nts|timestamp without time zone|YES|NULL|NULL|NULL\nv|character varying|YES|20|NULL|NULL\n"
	if got := text(res.Rows); got != want {
		t.Errorf("columns:\n%s\nwant\n%s", got, want)
	}
	res = catalogQuery(t, e, objs, `SELECT schema_name FROM information_schema.schemata`)
	if got := text(res.Rows); got != "public\n" {
		t.Errorf("schemata: %s", got)
	}
}

// TestPgTablesViewsMatviews: pg_tables, pg_views and pg_matviews list the
// tables, views and materialized views, with a view's definition.
func TestPgTablesViewsMatviews(t *testing.T) {
	e := newEngine(t)
	objs := append(catalogObjects(), TableInfo{Name: "v", Kind: KindView, ViewDef: "SELECT 1 AS x", Columns: []ColumnInfo{{Name: "x", Type: types.Int32}}})
	objs[2].ViewDef = "SELECT id, count(*) AS n FROM t2 GROUP BY id"
	res := catalogQuery(t, e, objs, `SELECT schemaname, tablename, hasindexes FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename`)
	if got, want := text(res.Rows), "public|t1|t\npublic|t2|t\n"; got != want {
		t.Errorf("pg_tables:\n%s\nwant\n%s", got, want)
	}
	res = catalogQuery(t, e, objs, `SELECT matviewname, ispopulated, definition FROM pg_matviews`)
	if got, want := text(res.Rows), "mv|t|SELECT id, count(*) AS n FROM t2 GROUP BY id\n"; got != want {
		t.Errorf("pg_matviews:\n%s\nwant\n%s", got, want)
	}
	res = catalogQuery(t, e, objs, `SELECT viewname, definition FROM pg_catalog.pg_views WHERE schemaname = 'public'`)
	if got, want := text(res.Rows), "v|SELECT 1 AS x\n"; got != want {
		t.Errorf("pg_views:\n%s\nwant\n%s", got, want)
	}
}
