// Package server serves one Strata engine to clients: a SQL session per
// Postgres wire connection (Session), running Strata's statements
// (sql/ddl) against the engine, and Start, which runs the engine, the wire
// server and the HTTP endpoint (/metrics, /healthz) together as `strata
// start` does.
//
// # Session settings
//
//   - TimeZone (SET TIME ZONE 'Europe/Paris'): the session time zone.
//   - consistency (SET consistency = strong | weak): how a SELECT picks its
//     version (DESIGN.md "Consistent reads"); strong by default. A strong
//     read also sees the session's own writes: after an INSERT, UPDATE or
//     DELETE committed at epoch E, the next SELECT waits until every
//     relation it reads has committed E, so a view reflects the write.
//   - last_read_epoch (SHOW only): the epoch the last SELECT read, per
//     relation the smallest, or 0 before any.
//   - statement_timeout: a statement running longer is canceled with 57014
//     "canceling statement due to statement timeout"; a SELECT on DuckDB
//     is interrupted, the batch executor looks at the statement's context
//     every 1024 rows (expr.Context.Interrupt).
//   - default_transaction_read_only, and in a block its READ ONLY mode
//     (SHOW transaction_read_only).
//   - The parameters drivers and tools read and Strata does not change
//     (server_version_num, standard_conforming_strings, integer_datetimes,
//     DateStyle, search_path, client_encoding, transaction_isolation, ...):
//     SHOW gives PostgreSQL's values (fixedSettings) under PostgreSQL's
//     column names; SET of the ones drivers send at connection start is
//     accepted and shown back by SHOW.
//
// # Statements
//
// CREATE TABLE / MATERIALIZED VIEW / SOURCE, DROP, INSERT, UPDATE, DELETE,
// SELECT (with AS OF EPOCH n), SHOW TABLES | MATERIALIZED VIEWS | SOURCES |
// JOBS, SHOW CREATE (showcreate.go: the statement rebuilt from the
// catalog), DESCRIBE, EXPLAIN, SET and SHOW of the settings above. DROP
// ... IF EXISTS of a missing name answers with PostgreSQL's NOTICE
// (pgwire.Result.Notices). An error of the OLAP engine that names a
// relation, column or function gets the position of its first occurrence
// in the statement (olap.NamePosition), as PostgreSQL's do. BEGIN,
// COMMIT and ROLLBACK are accepted and do nothing: every statement commits
// on its own. Anything else is refused with SQLSTATE 0A000.
//
// # Which executor answers a SELECT
//
// A SELECT that reads tables or views runs on the engine's DuckDB (the
// OLAP engine, package sql/olap); one that reads pg_catalog goes to its
// emulated catalog; the rest (no tables, or strata_catalog's system
// tables) run on Strata's own executor. [system-olap] A query over system
// tables only that this executor refuses as unsupported (0A000: a scalar
// subquery that computes no aggregate) is prepared again on a small
// DuckDB of its own (systemOLAP in sysquery.go), with the system tables'
// rows, computed by the executor, handed over by value for that query
// (olap.QueryRelations), so the forms that work over user tables work
// over system tables too.
package server
