// Package ddl turns Strata's SQL text into typed statements. Strata speaks
// the PostgreSQL dialect, parsed by the real Postgres parser (libpg_query
// through pg_query_go), plus a few statements and clauses Postgres has no
// grammar for: sources, sinks, watermarks, dotted connector options and
// time travel. Parse returns one Statement per statement of a script.
//
// # How a script is parsed
//
//  1. The whole input is cut into tokens by Postgres's own scanner
//     (pg_query.Scan), so quotes, dollar quotes, E'...' strings, comments and
//     quoted identifiers are read exactly as Postgres reads them; comments
//     are dropped (a string token's value is decoded by sql/pglex, whose
//     rules sql/olap's rewriting lexer shares). Input that is not UTF-8 or holds a NUL byte is refused
//     (22021) before that, because the C scanner would stop at the NUL.
//  2. The tokens are split at semicolons into statements.
//  3. The pre-parser looks at each statement's leading words. A Strata
//     statement (grammar below) is parsed from its tokens; the parts that
//     Postgres can parse for it — a column list, a query after AS — are
//     left in a rewritten copy of the input, and everything else of it is
//     overwritten with spaces, byte for byte (CREATE SOURCE's SOURCE
//     becomes TABLE). Any other statement is left to Postgres whole.
//  4. Postgres parses the rewritten copy once. Because the copy has the
//     input's byte layout, every location in the parse trees and every
//     error position Postgres reports is one in the input: parse trees
//     hold byte offsets into the whole input (convert one with
//     parser.Position), never into a statement's own text.
//  5. Each statement is built from what the pre-parser found and its
//     parse tree: column types resolved, keys and watermarks checked.
//
// Two simpler designs were dropped. Parsing each statement on its own
// gives parse trees whose locations count from the statement, not from the
// script, so errors in a later statement of a script would point at the
// wrong character. Parsing Strata's column lists by hand would duplicate
// Postgres's grammar of types and constraints; blanking Strata's clauses
// lets Postgres parse the column list and report its syntax errors.
//
// Invariant (ddl-positions): every error is a *sqlerr.Error with a
// SQLSTATE and, when it concerns a token, the 1-based character position
// of that token in the whole input given to Parse.
//
// Errors come in Postgres's order: a syntax error anywhere in the script
// is reported before a semantic error (unknown type, missing key column)
// in any statement, and among syntax errors the first in the text wins.
//
// # Grammar Strata adds to Postgres's
//
// Words in capitals are keywords (case-insensitive); [x] is optional,
// {x} repeats zero or more times, a | b is a choice; name is an
// identifier or `database.name`, lower-cased unless quoted; query is any
// Postgres query (SELECT, VALUES, WITH ... SELECT, TABLE t).
//
//	create_table  = CREATE TABLE [IF NOT EXISTS] name
//	                  ( "(" element {"," element} ")" [FROM name TABLE 'upstream'] [with]
//	                  | [with] AS query )
//	create_source = CREATE SOURCE [IF NOT EXISTS] name ["(" element {"," element} ")"] with
//	create_view   = CREATE MATERIALIZED VIEW [IF NOT EXISTS] name [with] AS query
//	create_sink   = CREATE SINK [IF NOT EXISTS] name
//	                  ( INTO name [with] AS query | FROM name with )
//	element       = column_def | PRIMARY KEY "(" col {"," col} ")" | watermark
//	column_def    = col type {NOT NULL | NULL | PRIMARY KEY
//	                  | GENERATED ALWAYS AS "(" proctime() ")" STORED}
//	watermark     = WATERMARK FOR col AS col [- INTERVAL 'n' unit | - INTERVAL 'n units']
//	unit          = YEAR | MONTH | DAY | HOUR | MINUTE | SECOND
//	with          = WITH "(" option {"," option} ")"
//	option        = key "=" value
//	key           = label {"." label} | 'string'
//	value         = 'string' | [+|-] number | label
//	drop          = DROP (TABLE | MATERIALIZED VIEW | VIEW | SOURCE | SINK) [IF EXISTS]
//	                  name {"," name} [CASCADE | RESTRICT]
//	show          = SHOW (TABLES | SOURCES | MATERIALIZED VIEWS | SINKS | JOBS)
//	show_create   = SHOW CREATE (TABLE | MATERIALIZED VIEW | VIEW | SOURCE | SINK) name
//	describe      = (DESCRIBE | DESC) name
//	explain       = EXPLAIN [ANALYZE | "(" ANALYZE [TRUE | FALSE | ON | OFF] ")"] statement
//	time_travel   = query AS OF EPOCH [+] integer
//
// Rules beyond the grammar:
//   - type is any type package types knows (BIGINT, INT, SMALLINT, REAL,
//     DOUBLE PRECISION, NUMERIC(p,s), CHAR(n), VARCHAR(n), TEXT, UUID,
//     BYTEA, BOOLEAN, DATE, TIME, TIMESTAMP(p), TIMESTAMPTZ, INTERVAL,
//     JSONB and their Postgres aliases). Arrays, json, time with time zone
//     and interval qualifiers are refused (0A000), other names are unknown
//     (42704), bad modifiers such as NUMERIC(2000) are 22023.
//   - Primary-key columns are NOT NULL; a key naming a missing column is
//     42703, a column twice 42701, two keys 42P16; a column defined twice
//     is 42701. Other constraints (DEFAULT, CHECK, UNIQUE, REFERENCES,
//     identity columns, COLLATE) are 0A000.
//   - A generated column is a processing-time column: a table's
//     TIMESTAMPTZ column GENERATED ALWAYS AS (proctime()) STORED
//     (now() and current_timestamp are accepted there as the same thing;
//     RisingWave spells it `AS PROCTIME()`). The step that writes a row
//     into the table stamps it with the wall clock and the table stores
//     it (ColumnDef.Generated, catalog.GeneratedProcTime). Any other
//     generation expression is 0A000, another type 42804, such a column
//     in a primary key or in CREATE SOURCE 0A000.
//   - The watermark column must exist (42703) and be TIMESTAMP or
//     TIMESTAMPTZ (42804); the delay has no months or years and is not
//     negative. A table has at most one watermark.
//   - Option keys are lower-cased; a repeated key is 42601. CREATE SOURCE
//     and CREATE SINK ... FROM need a connector option (42P17).
//   - Names have at most two parts (database.name) and no dots inside a
//     quoted part (42602), so that the catalog can split them (ObjectName
//     does, with a default database). Identifiers longer than 63 bytes are
//     cut as Postgres's scanner cuts them, everywhere alike.
//   - Time travel: a query statement (alone or under EXPLAIN) may end with
//     AS OF EPOCH n to read every table at epoch n instead of at the
//     consistent version; the clause is taken off before Postgres parses
//     the query (it can never be valid Postgres there, since OF EPOCH
//     cannot follow a column alias) and lands in Query.AtEpoch. On any
//     other statement it is 0A000. SQL:2011's per-table FOR SYSTEM_TIME
//     AS OF was not chosen: Strata reads all tables of a query at one
//     epoch (DESIGN.md, atomic visibility), so the epoch belongs to the
//     statement, not to a table.
//   - SHOW of anything else (SHOW timezone, SHOW ALL), SET, SET TIME ZONE
//     and RESET are Postgres's and map to Show and Set; DROP of other
//     kinds, BEGIN, COMMIT and every statement not listed map to Other.
//
// [dialect-hints] A syntax error at another streaming system's form gets
// a HINT with Strata's form, keeping the 42601 code, message and position
// (hints.go): Flink's window table functions `FROM TABLE(TUMBLE(TABLE t,
// DESCRIPTOR(col), size))` (Strata: `FROM TUMBLE(t, col, size)`, the
// hint rebuilt from the statement's tokens), RisingWave's `p_time
// TIMESTAMPTZ AS PROCTIME()` (Strata: GENERATED ALWAYS AS (proctime())
// STORED), and an unquoted option name with a dash, Paimon's merge-engine
// (Strata: 'merge-engine'); Flink's MATCH_RECOGNIZE and RisingWave's EMIT
// ON WINDOW CLOSE, which Strata has no form of, get a hint saying so (and
// what a window view does instead). Names that Postgres's parser accepts
// and a later step refuses get their hint from NameHint, which the server
// calls on every statement's error: Flink's TIMESTAMP_LTZ type (42704;
// Strata: TIMESTAMPTZ), the window_time column of Flink's window table
// functions (42703; Strata's give window_start and window_end, and
// Flink's window_time is window_end minus 1 ms), Flink's group window
// functions, GROUP BY TUMBLE(ts, size) with TUMBLE_START and the like
// (42883; Strata: FROM TUMBLE(t, ts, size) ... GROUP BY window_start,
// window_end), LISTAGG (42883; Strata: string_agg), DATE_FORMAT (42883;
// to_char), IF (42883; CASE WHEN), TINYINT (42704; SMALLINT) and Paimon's
// system tables t$snapshots and the like (42P01; strata_catalog).
// Flink's and Paimon's DDL gets a hint saying what Strata does instead
// (flinkDDLHint): PARTITIONED BY (buckets), backtick-quoted names (double
// quotes), COMMENT, METADATA and computed columns (a view), TIMESTAMP(p)
// WITH LOCAL TIME ZONE (TIMESTAMPTZ), ARRAY<...>, MAP<...> and ROW<...>
// (JSONB), CREATE CATALOG and USE (one database), ALTER TABLE, CREATE
// TABLE ... LIKE, SET of a dashed or quoted key (server flags), and a
// watermark delay that is not an INTERVAL. CREATE TEMPORARY TABLE is
// 0A000, and a dynamic options comment /*+ OPTIONS(...) */, which would
// otherwise be dropped as a comment, is 0A000 at the comment. A negative epoch after
// AS OF EPOCH is 22023 naming the value.
//
// CreateTable.Table and CreateSource.Source turn the statements into the
// catalog's objects (package meta/catalog), which validate names further.
//
// Limits: a semicolon inside a BEGIN ATOMIC function body splits the
// statement (0A000: Strata has no SQL functions); Unicode-escaped
// identifiers and strings (U&"...") are refused in Strata's clauses.
package ddl
