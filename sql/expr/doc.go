// Package expr is Strata's scalar expression layer: typed expression trees
// (column references, constants, function and operator calls, AND/OR/NOT
// with SQL's three-valued logic, CASE, COALESCE, IS NULL, IN) bound by the
// binder and evaluated by projection, filter, join and aggregate operators.
//
// # Semantics
//
// Operators and functions follow PostgreSQL, so that a view computes what
// Postgres (and DuckDB, which follows it) would: integer arithmetic that
// overflows is an error (SQLSTATE 22003), integer division truncates toward
// zero, division by zero is an error (22012), NUMERIC arithmetic is exact
// and NUMERIC division picks Postgres's result scale (select_div_scale: at
// least 16 significant digits and no less than either input's scale),
// float arithmetic that overflows to infinity from finite inputs is an
// error, and a strict function (most of them) returns NULL when any
// argument is NULL.
//
// # Evaluation
//
// An Expr evaluates one row at a time with Eval; EvalChunk evaluates a
// whole Chunk into a Vector. The Context carries what a statement fixes for
// its whole run: the session time zone. Expressions are immutable after
// binding and safe to share between goroutines; a Context is not.
//
// # Functions
//
// Functions and operators live in a registry keyed by name (operators by
// their symbol, "+", "=", "||"). Each overload names its parameter types;
// Lookup picks the overload the way Postgres's func_select_candidate does
// in its common cases: an exact match first, then the overload reachable
// with the fewest implicit casts along the numeric ladder (SMALLINT <
// INTEGER < BIGINT < NUMERIC < REAL < DOUBLE PRECISION), an untyped NULL
// literal matching anything.
package expr
