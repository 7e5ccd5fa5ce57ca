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
// # Column pruning
//
// Before building, the plan is rewritten so that every operator that
// keeps rows in state (joins of every kind, Top-N, SESSION windows, the
// Normalize of an upsert scan) and every exchange receives only the
// columns something above it reads (Flink's and RisingWave's projection
// pushdown): a Project of the used columns below each join side, Top-N,
// UNION ALL branch and SESSION window, computed by the join's or Top-N's
// key Map rather than a vertex of its own; an upsert relation's scan is
// cut to the used columns and its key before its Normalize. The job's
// output columns, keys, event-time columns and changelog modes do not
// change. prune.go says where it applies and where it does not, and why.
//
// # Changelog modes
//
// Every step has a changelog mode, as Flink's planner infers them:
// append-only (+I only: a source or an append table), upsert (by a key:
// +I/+U replace the key's row, -D deletes the key), or retract (-U/+U
// pairs and -D carrying the exact rows). A scan of a relation with a
// primary key is retract (its changelog carries updates), or upsert when
// the relation says so (plan.Relation.Upsert); Filter and Project keep
// their input's mode; an Aggregate or a Join produces retract output
// whatever its input, except an inner interval join and a lookup join,
// which are append-only (below). Explain shows each vertex with its
// mode.
//
// An upsert scan is followed at once by a Normalize vertex, behind a hash
// exchange on the primary key, that keeps each key's last row and turns
// the changelog into a retract one (Flink's ChangelogNormalize): every
// operator after it retracts exactly the rows it added, so a left join
// whose right row is upserted without -U and then deleted by key comes
// back NULL-padded.
//
// A Join becomes a Map per side that appends the join keys as columns, a
// hash exchange of both sides on those columns, and a Join vertex. Every
// conjunct of ON that equates an expression of the left side with one of
// the right (=, or IS NOT DISTINCT FROM, where NULL matches NULL) is a
// key; the rest stays a residual predicate. Sides of the same kind whose
// modifiers differ (NUMERIC(6,2) = NUMERIC(8,2), VARCHAR(4) = VARCHAR(8),
// CHAR(2) = CHAR(3)) are keyed by their common type without modifiers,
// since key bytes do not depend on modifiers. A join without any key (a
// cross join, a theta join such as ON l.k < r.k, a disjunction, an ON
// folded to a constant) is a nested-loop join: both sides keyed by one
// constant into a Join of parallelism 1 whose state holds both sides, the
// whole ON its residual (each change is tested against every row of the
// other side).
//
// # Interval joins
//
// A join (inner, left, right or full) of two append-only inputs, each
// carrying the event time of a relation with a watermark (through Filters
// and Projects that pass the column on, from a source of one subtask),
// whose ON bounds the right time minus the left time from below and from
// above is an interval join (Flink's), as in
//
//	a JOIN b ON a.k = b.k AND b.ts BETWEEN a.ts - INTERVAL '10' SECOND
//	                                   AND a.ts + INTERVAL '5' SECOND
//
// or with >=, >, <=, < and either time on either side (col, col + iv,
// col - iv with a constant interval without months). It is the same Join
// vertex with stream.JoinInterval set: rows leave its state once the
// other side's watermark shows they can match nothing more, so its state
// stays bounded; the inner interval join's output is append-only.
// Matching is still the whole ON. A day added to a TIMESTAMPTZ is a
// calendar day of the session time zone, so the bounds that keep state
// count it as 23 to 25 hours. A join that misses a bound, a watermark, or
// has an input with updates stays a regular join, whose state is never
// dropped.
//
// # Windowed aggregates
//
// A GROUP BY over insert-only rows that reach it from one LateFilter
// subtask over Filters, Projects and TUMBLE, HOP or CUMULATE windows
// (forward steps), one of whose keys is a window bound of the event
// time (date_bin with constant stride and origin, date_trunc of a
// TIMESTAMP, window_start or window_end), gets a stream.GroupExpiry
// (expiry.go): each such column's relation to the event time is tracked
// as bounds [lo, hi] (v + lo <= t <= v + hi), and the GroupAgg frees a
// group once its window value plus hi - lo + delay + 1 is at most the
// largest window value it has seen. EXPLAIN shows the rule on the
// aggregate. Any other shape keeps every group.
//
// # Lookup joins
//
// A stream enriched with a stored table's row by key, read at the epoch
// being processed without keeping the table in the job's state (Flink's
// lookup join, JOIN t FOR SYSTEM_TIME AS OF o.proctime; RisingWave's
// temporal join), is written with the table function LOOKUP:
//
//	SELECT o.id, c.name FROM orders o
//	  [LEFT] JOIN LOOKUP(customers) AS c ON c.id = o.customer_id
//
// PostgreSQL's grammar has no FOR SYSTEM_TIME AS OF (pg_query refuses
// it), so the choice is spelled in FROM, where PostgreSQL parses a
// function call, like the window TVFs. Two others were weighed and
// dropped: a rule (an append-only input joined with a table on the
// table's whole primary key is a lookup join) would silently change what
// existing regular joins mean, since a lookup join never revisits a row
// when the table changes later; a table option (WITH (lookup = true))
// would decide for every query over the table rather than in the one
// that wants it. LOOKUP is explicit, local to the query, and a one-shot
// SELECT can read LOOKUP(t) as t (plan.Scan.Lookup).
//
// Rules: LOOKUP(t) is the right side of an INNER or LEFT JOIN, t has a
// primary key, ON equates every primary-key column of t with an
// expression of the other side's columns or a constant (of the column's
// type; the rest of ON is a residual over the joined row), and the other
// side is append-only (a retraction would need the table as it was when
// its row was joined). Anything else is refused with 0A000, by the binder
// with a position where it can tell (placement, the key). The job reads
// t through the Endpoints' LookupEndpoints (the engine's over
// table.Table: scan.AtEpoch then scan.Lookup); the plan is the left side,
// then a LookupJoin vertex with its parallelism over a forward edge,
// append-only. A row of epoch E meets t as it is at epoch E, waiting for
// t to commit E, so the view's epoch E depends only on its inputs up to E
// (DESIGN.md invariant 1), and a replay reads the same version.
//
// # Windows, Top-N, unions and late data
//
// A window TVF of kind TUMBLE, HOP or CUMULATE becomes a WindowExpand
// vertex after its input (forward, the input's parallelism and mode) that
// emits each row once per window it belongs to, so that
// SELECT window_start, window_end, auction, count(*) FROM TUMBLE(bid,
// date_time, INTERVAL '10' SECOND) GROUP BY 1, 2, 3 plans as expand, then
// the aggregate's exchange and GroupAgg; the expansion computes the
// aggregate's keys and arguments itself (the pre-aggregation Map fused
// into it, stream.WindowExpand.Exprs), so that it copies only those
// columns once per window instead of every input column. A HOP or CUMULATE whose
// size is not a multiple of its slide is refused (22023), as Flink
// refuses it. Over a TIMESTAMPTZ, a window whose intervals have days
// counts them as calendar days of the session time zone (Options.Eval's
// Loc), as Postgres adds days to a timestamptz: a day window runs from
// local midnight to local midnight, 23 or 25 hours on the day of a
// daylight-saving change; windows without days are aligned in UTC.
// SESSION becomes a SessionWindow behind a gather to one
// subtask: the plan's SESSION has no PARTITION BY, so its whole input is
// one partition.
//
// A TopN node (PARTITION BY ... ORDER BY ... with ROW_NUMBER() <= N, with
// or without the row number) becomes a Map appending the partition and
// order keys, a hash exchange on the partition keys and a TopN vertex; a
// Limit over a Sort (ORDER BY ... LIMIT n OFFSET m) is a Top-N of one
// partition with parallelism 1. A Sort without Limit and a Limit without
// Sort are refused (0A000): a view's rows have no order. Both produce
// retract output.
//
// UNION ALL is one Consolidate vertex (its output is the epoch's net
// changes) with an input per branch, forward when every
// branch has the same parallelism, else hashed on all columns to the
// job's parallelism (every copy of a row takes one channel, so its +I and
// -D keep their order); it is retract when a branch is. VALUES is a
// bounded ValuesSource of parallelism 1; its rows belong to the first
// epoch the job's other sources close. A plan without any Scan closes no
// epoch and is refused.
//
// # Multiset views
//
// A view must be stored so that its retractions apply. A view whose rows
// have a unique key the engine can infer is a primary-key table by that
// key; one whose changes are insert-only is an append table. A view with
// neither, such as an append-only stream without a key joined with a
// keyed or updating side (Nexmark's q7 and q20: bid joined with the
// window's maximum, with auction; a regular join with a keyed side-input
// table, where q13 now uses LOOKUP), produces a retract changelog
// whose equal rows cannot be told apart: it is stored as a multiset.
// Multiset(p, c) groups p by all of its columns and counts them, so the
// job emits, per distinct row, its multiplicity in column c (+I of a new
// row with count 1, -U/+U when the count moves, -D when it falls to
// zero), which the engine stores as a primary-key table keyed by all of
// p's columns, the count a hidden last column. A read expands each row by
// its count: a Scan of a relation marked plan.Relation.Multiset reads the
// stored rows with their counts and a Repeat vertex after the source
// (forward, the source's parallelism) emits each row as many times as its
// count says, without it; the scan is retract and has no key, so what is
// built over it follows the rules above (a keyed aggregate over it is a
// keyed view, a projection of it a multiset view again).
//
// This is Flink's SinkUpsertMaterializer turned into a count: the job
// keeps one state entry per distinct row (the GroupAgg's), and the table
// write is an idempotent upsert of the absolute count, so a replay after
// restore writes the same rows again (exactly-once comes from the
// aggregate's checkpointed state like any keyed view's). Two designs were
// weighed and dropped. RisingWave gives every row of an append-only
// table a hidden _row_id and derives the join output's stream key from
// both sides' keys; that needs a row id that is unique and deterministic
// across recovery in every source and a hidden column threaded through
// every operator and the binder's column positions (joins concatenate
// both sides, so a hidden column in the middle shifts the right side),
// and it stores one row per copy. Paimon's aggregation merge engine with
// sum over a count column would need no job state (the sink writes +1 and
// -1), but the merge never deletes a key whose sum returns to zero: such
// rows would stay in the table and its changelog forever, and a replayed
// delta is not idempotent.
//
// A Scan of a relation with a Watermark gets a LateFilter right after its
// source (forward, the source's parallelism): it drops rows whose event
// time is below the largest seen minus the delay and counts them in
// Job.Late[relation]. Only append-only relations may have a watermark:
// telling a late retraction apart would need every dropped row kept.
package planner
