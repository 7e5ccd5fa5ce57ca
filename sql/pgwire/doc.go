// Package pgwire is Strata's PostgreSQL wire-protocol server (protocol
// 3.0, as PostgreSQL 15 speaks it), built on github.com/jackc/pgx/v5's
// pgproto3 message codec, so that psql, drivers and BI tools talk to
// Strata as to Postgres.
//
// # Protocol
//
// A connection starts with an optional SSLRequest or GSSENCRequest, each
// answered 'N' (TLS is not offered unless configured), then a
// StartupMessage naming the user and database. Without authentication
// configured any user is accepted; the server then sends the parameter
// statuses clients read (server_version, encodings, DateStyle,
// IntervalStyle, TimeZone, integer_datetimes, standard_conforming_strings),
// BackendKeyData for cancel requests and ReadyForQuery.
//
// The simple query protocol (Query) runs each statement of the text in
// turn; the first error ends the batch. The extended protocol (Parse,
// Bind, Describe, Execute, Close, Sync, Flush) keeps named and unnamed
// prepared statements and portals per connection; after an error the
// server discards messages until Sync, as Postgres does. Results use the
// text format, or the binary format per column when the client asks for it
// in Bind, for every type Strata has (the binary layouts are Postgres's
// send/recv functions). A CancelRequest with the right key cancels the
// running statement's context.
//
// # Sessions
//
// The server knows no SQL: each connection gets a Session from the
// Handler, which prepares and executes statements. Errors a Session
// returns reach the client as ErrorResponse with the SQLSTATE, message,
// detail and position of their *sqlerr.Error (sqlerr.From for others).
package pgwire
