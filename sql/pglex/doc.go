// Package pglex holds the lexical rules of PostgreSQL's SQL text that
// more than one part of Strata's SQL layer needs: how an unquoted
// identifier folds to lower case, how a quoted identifier, a string
// constant ('...', E'...') and a dollar-quoted string ($tag$...$tag$)
// begin and end, and what a string constant's text stands for.
//
// It is a leaf with no state: sql/ddl, which cuts statements with
// Postgres's own scanner (pg_query.Scan), uses it to read the values of
// the tokens that scanner gives, and sql/olap, whose small lexer only
// tells literals and comments from the words it rewrites, uses it to find
// where a literal ends. Both therefore agree, by construction, on where a
// string ends and what it holds.
//
// # Rules (PostgreSQL 15, standard_conforming_strings on)
//
//   - Folding: an unquoted identifier folds ASCII A-Z to a-z and keeps
//     every other byte (downcase_identifier in a UTF-8 database).
//   - Quotes: inside '...' a doubled quote stands for one quote; inside
//     E'...' a backslash escapes the next character as well (\n, octal,
//     \xhh, \uXXXX, \UXXXXXXXX; any other character stands for itself).
//     Inside "..." a doubled double quote stands for one.
//   - Dollar quotes: $tag$ opens a string that the next $tag$ closes; the
//     tag is empty or made of identifier characters, and nothing inside is
//     an escape.
//
// The scanners never read past the text they are given and report an
// unterminated literal rather than guess where it ends: a caller that
// must not fail (a rewriting lexer) takes the end of the text as its end.
package pglex
