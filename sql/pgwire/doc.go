// Package pgwire is Strata's PostgreSQL wire-protocol server (protocol
// 3.0, as PostgreSQL 15 speaks it), built on github.com/jackc/pgx/v5's
// pgproto3 message codec, so that psql, drivers and BI tools talk to
// Strata as to Postgres.
//
// # Protocol
//
// A connection starts with an optional SSLRequest or GSSENCRequest, then a
// StartupMessage naming the user and database. GSSENCRequest is answered
// 'N'; SSLRequest is answered 'S' and followed by the TLS handshake when
// Options.TLS is set, else 'N'. With Options.RequireTLS a StartupMessage in
// plaintext gets FATAL 28000. Startup packets are read with exact reads, so
// no byte after an SSLRequest is taken for the TLS handshake's.
//
// Without Options.Auth any user is accepted (AuthenticationOk). With it,
// the user proves its password with SCRAM-SHA-256 (RFC 5802, RFC 7677) as
// Postgres 10 and later do: AuthenticationSASL offering SCRAM-SHA-256 (not
// the channel-binding SCRAM-SHA-256-PLUS), SASLInitialResponse with the
// client-first-message, AuthenticationSASLContinue with the server-first,
// SASLResponse with the client's proof, AuthenticationSASLFinal with the
// server's signature. The server keeps only SCRAMSecret values (salt,
// iterations, StoredKey, ServerKey), derived from passwords by
// PasswordAuth or read in Postgres's rolpassword form by ParseSCRAMSecret
// and ReadPasswordFile. A wrong password and an unknown user both get FATAL
// 28P01 "password authentication failed for user", after a full exchange
// (an unknown user is run against an invented, stable secret), so the two
// cannot be told apart. The exchange itself is a pure state machine
// (scramExchange) driven by conn.authenticate. StartupTimeout bounds TLS
// negotiation, startup and authentication together.
//
// After authentication the server sends the parameter statuses clients read (server_version, encodings, DateStyle,
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
// # Robustness
//
// Invariant (one connection, one failure): nothing a client sends or fails
// to send ends more than its own connection. A frontend message whose body
// is over Options.MaxMessageSize (64 MiB by default) gets FATAL 54000
// before its body is read; an unknown message type, a length below 4, a
// startup packet of a bad length or version, or a body that does not
// decode gets FATAL 08P01; either way the connection is closed. A client
// that goes away (end of stream, reset, a truncated message) is closed
// without a reply. A panic in a Session is logged and ends its connection.
//
// Invariant (a client that leaves stops its work): after startup a pump
// goroutine reads the connection and hands the bytes to the protocol
// through a synchronous pipe (bounded, no queue). Because it is always
// blocked in a read, it notices a client that disconnects while a
// statement runs and cancels the connection's context, from which every
// statement's context derives; the statement stops, the session is closed
// and both goroutines of the connection end. Server.Conns counts open
// connections; Server.Close closes them all, cancels running statements and
// waits for every goroutine.
//
// # Sessions
//
// The server knows no SQL: each connection gets a Session from the
// Handler, which prepares and executes statements. Errors a Session
// returns reach the client as ErrorResponse with the SQLSTATE, message,
// detail, hint and position of their *sqlerr.Error (sqlerr.From for
// others). A Result's Notices reach it as NoticeResponse messages of
// severity NOTICE, before the result's rows and command tag (in the
// extended protocol once, at the portal's first Execute).
package pgwire
