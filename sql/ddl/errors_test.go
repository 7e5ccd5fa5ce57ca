package ddl

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stratadb/strata/sql/sqlerr"
)

// TestParseErrors checks the SQLSTATE and position of every kind of error.
// The expected position is given as the text it must point at: the first
// occurrence of at after the first occurrence of after (so that at can be
// a short token), or the end of the input when at is empty.
func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, sql    string
		code         string
		after, at    string
		messageHolds string
	}{
		// Syntax errors, from Postgres and from the pre-parser.
		{"postgres syntax", `SELECT a FROM WHERE`, sqlerr.SyntaxError, "", "WHERE", `syntax error at or near "WHERE"`},
		{"pre-parser syntax", `CREATE SINK k TO t AS SELECT 1`, sqlerr.SyntaxError, "", "TO", `syntax error at or near "TO"`},
		{"syntax in a column list of a later statement, after multi-byte text", "SELECT 'ééé';\nCREATE TABLE t (a int,)", sqlerr.SyntaxError, "int,", ")", `syntax error at or near ")"`},
		{"syntax in a source column list", `CREATE SOURCE s (a int b) WITH (connector = 'x')`, sqlerr.SyntaxError, "", "b)", `"b"`},
		{"earlier Postgres syntax error wins", `SELECT 1 +; DROP SINK;`, sqlerr.SyntaxError, "", ";", `syntax error at or near ";"`},
		{"syntax error wins over an earlier semantic error", `CREATE TABLE t (a foo); SELECT 1 +`, sqlerr.SyntaxError, "", "", `syntax error at end of input`},
		{"later syntax error wins over a pre-parser semantic error", `CREATE SOURCE s (a int); SELECT 1 +`, sqlerr.SyntaxError, "", "", `syntax error at end of input`},
		{"semantic errors in text order", `CREATE SOURCE s (a int); CREATE TABLE t (a foo)`, sqlerr.InvalidObjectDefinition, "SOURCE ", "s", `needs a connector`},
		{"unclosed column list", `CREATE TABLE t (a int; SELECT 1`, sqlerr.SyntaxError, "", ";", `syntax error at or near ";"`},
		{"pre-parser end of input", `DROP TABLE`, sqlerr.SyntaxError, "", "", `syntax error at end of input`},
		{"unterminated string", `SELECT 'é', 'abc`, sqlerr.SyntaxError, "", "'abc", `unterminated quoted string`},
		{"unterminated dollar quote", `CREATE SOURCE s WITH (connector = $$kafka)`, sqlerr.SyntaxError, "", "$$", `unterminated dollar-quoted string`},
		{"empty WITH", `CREATE TABLE t (a int) WITH ()`, sqlerr.SyntaxError, "WITH", ")", `syntax error at or near ")"`},
		{"option without value", `CREATE TABLE t (a int) WITH (connector)`, sqlerr.SyntaxError, "connector", ")", `")"`},
		{"too many dotted names", `DROP TABLE a.b.c`, sqlerr.SyntaxError, "", "a.b.c", `too many dotted names`},
		{"dot in a quoted name", `DROP TABLE "a.b"`, invalidName, "", `"a.b"`, `holds a dot`},
		{"reserved word as name", `DESCRIBE select`, sqlerr.SyntaxError, "", "select", `syntax error at or near "select"`},
		{"view query must be a query", `CREATE MATERIALIZED VIEW v AS INSERT INTO t VALUES (1)`, sqlerr.SyntaxError, "", "INSERT", `AS must be followed by a query`},
		{"view column list", `CREATE MATERIALIZED VIEW v (a) AS SELECT 1`, sqlerr.FeatureNotSupported, "", "(a)", `column list`},
		{"two watermarks", `CREATE TABLE t (ts timestamp, WATERMARK FOR ts AS ts, WATERMARK FOR ts AS ts)`, sqlerr.SyntaxError, "AS ts, ", "WATERMARK", `at most one WATERMARK`},

		// Types.
		{"unknown type", `CREATE TABLE t (a int, b money2)`, sqlerr.UndefinedObject, "", "money2", `column "b": type "money2" does not exist`},
		{"unknown quoted type", `CREATE SOURCE s (a "MyType") WITH (connector = 'x')`, sqlerr.UndefinedObject, "", `"MyType"`, `type "MyType" does not exist`},
		{"array refused", `CREATE TABLE t (a int, tags text[])`, sqlerr.FeatureNotSupported, "", "text[]", `column "tags": array type text[] is not supported`},
		{"ARRAY refused", `CREATE TABLE t (ids int ARRAY)`, sqlerr.FeatureNotSupported, "", "int ARRAY", `column "ids": array type integer[] is not supported`},
		{"json refused", `CREATE TABLE t (doc json)`, sqlerr.FeatureNotSupported, "", "json", `use jsonb`},
		{"timetz refused", `CREATE TABLE t (x time with time zone)`, sqlerr.FeatureNotSupported, "", "time", `time with time zone`},
		{"interval qualifier refused", `CREATE TABLE t (x interval day to second)`, sqlerr.FeatureNotSupported, "", "interval", `INTERVAL field qualifiers`},
		{"numeric precision out of range", `CREATE TABLE t (x numeric(2000, 2))`, sqlerr.InvalidParameterValue, "", "numeric", `NUMERIC precision 2000`},
		{"varchar length 0", `CREATE TABLE t (x varchar(0))`, sqlerr.InvalidParameterValue, "", "varchar", `varchar must be between`},

		// Columns and keys.
		{"duplicate column", `CREATE TABLE t (a int, b text, a bigint)`, sqlerr.DuplicateColumn, "text, ", "a bigint", `column "a" specified more than once`},
		{"duplicate column, multi-byte names", `CREATE TABLE t ("é" int, "ü" text, "é" bigint)`, sqlerr.DuplicateColumn, "text, ", `"é" bigint`, `column "é" specified more than once`},
		{"key names a missing column", `CREATE TABLE t (a int, PRIMARY KEY (a, zz))`, sqlerr.UndefinedColumn, "", "zz", `column "zz" named in key does not exist`},
		{"key names a column twice", `CREATE TABLE t (a int, b int, PRIMARY KEY (a, b, a))`, sqlerr.DuplicateColumn, "b, ", "a))", `column "a" appears twice in primary key constraint`},
		{"two primary keys", `CREATE TABLE t (a int PRIMARY KEY, b int, PRIMARY KEY (b))`, invalidTableDefinition, "b int, ", "PRIMARY KEY", `multiple primary keys`},
		{"no columns", `CREATE TABLE t ()`, invalidTableDefinition, "", "CREATE", `table t has no columns`},
		{"default refused", `CREATE TABLE t (a int DEFAULT 5)`, sqlerr.FeatureNotSupported, "", "DEFAULT", `DEFAULT constraint on column "a" is not supported`},
		{"unique refused", `CREATE TABLE t (a int, UNIQUE (a))`, sqlerr.FeatureNotSupported, "", "UNIQUE", `UNIQUE constraint is not supported`},
		{"NULL and NOT NULL", `CREATE TABLE t (a int NULL NOT NULL)`, sqlerr.SyntaxError, "NULL ", "NOT NULL", `conflicting NULL/NOT NULL`},
		{"generated by another expression", `CREATE TABLE t (a int, b int GENERATED ALWAYS AS (a * 2) STORED)`, sqlerr.FeatureNotSupported, "AS (a ", "*", `generation expression of column "b" is not supported`},
		{"generated by a function with arguments", `CREATE TABLE t (a timestamptz GENERATED ALWAYS AS (proctime(1)) STORED)`, sqlerr.FeatureNotSupported, "", "proctime", `only proctime()`},
		{"current_timestamp with precision", `CREATE TABLE t (a timestamptz GENERATED ALWAYS AS (current_timestamp(3)) STORED)`, sqlerr.FeatureNotSupported, "", "current_timestamp", `only proctime()`},
		{"proctime column of another type", `CREATE TABLE t (a timestamp GENERATED ALWAYS AS (proctime()) STORED)`, sqlerr.DatatypeMismatch, "", "GENERATED", `column "a" is of type TIMESTAMP but proctime() is of type timestamp with time zone`},
		{"proctime column in the key", `CREATE TABLE t (id int, p timestamptz GENERATED ALWAYS AS (proctime()) STORED, PRIMARY KEY (id, p))`, sqlerr.FeatureNotSupported, "(id, ", "p)", `generated column "p" cannot be part of the primary key`},
		{"proctime column in a source", `CREATE SOURCE s (p timestamptz GENERATED ALWAYS AS (proctime()) STORED) WITH (connector = 'kafka')`, sqlerr.FeatureNotSupported, "", "GENERATED", `not supported in a source`},
		{"identity column", `CREATE TABLE t (a int GENERATED ALWAYS AS IDENTITY)`, sqlerr.FeatureNotSupported, "", "GENERATED", `GENERATED AS IDENTITY constraint on column "a" is not supported`},
		{"both a column list and AS", `CREATE TABLE t (a int) AS SELECT 1`, sqlerr.FeatureNotSupported, "", "AS", `both a column list and AS`},

		// Options.
		{"duplicate option", `CREATE SOURCE s WITH (connector = 'a', Connector = 'b')`, sqlerr.SyntaxError, "'a', ", "Connector", `option "connector" specified more than once`},
		{"duplicate dotted option", `CREATE TABLE t (a int) WITH (fields.a.kind = 'x', 'FIELDS.A.KIND' = 'y')`, sqlerr.SyntaxError, "", "'FIELDS", `option "fields.a.kind" specified more than once`},
		{"source without WITH", `CREATE SOURCE s (a int)`, sqlerr.InvalidObjectDefinition, "SOURCE ", "s", `source s needs a connector`},
		{"source WITH without connector", `CREATE SOURCE s (a int) WITH (topic = 'x')`, sqlerr.InvalidObjectDefinition, "", "WITH", `source s needs a connector`},
		{"sink FROM without connector", `CREATE SINK k FROM v WITH (topic = 'x')`, sqlerr.InvalidObjectDefinition, "", "WITH", `needs a connector`},
		{"sink FROM without WITH", `CREATE SINK k FROM v`, sqlerr.InvalidObjectDefinition, "", "", `needs a connector`},

		// Watermarks.
		{"watermark column missing", `CREATE TABLE t (ts timestamp, WATERMARK FOR tx AS tx)`, sqlerr.UndefinedColumn, "", "tx", `column "tx" named in watermark does not exist`},
		{"watermark column type", `CREATE TABLE t (ts bigint, WATERMARK FOR ts AS ts)`, sqlerr.DatatypeMismatch, "FOR ", "ts", `must be TIMESTAMP or TIMESTAMPTZ, not BIGINT`},
		{"watermark expression", `CREATE TABLE t (ts timestamp, WATERMARK FOR ts AS now())`, sqlerr.FeatureNotSupported, "AS ", "now", `watermark expression must be`},
		{"watermark plus", `CREATE TABLE t (ts timestamp, WATERMARK FOR ts AS ts + INTERVAL '1' SECOND)`, sqlerr.FeatureNotSupported, "ts ", "+", `watermark expression must be`},
		{"watermark negative delay", `CREATE TABLE t (ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '-5 seconds')`, sqlerr.InvalidParameterValue, "", "'-5", `is negative`},
		{"watermark delay in months", `CREATE TABLE t (ts timestamp, WATERMARK FOR ts AS ts - INTERVAL '1' MONTH)`, sqlerr.FeatureNotSupported, "", "'1'", `months or years`},
		{"watermark delay text", `CREATE TABLE t (ts timestamp, WATERMARK FOR ts AS ts - INTERVAL 'soon')`, sqlerr.InvalidDatetimeFormat, "", "'soon'", `watermark delay`},

		// Time travel.
		{"time travel on insert", `INSERT INTO t SELECT * FROM s AS OF EPOCH 3`, sqlerr.FeatureNotSupported, "", "AS OF", `applies to queries only, not to Insert`},
		{"epoch not a number", `SELECT 1 AS OF EPOCH x`, sqlerr.SyntaxError, "", "x", `takes an epoch number`},
		{"epoch not whole", `SELECT 1 AS OF EPOCH 1.5`, sqlerr.SyntaxError, "", "1.5", `whole epoch number`},
		{"epoch out of range", `SELECT 1 AS OF EPOCH 18446744073709551616`, sqlerr.NumericValueOutOfRange, "", "1844", `out of range`},
		{"time travel alone", `AS OF EPOCH 3`, sqlerr.SyntaxError, "", "AS", `syntax error at or near "AS"`},
		{"create or replace materialized view", `CREATE OR REPLACE MATERIALIZED VIEW v AS SELECT 1`, sqlerr.FeatureNotSupported, "", "OR", `CREATE OR REPLACE MATERIALIZED VIEW is not supported`},
		{"time travel after FROM", `SELECT * FROM t AS OF EPOCH 1 WHERE k = 1`, sqlerr.SyntaxError, "", "AS", `AS OF EPOCH goes at the end of the statement`},
		{"time travel before ORDER BY", `SELECT * FROM t WHERE k = 1 AS OF EPOCH 1 ORDER BY k`, sqlerr.SyntaxError, "", "AS", `AS OF EPOCH goes at the end of the statement`},
		{"time travel before the table", `SELECT * FROM as of epoch 1 t`, sqlerr.SyntaxError, "", "as", `AS OF EPOCH goes at the end of the statement`},

		{"two FROM clauses", `CREATE TABLE t (a int) FROM pg TABLE 'a' FROM pg TABLE 'b'`, sqlerr.SyntaxError, "'a' ", "FROM", `syntax error at or near "FROM"`},
		{"FROM needs a string", `CREATE TABLE t (a int) FROM pg TABLE orders`, sqlerr.SyntaxError, "", "orders", `"orders"`},

		{"three-part name from Postgres", `INSERT INTO a.b.c VALUES (1)`, sqlerr.SyntaxError, "", "a.b.c", `too many dotted names`},

		// Other statements.
		{"select into", `SELECT * INTO x FROM t`, sqlerr.FeatureNotSupported, "", "x FROM", `use CREATE TABLE ... AS`},
		{"set time zone to an interval", `SET TIME ZONE INTERVAL '+00:00' HOUR TO MINUTE`, sqlerr.FeatureNotSupported, "", "INTERVAL", `string or number`},
		{"explain of drop", `EXPLAIN DROP TABLE t`, sqlerr.FeatureNotSupported, "", "DROP", `EXPLAIN of DROP is not supported`},
		{"explain option", `EXPLAIN (VERBOSE) SELECT 1`, sqlerr.FeatureNotSupported, "", "VERBOSE", `EXPLAIN option "verbose"`},
		{"show list with more", `SHOW TABLES x`, sqlerr.SyntaxError, "", "x", `syntax error at or near "x"`},
		{"NUL byte", "SELECT 'a\x00b'", characterNotInRepertoire, "", "\x00", `0x00`},
		{"invalid UTF-8", "SELECT 'é\xffb'", characterNotInRepertoire, "", "\xff", `0xff`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.sql)
			var e *sqlerr.Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse(%q) = %v, want a *sqlerr.Error", tc.sql, err)
			}
			want := utf8.RuneCountInString(tc.sql) + 1
			if tc.at != "" {
				base := strings.Index(tc.sql, tc.after)
				i := strings.Index(tc.sql[base+len(tc.after):], tc.at)
				if base < 0 || i < 0 {
					t.Fatalf("bad test: %q not in %q", tc.at, tc.sql)
				}
				want = utf8.RuneCountInString(tc.sql[:base+len(tc.after)+i]) + 1
			}
			if e.Code != tc.code || e.Position != want || !strings.Contains(e.Message, tc.messageHolds) {
				t.Fatalf("Parse(%q):\n got %s at %d: %s\nwant %s at %d: ...%s...", tc.sql, e.Code, e.Position, e.Message, tc.code, want, tc.messageHolds)
			}
		})
	}
}
