// Package pgconnect words a failed connection to a PostgreSQL server for
// the connectors that open one (postgres-cdc, the postgres sink).
//
// The driver (pgx) connects with sslmode=prefer by trying each address
// of the host twice, over TLS and then in plain text, and its error lists
// every attempt: a closed port says "connection refused" twice, and a
// server without TLS adds "tls error: server refused TLS connection"
// before the real cause (a database that does not exist, a password that
// is wrong), which reads as if TLS were the problem. Error keeps the
// cause that tells the most, once: the server's own refusal first, then
// a network failure, a TLS failure only when nothing else failed; and
// names the address it could not reach.
package pgconnect
