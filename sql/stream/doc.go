// Package stream holds the incremental operators of streaming SQL: the
// dataflow operators (dataflow/operator.Operator) that a materialized
// view's plan turns into. Each consumes and produces changelogs (rows with
// row kinds +I, -U, +U, -D) and keeps what it must remember in keyed state,
// so that checkpoints capture it and recovery restores it.
//
// # Epochs
//
// Operators follow DESIGN.md's epoch protocol: stateful ones fold input
// into their state as it arrives and emit the epoch's net result changes in
// OnEpoch, before the runtime forwards epoch barrier E; so a table's
// epoch-E changes depend only on input of epochs up to E (operator
// invariant epoch-results). A group whose result did not change in an
// epoch emits nothing (no -U x, +U x pairs), and output is ordered by key,
// never by arrival, so an epoch's output does not depend on the order in
// which its input arrived (DESIGN.md "Later: commit ahead of the
// checkpoint").
//
// # Operators
//
//   - Map evaluates a filter and a projection per row, row kinds kept. A
//     filter that passes a -U but not its +U still retracts the old row.
//     A projection cancels a retraction and an addition of the same
//     projected row within a chunk (invariant quiet-projection), so that
//     dropping the column an upstream change was in emits nothing.
//   - GroupAgg maintains GROUP BY aggregates over a retract changelog with
//     the retractable accumulators of package agg, emitting +I for a new
//     group, -U/+U for a changed one and -D for one whose last row was
//     retracted (Flink's GroupAggFunction, RisingWave's HashAggExecutor).
//     Without GROUP BY it keeps one global row, emitted from the first
//     epoch on, also over empty input, as SQL's global aggregate is.
//     With a GroupExpiry (a group key that is a window bound of an
//     append-only input's event time with a watermark) it frees the
//     groups of windows the watermark has closed (groupexpiry.go).
//   - Join is the equi-join of two changelogs (inner, left, right, full)
//     with a residual predicate, its output consolidated per epoch. With
//     a JoinInterval it is an interval join of two append-only inputs,
//     dropping rows from its state as the watermarks pass them
//     (interval.go).
//   - LookupJoin enriches an append-only stream with a stored table's
//     rows by primary key at the epoch being processed, keeping no copy
//     of the table (LookupTable).
//   - WindowExpand assigns each row to its TUMBLE, HOP or CUMULATE
//     windows (stateless; a retraction expands as its row did), and can
//     project each expanded row (the next aggregate's keys and
//     arguments) so that only those columns are copied per window.
//   - SessionWindow assigns rows to SESSION windows, merging sessions that
//     a row bridges and splitting them when it is retracted.
//   - TopN keeps the first N rows per partition in an order (Top-N,
//     deduplication, ORDER BY ... LIMIT).
//   - Consolidate passes the changes of several inputs on as each
//     epoch's net changes (UNION ALL).
//   - Repeat emits each row as many times as its count column says
//     (INTERSECT ALL, EXCEPT ALL).
//   - LateFilter drops and counts rows behind a source's watermark.
//   - Normalize turns an upsert changelog (+U without -U, -D by key)
//     into a retract one, keeping each key's last row.
//   - ValuesSource is the bounded source of constant rows (VALUES).
//
// SessionWindow and TopN share the sorted state (sorted.go): per
// partition its rows in order and the rows last emitted; at the end of an
// epoch each changed partition is recomputed and only the difference
// emitted, every -D before every +I (operator invariant epoch-results; no
// -D x, +I x for an unchanged row).
//
// Operators take their key, argument and filter values as input columns:
// the planner computes expressions in a Map before the exchange (or in
// the WindowExpand before it), so that the exchange's hash key and the
// operator's state key are the same bytes (types.AppendKey of the key
// columns).
//
// # The per-row path
//
// Per input row an operator does a bounded amount of work without
// allocating where it can: scratch rows and encodings are reused from
// row to row (the state backends copy what they are given), a Join
// builds a joined row's encoding from both sides' stored encodings
// rather than decoding and encoding again, and the epoch's pending
// output changes are counted through a map lookup that allocates only
// for a row new to the epoch. Allocations that remain are per group,
// per stored row or per emitted row.
package stream
