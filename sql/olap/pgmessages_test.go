package olap

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table/fileio"
)

// duckWords are words of DuckDB's messages a PostgreSQL client should
// never see.
var duckWords = regexp.MustCompile(`(?i)duckdb|binder error|catalog error|parser error|candidate (functions|bindings|tables)|did you mean|from clause is missing|hugeint|varchar|string_literal|integer_literal|\bint(16|32|64|128)\b|any_value|count_star|type type|type \d+|!$`)

func TestErrorsSpeakPostgres(t *testing.T) {
	e := newEngine(t)
	tb := accounts(t, fileio.NewMem(), "wh/dev/accounts")
	in := []Input{{Name: "accounts", Table: tb, Epoch: 1}}
	cases := []struct{ sql, code, msg, hint string }{
		{"SELECT nosuch FROM accounts", sqlerr.UndefinedColumn, `column "nosuch" does not exist`, ""},
		{"SELECT accounts.nosuch FROM accounts", sqlerr.UndefinedColumn, `column accounts.nosuch does not exist`, ""},
		{"SELECT x.id FROM accounts", sqlerr.UndefinedTable, `missing FROM-clause entry for table "x"`, ""},
		{"SELECT nosuchfn(id) FROM accounts", sqlerr.UndefinedFunction, `function nosuchfn does not exist`, noFunctionHint},
		{"SELECT row_number() FROM accounts", sqlerr.WrongObjectType, `window function row_number requires an OVER clause`, ""},
		{"SELECT id, count(*) FROM accounts", sqlerr.GroupingError, `column "id" must appear in the GROUP BY clause or be used in an aggregate function`, ""},
		{"SELECT name + 1 FROM accounts", sqlerr.UndefinedFunction, `operator does not exist: text + integer`, noOperatorHint},
		{"SELECT sum(name) FROM accounts", sqlerr.UndefinedFunction, `function sum(text) does not exist`, noFunctionHint},
		{"SELECT to_char(sum(id)) FROM accounts", sqlerr.UndefinedFunction, `function to_char does not exist with these arguments`, toCharHint},
		{"SELECT to_char(sum(id), 42) FROM accounts", sqlerr.UndefinedFunction, `function to_char(any, integer) does not exist`, toCharHint},
		{"SELECT id FROM accounts WHERE id IN (SELECT name FROM accounts)", sqlerr.UndefinedFunction, `operator does not exist: bigint = text`, noOperatorHint},
		{"SELECT CAST(name AS INT) FROM accounts", sqlerr.InvalidTextRepresentation, `invalid input syntax for type integer: "bob"`, ""},
		{"SELECT CAST(name AS numeric) FROM accounts", sqlerr.InvalidTextRepresentation, `invalid input syntax for type numeric: "bob"`, ""},
		{"SELECT 'x'::uuid", sqlerr.InvalidTextRepresentation, `invalid input syntax for type uuid: "x"`, ""},
		{"SELECT CAST(name AS date) FROM accounts", sqlerr.InvalidDatetimeFormat, `invalid input syntax for type date: "bob"`, ""},
		{"SELECT id * 9223372036854775807 FROM accounts", sqlerr.NumericValueOutOfRange, "bigint out of range", ""},
		{"SELECT 99999999999::int", sqlerr.NumericValueOutOfRange, "integer out of range", ""},
		{"SELECT 123.45::numeric(3,1)", sqlerr.NumericValueOutOfRange, "numeric field overflow", ""},
		{"SELECT * FROM accounts a JOIN accounts b ON id = id", sqlerr.AmbiguousColumn, `column reference "id" is ambiguous`, ""},
		{"SELECT id::date FROM accounts", "42846", "cannot cast type bigint to date", ""},
		{"SELECT * FROM accounts ORDER BY 5", sqlerr.InvalidColumnReference, "ORDER BY position is not in select list", "The select list has 3 columns."},
		{"SELECT * FROM accounts WHERE id = (SELECT id FROM accounts)", sqlerr.CardinalityViolation, "more than one row returned by a subquery used as an expression", ""},
		{"SELECT id FROM accounts UNION SELECT name, id FROM accounts", sqlerr.SyntaxError, "each UNION, INTERSECT or EXCEPT query must have the same number of columns", ""},
		{"SELECT * FROM accounts WHERE count(*) > 1", sqlerr.GroupingError, "aggregate functions are not allowed in WHERE", ""},
		{"SELECT * FROM accounts NATURAL JOIN nosuch", sqlerr.UndefinedTable, `relation "nosuch" does not exist`, ""},
		{"SELECT '1'::int + 'a'", sqlerr.AmbiguousFunction, "operator is not unique: integer + unknown", "Could not choose a best candidate operator. You might need to add explicit type casts."},
		{"SELECT 'a' ~ '('", sqlerr.InvalidRegularExpression, "invalid regular expression: missing )", ""},
		{"SELECT {'a': 1}", sqlerr.FeatureNotSupported, `column "struct_pack" has type struct("a" integer), which Strata cannot return`, "Cast the column to text or to a scalar type."},
		{"SELECT '{'::json", sqlerr.InvalidTextRepresentation, "invalid input syntax for type json", ""},
		{"SELECT * FROM accounts LIMIT -1", "2201W", "LIMIT and OFFSET must not be negative", ""},
		{"SELECT coalesce(id, DATE '2020-01-01') FROM accounts", sqlerr.DatatypeMismatch, "COALESCE types bigint and date cannot be matched", ""},
		{"SELECT 'a'::int[]", sqlerr.InvalidTextRepresentation, `invalid input syntax for type integer[]: "a"`, ""},
		{"SELECT id FROM accounts GROUP BY 5", sqlerr.InvalidColumnReference, "GROUP BY position is not in select list", "The select list has 1 columns."},
		{"SELECT * FROM accounts a JOIN accounts b USING (nosuch)", sqlerr.UndefinedColumn, `column "nosuch" specified in USING clause does not exist in left table`, ""},
		// Bare identifiers fold to lower case, quoted ones stay exact;
		// an unaliased count(*) is PostgreSQL's count.
		{"SELECT ROLLUP_TEST FROM (SELECT name, count(*) FROM accounts GROUP BY ROLLUP(name)) x", sqlerr.UndefinedColumn, `column "rollup_test" does not exist`, ""},
		{`SELECT "ROLLUP_TEST" FROM accounts`, sqlerr.UndefinedColumn, `column "ROLLUP_TEST" does not exist`, ""},
		{"SELECT NoSuch + 1", sqlerr.UndefinedColumn, `column "nosuch" does not exist`, ""},
		{"SELECT Accounts.NoSuch FROM accounts", sqlerr.UndefinedColumn, `column accounts.nosuch does not exist`, ""},
		{"SELECT coun FROM (SELECT count(*), sum(id), id + 1 FROM accounts GROUP BY id) x", sqlerr.UndefinedColumn, `column "coun" does not exist`, `Perhaps you meant to reference the column "x.count".`},
		// The hint names the closest column in scope, qualified, as
		// PostgreSQL does, and none when nothing is close.
		{"SELECT nme FROM accounts", sqlerr.UndefinedColumn, `column "nme" does not exist`, `Perhaps you meant to reference the column "accounts.name".`},
		{"SELECT balanse FROM Accounts A", sqlerr.UndefinedColumn, `column "balanse" does not exist`, `Perhaps you meant to reference the column "a.balance".`},
		{"SELECT nme FROM accounts a, accounts b", sqlerr.UndefinedColumn, `column "nme" does not exist`, `Perhaps you meant to reference the column "a.name" or the column "b.name".`},
		{"SELECT id FROM accounts WHERE id IN (SELECT idd + 1 FROM accounts a2)", sqlerr.UndefinedColumn, `column "idd" does not exist`, `Perhaps you meant to reference the column "a2.id".`},
		{"SELECT amount FROM accounts", sqlerr.UndefinedColumn, `column "amount" does not exist`, ""},
		{"SELECT s FROM generate_series(1, 2) g(n)", sqlerr.UndefinedColumn, `column "s" does not exist`, ""},
		{"WITH c AS (SELECT * FROM accounts) SELECT nme FROM c", sqlerr.UndefinedColumn, `column "nme" does not exist`, `Perhaps you meant to reference the column "name".`},
		// A whole-row reference: PostgreSQL's composite row, DuckDB's
		// STRUCT; Strata returns neither.
		{"SELECT accounts FROM accounts", sqlerr.FeatureNotSupported, `a whole-row reference ("accounts") is not supported; list the columns or use accounts.*`, ""},
		{"SELECT id, A FROM accounts a", sqlerr.FeatureNotSupported, `a whole-row reference ("a") is not supported; list the columns or use a.*`, ""},
		{`SELECT "X" FROM (SELECT 1 AS a) "X"`, sqlerr.FeatureNotSupported, `a whole-row reference ("X") is not supported; list the columns or use "X".*`, ""},
		{"SELECT {'a': 1} AS accounts FROM accounts", sqlerr.FeatureNotSupported, `column "accounts" has type struct("a" integer), which Strata cannot return`, "Cast the column to text or to a scalar type."},
		{"SELECT * FROM accounts FOR UPDATE", sqlerr.FeatureNotSupported, "SELECT ... FOR UPDATE and FOR SHARE are not supported", "Every read sees one consistent version of committed epochs and locks nothing; drop the locking clause."},
	}
	for _, c := range cases {
		_, err := e.Query(context.Background(), in, c.sql, QueryOptions{})
		checkPostgresError(t, c.sql, err, c.code, c.msg, c.hint)
	}
	// Describe (a wire protocol's Parse) names a column's type as a
	// query does.
	for _, c := range []struct{ sql, code, msg, hint string }{
		{"SELECT accounts FROM accounts", sqlerr.FeatureNotSupported, `a whole-row reference ("accounts") is not supported; list the columns or use accounts.*`, ""},
		{"SELECT {'a': 1, 'b': [2.5]}", sqlerr.FeatureNotSupported, `column "struct_pack" has type struct("a" integer, "b" numeric(2,1)[]), which Strata cannot return`, "Cast the column to text or to a scalar type."},
		{"SELECT map(['k'], [1]) AS m", sqlerr.FeatureNotSupported, `column "m" has type map(text, integer), which Strata cannot return`, "Cast the column to text or to a scalar type."},
		{"SELECT nme FROM accounts", sqlerr.UndefinedColumn, `column "nme" does not exist`, `Perhaps you meant to reference the column "accounts.name".`},
	} {
		_, _, err := e.Describe(context.Background(), in, c.sql)
		checkPostgresError(t, "Describe "+c.sql, err, c.code, c.msg, c.hint)
	}
}

// checkPostgresError fails t unless err has code, msg and hint and none
// of its words are DuckDB's.
func checkPostgresError(t *testing.T, sql string, err error, code, msg, hint string) {
	t.Helper()
	c := struct{ sql, code, msg, hint string }{sql, code, msg, hint}
	{
		se := sqlerr.From(err)
		if se == nil {
			t.Errorf("%s: no error", c.sql)
			return
		}
		if se.Code != c.code || se.Message != c.msg || se.Hint != c.hint {
			t.Errorf("%s:\n got %s %q hint %q\nwant %s %q hint %q", c.sql, se.Code, se.Message, se.Hint, c.code, c.msg, c.hint)
		}
		for _, s := range []string{se.Message, se.Hint, se.Detail} {
			if duckWords.MatchString(s) || strings.Contains(s, "\n") {
				t.Errorf("%s: DuckDB's wording reaches the client: %q", c.sql, s)
			}
		}
	}
}

func TestPgTypeName(t *testing.T) {
	for in, want := range map[string]string{
		"VARCHAR": "text", "DECIMAL(10,2)": "numeric(10,2)", "VARCHAR[]": "text[]", "HUGEINT": "numeric",
		"TIMESTAMP WITH TIME ZONE": "timestamp with time zone", "STRING_LITERAL": "unknown", "STRUCT": "struct",
	} {
		if got := pgTypeName(in); got != want {
			t.Errorf("pgTypeName(%s) = %s, want %s", in, got, want)
		}
	}
	if got := pgTypeWords("cannot add VARCHAR and HUGEINT[] values"); got != "cannot add text and numeric[] values" {
		t.Errorf("pgTypeWords: %s", got)
	}
	if got := pgTypeWords(`STRUCT("n" DECIMAL(10,2), "l" DECIMAL(4, 1)[])`); got != `STRUCT("n" numeric(10,2), "l" numeric(4, 1)[])` {
		t.Errorf("pgTypeWords: %s", got)
	}
}

// TestNamePosition: the position of what a message names is that of its
// first occurrence as a token, as PostgreSQL reports it.
func TestNamePosition(t *testing.T) {
	for _, tc := range []struct {
		query, message string
		want           int
	}{
		{`SELECT * FROM orderz;`, `relation "orderz" does not exist`, 15},
		// Not inside a string, a comment or a longer identifier.
		{`SELECT 'orderz', orderz_id /* orderz */ FROM orderz`, `relation "orderz" does not exist`, 46},
		// A schema-qualified relation points at the schema.
		{`SELECT * FROM public.orderz o`, `relation "orderz" does not exist`, 15},
		{`SELECT * FROM t, Public . orderz`, `relation "public.orderz" does not exist`, 18},
		// A qualifier in the select list is not the relation.
		{`SELECT orderz.a FROM orderz`, `relation "orderz" does not exist`, 22},
		// Folding: a bare name matches folded, a quoted one exactly.
		{`SELECT * FROM OrderZ`, `relation "orderz" does not exist`, 15},
		{`SELECT * FROM "Orders", "orders"`, `relation "orders" does not exist`, 25},
		// Multi-byte text before the name counts characters.
		{`SELECT 'ééé', nope FROM t`, `column "nope" does not exist`, 15},
		{`SELECT nope(1), nope FROM t`, `column "nope" does not exist`, 17},
		{`SELECT t.a, t.nope FROM t`, `column t.nope does not exist`, 13},
		{`SELECT x.a FROM t`, `missing FROM-clause entry for table "x"`, 8},
		{`SELECT 1 + nosuch(2)`, `function nosuch(integer) does not exist`, 12},
		{`SELECT a, b FROM t GROUP BY a`, `column "b" must appear in the GROUP BY clause or be used in an aggregate function`, 11},
		// A string literal that does not convert: PostgreSQL points at
		// the literal, written with any quoting, never at a name.
		{`SELECT * FROM t WHERE id = 'abc'`, `invalid input syntax for type bigint: "abc"`, 28},
		{`SELECT * FROM t WHERE abc = 1 OR 'abc' = id`, `invalid input syntax for type bigint: "abc"`, 34},
		{`SELECT 'é', id + 'it''s' FROM t`, `invalid input syntax for type integer: "it's"`, 18},
		{`SELECT * FROM t WHERE id = E'a\tb'`, "invalid input syntax for type bigint: \"a\tb\"", 28},
		{`SELECT * FROM t WHERE id = $$x$$`, `invalid input syntax for type bigint: "x"`, 28},
		{`SELECT * FROM t WHERE ts = '2024-13-01'::timestamp`, `invalid input syntax for type timestamp: "2024-13-01"`, 28},
		// A value of a row, not of the query: nothing to point at.
		{`SELECT v::bigint FROM t WHERE v <> 'x'`, `invalid input syntax for type bigint: "abc"`, 0},
		// Nothing to point at.
		{`SELECT * FROM t`, `relation "orderz" does not exist`, 0},
		{`SELECT 'orderz'`, `relation "orderz" does not exist`, 0},
		{`SELECT 1/0`, `division by zero`, 0},
	} {
		if got := NamePosition(tc.query, tc.message); got != tc.want {
			t.Errorf("NamePosition(%q, %q) = %d, want %d", tc.query, tc.message, got, tc.want)
		}
	}
}

// TestClosestColumnHint: PostgreSQL's rule for the suggested column.
func TestClosestColumnHint(t *testing.T) {
	orders := scopeRel{qual: "orders", cols: []string{"id", "customer", "amount", "name"}}
	items := scopeRel{qual: "i", cols: []string{"id", "sku", "nam"}}
	for _, c := range []struct {
		written string
		rels    []scopeRel
		want    string
	}{
		{"nme", []scopeRel{orders}, `Perhaps you meant to reference the column "orders.name".`},
		{"amout", []scopeRel{orders}, `Perhaps you meant to reference the column "orders.amount".`},
		{"customr", []scopeRel{{cols: []string{"customer"}}}, `Perhaps you meant to reference the column "customer".`},
		// Two equally close in two relations, or more: PostgreSQL names
		// two, or none.
		{"idd", []scopeRel{orders, items}, `Perhaps you meant to reference the column "orders.id" or the column "i.id".`},
		{"nme", []scopeRel{orders, items, {qual: "x", cols: []string{"nm", "me"}}}, ""},
		{"nme", []scopeRel{{qual: "x", cols: []string{"nm", "me"}}}, ""},
		// More than half the characters differ, or more than three edits.
		{"ab", []scopeRel{orders}, ""},
		{"zzzzz", []scopeRel{orders}, ""},
		{"customerzzzz", []scopeRel{orders}, ""},
		{"x", []scopeRel{{cols: []string{"y"}}}, ""},
	} {
		if got := closestColumnHint(c.written, c.rels); got != c.want {
			t.Errorf("closestColumnHint(%q) = %q, want %q", c.written, got, c.want)
		}
	}
}
