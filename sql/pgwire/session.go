package pgwire

import (
	"context"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Column describes one result column.
type Column struct {
	Name string
	Type types.Type
}

// Statement is a prepared statement: what Describe reports.
type Statement struct {
	// SQL is the statement's text.
	SQL string
	// Params are the parameter types ($1, $2, ...), possibly types.Unknown
	// where the client did not say and the statement does not tell.
	Params []types.Type
	// Columns are the result columns; nil for a statement without rows.
	Columns []Column
	// Impl is the session's own prepared form.
	Impl any
}

// Result is an executed statement's outcome.
type Result struct {
	Columns []Column
	Rows    []types.Row
	// Tag is the command tag: "SELECT 3", "INSERT 0 1", "CREATE TABLE".
	Tag string
	// Notices are sent to the client as NoticeResponse messages of
	// severity NOTICE before the result's rows, each with its SQLSTATE,
	// message, detail and hint (PostgreSQL's `table "t" does not exist,
	// skipping` of DROP TABLE IF EXISTS has code 00000).
	Notices []*sqlerr.Error
}

// Session executes one connection's statements. Calls come from the
// connection's goroutine only; ctx is cancelled by a CancelRequest or when
// the connection closes.
type Session interface {
	// Prepare parses and binds sql, one statement, with the parameter types
	// the client named (possibly fewer than the statement uses, or
	// types.Unknown ones). An empty statement gives a nil *Statement.
	Prepare(ctx context.Context, sql string, paramTypes []types.Type) (*Statement, error)
	// Execute runs a prepared statement with parameter values of
	// st.Params' types.
	Execute(ctx context.Context, st *Statement, params []types.Datum) (*Result, error)
	// Split divides a simple-query text into its statements.
	Split(sql string) ([]string, error)
	// Location is the session time zone, for TIMESTAMPTZ text output and
	// the TimeZone parameter status.
	Location() *time.Location
	// Close releases the session.
	Close()
}

// ScanNoticer is implemented by a Session whose SQL text draws notices
// as it is scanned, before any statement in it runs or fails, as
// PostgreSQL's scanner warns that a long identifier will be truncated
// (42622). The connection sends them first: for a Query message's whole
// text before its first statement, and for a Parse before its answer.
type ScanNoticer interface {
	ScanNotices(sql string) []*sqlerr.Error
}

// Handler opens a session for a new connection of user to database, or
// refuses it with an error (a *sqlerr.Error, e.g. 3D000 for an unknown
// database).
type Handler interface {
	NewSession(ctx context.Context, user, database string) (Session, error)
}
