// Package session runs one client's SQL statements: it parses, binds and
// executes them and keeps the session's settings (time zone). It
// implements pgwire.Session, so the wire server needs nothing else.
//
// Today a session runs queries over the relations its Catalog and Scanner
// provide (none by default: SELECT without FROM, VALUES), SET and SHOW of
// the time zone; other statements are refused with 0A000 until the DDL,
// streaming and table-store layers serve them.
package session
