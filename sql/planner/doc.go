// Package planner turns a bound logical plan (package plan) into a
// streaming dataflow job (package dataflow/graph) made of the incremental
// operators of package stream: the job of a materialized view.
//
// # Shape of a job
//
// Sources and the sink come from Endpoints (table sources and sinks join
// the table store; tests use their own). Stateless steps (Filter,
// Project) become Map vertices that keep their input's parallelism and
// take it over a forward edge. An Aggregate becomes a Map that computes
// the group keys, the aggregate arguments and the FILTER predicates as
// columns, a hash exchange on the key columns (through key groups, so the
// exchange's key and the operator's state key are the same bytes), and a
// GroupAgg vertex with the job's parallelism; a global aggregate has
// parallelism 1 and a constant exchange key.
//
// # Changelog modes
//
// Every step has a changelog mode, as Flink's planner infers them:
// append-only (+I only: a source or an append table), or retract (-U/+U
// pairs and -D). A scan of a relation with a primary key is retract (its
// changelog carries updates); Filter and Project keep their input's mode;
// an Aggregate or a Join produces retract output whatever its input. Explain shows
// each vertex with its mode.
//
// A Join becomes a Map per side that appends the join keys as columns, a
// hash exchange of both sides on those columns, and a Join vertex; the
// join condition must hold at least one equality between an expression
// of the left side and one of the right (the rest stays a residual
// predicate). Joins without one (cross joins, pure theta joins) are
// refused.
//
// Plans with windows, Top-N, unions, sorts or limits are refused with
// 0A000 until their operators exist.
package planner
