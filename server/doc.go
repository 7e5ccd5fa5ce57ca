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
//
// # Statements
//
// CREATE TABLE / MATERIALIZED VIEW / SOURCE, DROP, INSERT, UPDATE, DELETE,
// SELECT (with AS OF EPOCH n), SHOW TABLES | MATERIALIZED VIEWS | SOURCES |
// JOBS, DESCRIBE, EXPLAIN, SET and SHOW of the settings above. BEGIN,
// COMMIT and ROLLBACK are accepted and do nothing: every statement commits
// on its own. Anything else is refused with SQLSTATE 0A000.
package server
