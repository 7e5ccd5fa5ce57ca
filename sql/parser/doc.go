// Package parser adapts the real PostgreSQL parser (libpg_query through
// github.com/pganalyze/pg_query_go/v6, PostgreSQL 17's grammar) to Strata:
// it splits input into statements, returns their parse trees, and turns
// syntax errors into *sqlerr.Error with SQLSTATE 42601 and the 1-based
// character position Postgres reports.
//
// Positions: the parse tree's Location fields are 0-based byte offsets
// into the whole input (-1 when unknown); Position converts one to the
// 1-based character position that Postgres clients expect in an error's P
// field.
//
// This package links libpg_query's C code (cgo, about 40 s to build cold):
// it is kept apart so that packages that do not parse SQL build and test
// without it.
package parser
