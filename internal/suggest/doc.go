// Package suggest finds, for a name that a user mistyped, the known name
// it most likely stands for, and builds the refusal of an unknown option
// that names it.
//
// A name is near a known one when the edit distance between them
// (insertions, deletions, substitutions and swaps of two adjacent
// characters, one character each: Distance) is at most MaxDistance and less than half the length of the name, or when the
// name is the start of exactly one known name (a cut-off option such as
// 'rows' for 'rows-per-second'). Only one candidate is ever suggested:
// when two are equally near, guessing would mislead, and none is.
//
// Every connector and the table store refuse an unknown option through
// UnknownOption, so that all of them word the refusal, and suggest the
// option, in one way. The suggestion travels as a PostgreSQL hint
// (UnknownOptionError.SQLHint, which sql/sqlerr reads), PostgreSQL 16's
// wording for a mistyped foreign-data-wrapper option.
//
// This package is a leaf beside internal/base: it imports nothing of
// Strata's but base.
package suggest
