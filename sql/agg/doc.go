// Package agg implements SQL aggregate functions as retractable
// accumulators, the per-group state of the streaming group aggregation
// (Flink's retractable AggregateFunction with accumulate/retract;
// RisingWave's aggregation states).
//
// # Semantics
//
// Results follow Postgres: count(*) counts rows and count(x) non-NULL
// values; every other aggregate ignores NULL inputs and is NULL over no
// input; sum of SMALLINT/INTEGER is BIGINT (overflow is an error), sum of
// BIGINT and NUMERIC is NUMERIC, avg of integers and NUMERIC is NUMERIC
// with Postgres's division scale, avg of floats is DOUBLE PRECISION.
//
// Every accumulator accepts Retract for a value it accepted before, so an
// aggregate over a changelog with -U/-D rows stays exact:
//
//   - count, sum and avg of integers and NUMERIC keep exact sums;
//   - float sums are kept as exact decimal sums of the float values (with
//     NaN and ±Infinity counted apart), so adding and retracting in any
//     order gives the same result; the result is that exact sum rounded to
//     the nearest float, which can differ from Postgres's left-to-right
//     float addition in the last bit;
//   - min, max and DISTINCT keep the multiset of values seen (value ->
//     count), so retracting the current extreme finds the next one; over
//     an insert-only input (Spec.AppendOnly) min and max keep only the
//     extreme, Flink's MaxAggFunction beside MaxWithRetractAggFunction,
//     and refuse a Retract;
//   - bool_and and bool_or keep counts of TRUE and FALSE;
//   - percentile_cont and percentile_disc (ordered-set aggregates, the
//     value then the fraction as arguments) keep the multiset of values
//     and find the ranks they need at Result.
//
// Invariant agg-order-free: an accumulator's result depends only on the
// multiset of values added minus those retracted, never on their order
// (DESIGN.md "Later: commit ahead of the checkpoint" needs this).
// string_agg therefore joins values in their sort order, not arrival order;
// with ORDER BY inside the call (Spec.Order) in that order, ties in the
// values' sort order.
//
// # State
//
// AppendState and LoadState move an accumulator to and from bytes (the
// value of the group's keyed state), with the row codec and key encoding
// of internal/types inside.
package agg
