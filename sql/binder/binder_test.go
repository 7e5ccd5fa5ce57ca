package binder

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// testCatalog holds a few Nexmark-like relations.
type testCatalog map[string]*plan.Relation

func (c testCatalog) Relation(name string) (*plan.Relation, error) {
	if r, ok := c[name]; ok {
		return r, nil
	}
	return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

func col(name string, t types.Type) plan.Column { return plan.Column{Name: name, Type: t} }

var ts3 = types.Type{Kind: types.KindTimestamp, Precision: 3}

var catalog = testCatalog{
	"bid": {Name: "bid", Columns: []plan.Column{
		col("auction", types.Int64), col("bidder", types.Int64), col("price", types.Int64),
		col("channel", types.Varchar), col("url", types.Varchar), col("date_time", ts3), col("extra", types.Varchar),
	}, IsSource: true},
	"auction": {Name: "auction", Columns: []plan.Column{
		col("id", types.Int64), col("item_name", types.Varchar), col("initial_bid", types.Int64),
		col("reserve", types.Int64), col("date_time", ts3), col("expires", ts3), col("seller", types.Int64), col("category", types.Int64),
	}, PrimaryKey: []int{0}},
	"person": {Name: "person", Columns: []plan.Column{
		col("id", types.Int64), col("name", types.Varchar), col("email", types.Varchar), col("city", types.Varchar), col("state", types.Varchar),
	}, PrimaryKey: []int{0}},
	"t": {Name: "t", Columns: []plan.Column{col("a", types.Int32), col("b", types.Text), col("c", types.Numeric)}},
}

func bind(t *testing.T, sql string) (plan.Node, error) {
	t.Helper()
	st, err := parser.ParseOne(sql)
	if err != nil {
		t.Fatalf("parse %q: %v", sql, err)
	}
	return New(catalog, sql, nil).BindQuery(st.Node)
}

func TestBindPlans(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"SELECT auction, price * 2 AS p FROM bid WHERE price > 10",
			`Project auction, (price * 2) AS p
  Filter (price > 10)
    Scan bid
`},
		{"SELECT a + 1, b FROM t WHERE b = 'x' AND c > 1.5",
			`Project (a + 1) AS ?column?, b
  Filter ((b = 'x'::text) AND (c > 1.5))
    Scan t
`},
		{"SELECT auction, count(*), max(price) FROM bid GROUP BY auction HAVING count(*) > 2",
			`Project auction, count(*) AS count, max(price) AS max
  Filter (count(*) > 2)
    Aggregate group=[auction] aggs=[count(*), max(price)]
      Scan bid
`},
		{"SELECT a.id, p.name FROM auction a JOIN person p ON a.seller = p.id",
			`Project a.id AS id, p.name AS name
  InnerJoin on (a.seller = p.id)
    Scan auction AS a
    Scan person AS p
`},
		{"SELECT auction, window_start, count(*) FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY auction, window_start",
			`Project auction, window_start, count(*) AS count
  Aggregate group=[auction, window_start] aggs=[count(*)]
    TUMBLE(date_time, size=00:00:10, slide=00:00:00)
      Scan bid
`},
		{"SELECT b FROM t ORDER BY a DESC LIMIT 3",
			`Project b
  Limit 3 offset 0
    Sort a DESC
      Project b, a
        Scan t
`},
		{"SELECT DISTINCT b FROM t",
			`Aggregate group=[b] aggs=[]
  Project b
    Scan t
`},
		{"SELECT a FROM t UNION ALL SELECT 2",
			`UnionAll
  Project a
    Project a
      Scan t
  Project ?column? AS a
    Project 2 AS ?column?
      Values 1 rows
`},
		{"SELECT sum(price) FILTER (WHERE channel = 'apple'), count(DISTINCT bidder) FROM bid",
			`Project sum(price) FILTER (WHERE (channel = 'apple'::varchar)) AS sum, count(DISTINCT bidder) AS count
  Aggregate group=[] aggs=[sum(price) FILTER (WHERE (channel = 'apple'::varchar)), count(DISTINCT bidder)]
    Scan bid
`},
		{"SELECT CASE WHEN a > 1 THEN 'big' ELSE 'small' END, coalesce(c, 0) FROM t",
			`Project CASE WHEN (a > 1) THEN 'big'::text ELSE 'small'::text END AS case, COALESCE(c, 0) AS coalesce
  Scan t
`},
		{"SELECT 1 + 2 * 3, 7 / 2, 1.5::int, '2024-01-01'::date + 1",
			`Project 7 AS ?column?, 3 AS ?column?, 2 AS int4, '2024-01-02'::date AS ?column?
  Values 1 rows
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

func TestBindTypes(t *testing.T) {
	n, err := bind(t, "SELECT a + 1, a + 10000000000, c * 2, avg(a), sum(a), sum(c) FROM t GROUP BY a, c")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range n.Schema() {
		got = append(got, c.Type.String())
	}
	want := "INTEGER BIGINT NUMERIC NUMERIC BIGINT NUMERIC"
	if strings.Join(got, " ") != want {
		t.Fatalf("types %v, want %s", got, want)
	}
}

// Bad SQL gets a clear error with the Postgres SQLSTATE and a position.
func TestBindErrors(t *testing.T) {
	for _, tc := range []struct {
		sql, code, msg string
		pos            int
	}{
		{"SELECT nope FROM t", sqlerr.UndefinedColumn, `column "nope" does not exist`, 8},
		{"SELECT x.a FROM t", sqlerr.UndefinedTable, `missing FROM-clause entry for table "x"`, 8},
		{"SELECT a FROM nosuch", sqlerr.UndefinedTable, `relation "nosuch" does not exist`, 15},
		{"SELECT id FROM auction, person", sqlerr.AmbiguousColumn, `column reference "id" is ambiguous`, 8},
		{"SELECT a, count(*) FROM t", sqlerr.GroupingError, `column "a" must appear in the GROUP BY clause or be used in an aggregate function`, 8},
		{"SELECT a FROM t WHERE count(*) > 1", sqlerr.GroupingError, "aggregate functions are not allowed in WHERE", 23},
		{"SELECT a + true FROM t", sqlerr.UndefinedFunction, "operator does not exist: integer + boolean", 10},
		{"SELECT a FROM t WHERE a", sqlerr.DatatypeMismatch, "argument of WHERE must be type boolean, not type integer", 0},
		{"SELECT 'abc'::int", sqlerr.InvalidTextRepresentation, `invalid input syntax for type integer: "abc"`, 0},
		{"SELECT a FROM t WHERE a IN (SELECT 1) OR a = 2", sqlerr.FeatureNotSupported, "subqueries in expressions are not supported", 25},
		{"SELECT no_such_fn(a) FROM t", sqlerr.UndefinedFunction, "function no_such_fn(integer) does not exist", 8},
		{"SELECT * FROM TUMBLE(bid, bidder, INTERVAL '1' MINUTE)", sqlerr.DatatypeMismatch, "the time column of TUMBLE must be a timestamp, not bigint", 27},
		{"SELECT b, to_char(c, '9.99EEEE') FROM t", sqlerr.FeatureNotSupported, `to_char pattern "EEEE" is not supported`, 11},
		{"SELECT to_char(a, '99.9.9') FROM t", sqlerr.SyntaxError, "multiple decimal points", 8},
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

func TestConstantFolding(t *testing.T) {
	n, err := bind(t, "SELECT a FROM t WHERE a > 2 + 3")
	if err != nil {
		t.Fatal(err)
	}
	f := n.Inputs()[0].(*plan.Filter)
	call := f.Pred.(*expr.Call)
	if c, ok := call.Args[1].(*expr.Const); !ok || c.Value.Int64() != 5 {
		t.Fatalf("2 + 3 not folded: %s", f.Pred)
	}
}

func TestBindMoreShapes(t *testing.T) {
	for _, tc := range []struct{ sql, want string }{
		{"SELECT id, name FROM auction JOIN person USING (id)",
			`Project id, name
  InnerJoin on (auction.id = person.id)
    Scan auction
    Scan person
`},
		{"SELECT s.n FROM (SELECT auction, count(*) AS n FROM bid GROUP BY auction) AS s WHERE s.n > 1",
			`Project s.n AS n
  Filter (s.n > 1)
    Project auction, count(*) AS n
      Aggregate group=[auction] aggs=[count(*)]
        Scan bid
`},
		{"SELECT auction FROM bid GROUP BY auction ORDER BY count(*) DESC, 1",
			`Project auction
  Sort count(*) DESC, auction
    Project auction, count(*)
      Aggregate group=[auction] aggs=[count(*)]
        Scan bid
`},
		{"VALUES (1, 'a'), (2.5, NULL)",
			`Values 2 rows
`},
		{"SELECT * FROM t WHERE a BETWEEN 1 AND 3 OR b <> 'x' OR c IS NULL",
			`Project a, b, c
  Filter (((a >= 1) AND (a <= 3)) OR (b <> 'x'::text) OR (c IS NULL))
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
	n, err := bind(t, "VALUES (1, 'a'), (2.5, NULL)")
	if err != nil {
		t.Fatal(err)
	}
	if s := n.Schema(); s[0].Type != types.Numeric || s[1].Type != types.Text || s[0].Name != "column1" {
		t.Fatalf("VALUES schema %+v", s)
	}
	if _, err := bind(t, "SELECT b FROM t GROUP BY a"); sqlerr.Code(err) != sqlerr.GroupingError {
		t.Fatalf("ungrouped column: %v", err)
	}
	if _, err := bind(t, "SELECT a FROM t a, t a"); sqlerr.Code(err) != sqlerr.DuplicateObject {
		t.Fatalf("duplicate alias: %v", err)
	}
}

// SQL value functions are named as PostgreSQL names them
// (FigureColnameInternal), and localtimestamp/localtime are the
// statement's time without zone.
func TestValueFunctionNames(t *testing.T) {
	n, err := bind(t, "SELECT current_user, session_user, user, current_role, current_date, current_timestamp, "+
		"localtimestamp, localtime, current_catalog, current_schema")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range n.Schema() {
		got = append(got, c.Name+":"+c.Type.String())
	}
	want := "current_user:TEXT session_user:TEXT user:TEXT current_role:TEXT current_date:DATE " +
		"current_timestamp:TIMESTAMPTZ localtimestamp:TIMESTAMP localtime:TIME current_catalog:TEXT current_schema:TEXT"
	if g := strings.Join(got, " "); g != want {
		t.Fatalf("columns\n got %s\nwant %s", g, want)
	}
}

// pg_typeof names its argument's type as PostgreSQL does, whatever the
// value, NULL included.
func TestPgTypeofNamesTheArgumentType(t *testing.T) {
	n, err := bind(t, "SELECT pg_typeof(1.5), pg_typeof(1), pg_typeof(10000000000), pg_typeof(NULL::date), pg_typeof('a'::varchar(3)), pg_typeof(now())")
	if err != nil {
		t.Fatal(err)
	}
	p, ok := n.(*plan.Project)
	if !ok {
		t.Fatalf("plan %T", n)
	}
	var got []string
	for _, e := range p.Exprs {
		c, ok := e.(*expr.Const)
		if !ok {
			t.Fatalf("pg_typeof bound to %T", e)
		}
		got = append(got, c.Value.Str())
	}
	want := "numeric|integer|bigint|date|character varying|timestamp with time zone"
	if g := strings.Join(got, "|"); g != want {
		t.Fatalf("got  %s\nwant %s", g, want)
	}
}

// An unknown function name gets PostgreSQL's 42883 message, naming the
// argument types (or *), whether called as an aggregate or a scalar, at
// the call, with PostgreSQL's hint; a known scalar function called as an
// aggregate keeps 42809.
func TestUnknownFunction(t *testing.T) {
	for _, tc := range []struct {
		sql, code, msg, hint string
		pos                  int
	}{
		{"SELECT b, cnt(*) FROM t GROUP BY b", sqlerr.UndefinedFunction, "function cnt(*) does not exist", noFunctionHint, 11},
		{"SELECT b, cnt(DISTINCT a) FROM t GROUP BY b", sqlerr.UndefinedFunction, "function cnt(integer) does not exist", noFunctionHint, 11},
		{"SELECT summ(a ORDER BY b) FROM t", sqlerr.UndefinedFunction, "function summ(integer) does not exist", noFunctionHint, 8},
		{"SELECT a + nosuch(b, 'x') FROM t", sqlerr.UndefinedFunction, "function nosuch(text, unknown) does not exist", noFunctionHint, 12},
		{"SELECT cnt(sum(a)) FROM t", sqlerr.UndefinedFunction, "function cnt(bigint) does not exist", noFunctionHint, 8},
		{"SELECT abs(DISTINCT a) FROM t", sqlerr.WrongObjectType, "abs is not an aggregate function", "", 8},
	} {
		_, err := bind(t, tc.sql)
		e := sqlerr.From(err)
		if e == nil {
			t.Errorf("%s: no error", tc.sql)
			continue
		}
		if e.Code != tc.code || e.Message != tc.msg || e.Hint != tc.hint || e.Position != tc.pos {
			t.Errorf("%s: got %s %q (hint %q) at %d, want %s %q (hint %q) at %d", tc.sql, e.Code, e.Message, e.Hint, e.Position, tc.code, tc.msg, tc.hint, tc.pos)
		}
	}
}
