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

// TestFlinkDDLHints checks Flink's and Paimon's DDL that Strata has no
// form of: each keeps its code, message and position and gets the hint
// that says what Strata does instead, word for word.
func TestFlinkDDLHints(t *testing.T) {
	const typesHint = "Strata has no ARRAY, MAP, MULTISET or ROW column types (its types are SMALLINT, INT, BIGINT, REAL, DOUBLE PRECISION, NUMERIC(p,s), BOOLEAN, TEXT, VARCHAR(n), CHAR(n), BYTEA, UUID, DATE, TIME, TIMESTAMP(p), TIMESTAMPTZ, INTERVAL and JSONB): store a nested value as JSONB."
	const catalogHint = "Strata has one catalog with one database, dev (schema public), so there is no CREATE CATALOG or USE: create tables, sources and views directly, and SHOW TABLES lists them."
	const setHint = "Flink's SET 'key' = 'value' configures its jobs; Strata's are configured by the server's flags (strata start --epoch-interval, --checkpoint-interval, --parallelism) and a view's WITH options, and Strata's SET takes only session parameters, unquoted (SET timezone = 'UTC', SET consistency = ..., SET statement_timeout = '5s')."
	const tempHint = "Strata has no temporary tables: CREATE TABLE t (...) [WITH (...)] stores the rows, and CREATE SOURCE t (...) WITH (connector = '...') reads a connector in the views that name it without storing anything."
	const alterHint = "Strata has no ALTER TABLE: a table's columns and options are fixed by its CREATE TABLE, so create a new table WITH the new options and copy the rows with INSERT INTO new SELECT * FROM t."
	for _, tc := range []struct {
		name, sql string
		at        string // the text the position points at; its first occurrence
		code, msg string
		hint      string
	}{
		{"partitioned by", `CREATE TABLE ev (id BIGINT, dt TEXT) PARTITIONED BY (dt) WITH (bucket = '2')`, "PARTITIONED", "42601", `syntax error at or near "PARTITIONED"`,
			"Strata's tables have buckets, not partitions: drop PARTITIONED BY and spread the rows with the bucket option, WITH (bucket = '4'), each bucket an LSM tree of its own."},
		{"backtick in a column list", "CREATE TABLE t (`name` TEXT)", "`", "42601", "syntax error at or near \"`\"",
			"Strata quotes identifiers with double quotes, as PostgreSQL does: write \"name\", not `name`."},
		{"backtick in a query", "SELECT `name` FROM t", "FROM", "42601", `syntax error at or near "FROM"`,
			"Strata quotes identifiers with double quotes, as PostgreSQL does: write \"name\", not `name`."},
		{"column comment", `CREATE TABLE t (a INT COMMENT 'the a')`, "COMMENT", "42601", `syntax error at or near "COMMENT"`,
			"Strata does not support COMMENT on a column or a table: drop the COMMENT '...' clause."},
		{"table comment", `CREATE TABLE t (a INT) COMMENT 'events'`, "COMMENT", "42601", `syntax error at or near "COMMENT"`,
			"Strata does not support COMMENT on a column or a table: drop the COMMENT '...' clause."},
		{"metadata column", `CREATE TABLE t (a INT, ts TIMESTAMP(3) METADATA FROM 'timestamp')`, "METADATA", "42601", `syntax error at or near "METADATA"`,
			"Strata does not support METADATA columns (a connector's record timestamp, offset or headers): drop the column, or declare the time a row is ingested as ts TIMESTAMPTZ GENERATED ALWAYS AS (proctime()) STORED."},
		{"computed column", `CREATE TABLE orders (price INT, qty INT, total AS price * qty, PRIMARY KEY (price))`, "AS", "42601", `syntax error at or near "AS"`,
			"Strata's tables have no computed columns but the processing-time one (GENERATED ALWAYS AS (proctime()) STORED): drop total and compute it in a view, CREATE MATERIALIZED VIEW v AS SELECT *, price * qty AS total FROM orders."},
		{"computed column first", `CREATE TABLE db.o (up AS upper(name), name TEXT)`, "AS", "42601", `syntax error at or near "AS"`,
			"Strata's tables have no computed columns but the processing-time one (GENERATED ALWAYS AS (proctime()) STORED): drop up and compute it in a view, CREATE MATERIALIZED VIEW v AS SELECT *, upper(name) AS up FROM db.o."},
		{"timestamp with local time zone", `CREATE TABLE t (a INT, ts TIMESTAMP(3) WITH LOCAL TIME ZONE)`, "WITH", "42601", `syntax error at or near "WITH"`,
			"Flink's TIMESTAMP(p) WITH LOCAL TIME ZONE (TIMESTAMP_LTZ) is Strata's TIMESTAMPTZ (timestamp with time zone): write TIMESTAMPTZ, whose precision is microseconds, and SET TIME ZONE to show it in another zone."},
		{"array type", `CREATE TABLE t (a ARRAY<INT>)`, "ARRAY", "42601", `syntax error at or near "ARRAY"`, typesHint},
		{"map type", `CREATE TABLE t (a MAP<TEXT, INT>)`, "<", "42601", `syntax error at or near "<"`, typesHint},
		{"row type", `CREATE TABLE t (a ROW<x INT>)`, "ROW", "42601", `syntax error at or near "ROW"`, typesHint},
		{"create catalog", `CREATE CATALOG paimon WITH ('type' = 'paimon', 'warehouse' = 'file:///tmp')`, "CATALOG", "42601", `syntax error at or near "CATALOG"`, catalogHint},
		{"use catalog", `USE CATALOG paimon`, "USE", "42601", `syntax error at or near "USE"`, catalogHint},
		{"use catalog after a statement", `SELECT 1; USE CATALOG paimon`, "USE", "42601", `syntax error at or near "USE"`, catalogHint},
		{"alter table set", `ALTER TABLE t SET ('bucket' = '4')`, "'bucket'", "42601", `syntax error at or near "'bucket'"`, alterHint},
		{"create table like", `CREATE TABLE x LIKE y`, "LIKE", "42601", `syntax error at or near "LIKE"`,
			"Strata has no CREATE TABLE ... LIKE: write the columns out (SHOW CREATE TABLE y prints y's), or copy its rows as well with CREATE TABLE x AS SELECT * FROM y."},
		{"unquoted flink set", `SET execution.runtime-mode = streaming`, "-", "42601", `syntax error at or near "-"`, setHint},
		{"unquoted flink set with a dash later", `SET pipeline.auto-watermark-interval = 200`, "-", "42601", `syntax error at or near "-"`, setHint},
		{"quoted flink set", `SET 'execution.runtime-mode' = 'streaming'`, "'execution", "42601", `syntax error at or near "'execution.runtime-mode'"`, setHint},
		{"unquoted flink set after a statement", `SELECT 1; SET table.exec.mini-batch.enabled = true`, "table", "42601", `syntax error at or near "table"`, setHint},
		{"temporary table with options", `CREATE TEMPORARY TABLE t (a INT) WITH ('connector' = 'datagen')`, "TEMPORARY", "0A000", `statement "CREATE TEMPORARY TABLE" is not supported`, tempHint},
		{"temporary table", `CREATE TEMPORARY TABLE t (a INT)`, "TEMPORARY", "0A000", `statement "CREATE TEMPORARY TABLE" is not supported`, tempHint},
		{"temp table", `create temp table t (a INT)`, "temp", "0A000", `statement "CREATE TEMP TABLE" is not supported`, tempHint},
		{"dynamic options", `SELECT * FROM ev /*+ OPTIONS('scan.snapshot-id' = '1') */ WHERE id > 0`, "/*+", "0A000", `dynamic table options /*+ OPTIONS(...) */ are not supported`,
			"Strata takes no per-query table options: to read an older version, end the query with AS OF EPOCH n (strata_catalog.tables gives each table's committed epoch and snapshot_id)."},
		{"dynamic options in a view", `CREATE MATERIALIZED VIEW v AS SELECT * FROM ev /*+options ('scan.mode'='latest')*/`, "/*+", "0A000", `dynamic table options /*+ OPTIONS(...) */ are not supported`,
			"Strata takes no per-query table options: to read an older version, end the query with AS OF EPOCH n (strata_catalog.tables gives each table's committed epoch and snapshot_id)."},
		{"numeric watermark", `CREATE TABLE t (id BIGINT, WATERMARK FOR id AS id - 5)`, "5", "42601", `syntax error at or near "5"`,
			"The watermark column must be TIMESTAMP or TIMESTAMPTZ and its delay an INTERVAL: WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, with ts such a column."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.sql)
			var e *sqlerr.Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse = %v, want a *sqlerr.Error", err)
			}
			want := utf8.RuneCountInString(tc.sql[:strings.Index(tc.sql, tc.at)]) + 1
			if e.Code != tc.code || e.Position != want || e.Message != tc.msg {
				t.Fatalf("got %s at %d: %s; want %s at %d: %s", e.Code, e.Position, e.Message, tc.code, want, tc.msg)
			}
			if e.Hint != tc.hint {
				t.Fatalf("hint\n %q\nwant\n %q", e.Hint, tc.hint)
			}
		})
	}
}

// TestFlinkDDLHintsLeaveValidStatements checks that the statements near
// the forms TestFlinkDDLHints answers still parse, and that syntax errors
// near them get no hint of theirs.
func TestFlinkDDLHintsLeaveValidStatements(t *testing.T) {
	for _, sql := range []string{
		`CREATE TABLE ev (id BIGINT, dt TEXT) WITH (bucket = '2')`,
		`CREATE TABLE t (a INT, "name" TEXT, ts TIMESTAMPTZ, p TIMESTAMPTZ GENERATED ALWAYS AS (proctime()) STORED)`,
		`CREATE TABLE t (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)`,
		`CREATE TABLE t AS SELECT 1 AS a`,
		`CREATE MATERIALIZED VIEW v AS SELECT a AS b, a + 1 AS c FROM t`,
		`SET statement_timeout = '5s'`,
		`SET a.b = 'x'`,
		`SELECT * FROM t /* OPTIONS('x'='1') */ /*+ BROADCAST(t) */ WHERE a = 1`,
		`SELECT 'PARTITIONED BY', "comment", map FROM t`,
		`SELECT CASE WHEN c THEN a ELSE b END, to_char(ts, 'YYYY-MM-DD') FROM t`,
		`SELECT * FROM t AS OF EPOCH 3`,
		`ALTER TABLE t ADD COLUMN b INT`,
	} {
		if _, err := Parse(sql); err != nil {
			t.Errorf("Parse(%s) = %v", sql, err)
		}
	}
	for _, sql := range []string{
		`CREATE TABLE t (a INT,, b INT)`,
		`CREATE TABLE t (a INT) PARTITION`,
		`SELECT a AS FROM t`,
		`SET a = b c`,
		`SELECT 1 <`,
		`CREATE TABLE t (a INT) x`,
	} {
		_, err := Parse(sql)
		e := sqlerr.From(err)
		if e == nil || e.Code != sqlerr.SyntaxError || e.Hint != "" {
			t.Errorf("Parse(%s) = %+v, want a syntax error without a hint", sql, e)
		}
	}
}

// TestFlinkNameHints checks NameHint's hints for Flink's names that a
// step after the parser refuses: TINYINT (from Parse itself),
// DATE_FORMAT and IF, and Paimon's system tables.
func TestFlinkNameHints(t *testing.T) {
	_, err := Parse(`CREATE TABLE t (a TINYINT, b INT)`)
	e := sqlerr.From(NameHint(err))
	if e.Code != sqlerr.UndefinedObject || e.Message != `column "a": type "tinyint" does not exist` || e.Position != 19 ||
		e.Hint != "Strata has no TINYINT: use SMALLINT, its smallest integer type (2 bytes)." {
		t.Errorf("TINYINT: %+v", e)
	}
	for _, tc := range []struct {
		err  error
		hint string
	}{
		{sqlerr.New(sqlerr.UndefinedFunction, `function date_format(timestamp without time zone, unknown) does not exist`).WithPosition(8),
			"Flink's DATE_FORMAT(ts, 'yyyy-MM-dd') is PostgreSQL's to_char(ts, 'YYYY-MM-DD'), with PostgreSQL's patterns (YYYY, MM, DD, HH24, MI, SS, MS)."},
		{&sqlerr.Error{Code: sqlerr.UndefinedFunction, Message: `function if(boolean, integer, integer) does not exist`, Hint: noFunctionHint},
			"Flink's IF(c, a, b) is CASE WHEN c THEN a ELSE b END in Strata, as in PostgreSQL."},
		{sqlerr.New(sqlerr.UndefinedTable, `relation "ev$snapshots" does not exist`).WithPosition(15),
			"Paimon's system tables (t$snapshots, t$schemas, t$options, ...) are Strata's strata_catalog tables: SELECT * FROM strata_catalog.tables WHERE name = 't' gives a table's committed epoch, snapshot_id and total_records, and strata_catalog.jobs, .checkpoints and .lineage describe the jobs that write it."},
		{sqlerr.New(sqlerr.UndefinedTable, `relation "dev.ev$options" does not exist`), "Paimon's system tables"},
		// Not Flink's or Paimon's.
		{sqlerr.New(sqlerr.UndefinedTable, `relation "ev$snapshotsx" does not exist`), ""},
		{sqlerr.New(sqlerr.UndefinedTable, `relation "evsnapshots" does not exist`), ""},
		{sqlerr.New(sqlerr.UndefinedObject, `type "tinyints" does not exist`), ""},
		{sqlerr.New(sqlerr.UndefinedFunction, `function iff(boolean) does not exist`), ""},
	} {
		got := sqlerr.From(NameHint(tc.err))
		in := sqlerr.From(tc.err)
		if got.Code != in.Code || got.Message != in.Message || got.Position != in.Position {
			t.Errorf("NameHint(%v) changed the code, message or position: %+v", tc.err, got)
		}
		if tc.hint == "" && got.Hint != in.Hint || tc.hint != "" && !strings.HasPrefix(got.Hint, tc.hint) {
			t.Errorf("NameHint(%v) hint = %q, want %q", tc.err, got.Hint, tc.hint)
		}
	}
}
