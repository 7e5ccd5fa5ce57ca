// Package testkit holds the sources, operators and sinks that the
// runtime's tests and benchmarks are built from:
//
//   - Generator: a deterministic source of (key BIGINT, value BIGINT) rows
//     with positions, closing an epoch every RowsPerEpoch rows at the same
//     positions after any restore (DESIGN.md: sources keep (epoch,
//     position) pairs);
//   - KeyedSum: a keyed running SUM/COUNT that emits, when an epoch
//     closes, the new totals of the keys the epoch changed, in key order,
//     so an epoch's output does not depend on arrival order;
//   - Store and its Committer: a test two-phase-commit target that checks
//     that re-commits are idempotent and records what was committed per
//     sink subtask and epoch;
//   - Injector and Failing: failure injection, a panic at random points of
//     an operator;
//   - EpochRecorder: a two-input operator that checks epoch alignment;
//   - Throttle: an operator that slows its subtask down, for backpressure.
//
// None of them is meant for production jobs.
package testkit
