package ddl

import (
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/internal/types"
)

// Statement is one statement of a script: one of *CreateTable,
// *CreateSource, *CreateView, *CreateSink, *Drop, *Show, *ShowCreate, *Describe,
// *Explain, *Query, *Insert, *Update, *Delete, *Set and *Other.
type Statement interface {
	// Text returns the statement as written, from its first token to its
	// last, without the separating semicolon and the comments around it.
	Text() string
	// Offset returns the byte offset of Text in the input given to Parse.
	Offset() int
}

// Span locates a statement in the input given to Parse; every statement
// type embeds one.
type Span struct {
	// SQL is the statement's text (see Statement.Text).
	SQL string
	// Start is the byte offset of SQL in the input.
	Start int
}

// Text implements Statement.
func (s Span) Text() string { return s.SQL }

// Offset implements Statement.
func (s Span) Offset() int { return s.Start }

// ColumnDef is one column of CREATE TABLE or CREATE SOURCE.
type ColumnDef struct {
	// Name is the column's name, lower-cased unless it was quoted.
	Name string
	// Type is the column's Strata type (types.ParseType's spellings).
	Type types.Type
	// NotNull is true for NOT NULL columns and primary-key columns.
	NotNull bool
	// Generated is catalog.GeneratedProcTime for a processing-time column
	// (`GENERATED ALWAYS AS (proctime()) STORED`), empty otherwise.
	Generated string
	// Pos is the 1-based character position of the column's name in the
	// input.
	Pos int
}

// Watermark is the event-time watermark of a table or source:
// `WATERMARK FOR col AS col - INTERVAL '5' SECOND` declares that rows more
// than Delay older than the largest col seen so far are late (Flink's
// bounded out-of-orderness strategy).
type Watermark struct {
	// Column is the TIMESTAMP or TIMESTAMPTZ column the watermark follows.
	Column string
	// Delay is how far the watermark trails the largest value seen: the
	// interval subtracted in the clause, 0 for `WATERMARK FOR col AS col`.
	// Never negative; months and years are refused (no fixed length).
	Delay time.Duration
	// Pos is the 1-based character position of the WATERMARK keyword.
	Pos int
}

// CreateTable is `CREATE TABLE`: a stored table with its columns, or, with
// Query set, a table created and filled once from a query (CREATE TABLE t
// AS SELECT ...).
type CreateTable struct {
	Span
	// Name is the table's name as written: "t" or "db.t".
	Name        string
	IfNotExists bool
	// Columns is empty for CREATE TABLE ... AS.
	Columns []ColumnDef
	// PrimaryKey lists the key's column names in key order; its columns
	// are NotNull in Columns.
	PrimaryKey []string
	// Watermark is nil unless the column list declares one.
	Watermark *Watermark
	// With holds the WITH (...) options, keys lower-cased; nil without
	// a WITH clause.
	With map[string]string
	// FromSource and FromTable are set by `FROM src TABLE 'schema.table'`:
	// the table is fed by that upstream table of the (CDC) source src.
	FromSource string
	FromTable  string
	// Query is the SelectStmt of CREATE TABLE ... AS; nil otherwise.
	Query *pg_query.Node
	// QueryText is the query's text as written.
	QueryText string
}

// CreateSource is `CREATE SOURCE`: an external stream that is not stored.
// With names the connector (required) and configures it.
type CreateSource struct {
	Span
	Name        string
	IfNotExists bool
	// Columns may be empty: the connector then gives the schema.
	Columns []ColumnDef
	// PrimaryKey is the key the source's changes are keyed by, when the
	// column list declares one (an upsert or CDC stream).
	PrimaryKey []string
	Watermark  *Watermark
	// With always holds "connector".
	With map[string]string
}

// CreateView is `CREATE MATERIALIZED VIEW v [WITH (...)] AS query`.
type CreateView struct {
	Span
	Name        string
	IfNotExists bool
	// Query is the defining SelectStmt; its locations are offsets in the
	// whole input.
	Query     *pg_query.Node
	QueryText string
	With      map[string]string
}

// CreateSink is `CREATE SINK`, in one of two forms:
//
//	CREATE SINK k INTO t [WITH (...)] AS query   -- a job writing a Strata table
//	CREATE SINK k FROM v WITH (connector = ...)  -- a job writing an external system
//
// Exactly one of Into and From is set; Query is set with Into only.
type CreateSink struct {
	Span
	Name        string
	IfNotExists bool
	Into        string
	From        string
	Query       *pg_query.Node
	QueryText   string
	With        map[string]string
}

// ObjectKind names what DROP drops.
type ObjectKind string

// Object kinds of DROP.
const (
	Table  ObjectKind = "TABLE"
	View   ObjectKind = "MATERIALIZED VIEW"
	Source ObjectKind = "SOURCE"
	Sink   ObjectKind = "SINK"
	// PlainView is DROP VIEW: Strata has no plain views, and, as in
	// Postgres, DROP VIEW does not drop a materialized view.
	PlainView ObjectKind = "VIEW"
)

// Drop is `DROP TABLE | MATERIALIZED VIEW | SOURCE | SINK [IF EXISTS]
// name [, ...] [CASCADE | RESTRICT]`.
type Drop struct {
	Span
	Kind     ObjectKind
	Names    []string
	IfExists bool
	Cascade  bool
}

// What SHOW lists, besides configuration variables.
const (
	ShowTables            = "TABLES"
	ShowSources           = "SOURCES"
	ShowMaterializedViews = "MATERIALIZED VIEWS"
	ShowSinks             = "SINKS"
	ShowJobs              = "JOBS"
)

// Show is `SHOW TABLES` (and the other lists above) or `SHOW variable`.
type Show struct {
	Span
	// What is one of the Show* constants, or a variable's lower-case
	// name as Postgres gives it ("timezone" for SHOW TIME ZONE, "all").
	What string
}

// ShowCreate is `SHOW CREATE TABLE | MATERIALIZED VIEW | VIEW | SOURCE |
// SINK name` (RisingWave's statement): the CREATE statement that makes
// the object, rebuilt from the catalog.
type ShowCreate struct {
	Span
	Kind ObjectKind
	// Name is the object's name as written: "t" or "db.t".
	Name string
}

// Describe is `DESCRIBE name` or `DESC name`.
type Describe struct {
	Span
	Name string
}

// Explain is `EXPLAIN [ANALYZE] statement`.
type Explain struct {
	Span
	// Statement is the explained statement: a *Query, *Insert, *Update,
	// *Delete, *CreateTable, *CreateView or *CreateSink.
	Statement Statement
	Analyze   bool
}

// Query is a SELECT (also VALUES, TABLE t, WITH ... SELECT).
type Query struct {
	Span
	// Node is the SelectStmt.
	Node *pg_query.Node
	// QueryText is the query's text without a trailing AS OF EPOCH.
	QueryText string
	// AtEpoch is the epoch of `... AS OF EPOCH n` (time travel); nil reads
	// at the consistent version.
	AtEpoch *uint64
}

// Insert is INSERT INTO t [(cols)] VALUES ... | SELECT ... | DEFAULT VALUES.
type Insert struct {
	Span
	// Node is the InsertStmt (ON CONFLICT, RETURNING and WITH stay in it).
	Node *pg_query.Node
	// Table is the target's name as written, e.g. "db.t".
	Table string
	// Columns is the explicit column list; nil when there is none.
	Columns []string
	// Rows is the SelectStmt giving the rows (a VALUES list or a query);
	// nil for DEFAULT VALUES.
	Rows *pg_query.Node
}

// Update is an UPDATE statement.
type Update struct {
	Span
	Node  *pg_query.Node // the UpdateStmt
	Table string
}

// Delete is a DELETE statement.
type Delete struct {
	Span
	Node  *pg_query.Node // the DeleteStmt
	Table string
}

// Set is `SET [LOCAL | SESSION] name { = | TO } value`, `SET TIME ZONE
// value`, `SET name TO DEFAULT` or `RESET name`.
type Set struct {
	Span
	// Name is the variable's lower-case name ("timezone" for SET TIME
	// ZONE, "all" for RESET ALL).
	Name string
	// Value is the value as text; a list is joined with ", ". Empty when
	// Default is set.
	Value string
	Local bool
	// Default is true for SET name TO DEFAULT, SET TIME ZONE LOCAL and
	// RESET: the variable goes back to its default.
	Default bool
}

// Other is any other statement Postgres parses (BEGIN, COMMIT, CREATE
// INDEX, ...), passed through for the caller to run or refuse.
type Other struct {
	Span
	Node *pg_query.Node
}
