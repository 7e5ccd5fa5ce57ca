// Package binder turns parse trees of queries into logical plans: it
// resolves table and column names against a Catalog, types every
// expression, inserts the implicit casts Postgres would, resolves operator
// and function overloads (expr.Registry.Lookup), folds constant
// expressions, and checks grouping rules. Errors are *sqlerr.Error with
// Postgres's SQLSTATE and the statement position of the offending node.
//
// # Scope of a SELECT
//
// FROM items bind first and make a scope: a list of columns with the
// relation name or alias that qualifies them. Unqualified names must be
// unique in the scope (42702 otherwise); USING and NATURAL joins hide the
// right-hand duplicates of the join columns. WHERE binds over the scope.
// When the query groups (GROUP BY, or an aggregate anywhere in the select
// list, HAVING or ORDER BY), select-list, HAVING and ORDER BY expressions
// are rewritten over the Aggregate's output: a sub-expression equal to a
// GROUP BY expression becomes a reference to that key, an aggregate call a
// reference to its result, and any other column reference is the error
// 42803 "must appear in the GROUP BY clause or be used in an aggregate
// function".
//
// # Table functions in FROM
//
// TUMBLE, HOP, CUMULATE and SESSION bind to a plan.WindowTVF (from.go).
// LOOKUP(t) binds to a Scan of t marked Lookup: t must be a stored table
// with a primary key, and the binder refuses LOOKUP anywhere but the right
// side of an INNER or LEFT JOIN (0A000 at the item) and an ON that does
// not equate every primary-key column with values of the other side
// (0A000 at ON); the planner checks that the other side is append-only
// (planner's doc, "Lookup joins").
//
// # Subqueries
//
// EXISTS, NOT EXISTS, IN and NOT IN subqueries that are conjuncts of WHERE become
// joins with the subquery's distinct correlation keys, and a scalar
// subquery of one aggregate in the select list a left join with the
// subquery grouped by those keys (subquery.go has the rules); other
// subqueries are 0A000.
//
// # Grouping sets
//
// GROUP BY ROLLUP, CUBE and GROUPING SETS bind as the UNION ALL of one
// grouped query per set, the grouping expressions outside the set a NULL
// of their type (groupingsets.go); GROUPING() is 0A000.
//
// # WITH
//
// A non-recursive WITH query is inlined: each reference to it in FROM
// binds its query anew, with the WITH queries defined before it in scope
// (so WITH w AS (SELECT * FROM w) reads the table w), renamed by its
// column list and the reference's alias. For a view this reads the inputs
// once per reference, as two subqueries would. WITH RECURSIVE is 0A000.
//
// # Literals
//
// As in Postgres, an integer literal is INTEGER if it fits, else BIGINT,
// else NUMERIC; a literal with a point or exponent is NUMERIC; a quoted
// string is of unknown type until context gives it one (the other operand
// of an operator, the parameter of a function, the target of a cast), and
// TEXT when nothing does.
//
// # Top-N and deduplication
//
// Window functions exist only in the pattern of Flink and RisingWave: a
// FROM subquery (the only FROM item) with ROW_NUMBER() OVER (PARTITION BY
// ... ORDER BY ...) AS rn in its select list, and an enclosing WHERE that
// bounds rn by integers (rn <= N, rn < N, rn = 1, N >= rn, rn BETWEEN 1
// AND N, ANDed with anything else). It binds to a plan.TopN between the
// subquery's FROM/WHERE/GROUP BY/HAVING and its projection; topn.go tells
// which bounds the TopN absorbs and when the row number is a column.
// ROW_NUMBER() elsewhere and window functions with ORDER BY are 0A000;
// an aggregate over a whole partition, agg(...) OVER (PARTITION BY ...),
// is a join with the query's own aggregation by the partition keys
// (window.go).
// SELECT DISTINCT ON (...) ... ORDER BY ... is a TopN of one row per
// DISTINCT ON group over the projection; its ORDER BY must start with the
// DISTINCT ON expressions (42P10) and must be there (0A000: the row kept
// would not be defined).
//
// # Parameters
//
// A binder given WithParams binds $1, $2, ... to plan.Param expressions
// that read the values of a plan.Params, filled by the caller before each
// execution (the extended query protocol). An untyped parameter is an
// unknown literal whose type the first context that needs one decides
// (Postgres's parse_param.c: variable parameters); those no context types
// are TEXT. A parameter is never folded.
//
// [param-typed-by-context]: a parameter needs at least one occurrence
// where a context could type it. One the statement never uses, or uses
// only as the bare operand of IS [NOT] NULL (which takes any type), has
// no type to describe to the client and is the error 42P18 "could not
// determine data type of parameter $n", as Postgres's exec_parse_message
// refuses it; $1::text IS NULL or s = $1 OR $1 IS NULL give it one. Unlike
// Postgres, the order of the occurrences does not matter: $1 IS NULL OR
// s = $1 is TEXT too. BindInsertSource binds an
// INSERT's query with the target columns' types as the context of its
// untyped values and parameters (Postgres's transformInsertRow).
package binder
