// Package exec runs logical plans (package plan) in memory, in batch:
// VALUES, projections, filters, aggregates (with the accumulators of
// package agg), joins of every kind, UNION ALL, sorting and limits, over
// relations that a Scanner supplies as rows. It serves statements that
// need no stored table (SELECT without FROM, INSERT ... VALUES), small
// one-shot queries, and tests; large reads of the table store go to the
// OLAP engine.
//
// Window table-valued functions and Top-N are streaming operators and are
// not run here.
package exec
