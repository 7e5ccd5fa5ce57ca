// Package logictest runs Strata's SQL logic-test corpus: scripts under
// testdata/*.slt, modelled on SQLite's sqllogictest, whose queries run as
// streaming views (binder, planner, the incremental operators of
// sql/stream and the dataflow runtime) over changelogs of their inputs and
// are compared, at every epoch, with an independent recomputation of the
// same SELECT by DuckDB over the rows the inputs hold at that epoch
// (STYLE.md "Views: compare with an independent re-computation"). It
// answers the logic-test item of the streaming SQL issue.
//
// # Script format
//
// A script is a sequence of directives separated by blank lines; a line
// starting with # is a comment.
//
//	table NAME (col TYPE [NOT NULL], ..., [WATERMARK FOR col AS col - INTERVAL '...',] PRIMARY KEY (col, ...))
//
// declares an input relation (types as internal/types.ParseType reads
// them). An input with a primary key is a changelog by key, as a table or
// a keyed source feeds a view (retract mode); one without is append-only
// (+I only, as a source without a key), and its rows are spread over
// source subtasks round-robin. A watermark is allowed on an append-only
// input only (the planner refuses one on a changelog); such an input goes
// through source subtask 0 at every parallelism, so that the rows its
// LateFilter drops are the same whatever the parallelism.
//
//	table NAME (col TYPE, ..., PRIMARY KEY (col, ...)) UPSERT
//
// declares an input whose changelog is an upsert one by its primary key
// (plan.Relation.Upsert): +I and +U replace the key's row with no -U
// before it, -D deletes the key whatever its other columns say (write
// NULL there, as a tombstone carries no value). A random upsert
// changelog is a random retract one without its -U and with -D naming
// only the key.
//
//	input NAME
//	+I 1, 'a', 2.5
//	epoch
//	-U 1, 'a', 2.5
//	+U 1, 'b', 2.50
//	-D 2, NULL, NULL
//	epoch
//
// gives NAME's changelog by hand: one change a line (row kind, then the
// values: NULL, a 'quoted' string with a doubled quote for a quote, or a
// bare word, read as the column's type reads text), "epoch" closing an
// epoch (the last one closes at the end of the block).
//
//	random NAME rows=N epochs=E seed=S updates=0.3 deletes=0.1 [nulls=0.1] [extremes=0]
//
// generates NAME's changelog instead (Generate): about N inserts over E
// epochs, a share of the changes updating (-U of the live row, +U of a
// new one with the same key, some columns redrawn, sometimes none) or
// deleting (-D of the live row) an existing row, keys that were deleted
// coming back, NULLs in nullable columns, values from small domains so
// that groups and join keys collide, NUMERICs written with different
// numbers of trailing zeros, and with probability extremes the type's
// extremes (largest integers, NaN, ±Infinity, the widest NUMERIC, far
// dates). The same line always gives the same changelog.
//
//	timezone America/New_York
//
// sets the session time zone of the queries that follow (UTC before the
// first such line): the view's evaluation context, DuckDB's TimeZone and
// the display of TIMESTAMPTZ values in expected rows.
//
//	skipif unsupported|bug REASON
//	query [error SQLSTATE [at POSITION] | nooracle] [quiet]
//	SELECT ...
//	duckdb
//	SELECT ... (the same question in DuckDB's dialect)
//	postgres
//	SELECT ... (the same question for the opt-in Postgres check)
//	----
//	1|a|2.50
//	2|NULL|NULL
//
// is a query over the tables and inputs declared above it (a later table,
// input or random line starts a new dataset for the queries after it;
// inputs not given again keep their changelog, and every input has as
// many epochs as the longest). The optional "duckdb" section replaces the
// SQL DuckDB runs where the dialects differ; "----" gives the view's
// expected rows after the last epoch: one row a line in Postgres's text
// output (time zone as set), NULL for NULL, values joined by "|", in any
// order.
//
// Options of the query line: "error SQLSTATE" requires the statement to
// fail with that SQLSTATE, when it is bound, planned or run, and "at
// POSITION" also requires the error to point at that 1-based character
// of the statement, as Postgres's error position does; "nooracle" marks
// a question DuckDB cannot answer the same way (the text of floats, say),
// which needs expected rows, and those alone judge it; "quiet" marks a
// query written to check that an unchanged result emits nothing, which
// the runner checks of every query (invariant quiet below); "multiset"
// runs the view as the engine stores a view without a unique key whose
// changes retract: grouped by all of its columns with a multiplicity
// (planner.Multiset), then read back one copy per count (plan.Repeat), as
// SELECT and downstream views read it (testdata/multiset.slt);
// TestCorpusAsMultisets runs every compared query of the corpus so too,
// since the encoding must hold any view's rows.
//
// "skipif" keeps a query that is not compared: "unsupported" for what the
// planner refuses today (subqueries, INTERSECT, window functions other
// than Top-N, ...),
// "bug" for a known wrong result, with a one-line description. Skipped
// queries still run as a probe, and the test log says what they give, so
// that a mark can go once the query passes.
//
// # Running a query
//
// Runner.RunScript loads each dataset into DuckDB once per epoch (the
// rows live at the end of that epoch) and records every query's answer;
// then it runs every query as a job at parallelism 1 and 2: sources of
// the same parallelism, source subtask i replaying, epoch by epoch, the
// changes of the keys that hash to i (one chunk, then the epoch's close),
// and a sink that records what each subtask receives in each epoch. The
// view at epoch E is the multiset of its rows after applying every
// change of epochs up to E.
//
// Invariants the runner checks:
//
//   - input-keyed: an input changelog respects its primary key (no +I of
//     a live key, -U and -D retract exactly the live row, -U is followed
//     by +U of the same key; for an upsert input, no -U and no -D of a
//     key that is not live); hand-written inputs that break it are
//     refused with their line.
//   - view-multiset: at the end of every epoch no row has a negative
//     count: a view never retracts a row it does not hold.
//   - quiet: no sink subtask both retracts and adds the same row in one
//     epoch (DESIGN.md: outputs with no net change emit nothing).
//   - late-rows: the oracle holds no late row of an input with a
//     watermark: a row whose event time is below the largest time before
//     it in the changelog minus the delay is dropped, by the rule of
//     stream.LateFilter (NULL never late, ±infinity never raising the
//     largest time), as the job's only source subtask of that input
//     drops it.
//   - epoch-equal: at the end of every epoch E the view equals DuckDB's
//     answer over the inputs' rows at E (DESIGN.md invariant 1: an epoch's
//     changes depend only on input up to that epoch), and after the last
//     one it equals the expected rows.
//
// A failure names the query, its file:line, the parallelism, the epoch,
// the rows only in the view and only in DuckDB, and the changes the view
// received in that epoch.
//
// # Comparing with DuckDB
//
// DuckDB and Postgres agree on most values but not on result types nor
// on display, so the comparison is by value (normRow): exact numbers by
// their reduced decimal, floats (either side) to 12 significant digits,
// JSON parsed and printed as jsonb, intervals by their span, CHAR without
// trailing blanks. The exact text is what expected rows check. DuckDB
// runs with integer_division on ("/" on integers divides as integers)
// and in the queries' time zone, and sorts NULLs last ascending and first
// descending as Postgres does (default_null_order). Differences that remain are worked
// around in the scripts' duckdb sections, each with a comment; the ones
// met so far:
//
//   - round() of a double rounds half to even in Postgres (rint) and half
//     away from zero in DuckDB (round_even does as Postgres); casts of
//     doubles to integers likewise.
//   - upper('ß') is 'ß' in Postgres (C.UTF-8 ctype) and 'ẞ' in DuckDB.
//   - DuckDB adds INTERVAL '24 hours' to a TIMESTAMPTZ as a calendar day
//     across a DST change; Postgres adds 24 elapsed hours.
//   - string_agg without ORDER BY joins in arrival order in both engines,
//     in the values' sort order in a view (invariant agg-order-free of
//     sql/agg): the oracle says ORDER BY.
//   - sum(BIGINT) is NUMERIC in Postgres (so sum(v) / count(v) divides as
//     NUMERIC) and HUGEINT in DuckDB.
//   - JSON: DuckDB has json_type, json_exists, json_object instead of
//     jsonb_typeof, ?, jsonb_build_object; its -> and ->> bind more
//     loosely than =; its JSON text is minified (->> of an object differs).
//   - Postgres's ~ finds a match anywhere: DuckDB's regexp_matches.
//   - LIKE's default escape is backslash in Postgres, none in DuckDB.
//   - DuckDB has no CHAR(n), no unconstrained NUMERIC (DECIMAL(28,6)
//     holds the generated values), no sum(INTERVAL), no initcap, no
//     one-argument lpad, and prints floats differently ("3.0" for "3").
//   - Window TVFs: DuckDB's time_bucket aligns to 2000-01-03 by default:
//     the oracle gives TIMESTAMP '1970-01-01' as origin (or the session
//     time zone for a day window over a TIMESTAMPTZ); HOP and CUMULATE
//     expand over range(); SESSION numbers sessions with lag().
//   - A group of equal values spelled differently (NUMERIC 2.5 and 2.50,
//     '1 mon' and '30 days', -0 and 0) shows one of the live spellings in
//     Postgres, the first its hash table meets, which depends on the
//     physical order of its input; such queries use trim_scale,
//     justify_interval or + 0. The view's rule is defined (GroupAgg's
//     invariant key-spelling in sql/stream).
//   - Postgres runs FULL JOIN only on hash- or merge-joinable conditions;
//     the postgres section of a theta FULL JOIN is a LEFT JOIN plus the
//     unmatched right rows.
//
// # Random queries
//
// TestRandomQueries writes queries from a small grammar over a fixed
// schema (two changelogs and an append-only input): filters, projections
// with the functions both engines spell alike, DISTINCT, two- and
// three-way joins of every kind with residuals (some without an
// equality, on a disjunction or on IS NOT DISTINCT FROM), derived tables
// (filtered or aggregated) joined back, GROUP BY with FILTERed and DISTINCT
// aggregates, HAVING, and an aggregate over an aggregate; each runs like
// a corpus query (string_agg's oracle spelling orders inside the call).
// -randseed, -randqueries and -randrows explore beyond the default 80
// queries of seed 1 over about 60 rows a table; a failure prints the
// SQL, which then belongs in the corpus. -parallelism (default "1,2") sets the parallelisms of both
// tests.
//
// # Checking against Postgres
//
// TestAgainstPostgres, run by hand with STRATA_LOGICTEST_PG set to a
// PostgreSQL 15 server with a C.UTF-8 ctype, compares the exact text of
// every compared query's final rows with Postgres's answer over the same
// rows (the "postgres" section replaces the SQL where a view's defined
// order is not Postgres's), and checks that statements that must fail
// fail there with the same SQLSTATE. It decides which side is right when
// the view and DuckDB disagree.
//
// # Rewriting expected rows
//
// go test ./sql/logictest -rewrite replaces the rows below every "----"
// with the views' final rows; check the diff against Postgres before
// committing it.
package logictest
