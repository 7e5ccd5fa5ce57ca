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
// # Literals
//
// As in Postgres, an integer literal is INTEGER if it fits, else BIGINT,
// else NUMERIC; a literal with a point or exponent is NUMERIC; a quoted
// string is of unknown type until context gives it one (the other operand
// of an operator, the parameter of a function, the target of a cast), and
// TEXT when nothing does.
package binder
