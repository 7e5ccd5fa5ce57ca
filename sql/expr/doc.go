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
// Operators that evaluate the same expressions on every row of a stream
// prepare them once for that (Nexmark's stateless queries are such
// projections and filters):
//   - Context.Owned gives the operator a Context of its own whose calls
//     take their arguments from a stack it keeps, not from a slice
//     allocated per call.
//   - Specialize replaces a few hot shapes (a NUMERIC constant times an
//     integer column, its comparison with a constant, substring with a
//     constant pattern) with nodes that compute the same values with
//     integer arithmetic or precompiled state (invariant
//     specialize-same-result, specialize.go).
//   - Memoize makes each sub-expression that a set of expressions repeats
//     one node computed at most once per row, still lazily (invariant
//     memo-same-result, memo.go); unlike the other two it gives
//     expressions with per-operator state, for one goroutine.
//   - NewBatch compiles such expressions for evaluation a chunk at a
//     time, one node over a vector of rows (invariant batch-same-result,
//     batch.go): a selection of rows threaded through CASE, AND, OR,
//     COALESCE, IN and strict calls keeps Eval's laziness, kernels
//     (batch_kernels.go) run hot functions on the typed slices, and after
//     any error the caller evaluates the chunk row by row, which decides
//     which error comes first.
//
// Below them, NUMERIC + - * on values whose coefficients fit 64 bits skip
// apd (invariant small-numeric-exact, numfast.go), a VARCHAR or TEXT
// value cast to TEXT keeps its string, a regular expression with a
// required literal is searched for only where that literal occurs
// (compiledRegex in regex.go), and one of the shape of most extraction
// patterns (literals, classes, alternations of literals and a last
// repetition) is matched without Go's matcher (invariant
// simple-regex-same-match, regex_simple.go). Each of these fast paths has a test that
// compares it with the general path over random and edge-case inputs.
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
//
// An overload may check its arguments when the call is planned
// (Func.Check): to_char refuses a constant template with a pattern
// Strata lacks before the statement runs, where every row would fail.
// to_char (tochar.go, tochar_num.go) and format (format.go) are exported
// as ToChar and Format too: the OLAP engine runs them inside DuckDB, so a
// SELECT and `strata verify` compute the text a view computes.
package expr
