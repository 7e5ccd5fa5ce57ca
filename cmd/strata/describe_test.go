package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stratadb/strata/server"
)

// TestSQLCommandDescribe: \d NAME prints the columns in psql's layout
// (Column | Type | Nullable), then the key as psql lists a primary key's
// index, in the declared key order, the watermark, and for a view its
// definition; a name that is not a relation fails with DESCRIBE's error.
func TestSQLCommandDescribe(t *testing.T) {
	addr := startSQLServer(t, server.Options{})
	script := `CREATE TABLE bids (auction BIGINT, bidder BIGINT, price BIGINT NOT NULL, "Date-Time" TIMESTAMP,
  WATERMARK FOR "Date-Time" AS "Date-Time" - INTERVAL '5' SECOND);
CREATE TABLE prices (auction BIGINT, bidder BIGINT, price BIGINT, PRIMARY KEY (bidder, auction));
CREATE MATERIALIZED VIEW per_auction AS SELECT auction, count(*) AS n, max(price) AS top FROM bids GROUP BY auction;
CREATE SOURCE gen (k BIGINT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '0.5' SECOND) WITH (connector = 'datagen');
`
	if stdout, stderr, code := sqlRun(t, strings.NewReader(script), "--addr", addr); code != exitOK || stderr != "" {
		t.Fatalf("setup: status %d\n%s\n%s", code, stdout, stderr)
	}
	for _, tc := range []struct{ cmd, want string }{
		{`\d bids`, `                Table "public.bids"
  Column   |            Type             | Nullable
-----------+-----------------------------+----------
 auction   | bigint                      |
 bidder    | bigint                      |
 price     | bigint                      | not null
 Date-Time | timestamp without time zone |
Watermark: FOR "Date-Time" AS "Date-Time" - INTERVAL '5' SECOND
`},
		{`\d prices`, `    Table "public.prices"
 Column  |  Type  | Nullable
---------+--------+----------
 auction | bigint | not null
 bidder  | bigint | not null
 price   | bigint |
Indexes:
    "prices_pkey" PRIMARY KEY, btree (bidder, auction)
`},
		{`\d+ per_auction`, `Materialized view "public.per_auction"
 Column  |  Type  | Nullable
---------+--------+----------
 auction | bigint |
 n       | bigint |
 top     | bigint |
Indexes:
    "per_auction_key" UNIQUE CONSTRAINT, btree (auction) NULLS NOT DISTINCT
View definition:
 SELECT auction, count(*) AS n, max(price) AS top FROM bids GROUP BY auction;
`},
		{`\d gen`, `               Source "public.gen"
 Column |            Type             | Nullable
--------+-----------------------------+----------
 k      | bigint                      |
 ts     | timestamp without time zone |
Watermark: FOR ts AS ts - INTERVAL '0.5' SECOND
`},
	} {
		stdout, stderr, code := sqlRun(t, strings.NewReader(tc.cmd+"\n"), "--addr", addr)
		if code != exitOK || stderr != "" || stdout != tc.want {
			t.Errorf("%s: status %d, errors %q, output\n%s\nwant\n%s", tc.cmd, code, stderr, stdout, tc.want)
		}
	}
	// A system view: its columns from a query's row description.
	if stdout, stderr, code := sqlRun(t, nil, "--addr", addr, "-c", `\d strata_catalog.tables`); code != exitOK || stderr != "" ||
		!strings.Contains(stdout, `View "strata_catalog.tables"`) || !regexp.MustCompile(`(?m)^ name +\| text +\| *$`).MatchString(stdout) {
		t.Errorf(`\d strata_catalog.tables: status %d, errors %q, output\n%s`, code, stderr, stdout)
	}
	stdout, stderr, code := sqlRun(t, nil, "--addr", addr, "-c", `\d nosuch`)
	if code != exitFailure || stdout != "" || !strings.HasPrefix(stderr, `ERROR:  relation "nosuch" does not exist`) {
		t.Errorf(`\d nosuch: status %d, output %q, errors %q`, code, stdout, stderr)
	}
}

func TestCreateElements(t *testing.T) {
	for _, tc := range []struct {
		create string
		want   createParts
	}{
		{`CREATE TABLE t ("a,b" INT, "PRIMARY KEY" INT, ts TIMESTAMP, PRIMARY KEY ("a,b", "PRIMARY KEY"), WATERMARK FOR ts AS ts - INTERVAL '0.5' SECOND) WITH ('x' = 'a AS b')`,
			createParts{key: []string{`"a,b"`, `"PRIMARY KEY"`}, watermark: "ts AS ts - INTERVAL '0.5' SECOND"}},
		{`CREATE MATERIALIZED VIEW "as" WITH ('timezone' = 'x) AS (') AS SELECT k AS x FROM t`,
			createParts{query: "SELECT k AS x FROM t"}},
		{`CREATE SOURCE s (ts TIMESTAMP, WATERMARK FOR ts AS ts) WITH ('connector' = 'datagen')`,
			createParts{watermark: "ts AS ts"}},
		{"", createParts{}},
	} {
		got := createElements(tc.create)
		if strings.Join(got.key, "|") != strings.Join(tc.want.key, "|") || got.watermark != tc.want.watermark || got.query != tc.want.query {
			t.Errorf("createElements(%s)\n got %+v\nwant %+v", tc.create, got, tc.want)
		}
	}
}

// \d shows PostgreSQL's type names, modifiers kept.
func TestPGColumnType(t *testing.T) {
	for in, want := range map[string]string{
		"BIGINT": "bigint", "NUMERIC(10,2)": "numeric(10,2)", "VARCHAR(20)": "character varying(20)",
		"DOUBLE": "double precision", "TIMESTAMPTZ": "timestamp with time zone", "BOOLEAN": "boolean",
		"STRUCT(a INTEGER)": "struct(a integer)",
	} {
		if got := pgColumnType(in); got != want {
			t.Errorf("pgColumnType(%q) = %q, want %q", in, got, want)
		}
	}
}
