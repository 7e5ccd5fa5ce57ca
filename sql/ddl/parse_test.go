package ddl

import (
	"strings"
	"testing"
)

// TestParseStatements parses one statement of every form and compares
// the statement's summary (fields set, parse trees deparsed).
func TestParseStatements(t *testing.T) {
	for _, tc := range []struct {
		name, sql, want string
	}{
		{"create table with column pk",
			`CREATE TABLE t (id BIGINT PRIMARY KEY, name VARCHAR(20), price NUMERIC(10,2) NOT NULL)`,
			`CREATE TABLE t (id BIGINT NOT NULL@17, name VARCHAR(20)@40, price NUMERIC(10,2) NOT NULL@58) pk(id)`},
		{"create table with table pk, qualified name, if not exists",
			`create table if not exists Dev.Orders (a int, "B" smallint, c double precision, PRIMARY KEY (a, "B"))`,
			`CREATE TABLE dev.orders ifnotexists (a INTEGER NOT NULL@40, B SMALLINT NOT NULL@47, c DOUBLE PRECISION@61) pk(a,B)`},
		{"every type",
			`CREATE TABLE t (a bigint, b int, c smallint, d double precision, e real, f numeric(10,2), g numeric,
				h varchar(5), i varchar, j text, k boolean, l date, m time, n timestamp(3), o timestamptz,
				p timestamp with time zone, q interval, r jsonb, s bytea, u uuid, v char(3), w int8, x float8, y decimal(5))`,
			`CREATE TABLE t (a BIGINT@17, b INTEGER@27, c SMALLINT@34, d DOUBLE PRECISION@46, e REAL@66, f NUMERIC(10,2)@74, g NUMERIC@91,` +
				` h VARCHAR(5)@106, i VARCHAR@120, j TEXT@131, k BOOLEAN@139, l DATE@150, m TIME@158, n TIMESTAMP(3)@166, o TIMESTAMPTZ@182,` +
				` p TIMESTAMPTZ@201, q INTERVAL@229, r JSONB@241, s BYTEA@250, u UUID@259, v CHAR(3)@267, w BIGINT@278, x DOUBLE PRECISION@286, y NUMERIC(5,0)@296)`},
		{"watermark with SQL interval",
			`CREATE TABLE bid (auction BIGINT, date_time TIMESTAMP(3), WATERMARK FOR date_time AS date_time - INTERVAL '5' SECOND) WITH (connector = 'nexmark', nexmark.table = 'bid', nexmark.event.rate = 1000)`,
			`CREATE TABLE bid (auction BIGINT@19, date_time TIMESTAMP(3)@35) wm(date_time-5s@59) with{connector=nexmark,nexmark.event.rate=1000,nexmark.table=bid}`},
		{"watermark first, Postgres interval text",
			`CREATE TABLE e (WATERMARK FOR ts AS ts - INTERVAL '1 minute 30 seconds', ts TIMESTAMPTZ, v INT)`,
			`CREATE TABLE e (ts TIMESTAMPTZ@74, v INTEGER@90) wm(ts-1m30s@17)`},
		{"watermark without delay, middle of list",
			`CREATE TABLE e (id INT, ts TIMESTAMP, WATERMARK FOR ts AS ts, PRIMARY KEY (id))`,
			`CREATE TABLE e (id INTEGER NOT NULL@17, ts TIMESTAMP@25) pk(id) wm(ts-0s@39)`},
		{"column named watermark",
			`CREATE TABLE e (watermark TIMESTAMP, WATERMARK FOR watermark AS watermark - INTERVAL '2' MINUTE)`,
			`CREATE TABLE e (watermark TIMESTAMP@17) wm(watermark-2m0s@38)`},
		{"processing-time columns: proctime(), now(), current_timestamp, with a watermark",
			`CREATE TABLE bid (bidder BIGINT, p_time TIMESTAMPTZ GENERATED ALWAYS AS (proctime()) STORED NOT NULL, n timestamptz generated always as (pg_catalog.now()) stored, c TIMESTAMP WITH TIME ZONE GENERATED ALWAYS AS (CURRENT_TIMESTAMP) STORED, WATERMARK FOR p_time AS p_time - INTERVAL '1' SECOND)`,
			`CREATE TABLE bid (bidder BIGINT@19, p_time TIMESTAMPTZ NOT NULL GENERATED(proctime)@34, n TIMESTAMPTZ GENERATED(proctime)@103, c TIMESTAMPTZ GENERATED(proctime)@164) wm(p_time-1s@239)`},
		{"from cdc source",
			`CREATE TABLE orders (id INT PRIMARY KEY, total NUMERIC(12,2)) FROM pg TABLE 'public.orders'`,
			`CREATE TABLE orders (id INTEGER NOT NULL@22, total NUMERIC(12,2)@42) pk(id) from(pg,public.orders)`},
		{"table options: dotted keys, string keys, numbers, identifiers, escapes",
			`CREATE TABLE t (a INT) WITH ('Connector' = 'datagen', fields.a.kind = sequence, fields.a.start = -5, rate = 1.5e3, "Mode" = "Upsert", note = E'a\tb''c', body = $$x;y$$)`,
			"CREATE TABLE t (a INTEGER@17) with{body=x;y,connector=datagen,fields.a.kind=sequence,fields.a.start=-5,mode=Upsert,note=a\tb'c,rate=1.5e3}"},
		{"WITH before FROM",
			`CREATE TABLE o (id INT, PRIMARY KEY (id)) WITH (buckets = 2) FROM pg TABLE 'public.o'`,
			`CREATE TABLE o (id INTEGER NOT NULL@17) pk(id) with{buckets=2} from(pg,public.o)`},
		{"create table as",
			`CREATE TABLE t2 WITH (buckets = 4) AS SELECT a, b FROM t WHERE a > 1`,
			`CREATE TABLE t2 with{buckets=4} as[SELECT a, b FROM t WHERE a > 1] text[SELECT a, b FROM t WHERE a > 1]`},
		{"create source with columns",
			`CREATE SOURCE IF NOT EXISTS s (id BIGINT, ts TIMESTAMP(3), WATERMARK FOR ts AS ts - INTERVAL '10 seconds') WITH (connector = 'kafka', topic = 'events', format = 'json')`,
			`CREATE SOURCE s ifnotexists (id BIGINT@32, ts TIMESTAMP(3)@43) wm(ts-10s@60) with{connector=kafka,format=json,topic=events}`},
		{"create source without columns",
			`CREATE SOURCE pg WITH (connector='postgres-cdc', hostname='127.0.0.1', port=5432, username='u', password='p', database='db', slot='s1', publication='pub')`,
			`CREATE SOURCE pg () with{connector=postgres-cdc,database=db,hostname=127.0.0.1,password=p,port=5432,publication=pub,slot=s1,username=u}`},
		{"create source with key",
			`CREATE SOURCE users (id INT, email TEXT, PRIMARY KEY (id)) WITH (connector = 'kafka', format = 'debezium-json')`,
			`CREATE SOURCE users (id INTEGER NOT NULL@22, email TEXT@30) pk(id) with{connector=kafka,format=debezium-json}`},
		{"materialized view",
			`CREATE MATERIALIZED VIEW v AS SELECT auction, count(*) AS n FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY auction, window_start`,
			`CREATE VIEW v as[SELECT auction, count(*) AS n FROM tumble(bid, date_time, '10'::interval second) GROUP BY auction, window_start] text[SELECT auction, count(*) AS n FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY auction, window_start]`},
		{"materialized view with options and CTE",
			`create materialized view if not exists dev.v with (parallelism = 2) as with x as (select 1 as a) select a from x`,
			`CREATE VIEW dev.v ifnotexists with{parallelism=2} as[WITH x AS (SELECT 1 AS a) SELECT a FROM x] text[with x as (select 1 as a) select a from x]`},
		{"sink into",
			`CREATE SINK k INTO t3 AS SELECT t1.a, t2.b FROM t1 JOIN t2 ON t1.a = t2.a`,
			`CREATE SINK k into t3 as[SELECT t1.a, t2.b FROM t1 JOIN t2 ON t1.a = t2.a] text[SELECT t1.a, t2.b FROM t1 JOIN t2 ON t1.a = t2.a]`},
		{"sink into with options",
			`CREATE SINK k INTO dev.t WITH (parallelism = 2) AS SELECT a FROM s WHERE a IS NOT NULL`,
			`CREATE SINK k into dev.t with{parallelism=2} as[SELECT a FROM s WHERE a IS NOT NULL] text[SELECT a FROM s WHERE a IS NOT NULL]`},
		{"sink from",
			`CREATE SINK IF NOT EXISTS out FROM v WITH (connector = 'kafka', topic = 'out', type = 'upsert')`,
			`CREATE SINK out ifnotexists from v with{connector=kafka,topic=out,type=upsert}`},
		{"drop table", `DROP TABLE t`, `DROP TABLE t`},
		{"drop view list cascade", `drop materialized view if exists a, dev.b cascade`, `DROP MATERIALIZED VIEW a,dev.b ifexists cascade`},
		{"drop view", `DROP VIEW v RESTRICT`, `DROP VIEW v`},
		{"drop source", `DROP SOURCE "Src"`, `DROP SOURCE Src`},
		{"drop sink", `DROP SINK IF EXISTS k`, `DROP SINK k ifexists`},
		{"drop other kinds go to Postgres", `DROP INDEX i`, `OTHER Drop [DROP INDEX i]`},
		{"show tables", `SHOW TABLES`, `SHOW TABLES`},
		{"show sources", `show sources`, `SHOW SOURCES`},
		{"show views", `SHOW MATERIALIZED VIEWS`, `SHOW MATERIALIZED VIEWS`},
		{"show sinks", `SHOW SINKS`, `SHOW SINKS`},
		{"show jobs", `SHOW JOBS`, `SHOW JOBS`},
		{"show variable", `SHOW TimeZone`, `SHOW timezone`},
		{"show time zone", `SHOW TIME ZONE`, `SHOW timezone`},
		{"show all", `SHOW ALL`, `SHOW all`},
		{"describe", `DESCRIBE dev.t`, `DESCRIBE dev.t`},
		{"desc", `DESC "T"`, `DESCRIBE T`},
		{"explain query", `EXPLAIN SELECT a FROM t`, `EXPLAIN {QUERY [SELECT a FROM t] text[SELECT a FROM t]}`},
		{"explain analyze", `EXPLAIN ANALYZE SELECT 1`, `EXPLAIN analyze {QUERY [SELECT 1] text[SELECT 1]}`},
		{"explain option list", `EXPLAIN (ANALYZE false) SELECT 1`, `EXPLAIN {QUERY [SELECT 1] text[SELECT 1]}`},
		{"explain view", `EXPLAIN CREATE MATERIALIZED VIEW v AS SELECT a FROM t`,
			`EXPLAIN {CREATE VIEW v as[SELECT a FROM t] text[SELECT a FROM t]}`},
		{"explain sink", `EXPLAIN (analyze) CREATE SINK k INTO t AS SELECT 1`,
			`EXPLAIN analyze {CREATE SINK k into t as[SELECT 1] text[SELECT 1]}`},
		{"explain time travel", `EXPLAIN SELECT * FROM t AS OF EPOCH 7`,
			`EXPLAIN {QUERY [SELECT * FROM t] text[SELECT * FROM t] epoch=7}`},
		{"query", `SELECT a, b FROM t WHERE c = 'x'`, `QUERY [SELECT a, b FROM t WHERE c = 'x'] text[SELECT a, b FROM t WHERE c = 'x']`},
		{"values", `VALUES (1), (2)`, `QUERY [VALUES (1), (2)] text[VALUES (1), (2)]`},
		{"time travel", `SELECT sum(x) FROM t1 JOIN t2 USING (k) AS OF EPOCH 42`,
			`QUERY [SELECT sum(x) FROM t1 JOIN t2 USING (k)] text[SELECT sum(x) FROM t1 JOIN t2 USING (k)] epoch=42`},
		{"time travel, large epoch", `select 1 as of epoch 18446744073709551615`,
			`QUERY [SELECT 1] text[select 1] epoch=18446744073709551615`},
		{"column aliased of is not time travel", `SELECT 1 AS of`, `QUERY [SELECT 1 AS of] text[SELECT 1 AS of]`},
		{"insert values", `INSERT INTO dev.t (a, b) VALUES (1, 'x'), (2, 'y')`,
			`INSERT dev.t (a,b) rows[VALUES (1, 'x'), (2, 'y')] [INSERT INTO dev.t (a, b) VALUES (1, 'x'), (2, 'y')]`},
		{"insert select", `INSERT INTO t SELECT * FROM s`, `INSERT t () rows[SELECT * FROM s] [INSERT INTO t SELECT * FROM s]`},
		{"insert default values", `INSERT INTO t DEFAULT VALUES`, `INSERT t () [INSERT INTO t DEFAULT VALUES]`},
		{"update", `UPDATE t SET b = b + 1 WHERE a = 3`, `UPDATE t [UPDATE t SET b = b + 1 WHERE a = 3]`},
		{"delete", `DELETE FROM "T" WHERE a IN (1, 2)`, `DELETE T [DELETE FROM "T" WHERE a IN (1, 2)]`},
		{"set =", `SET application_name = 'psql'`, `SET application_name="psql"`},
		{"set to identifier", `SET search_path TO public, dev`, `SET search_path="public, dev"`},
		{"set number", `SET LOCAL statement_timeout = 5000`, `SET statement_timeout="5000" local`},
		{"set time zone", `SET TIME ZONE 'Europe/Paris'`, `SET timezone="Europe/Paris"`},
		{"set time zone local", `SET TIME ZONE LOCAL`, `SET timezone="" default`},
		{"set default", `SET timezone TO DEFAULT`, `SET timezone="" default`},
		{"reset", `RESET timezone`, `SET timezone="" default`},
		{"reset all", `RESET ALL`, `SET all="" default`},
		{"begin", `BEGIN`, `OTHER Transaction [BEGIN]`},
		{"commit", `COMMIT`, `OTHER Transaction [COMMIT]`},
		{"create index goes to Postgres", `CREATE INDEX i ON t (a)`, `OTHER Index [CREATE INDEX i ON t USING btree (a)]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stmts, err := Parse(tc.sql)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.sql, err)
			}
			if len(stmts) != 1 {
				t.Fatalf("got %d statements, want 1", len(stmts))
			}
			if got := summary(t, stmts[0]); got != tc.want {
				t.Fatalf("Parse(%q)\n got %s\nwant %s", tc.sql, got, tc.want)
			}
			checkPositions(t, tc.sql, stmts[0])
			if stmts[0].Text() != tc.sql || stmts[0].Offset() != 0 {
				t.Fatalf("Text/Offset = %q/%d, want the whole input", stmts[0].Text(), stmts[0].Offset())
			}
		})
	}
}

// checkPositions checks, apart from the expected summaries, that every
// position a statement holds points at the token it names: a column's
// name, the WATERMARK keyword.
func checkPositions(t *testing.T, input string, st Statement) {
	t.Helper()
	at := func(pos int, want string) {
		t.Helper()
		r := []rune(input)
		if pos < 1 || pos > len(r) {
			t.Fatalf("position %d outside the input", pos)
		}
		rest := strings.TrimPrefix(string(r[pos-1:]), `"`)
		if !strings.HasPrefix(strings.ToLower(rest), strings.ToLower(want)) {
			t.Fatalf("position %d points at %.20q, want %q", pos, string(r[pos-1:]), want)
		}
	}
	var cols []ColumnDef
	var wm *Watermark
	switch s := st.(type) {
	case *CreateTable:
		cols, wm = s.Columns, s.Watermark
	case *CreateSource:
		cols, wm = s.Columns, s.Watermark
	case *Explain:
		checkPositions(t, input, s.Statement)
	}
	for _, c := range cols {
		at(c.Pos, c.Name)
	}
	if wm != nil {
		at(wm.Pos, "watermark")
	}
}

// TestOptionValues decodes string constants as Postgres does, through the
// WITH clause where Strata reads them itself.
func TestOptionValues(t *testing.T) {
	for _, tc := range []struct{ lit, want string }{
		{`'plain'`, "plain"},
		{`'it''s'`, "it's"},
		{`'back\slash'`, `back\slash`},
		{`E'\x41\101\u00e9\U0001F600\n\t\\\''`, "AAé\U0001F600\n\t\\'"},
		{`e'\q\xZZ'`, "qxZZ"},
		{"'con'\n  'tinued'", "continued"},
		{`$$dollar 'quoted' $ ; $$`, "dollar 'quoted' $ ; "},
		{`$tag$x$y$tag$`, "x$y"},
		{`''`, ""},
		{`42`, "42"},
		{`-1.5e3`, "-1.5e3"},
		{`+7`, "7"},
		{`Earliest`, "earliest"},
		{`"Earliest"`, "Earliest"},
		{`true`, "true"},
	} {
		stmts, err := Parse("CREATE TABLE t (a int) WITH (k = " + tc.lit + ")")
		if err != nil {
			t.Errorf("%s: %v", tc.lit, err)
			continue
		}
		if got := stmts[0].(*CreateTable).With["k"]; got != tc.want {
			t.Errorf("%s = %q, want %q", tc.lit, got, tc.want)
		}
	}
}
