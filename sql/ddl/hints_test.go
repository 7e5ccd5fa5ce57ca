package ddl

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stratadb/strata/sql/sqlerr"
)

// TestDialectHints checks that another system's syntax keeps Postgres's
// 42601 error and position and gets a hint with Strata's form.
func TestDialectHints(t *testing.T) {
	for _, tc := range []struct {
		name, sql, at, msg, hint string
	}{
		{"flink tumble", `SELECT * FROM TABLE(TUMBLE(TABLE bid, DESCRIPTOR(date_time), INTERVAL '10' SECOND))`, "TABLE(", `syntax error at or near "TABLE"`,
			"FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND)."},
		{"flink hop in a view", `CREATE MATERIALIZED VIEW v AS SELECT window_start FROM TABLE(HOP(TABLE bid, DESCRIPTOR(ts), INTERVAL '5' SECOND, INTERVAL '10' SECOND)) GROUP BY 1`, "TABLE(", `syntax error at or near "TABLE"`,
			"FROM HOP(bid, ts, INTERVAL '5' SECOND, INTERVAL '10' SECOND)."},
		{"flink cumulate without the outer TABLE", `SELECT * FROM CUMULATE(TABLE bid, DESCRIPTOR(ts), INTERVAL '1' MINUTE, INTERVAL '1' HOUR)`, "TABLE bid", `syntax error at or near "TABLE"`,
			"FROM CUMULATE(bid, ts, INTERVAL '1' MINUTE, INTERVAL '1' HOUR)."},
		{"flink session with partition", `SELECT * FROM TABLE(SESSION(TABLE bid PARTITION BY bidder, DESCRIPTOR(ts), INTERVAL '5' MINUTE))`, "TABLE(", `syntax error at or near "TABLE"`,
			"FROM SESSION(bid, ts, INTERVAL '5' MINUTE, bidder)."},
		{"flink named arguments", `SELECT * FROM TABLE(TUMBLE(DATA => TABLE bid, TIMECOL => DESCRIPTOR(ts), SIZE => INTERVAL '1' MINUTE))`, "TABLE(", `syntax error at or near "TABLE"`,
			"TUMBLE(t, col, size), HOP(t, col, slide, size)"},
		{"risingwave proctime", `CREATE TABLE t2 (a INT, p_time TIMESTAMPTZ AS PROCTIME())`, "AS", `syntax error at or near "AS"`,
			"p_time TIMESTAMPTZ GENERATED ALWAYS AS (proctime()) STORED."},
		{"flink proctime without a type", `CREATE TABLE t2 (a INT, pt AS PROCTIME(), b INT)`, "AS", `syntax error at or near "AS"`,
			"pt TIMESTAMPTZ GENERATED ALWAYS AS (proctime()) STORED."},
		{"dash in an option name", `CREATE TABLE t3 (a INT) WITH (merge-engine = 'deduplicate')`, "-", `syntax error at or near "-"`,
			"'merge-engine' = ..."},
		{"flink not enforced", `CREATE TABLE t4 (id INT, PRIMARY KEY (id) NOT ENFORCED)`, "ENFORCED", `syntax error at or near "ENFORCED"`,
			"takes no NOT ENFORCED"},
		{"flink temporal join", `SELECT * FROM orders o JOIN customers FOR SYSTEM_TIME AS OF o.ts AS c ON c.id = o.cid`, "FOR SYSTEM_TIME", `syntax error at or near "FOR"`,
			"JOIN LOOKUP(t) AS alias"},
		{"flink match_recognize", `SELECT * FROM bid MATCH_RECOGNIZE (PARTITION BY auction ORDER BY ts MEASURES A.price AS p PATTERN (A) DEFINE A AS price > 0)`, "BY auction", `syntax error at or near "BY"`,
			"MATCH_RECOGNIZE (Flink's complex event processing, CEP) is not supported in Strata."},
		{"flink match_recognize without partition", `SELECT * FROM bid MATCH_RECOGNIZE (ORDER BY ts PATTERN (A) DEFINE A AS price > 0)`, "ORDER", `syntax error at or near "ORDER"`,
			"MATCH_RECOGNIZE (Flink's complex event processing, CEP) is not supported in Strata."},
		{"risingwave emit on window close", `CREATE MATERIALIZED VIEW v AS SELECT window_start, count(*) AS n FROM TUMBLE(bid, ts, INTERVAL '1' MINUTE) GROUP BY window_start EMIT ON WINDOW CLOSE`, "EMIT", `syntax error at or near "EMIT"`,
			"Strata has no EMIT ON WINDOW CLOSE; drop the clause. A window view's rows are updated every epoch while their window fills, and over a table with a WATERMARK a window's state is freed once the watermark has passed it, its last row staying in the view."},
		{"dash in a dotted option name", `CREATE TABLE t3 (a INT) WITH (connector = 'datagen', fields.a.null-rate = '0.1')`, "-", `syntax error at or near "-"`,
			"'fields.a.null-rate' = ..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.sql)
			var e *sqlerr.Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %v, want a *sqlerr.Error", err)
			}
			want := utf8.RuneCountInString(tc.sql[:strings.Index(tc.sql, tc.at)]) + 1
			if e.Code != sqlerr.SyntaxError || e.Position != want || e.Message != tc.msg {
				t.Fatalf("got %s at %d: %s; want 42601 at %d: %s", e.Code, e.Position, e.Message, want, tc.msg)
			}
			if !strings.Contains(e.Hint, tc.hint) {
				t.Fatalf("hint %q does not hold %q", e.Hint, tc.hint)
			}
		})
	}
	// An ordinary syntax error gets no hint.
	_, err := Parse(`SELECT a FROM WHERE`)
	if e := sqlerr.From(err); e.Hint != "" {
		t.Fatalf("hint %q on a plain syntax error", e.Hint)
	}
}

// TestSignedEpoch checks AS OF EPOCH with a sign: a negative epoch is
// 22023 naming the value, at the sign; +n is epoch n.
func TestSignedEpoch(t *testing.T) {
	sql := `SELECT * FROM bid AS OF EPOCH -1`
	_, err := Parse(sql)
	e := sqlerr.From(err)
	if e == nil || e.Code != sqlerr.InvalidParameterValue || e.Position != strings.Index(sql, "-")+1 || e.Message != "AS OF EPOCH -1: the epoch must be a non-negative integer" {
		t.Fatalf("got %+v", e)
	}
	stmts, err := Parse(`SELECT * FROM bid AS OF EPOCH +7`)
	if err != nil {
		t.Fatal(err)
	}
	q := stmts[0].(*Query)
	if q.AtEpoch == nil || *q.AtEpoch != 7 || q.QueryText != "SELECT * FROM bid" {
		t.Fatalf("got epoch %v, query %q", q.AtEpoch, q.QueryText)
	}
}

// TestShowCreate checks SHOW CREATE's kinds and names.
func TestShowCreate(t *testing.T) {
	for sql, want := range map[string]ShowCreate{
		`SHOW CREATE TABLE t`:                  {Kind: Table, Name: "t"},
		`show create materialized view Db."V"`: {Kind: View, Name: `db.V`},
		`SHOW CREATE SOURCE s`:                 {Kind: Source, Name: "s"},
		`SHOW CREATE SINK k`:                   {Kind: Sink, Name: "k"},
		`SHOW CREATE VIEW v`:                   {Kind: PlainView, Name: "v"},
	} {
		stmts, err := Parse(sql)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		got, ok := stmts[0].(*ShowCreate)
		if !ok || got.Kind != want.Kind || got.Name != want.Name || got.Text() != sql {
			t.Fatalf("%s: got %#v", sql, stmts[0])
		}
	}
	_, err := Parse(`SHOW CREATE TABLE t x`)
	if e := sqlerr.From(err); e == nil || e.Code != sqlerr.SyntaxError || e.Position != 21 {
		t.Fatalf("trailing word: %+v", e)
	}
}

// TestNameHint checks the hints for names of another system that a step
// after the parser refuses: the code, message and position stay, and
// other errors are left alone.
func TestNameHint(t *testing.T) {
	for _, tc := range []struct {
		err  error
		hint string // "" for none
	}{
		{sqlerr.New(sqlerr.UndefinedObject, `column "ts": type "timestamp_ltz(3)" does not exist`).WithPosition(25), "is Strata's TIMESTAMPTZ (timestamp with time zone): write TIMESTAMPTZ"},
		{sqlerr.New(sqlerr.UndefinedObject, `type "timestamp_ltz" does not exist`), "Flink's TIMESTAMP_LTZ"},
		{fmt.Errorf("view v: %w", sqlerr.New(sqlerr.UndefinedObject, `type "TIMESTAMP_LTZ" does not exist`)), "Flink's TIMESTAMP_LTZ"},
		{sqlerr.New(sqlerr.UndefinedColumn, `column "window_time" does not exist`).WithPosition(9), "Flink's window_time is window_end - INTERVAL '1' MILLISECOND"},
		{sqlerr.New(sqlerr.UndefinedColumn, `column b.window_time does not exist`), "add the columns window_start and window_end"},
		{sqlerr.New(sqlerr.UndefinedFunction, `function tumble_start(timestamp, interval) does not exist`).WithPosition(8), "FROM TUMBLE(t, ts, INTERVAL '1' MINUTE) GROUP BY window_start, window_end; TUMBLE_START is window_start"},
		{&sqlerr.Error{Code: sqlerr.UndefinedFunction, Message: `function tumble does not exist`, Hint: noFunctionHint}, "FROM TUMBLE(t, ts, INTERVAL '1' MINUTE) GROUP BY window_start, window_end"},
		{sqlerr.New(sqlerr.UndefinedFunction, `function hop_end(timestamp, interval, interval) does not exist`), "FROM HOP(t, ts, slide, size) GROUP BY window_start, window_end; HOP_START is window_start, HOP_END is window_end"},
		{sqlerr.New(sqlerr.UndefinedFunction, `function session(timestamp, interval) does not exist`), "FROM SESSION(t, ts, gap) GROUP BY window_start, window_end"},
		{sqlerr.New(sqlerr.UndefinedFunction, `function tumble_rowtime(timestamp, interval) does not exist`), "TUMBLE_ROWTIME is window_end - INTERVAL '1' MILLISECOND"},
		{sqlerr.New(sqlerr.UndefinedFunction, `function listagg(text, unknown) does not exist`), "write string_agg(x, ',')"},
		{&sqlerr.Error{Code: sqlerr.UndefinedColumn, Message: `column "window_time" does not exist`, Hint: `Perhaps you meant to reference the column "window_end".`}, "Flink's window_time"},
		// Not another system's name, or a hint already there.
		{&sqlerr.Error{Code: sqlerr.UndefinedFunction, Message: `function tumblex does not exist`, Hint: noFunctionHint}, noFunctionHint},
		{&sqlerr.Error{Code: sqlerr.UndefinedFunction, Message: `function tumble(timestamp) does not exist`, Hint: "kept"}, "kept"},
		{sqlerr.New(sqlerr.UndefinedFunction, `function my_tumble_start(timestamp) does not exist`), ""},
		{sqlerr.New(sqlerr.UndefinedObject, `type "timestamp_ltzx" does not exist`), ""},
		{sqlerr.New(sqlerr.UndefinedColumn, `column "window_times" does not exist`), ""},
		{sqlerr.New(sqlerr.UndefinedColumn, `column "window_start" does not exist`), ""},
		{sqlerr.New(sqlerr.SyntaxError, `column "window_time" does not exist`), ""},
		{&sqlerr.Error{Code: sqlerr.UndefinedColumn, Message: `column "window_time" does not exist`, Hint: "kept"}, "kept"},
		{errors.New(`type "timestamp_ltz" does not exist`), ""},
	} {
		got := NameHint(tc.err)
		e := sqlerr.From(got)
		if !strings.Contains(e.Hint, tc.hint) || tc.hint == "" && e.Hint != "" {
			t.Errorf("NameHint(%v) hint = %q, want %q", tc.err, e.Hint, tc.hint)
		}
		if in := sqlerr.From(tc.err); e.Code != in.Code || e.Message != in.Message || e.Position != in.Position {
			t.Errorf("NameHint(%v) = %s %q at %d: code, message or position changed", tc.err, e.Code, e.Message, e.Position)
		}
	}
}
