// Package engine is one Strata instance: the meta service, the table
// store's warehouse, and the streaming jobs that keep tables and
// materialized views up to date, in one process.
//
// # Layout of the data directory
//
//	DIR/meta.db                       the meta service's store (bbolt)
//	DIR/warehouse/DB/NAME/            a table or view (table store layout)
//	DIR/checkpoints/JOB/              a job's checkpoints
//	DIR/dml/DB.NAME.log               the DML log of a table written by SQL
//
// # Objects and their jobs
//
// Every stored object has exactly one writing job (DESIGN.md's single
// writer rule), registered in the catalog with the object:
//
//   - a table with a connector (WITH (connector = 'nexmark', ...)) is
//     written by the ingest job "ingest.DB.NAME", whose source is the
//     connector's reader;
//   - a table without one is written by the ingest job "dml.DB.NAME", whose
//     source is the table's DML log: INSERT, UPDATE and DELETE append one
//     transaction to the log (fsync before they return), the job places it
//     in the next epoch like any ingest source, and the statement returns
//     once that epoch is committed, so a following SELECT sees it;
//   - a materialized view is written by the view job "view.DB.NAME", the
//     view's SELECT compiled by the streaming planner, reading the changelog
//     of every table it names epoch by epoch.
//
// Jobs run in this process with checkpoints under DIR/checkpoints and
// restart from their latest checkpoint after a failure or a restart of the
// process (Open starts every job of the catalog).
//
// # Keys of views
//
// A view is stored as a primary-key table so that retractions apply. Its key
// is inferred from the plan (uniqueKey): a scan's primary key passed through
// filters and projections, an aggregate's group columns, both sides' keys of
// an inner join, the preserved side's key of an outer join whose other key
// is fixed by the join condition. A view without such a key whose changes are
// insert-only is an append table.
//
// # Multiset views
//
// A view without an inferable key whose changes retract (an append-only
// table joined with a keyed or updating one, as Nexmark's q7, q13 and
// q20) is a multiset view (sql/planner's doc, "Multiset views"): its job
// runs planner.Multiset of its query, and its table is keyed by all of
// its columns with one more, hidden, last column _strata_count, the
// number of copies of the row (BIGINT, at least 1; a row whose count
// falls to zero is deleted). The catalog marks it with option
// OptionMultiset (its value names the hidden column) and lists only the
// view's own columns, with no primary key, so SELECT *, \d and the wire
// protocol's row descriptions never show the hidden column. Every reader
// expands each stored row into as many copies as its count:
//
//   - SELECT in DuckDB (sql/olap's Input.Multiset: the query's view of
//     the loaded table repeats each row) and in the batch executor
//     (readRows, ReadAt);
//   - a view over it (relationOf sets plan.Relation.Multiset; its source
//     reads the count and the planner adds a Repeat vertex);
//   - strata verify (the stored rows expanded before the comparison);
//   - CREATE SINK FROM it (a Repeat vertex between the source and the
//     sink).
//
// A view column may not be named _strata_count (42701). The key is all
// columns, so values that compare equal but are spelled differently
// (NUMERIC 1.5 and 1.50) are one row with their copies counted together,
// stored with one of the spellings (GroupAgg's key-spelling rule).
package engine
