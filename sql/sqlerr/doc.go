// Package sqlerr is the error type of Strata's SQL layer: a message with a
// PostgreSQL SQLSTATE code and, for errors in a statement's text, the
// 1-based character position, which the wire server sends to clients as
// Postgres's ErrorResponse fields C, M and P.
//
// Errors from lower layers carry base markers instead of codes; Code maps
// them (base.ErrOutOfRange to 22003 numeric_value_out_of_range,
// base.ErrInvalidArgument to 22P02 invalid_text_representation, ...), so a
// lower layer never needs to know about SQLSTATE.
package sqlerr
