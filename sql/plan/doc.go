// Package plan holds Strata's logical query plans: the relational operator
// tree the binder builds from a SELECT (Scan, Values, Project, Filter,
// Aggregate, Join, Union, Sort, Limit, WindowTVF, TopN) with the output
// schema of each node. A logical plan says what to compute, not how: the
// streaming planner turns it into a dataflow job with changelog modes and
// exchanges, and the batch path into a query for the OLAP engine.
//
// # Conventions
//
//   - Every node's output is an ordered list of Columns. Expressions above
//     a node refer to its output by position (expr.ColumnRef.Index).
//   - A Join's output is the left input's columns followed by the right's.
//   - An Aggregate's output is its group keys, then its aggregate calls.
//   - Plans are immutable once built; rewrites build new nodes. The one
//     mutable part is a prepared statement's Params: each execution's
//     values, which its Param expressions read.
package plan
