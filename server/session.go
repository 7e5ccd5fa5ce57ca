package server

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/ddl"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/olap"
	"github.com/stratadb/strata/sql/pgwire"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Handler opens a Session per connection for any user name and the
// default database (engine.DefaultDatabase); other databases are refused
// with 3D000.
type Handler struct {
	Engine *engine.Engine
}

// NewSession implements pgwire.Handler.
func (h Handler) NewSession(ctx context.Context, user, database string) (pgwire.Session, error) {
	if database == "" {
		database = engine.DefaultDatabase
	}
	cat, err := h.Engine.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := cat.Database(database); err != nil {
		return nil, sqlerr.New(sqlerr.InvalidCatalogName, "database %q does not exist", database)
	}
	sess := NewSession(h.Engine, database)
	sess.user = user
	return sess, nil
}

// Session is one client's SQL session over an engine.
type Session struct {
	e         *engine.Engine
	db        string
	loc       *time.Location
	mode      version.Mode
	lastEpoch base.Epoch
	// lastWrite is the epoch of this session's last INSERT, UPDATE or
	// DELETE: a strong read waits until what it reads has committed it.
	lastWrite base.Epoch
	// timeout is statement_timeout; 0 is none.
	timeout time.Duration
	// user is the user name the client connected as.
	user string
	// inBlock is set between BEGIN and COMMIT or ROLLBACK; blockWrites
	// counts the statements of the block that changed something.
	inBlock     bool
	blockWrites int
	// blockReadOnly is set for a block begun READ ONLY (or after SET
	// TRANSACTION READ ONLY in it); defaultReadOnly is
	// default_transaction_read_only, the mode of blocks begun without
	// one and of statements outside a block.
	blockReadOnly   bool
	defaultReadOnly bool
	// stmtCtx and stmtDeadline are the context of the last Prepare under
	// statement_timeout and its deadline: an Execute with the same context
	// belongs to the same statement and shares the deadline.
	stmtCtx      context.Context
	stmtDeadline time.Time
	// settings are the values SET gave the parameters Strata accepts and
	// ignores (application_name, DateStyle, ...), by lower-case name, for
	// SHOW.
	settings map[string]string
}

// fixedSettings are the values SHOW gives for PostgreSQL's parameters
// that drivers and tools read and Strata does not change: PostgreSQL's
// defaults for a UTF8 database, and server_version_num for
// pgwire.ServerVersion. Every statement is its own transaction whose
// reads see committed epochs, so the isolation shown is read committed,
// as RisingWave shows it.
var fixedSettings = map[string]string{
	"server_version_num":            "150000",
	"server_encoding":               "UTF8",
	"client_encoding":               "UTF8",
	"standard_conforming_strings":   "on",
	"integer_datetimes":             "on",
	"datestyle":                     "ISO, MDY",
	"intervalstyle":                 "postgres",
	"search_path":                   `"$user", public`,
	"transaction_isolation":         "read committed",
	"default_transaction_isolation": "read committed",
	"application_name":              "",
	"extra_float_digits":            "1",
	"client_min_messages":           "notice",
	"max_identifier_length":         "63",
	"is_superuser":                  "on",
	"lc_messages":                   "C",
	"lc_collate":                    "C",
	"lc_ctype":                      "C",
	"bytea_output":                  "hex",
}

// settingNames are PostgreSQL's spellings of parameter names that are not
// all lower case, which SHOW uses as its column name.
var settingNames = map[string]string{"timezone": "TimeZone", "datestyle": "DateStyle", "intervalstyle": "IntervalStyle"}

// settingName is the column name SHOW gives parameter name (lower case).
func settingName(name string) string {
	if n, ok := settingNames[name]; ok {
		return n
	}
	return name
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// notCreated is the error of a CREATE whose job failed before its first
// epoch and whose object was dropped again: its hint no longer tells to
// drop the object, but that nothing was created.
func notCreated(err error, kind, name string) error {
	se := sqlerr.From(err)
	if se == nil || se.Hint == "" {
		return err
	}
	c := *se
	c.Hint = fmt.Sprintf("The %s %s was not created: reading its inputs or running its query fails on these rows. If they come from a connector (a file, a topic), fix the input or set the connector option errors = 'skip' or 'dead-letter' on its table or source; otherwise change the query so that it handles them. Then create it again.", kind, name)
	return &c
}

// readOnlySQLTransaction is SQLSTATE 25006, read_only_sql_transaction: a
// change in a READ ONLY transaction.
const readOnlySQLTransaction = "25006"

// NewSession returns a session on database db of e.
func NewSession(e *engine.Engine, db string) *Session {
	return &Session{e: e, db: db, loc: time.UTC, mode: version.Strong}
}

// Location implements pgwire.Session.
func (s *Session) Location() *time.Location { return s.loc }

// Close implements pgwire.Session.
func (s *Session) Close() {}

// ScanNotices implements pgwire.ScanNoticer: PostgreSQL's notice of
// each identifier of text that is cut to 63 bytes.
func (s *Session) ScanNotices(text string) []*sqlerr.Error { return ddl.TruncationNotices(text) }

// Split implements pgwire.Session.
func (s *Session) Split(text string) ([]string, error) {
	stmts, err := ddl.Parse(text)
	if err != nil {
		return nil, userError(err)
	}
	out := make([]string, len(stmts))
	for i, st := range stmts {
		out[i] = st.Text()
	}
	return out, nil
}

func (s *Session) evalContext() *expr.Context {
	return &expr.Context{Loc: s.loc, Now: time.Now(), Database: s.db, User: s.user, Setting: s.setting}
}

// Prepare implements pgwire.Session: it parses one statement and, for a
// query, binds it to learn its columns.
func (s *Session) Prepare(ctx context.Context, text string, paramTypes []types.Type) (*pgwire.Statement, error) {
	if s.timeout > 0 {
		// Preparing a SELECT loads the tables it reads: that counts
		// against statement_timeout, as PostgreSQL counts parsing and
		// planning.
		deadline := time.Now().Add(s.timeout)
		s.stmtCtx, s.stmtDeadline = ctx, deadline
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	st, err := s.prepare(ctx, text, paramTypes)
	if err != nil && s.timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return nil, sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to statement timeout")
	}
	if err != nil && errors.Is(err, context.Canceled) {
		return nil, sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
	}
	return st, userError(err)
}

// dmlResult ends an INSERT, UPDATE or DELETE that wrote n rows at epoch
// ep (zero when it wrote nothing): the session's next reads wait for ep
// (lastWrite), also when the statement failed after writing, and the
// answer's tag is tag followed by n.
func (s *Session) dmlResult(tag string, n int, ep base.Epoch, err error) (*pgwire.Result, error) {
	s.lastWrite = max(s.lastWrite, ep)
	if err != nil {
		return nil, err
	}
	return &pgwire.Result{Tag: tag + strconv.Itoa(n)}, nil
}

func (s *Session) prepare(ctx context.Context, text string, paramTypes []types.Type) (*pgwire.Statement, error) {
	stmts, err := ddl.Parse(text)
	if err != nil {
		return nil, err
	}
	switch len(stmts) {
	case 0:
		return nil, nil
	case 1:
	default:
		return nil, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	if q, ok := stmts[0].(*ddl.Query); ok {
		if pst, handled, err := s.prepareSleep(ctx, q, paramTypes); handled || err != nil {
			return pst, err
		}
		if pst, handled, err := s.prepareOLAP(ctx, text, q, paramTypes); handled || err != nil {
			return pst, namePosition(err, text)
		}
	}
	st := &pgwire.Statement{SQL: text, Impl: stmts[0]}
	args := &engine.Args{Types: paramTypes, DryRun: true}
	cols, err := s.describe(ctx, stmts[0], args)
	if err != nil {
		if q, ok := stmts[0].(*ddl.Query); ok {
			if pst, handled := s.prepareSystem(ctx, text, q, err); handled {
				return pst, nil
			}
		}
		return nil, err
	}
	st.Columns = cols
	st.Params = args.Inferred
	if st.Params == nil {
		st.Params = paramTypes
	}
	st.Params = bareParams(st.Params, paramTypes)
	return st, nil
}

// bareParams drops the modifiers of inferred parameter types, as
// Postgres describes parameters (numeric, not numeric(12,2)): a value
// bound to $1 is compared or assigned at its own precision, and only an
// assignment rounds it. Types the client gave stay as given.
func bareParams(inferred, given []types.Type) []types.Type {
	out := slices.Clone(inferred)
	for i, t := range out {
		if i < len(given) && given[i].Kind != types.KindUnknown {
			continue
		}
		switch t.Kind {
		case types.KindChar:
			out[i] = types.Text
		default:
			out[i] = types.Type{Kind: t.Kind}
		}
	}
	return out
}

// olapStatement is a SELECT the embedded OLAP engine runs, or (catalog
// set) a query on pg_catalog answered over the emulated catalog.
type olapStatement struct {
	q       *ddl.Query
	plan    *engine.OLAPQuery
	catalog bool
	// text is the SQL the OLAP engine runs: the query's text, with its
	// parameters cast to their types when DuckDB could not type them
	// (olap.CastParams).
	text string
	// system is set for a query over system tables that Strata's
	// executor refuses and systemOLAP answers (prepareSystem).
	system bool
}

// prepareOLAP prepares a query for the OLAP engine when it reads tables
// (or pg_catalog); handled is false for queries the batch executor runs
// (no tables, or system tables).
func (s *Session) prepareOLAP(ctx context.Context, text string, q *ddl.Query, paramTypes []types.Type) (*pgwire.Statement, bool, error) {
	if olap.IsCatalogQuery(q.QueryText) {
		ctx, err := s.catalogContext(ctx)
		if err != nil {
			return nil, true, err
		}
		res, err := s.e.CatalogQuery(ctx, s.db, q.QueryText)
		if err != nil {
			return nil, true, err
		}
		return &pgwire.Statement{SQL: text, Columns: olapColumns(res.Columns), Impl: &olapStatement{q: q, catalog: true}}, true, nil
	}
	plan, ok, err := s.e.PlanOLAP(ctx, s.db, q.QueryText)
	if err != nil || !ok {
		return nil, false, err
	}
	if err := s.checkSourceTables(ctx, plan.Tables); err != nil {
		return nil, true, err
	}
	args := &engine.Args{Types: paramTypes, DryRun: true}
	_, bindErr := s.describe(ctx, q, args)
	if textNumberOperator(bindErr) {
		// DuckDB casts the text operand to the number's type (and
		// fails on the first value that is not one) or refuses it in
		// its own words; Postgres has no such operator (text = integer
		// is 42883), and nor has Strata's binder, which views use.
		return nil, true, bindErr
	}
	cols, params, err := s.e.DescribeOLAP(ctx, plan, q.QueryText)
	if engine.BeyondOLAP(err) {
		return nil, false, nil // the batch executor answers it
	}
	if err != nil {
		return nil, true, err
	}
	// Parameters DuckDB leaves untyped take the type Strata's binder
	// infers with Postgres's rules (a NUMERIC column compared with $1
	// makes $1 NUMERIC, $1 + 1 compared with an INTEGER column makes it
	// INTEGER), else text.
	var inferred []types.Type
	untyped := slices.ContainsFunc(params, func(t types.Type) bool { return t.Kind == types.KindUnknown })
	if untyped {
		switch {
		case bindErr == nil:
			inferred = args.Inferred
		case sqlerr.Code(bindErr) == sqlerr.IndeterminateDatatype:
			// A parameter no context types ($1 IS NULL alone):
			// neither DuckDB nor the binder has a type to
			// describe, and Postgres refuses it the same way.
			return nil, true, bindErr
		}
	}
	inferred = bareParams(inferred, paramTypes)
	for i := range params {
		if i < len(paramTypes) && paramTypes[i].Kind != types.KindUnknown {
			params[i] = paramTypes[i]
		}
		if params[i].Kind == types.KindUnknown && i < len(inferred) {
			params[i] = inferred[i]
		}
		if params[i].Kind == types.KindUnknown {
			params[i] = types.Text
		}
	}
	params = bareParams(params, paramTypes)
	run := q.QueryText
	if untyped || slices.ContainsFunc(cols, func(c olap.Column) bool { return c.Type.Kind == types.KindUnknown }) {
		// DuckDB could not type every parameter on its own: it then
		// describes one column named "unknown" in place of the
		// statement's columns ($1 + 1, $1 IS NULL). Describe and run
		// the statement with its parameters cast to the types just
		// chosen, so that every column is described and the rows
		// have them.
		typed := olap.CastParams(q.QueryText, params)
		tcols, _, err := s.e.DescribeOLAP(ctx, plan, typed)
		if err != nil && !engine.BeyondOLAP(err) {
			return nil, true, err
		}
		if err == nil {
			if len(tcols) == len(cols) {
				// The same columns: keep the names DuckDB gave
				// the text as written (a cast would name $1
				// "varchar", PostgreSQL names it ?column?).
				for i := range tcols {
					tcols[i].Name = cols[i].Name
				}
			}
			cols, run = tcols, typed
		}
	}
	return &pgwire.Statement{SQL: text, Columns: olapColumns(cols), Params: params, Impl: &olapStatement{q: q, plan: plan, text: run}}, true, nil
}

// textNumberOperator reports whether err is the binder's 42883 for an
// operator between a character type and a number (text = integer), which
// DuckDB would run by casting the text to the number's type.
func textNumberOperator(err error) bool {
	var no *expr.NoOperatorError
	if !errors.As(err, &no) || len(no.Args) != 2 {
		return false
	}
	text := func(k types.Kind) bool {
		return k == types.KindText || k == types.KindVarchar || k == types.KindChar
	}
	number := func(k types.Kind) bool {
		switch k {
		case types.KindInt16, types.KindInt32, types.KindInt64, types.KindFloat32, types.KindFloat64, types.KindNumeric:
			return true
		}
		return false
	}
	l, r := no.Args[0].Kind, no.Args[1].Kind
	return text(l) && number(r) || number(l) && text(r)
}

func olapColumns(cols []olap.Column) []pgwire.Column {
	out := make([]pgwire.Column, len(cols))
	for i, c := range cols {
		out[i] = pgwire.Column{Name: c.Name, Type: c.Type}
	}
	return out
}

// runOLAP executes a prepared OLAP statement.
func (s *Session) runOLAP(ctx context.Context, st *olapStatement, params []types.Datum) (*pgwire.Result, error) {
	if st.system {
		return s.runSystem(ctx, st, params)
	}
	if st.catalog {
		ctx, err := s.catalogContext(ctx)
		if err != nil {
			return nil, err
		}
		res, err := s.e.CatalogQuery(ctx, s.db, st.q.QueryText)
		if err != nil {
			return nil, err
		}
		return &pgwire.Result{Columns: olapColumns(res.Columns), Rows: res.Rows, Tag: pgwire.SelectTag(len(res.Rows))}, nil
	}
	spec := engine.ReadSpec{Mode: s.mode}
	if s.mode == version.Strong {
		spec.After = s.lastWrite
	}
	if st.q.AtEpoch != nil {
		ep := base.Epoch(*st.q.AtEpoch)
		spec.AtEpoch = &ep
	}
	if err := s.checkSourceTables(ctx, st.plan.Tables); err != nil {
		return nil, err
	}
	res, epochs, err := s.e.RunOLAP(ctx, st.plan, st.text, spec, s.loc, params)
	if err != nil && engine.BeyondOLAP(err) {
		// Values DuckDB cannot hold (NUMERIC NaN, more than 38 digits):
		// Strata's own executor reads them exactly.
		var args *engine.Args
		if len(params) > 0 {
			args = &engine.Args{Values: params}
		}
		return s.query(ctx, st.q, args)
	}
	if err != nil {
		return nil, err
	}
	s.noteRead(epochs)
	return &pgwire.Result{Columns: olapColumns(res.Columns), Rows: res.Rows, Tag: pgwire.SelectTag(len(res.Rows))}, nil
}

// checkSourceTables fails a read of a table its source no longer feeds
// (engine.SourceTableError): the error names the table, the column and
// the transaction it could not take, where a read would silently return
// rows that stopped following the source.
func (s *Session) checkSourceTables(ctx context.Context, tables []catalog.ObjectName) error {
	for _, t := range tables {
		if err := s.e.SourceTableError(ctx, t); err != nil {
			return err
		}
	}
	return nil
}

// noteRead records the epoch a read was at (the smallest, when it read
// several), for SHOW last_read_epoch.
func (s *Session) noteRead(epochs map[catalog.ObjectName]base.Epoch) {
	if len(epochs) == 0 {
		return
	}
	var lo base.Epoch
	for _, ep := range epochs {
		if lo == 0 || ep < lo {
			lo = ep
		}
	}
	s.lastEpoch = lo
}

func textCols(names ...string) []pgwire.Column {
	out := make([]pgwire.Column, len(names))
	for i, n := range names {
		out[i] = pgwire.Column{Name: n, Type: types.Text}
	}
	return out
}

// describe returns the result columns of a statement (nil for none); with
// args it binds the statement's parameters and reports their types there.
func (s *Session) describe(ctx context.Context, st ddl.Statement, args *engine.Args) ([]pgwire.Column, error) {
	switch st := st.(type) {
	case *ddl.Query:
		p, err := s.e.Bind(ctx, s.db, st.Node, st.Text(), s.evalContext(), args)
		if err != nil {
			return nil, err
		}
		return planColumns(p), nil
	case *ddl.Insert:
		if args != nil {
			_, _, err := s.e.Insert(ctx, s.db, st.Node.GetInsertStmt(), st.Text(), s.evalContext(), args)
			return nil, err
		}
	case *ddl.Update:
		if args != nil {
			_, _, err := s.e.Update(ctx, s.db, st.Node.GetUpdateStmt(), st.Text(), s.evalContext(), args)
			return nil, err
		}
	case *ddl.Delete:
		if args != nil {
			_, _, err := s.e.Delete(ctx, s.db, st.Node.GetDeleteStmt(), st.Text(), s.evalContext(), args)
			return nil, err
		}
	case *ddl.Show:
		switch st.What {
		case ddl.ShowTables, ddl.ShowMaterializedViews, ddl.ShowSources:
			return textCols("name"), nil
		case ddl.ShowSinks:
			return textCols("name", "target"), nil
		case ddl.ShowJobs:
			cols := textCols("name", "kind", "status", "reads", "writes", "last_checkpoint", "restarts")
			cols[showJobsCheckpoint].Type, cols[showJobsRestarts].Type = types.Int64, types.Int64
			return cols, nil
		case showAll:
			return textCols("name", "setting", "description"), nil
		}
		return textCols(settingName(st.What)), nil
	case *ddl.Describe:
		return textCols("name", "type", "nullable", "primary_key"), nil
	case *ddl.ShowCreate:
		return textCols("Name", "Create Sql"), nil
	case *ddl.Explain:
		return textCols("QUERY PLAN"), nil
	}
	return nil, nil
}

func planColumns(p plan.Node) []pgwire.Column {
	var out []pgwire.Column
	for _, c := range p.Schema() {
		t := c.Type
		if t.Kind == types.KindUnknown {
			t = types.Text
		}
		out = append(out, pgwire.Column{Name: c.Name, Type: t})
	}
	return out
}

// Execute implements pgwire.Session. With statement_timeout set, a
// statement running longer is canceled (57014), as in Postgres.
func (s *Session) Execute(ctx context.Context, pst *pgwire.Statement, params []types.Datum) (*pgwire.Result, error) {
	if s.timeout > 0 {
		deadline := time.Now().Add(s.timeout)
		if ctx == s.stmtCtx {
			// Prepared in the same statement (a simple Query): one
			// budget for both.
			deadline = s.stmtDeadline
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	s.stmtCtx = nil
	res, err := s.executeStatement(ctx, pst, params)
	// A write past its point of no return that then fails (55000, its
	// writer keeps failing) is not canceled: it commits once the writer
	// recovers, and says so.
	if err != nil && s.timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) && sqlerr.From(err).Code != sqlerr.ObjectNotInPrerequisiteState {
		return nil, sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to statement timeout")
	}
	return res, userError(err)
}

func (s *Session) executeStatement(ctx context.Context, pst *pgwire.Statement, params []types.Datum) (*pgwire.Result, error) {
	if ss, ok := pst.Impl.(*sleepStatement); ok {
		if err := sleep(ctx, ss.d); err != nil {
			return nil, sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
		}
		return s.executeStatement(ctx, ss.inner, params)
	}
	if os, ok := pst.Impl.(*olapStatement); ok {
		res, err := s.runOLAP(ctx, os, params)
		err = namePosition(err, pst.SQL)
		if err != nil && errors.Is(err, context.Canceled) {
			return nil, sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
		}
		return res, err
	}
	var args *engine.Args
	if len(pst.Params) > 0 || len(params) > 0 {
		args = &engine.Args{Types: pst.Params, Values: params}
		if args.Values == nil {
			args.Values = []types.Datum{}
		}
	}
	res, err := s.execute(ctx, pst.Impl.(ddl.Statement), args)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return nil, sqlerr.New(sqlerr.QueryCanceled, "canceling statement due to user request")
		}
		return nil, err
	}
	if res.Columns == nil && len(res.Rows) > 0 {
		res.Columns = pst.Columns
	}
	return res, nil
}

func (s *Session) execute(ctx context.Context, st ddl.Statement, args *engine.Args) (*pgwire.Result, error) {
	if changes(st) {
		readOnly := s.defaultReadOnly
		if s.inBlock {
			readOnly = s.blockReadOnly
		}
		if readOnly {
			return nil, sqlerr.New(readOnlySQLTransaction, "cannot execute %s in a read-only transaction", commandName(st))
		}
		if s.inBlock {
			s.blockWrites++
		}
	}
	switch st := st.(type) {
	case *ddl.Query:
		return s.query(ctx, st, args)
	case *ddl.CreateTable:
		return s.createTable(ctx, st)
	case *ddl.CreateView:
		name := ddl.ObjectName(st.Name, s.db)
		with := st.With
		if _, set := with["timezone"]; !set && s.loc != time.UTC {
			// The view evaluates in the session's time zone, as the
			// SELECT would.
			with = maps.Clone(with)
			if with == nil {
				with = map[string]string{}
			}
			with["timezone"] = s.loc.String()
		}
		existed := s.e.ViewStartEpoch(ctx, name) != 0
		var notice *sqlerr.Error
		if st.IfNotExists {
			var err error
			if notice, err = s.existsNotice(ctx, name); err != nil {
				return nil, err
			}
		}
		if err := s.e.CreateView(ctx, name, st.QueryText, with, st.IfNotExists); err != nil {
			return nil, shiftPosition(err, st.Text(), st.QueryText)
		}
		// As in RisingWave, CREATE returns once the view holds its
		// inputs' history (its first epoch is committed), so that every
		// session then reads it filled; cancelling the statement before
		// that, or a job failing until then, drops the view again: a
		// CREATE that reports an error leaves nothing behind (a view
		// that existed before, under IF NOT EXISTS, stays).
		start := s.e.ViewStartEpoch(ctx, name)
		if err := s.e.WaitCommitted(ctx, name, start); err != nil {
			if existed {
				return nil, err
			}
			dropErr := s.e.Drop(context.WithoutCancel(ctx), "view", name, true, false)
			if ctx.Err() != nil {
				return nil, errors.Join(sqlerr.New(sqlerr.QueryCanceled, "canceling statement: materialized view %s was dropped before it was filled", name.Name), dropErr)
			}
			if dropErr != nil {
				return nil, errors.Join(err, dropErr)
			}
			return nil, notCreated(err, "materialized view", name.Name)
		}
		s.lastWrite = max(s.lastWrite, start)
		res := &pgwire.Result{Tag: "CREATE MATERIALIZED VIEW"}
		if notice != nil {
			res.Notices = append(res.Notices, notice)
		}
		return res, nil
	case *ddl.CreateSource:
		src := st.Source(s.db)
		if st.Watermark != nil {
			// As a table's (createTable): the views reading the source
			// get its event-time watermark.
			if src.Options == nil {
				src.Options = map[string]string{}
			}
			src.Options[engine.OptionWatermarkColumn] = st.Watermark.Column
			src.Options[engine.OptionWatermarkDelay] = st.Watermark.Delay.String()
		}
		if err := s.e.CreateSource(ctx, src, st.IfNotExists); err != nil {
			return nil, err
		}
		return &pgwire.Result{Tag: "CREATE SOURCE"}, nil
	case *ddl.CreateSink:
		if st.Into == "" {
			if err := s.e.CreateExternalSink(ctx, ddl.ObjectName(st.Name, s.db), ddl.ObjectName(st.From, s.db), st.With, st.IfNotExists); err != nil {
				return nil, err
			}
			return &pgwire.Result{Tag: "CREATE SINK"}, nil
		}
		name, into := ddl.ObjectName(st.Name, s.db), ddl.ObjectName(st.Into, s.db)
		existed := s.e.SinkStartEpoch(ctx, name) != 0
		if err := s.e.CreateSink(ctx, name, into, st.QueryText, st.IfNotExists); err != nil {
			return nil, shiftPosition(err, st.Text(), st.QueryText)
		}
		// As CREATE MATERIALIZED VIEW, it returns once the table holds
		// the query's history (the sink's first epoch), and a CREATE
		// that fails or is canceled before drops the sink again.
		if start := s.e.SinkStartEpoch(ctx, name); start != 0 {
			if err := s.e.WaitCommitted(ctx, into, start); err != nil {
				if existed {
					return nil, err
				}
				dropErr := s.e.DropSink(context.WithoutCancel(ctx), name, true)
				if ctx.Err() != nil {
					return nil, errors.Join(sqlerr.New(sqlerr.QueryCanceled, "canceling statement: sink %s was dropped before it wrote its first epoch", name.Name), dropErr)
				}
				if dropErr != nil {
					return nil, errors.Join(err, dropErr)
				}
				return nil, notCreated(err, "sink", name.Name)
			}
			if s.e.SinkStartEpoch(ctx, name) != start {
				// DROP SINK in another session stopped it while it caught
				// up; the target's own writer then committed the epoch.
				return nil, sqlerr.New(sqlerr.QueryCanceled, "canceling statement: sink %s was dropped before it wrote its first epoch", name.Name)
			}
			s.lastWrite = max(s.lastWrite, start)
		}
		return &pgwire.Result{Tag: "CREATE SINK"}, nil
	case *ddl.Drop:
		return s.drop(ctx, st)
	case *ddl.Insert:
		n, ep, err := s.e.Insert(ctx, s.db, st.Node.GetInsertStmt(), st.Text(), s.evalContext(), args)
		res, err := s.dmlResult("INSERT 0 ", n, ep, err)
		if err == nil {
			if notice := s.oneShotCopyNotice(ctx, st); notice != nil {
				res.Notices = append(res.Notices, notice)
			}
		}
		return res, err
	case *ddl.Update:
		n, ep, err := s.e.Update(ctx, s.db, st.Node.GetUpdateStmt(), st.Text(), s.evalContext(), args)
		return s.dmlResult("UPDATE ", n, ep, err)
	case *ddl.Delete:
		n, ep, err := s.e.Delete(ctx, s.db, st.Node.GetDeleteStmt(), st.Text(), s.evalContext(), args)
		return s.dmlResult("DELETE ", n, ep, err)
	case *ddl.Set:
		return s.set(st)
	case *ddl.Show:
		return s.show(ctx, st)
	case *ddl.Describe:
		return s.describeObject(ctx, st)
	case *ddl.ShowCreate:
		return s.showCreate(ctx, st)
	case *ddl.Explain:
		return s.explain(ctx, st)
	case *ddl.Other:
		switch {
		case st.Node.GetTransactionStmt() != nil:
			// Every statement commits on its own; a transaction block
			// groups nothing, as in RisingWave. A ROLLBACK cannot undo
			// what was committed, so it says so instead of pretending.
			// A ROLLBACK of a block that changed nothing (a driver's
			// rollback after a failed read, say) is fine.
			tag := transactionTag(st.Text())
			switch tag {
			case "BEGIN":
				s.inBlock, s.blockWrites = true, 0
				s.blockReadOnly = s.defaultReadOnly
				if ro, ok := readOnlyOption(st.Node.GetTransactionStmt().GetOptions()); ok {
					s.blockReadOnly = ro
				}
			case "ROLLBACK":
				if s.blockWrites > 0 {
					n := s.blockWrites
					s.inBlock, s.blockWrites = false, 0
					return nil, sqlerr.New(sqlerr.FeatureNotSupported, "ROLLBACK cannot undo the %d statement(s) of this block that changed something: every statement commits on its own when it returns", n)
				}
				s.inBlock = false
			default:
				s.inBlock, s.blockWrites = false, 0
			}
			return &pgwire.Result{Tag: tag}, nil
		case st.Node.GetVariableSetStmt() != nil:
			// SET TRANSACTION READ ONLY | READ WRITE (in a block; outside
			// one it does nothing, as in PostgreSQL) and SET SESSION
			// CHARACTERISTICS AS TRANSACTION ...; other modes are
			// accepted and ignored (every statement commits on its own).
			vs := st.Node.GetVariableSetStmt()
			ro, ok := readOnlyOption(vs.GetArgs())
			switch strings.ToUpper(vs.GetName()) {
			case "TRANSACTION":
				if ok && s.inBlock {
					s.blockReadOnly = ro
				}
			case "SESSION CHARACTERISTICS":
				if ok {
					s.defaultReadOnly = ro
				}
			default:
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "statement %q is not supported", firstWords(st.Text()))
			}
			return &pgwire.Result{Tag: "SET"}, nil
		}
		e := sqlerr.New(sqlerr.FeatureNotSupported, "statement %q is not supported", firstWords(st.Text()))
		if v := st.Node.GetViewStmt(); v != nil {
			// Flink's and RisingWave's CREATE VIEW: Strata's only views
			// are materialized ones.
			e.Hint = "Strata keeps views as materialized views: CREATE MATERIALIZED VIEW " + v.GetView().GetRelname() + " AS ... (a plain SELECT answers ad-hoc queries)."
		}
		if a := st.Node.GetAlterTableStmt(); a != nil && a.GetObjtype() == pg_query.ObjectType_OBJECT_TABLE {
			e.Hint = ddl.AlterTableHint
		}
		if cp := st.Node.GetCopyStmt(); cp != nil {
			// COPY and psql's \copy, which sends COPY ... FROM STDIN or
			// TO STDOUT.
			e.Hint = copyToHint
			if cp.GetIsFrom() {
				e.Hint = copyFromHint
			}
		}
		return nil, e
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "statement %q is not supported", firstWords(st.Text()))
}

// changes reports whether a statement may change data or the catalog
// (anything but a query, SHOW, SET, DESCRIBE, EXPLAIN or a transaction
// statement).
func changes(st ddl.Statement) bool {
	switch st := st.(type) {
	case *ddl.Query, *ddl.Show, *ddl.ShowCreate, *ddl.Set, *ddl.Describe, *ddl.Explain:
		return false
	case *ddl.Other:
		return st.Node.GetTransactionStmt() == nil && st.Node.GetVariableSetStmt() == nil
	}
	return true
}

// commandName names a statement that changes something as PostgreSQL's
// errors do ("INSERT", "CREATE TABLE").
func commandName(st ddl.Statement) string {
	switch st := st.(type) {
	case *ddl.Insert:
		return "INSERT"
	case *ddl.Update:
		return "UPDATE"
	case *ddl.Delete:
		return "DELETE"
	case *ddl.CreateTable:
		return "CREATE TABLE"
	case *ddl.CreateView:
		return "CREATE MATERIALIZED VIEW"
	case *ddl.CreateSource:
		return "CREATE SOURCE"
	case *ddl.CreateSink:
		return "CREATE SINK"
	case *ddl.Drop:
		return "DROP " + string(st.Kind)
	}
	return strings.ToUpper(firstWords(st.Text()))
}

// readOnlyOption reads transaction_read_only from the options of BEGIN or
// SET TRANSACTION (ok is false when they do not set it).
func readOnlyOption(opts []*pg_query.Node) (readOnly, ok bool) {
	for _, o := range opts {
		if d := o.GetDefElem(); d != nil && d.GetDefname() == "transaction_read_only" {
			readOnly, ok = d.GetArg().GetAConst().GetIval().GetIval() != 0, true
		}
	}
	return readOnly, ok
}

func firstWords(text string) string {
	f := strings.Fields(text)
	if len(f) > 3 {
		f = f[:3]
	}
	return strings.Join(f, " ")
}

func transactionTag(text string) string {
	w := strings.ToUpper(strings.Fields(text)[0])
	switch w {
	case "BEGIN", "START":
		return "BEGIN"
	case "END":
		return "COMMIT"
	case "ABORT":
		return "ROLLBACK"
	}
	return w
}

// namePosition gives an error of the OLAP engine that has no position
// the position in text of the relation, column or function its message
// names (olap.NamePosition), as PostgreSQL's errors have one: psql then
// marks it under the statement's line.
func namePosition(err error, text string) error {
	var se *sqlerr.Error
	if err == nil || !errors.As(err, &se) || se.Position != 0 {
		return err
	}
	pos := olap.NamePosition(text, se.Message)
	if pos == 0 {
		return err
	}
	return se.WithPosition(pos)
}

// shiftPosition moves an error position inside part (a substring of
// whole) to a position in whole.
func shiftPosition(err error, whole, part string) error {
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Position == 0 {
		return err
	}
	i := strings.Index(whole, part)
	if i <= 0 {
		return err
	}
	return se.WithPosition(se.Position + utf8.RuneCountInString(whole[:i]))
}

func (s *Session) query(ctx context.Context, q *ddl.Query, args *engine.Args) (*pgwire.Result, error) {
	spec := engine.ReadSpec{Mode: s.mode}
	if s.mode == version.Strong {
		spec.After = s.lastWrite
	}
	if q.AtEpoch != nil {
		ep := base.Epoch(*q.AtEpoch)
		spec.AtEpoch = &ep
	}
	p, rows, epochs, err := s.e.Query(ctx, s.db, q.Node, q.Text(), spec, s.evalContext(), args)
	if err != nil {
		return nil, err
	}
	s.noteRead(epochs)
	return &pgwire.Result{Columns: planColumns(p), Rows: rows, Tag: pgwire.SelectTag(len(rows))}, nil
}

func (s *Session) createTable(ctx context.Context, st *ddl.CreateTable) (*pgwire.Result, error) {
	if st.Query != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "CREATE TABLE ... AS is not supported yet; create the table, then INSERT INTO ... SELECT")
	}
	t := st.Table(s.db)
	if st.FromSource != "" {
		if t.Options == nil {
			t.Options = map[string]string{}
		}
		t.Options[engine.OptionSource] = ddl.ObjectName(st.FromSource, s.db).String()
		t.Options[engine.OptionSourceTable] = st.FromTable
	}
	if st.Watermark != nil && len(t.PrimaryKey) > 0 {
		// A keyed table's changelog updates and deletes rows, which no
		// watermark can hold back: every view over it would be refused.
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "table %s has a PRIMARY KEY and a WATERMARK: a watermark belongs on a table without a key (an append-only stream), whose rows only arrive; drop the WATERMARK or the key", t.Name.Name)
	}
	if st.Watermark != nil {
		if t.Options == nil {
			t.Options = map[string]string{}
		}
		t.Options[engine.OptionWatermarkColumn] = st.Watermark.Column
		t.Options[engine.OptionWatermarkDelay] = st.Watermark.Delay.String()
	}
	res := &pgwire.Result{Tag: "CREATE TABLE"}
	if st.IfNotExists {
		if n, err := s.existsNotice(ctx, t.Name); err != nil {
			return nil, err
		} else if n != nil {
			res.Notices = append(res.Notices, n)
		}
	}
	if err := s.e.CreateTable(ctx, t, st.IfNotExists); err != nil {
		return nil, err
	}
	return res, nil
}

// existsNotice is PostgreSQL's notice (00000) of a CREATE ... IF NOT
// EXISTS of a relation that exists, which creates nothing: relation
// "name" already exists, skipping. nil when no table or view has name.
func (s *Session) existsNotice(ctx context.Context, name catalog.ObjectName) (*sqlerr.Error, error) {
	cat, err := s.e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := cat.Table(name); err != nil {
		return nil, nil
	}
	return sqlerr.New(sqlerr.SuccessfulCompletion, "relation %q already exists, skipping", name.Name), nil
}

func (s *Session) drop(ctx context.Context, st *ddl.Drop) (*pgwire.Result, error) {
	res := &pgwire.Result{Tag: "DROP " + string(st.Kind)}
	// The tables, views or sinks a statement names are dropped
	// together, in one catalog change (engine.DropAll, DropSinks): all
	// of them or none.
	var rels []catalog.ObjectName
	for _, n := range st.Names {
		name := ddl.ObjectName(n, s.db)
		if st.IfExists {
			missing, err := s.missing(ctx, st.Kind, name)
			if err != nil {
				return nil, err
			}
			if missing {
				// PostgreSQL's notice, code 00000; the DROP goes on.
				res.Notices = append(res.Notices, sqlerr.New(sqlerr.SuccessfulCompletion, "%s %q does not exist, skipping", strings.ToLower(string(st.Kind)), name.Name))
				continue
			}
		}
		var err error
		switch st.Kind {
		case ddl.Table, ddl.View:
			rels = append(rels, name)
		case ddl.PlainView:
			// No plain views exist; a materialized one is not dropped by
			// DROP VIEW (Postgres's 42809 and hint).
			var cat *catalog.Catalog
			if cat, err = s.e.Catalog(ctx); err != nil {
				break
			}
			if t, terr := cat.Table(name); terr == nil {
				e := sqlerr.New(sqlerr.WrongObjectType, "%q is not a view", name.Name)
				if t.Kind == catalog.KindView {
					e.Hint = "Use DROP MATERIALIZED VIEW to remove a materialized view."
				} else {
					e.Hint = "Use DROP TABLE to remove a table."
				}
				err = e
			} else if !st.IfExists {
				err = sqlerr.New(sqlerr.UndefinedTable, "view %q does not exist", name.Name)
			}
		case ddl.Source:
			if st.Cascade {
				err = sqlerr.New(sqlerr.FeatureNotSupported, "DROP SOURCE ... CASCADE is not supported: drop the tables, views and sinks built on source %s first", name.Name)
				break
			}
			var notice *sqlerr.Error
			if notice, err = s.e.DropSource(ctx, name, st.IfExists); notice != nil {
				res.Notices = append(res.Notices, notice)
			}
		case ddl.Sink:
			rels = append(rels, name)
		default:
			err = sqlerr.New(sqlerr.FeatureNotSupported, "DROP %s is not supported yet", st.Kind)
		}
		if err != nil {
			return nil, err
		}
	}
	if len(rels) == 0 {
		return res, nil
	}
	if st.Kind == ddl.Sink {
		if err := s.e.DropSinks(ctx, rels, st.IfExists); err != nil {
			return nil, err
		}
		return res, nil
	}
	var cascaded *sqlerr.Error
	if st.Cascade {
		// PostgreSQL's notice of what the CASCADE removes, told once the
		// DROP succeeded.
		var err error
		if cascaded, err = s.e.CascadeNotice(ctx, rels...); err != nil {
			return nil, err
		}
	}
	what := map[ddl.ObjectKind]string{ddl.Table: "table", ddl.View: "view"}[st.Kind]
	if err := s.e.DropAll(ctx, what, rels, st.IfExists, st.Cascade); err != nil {
		return nil, err
	}
	if cascaded != nil {
		res.Notices = append(res.Notices, cascaded)
	}
	return res, nil
}

// missing reports whether DROP kind would find nothing of name to drop:
// no object of any kind by that name for a TABLE, MATERIALIZED VIEW or
// VIEW (one of another kind is the DROP's error to give), no source, no
// sink.
func (s *Session) missing(ctx context.Context, kind ddl.ObjectKind, name catalog.ObjectName) (bool, error) {
	cat, err := s.e.Catalog(ctx)
	if err != nil {
		return false, err
	}
	switch kind {
	case ddl.Table, ddl.View, ddl.PlainView:
		_, terr := cat.Table(name)
		return terr != nil && !cat.IsSource(name), nil
	case ddl.Source:
		_, serr := cat.Source(name)
		return serr != nil, nil
	case ddl.Sink:
		sinks, err := s.e.Sinks(ctx, name.Database)
		if err != nil {
			return false, err
		}
		return !slices.ContainsFunc(sinks, func(k [2]string) bool { return k[0] == name.Name }), nil
	}
	return false, nil
}

func (s *Session) set(st *ddl.Set) (*pgwire.Result, error) {
	switch st.Name {
	case "timezone":
		val := st.Value
		if st.Default {
			val = "UTC"
		}
		loc, err := loadZone(val)
		if err != nil {
			return nil, err
		}
		s.loc = loc
	case "consistency":
		switch strings.ToLower(st.Value) {
		case "strong":
			s.mode = version.Strong
		case "weak":
			s.mode = version.Weak
		case "":
			if st.Default {
				s.mode = version.Strong
				break
			}
			fallthrough
		default:
			return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"consistency\": %q (strong or weak)", st.Value)
		}
	case "statement_timeout":
		d, err := parseTimeout(st.Value)
		if st.Default {
			d, err = 0, nil
		}
		if err != nil {
			return nil, err
		}
		s.timeout = d
	case "default_transaction_read_only":
		switch strings.ToLower(st.Value) {
		case "on", "true", "yes", "1":
			s.defaultReadOnly = true
		case "off", "false", "no", "0":
			s.defaultReadOnly = false
		default:
			if !st.Default {
				return nil, sqlerr.New(sqlerr.InvalidParameterValue, "parameter \"default_transaction_read_only\" requires a Boolean value")
			}
			s.defaultReadOnly = false
		}
	case "extra_float_digits", "client_encoding", "datestyle", "application_name", "search_path", "client_min_messages":
		// Settings drivers send at connection start: accepted and shown
		// back by SHOW; they change nothing else.
		if s.settings == nil {
			s.settings = map[string]string{}
		}
		if st.Default {
			delete(s.settings, st.Name)
		} else {
			s.settings[st.Name] = st.Value
		}
	default:
		return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", st.Name)
	}
	return &pgwire.Result{Tag: "SET"}, nil
}

// parseTimeout reads a statement_timeout value as Postgres does: a bare
// number is milliseconds, or a number with a unit (us, ms, s, min, h, d);
// 0 turns the timeout off.
func parseTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(strings.ToLower(v))
	i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := v, "ms"
	if i >= 0 {
		num, unit = v[:i], strings.TrimSpace(v[i:])
	}
	n, err := strconv.ParseFloat(num, 64)
	scale := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[unit]
	if err != nil || n < 0 || scale == 0 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"statement_timeout\": %q (milliseconds, or a number with a unit: us, ms, s, min, h, d)", v)
	}
	return time.Duration(n * float64(scale)), nil
}

func loadZone(name string) (*time.Location, error) {
	if strings.EqualFold(name, "utc") || strings.EqualFold(name, "gmt") {
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for parameter \"TimeZone\": %q", name)
	}
	return loc, nil
}

func rowsOf(vals ...[]string) []types.Row {
	out := make([]types.Row, len(vals))
	for i, v := range vals {
		r := make(types.Row, len(v))
		for j, x := range v {
			r[j] = types.NewText(x)
		}
		out[i] = r
	}
	return out
}

func (s *Session) show(ctx context.Context, st *ddl.Show) (*pgwire.Result, error) {
	cols, _ := s.describe(ctx, st, nil)
	res := &pgwire.Result{Columns: cols, Tag: "SHOW"}
	cat, err := s.e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	var rows [][]string
	switch st.What {
	case ddl.ShowTables, ddl.ShowMaterializedViews:
		kind := catalog.KindTable
		if st.What == ddl.ShowMaterializedViews {
			kind = catalog.KindView
		}
		for _, t := range cat.Tables() {
			if t.Kind == kind && t.Name.Database == s.db {
				rows = append(rows, []string{t.Name.Name})
			}
		}
	case ddl.ShowSources:
		for _, src := range cat.Sources() {
			if src.Name.Database == s.db {
				rows = append(rows, []string{src.Name.Name})
			}
		}
	case ddl.ShowSinks:
		sinks, err := s.e.Sinks(ctx, s.db)
		if err != nil {
			return nil, err
		}
		for _, k := range sinks {
			rows = append(rows, []string{k[0], k[1]})
		}
	case ddl.ShowJobs:
		infos, err := s.e.Meta().Jobs(ctx)
		if err != nil {
			return nil, err
		}
		local := map[string]engine.JobStatus{}
		for _, j := range s.e.Jobs() {
			local[j.Name] = j
		}
		for _, j := range infos {
			names := func(ns []catalog.ObjectName) string {
				out := make([]string, len(ns))
				for i, n := range ns {
					out[i] = n.Name
				}
				return strings.Join(out, ", ")
			}
			rows = append(rows, []string{j.Job.Name, string(engine.JobKind(j.Job)), s.e.JobStatusText(j.Status, local[j.Job.Name]), names(j.Job.Reads), names(j.Job.Writes),
				strconv.FormatUint(uint64(j.LastCheckpoint), 10), strconv.Itoa(local[j.Job.Name].Restarts)})
		}
	case "epoch":
		info, err := s.e.Meta().CurrentEpoch(ctx)
		if err != nil {
			return nil, err
		}
		rows = [][]string{{strconv.FormatUint(uint64(info.Epoch), 10)}}
	case showAll:
		res.Rows = rowsOf(s.showAllRows()...)
		return res, nil
	default:
		v, ok := s.setting(st.What)
		if !ok {
			e := sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", st.What)
			e.Hint = showHints[strings.ToLower(st.What)]
			return nil, e
		}
		rows = [][]string{{v}}
	}
	slices.SortFunc(rows, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	res.Rows = rowsOf(rows...)
	if st.What == ddl.ShowJobs {
		// The numbers are numbers, as in strata_catalog.jobs.
		for _, r := range res.Rows {
			for _, i := range []int{showJobsCheckpoint, showJobsRestarts} {
				n, err := strconv.ParseInt(r[i].String(), 10, 64)
				if err != nil {
					return nil, fmt.Errorf("SHOW JOBS: column %s: %w", cols[i].Name, err)
				}
				r[i] = types.NewInt64(n)
			}
		}
	}
	return res, nil
}

// The columns of SHOW JOBS that hold numbers: the job's last completed
// checkpoint and its restarts since the process started.
const (
	showJobsCheckpoint = 5
	showJobsRestarts   = 6
)

// setting returns the value of configuration parameter name (lower
// case) as SHOW and current_setting() give it.
func (s *Session) setting(name string) (string, bool) {
	switch name {
	case "timezone":
		return s.loc.String(), true
	case "server_version":
		return pgwire.ServerVersion, true
	case "default_transaction_read_only":
		return onOff(s.defaultReadOnly), true
	case "transaction_read_only":
		readOnly := s.defaultReadOnly
		if s.inBlock {
			readOnly = s.blockReadOnly
		}
		return onOff(readOnly), true
	case "statement_timeout":
		if s.timeout > 0 {
			return strconv.FormatInt(s.timeout.Milliseconds(), 10) + "ms", true
		}
		return "0", true
	case "consistency":
		return string(s.mode), true
	case "last_read_epoch":
		return strconv.FormatUint(uint64(s.lastEpoch), 10), true
	}
	if v, ok := s.settings[name]; ok {
		return v, true
	}
	v, ok := fixedSettings[name]
	return v, ok
}

func (s *Session) describeObject(ctx context.Context, st *ddl.Describe) (*pgwire.Result, error) {
	cat, err := s.e.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	name := ddl.ObjectName(st.Name, s.db)
	var cols []catalog.Column
	var key []string
	nullableKey := false
	if t, err := cat.Table(name); err == nil {
		cols, key = t.Columns, t.PrimaryKey
		// A view's key derived from nullable columns may hold NULL: its
		// columns keep their own nullability.
		nullableKey = engine.KeyMayBeNull(t)
		if t.Options[engine.OptionMultiset] != "" {
			key = nil // keyed by all columns to count copies, not a unique key
		}
	} else if src, err := cat.Source(name); err == nil {
		cols = src.Columns
	} else {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", st.Name)
	}
	var rows [][]string
	for _, c := range cols {
		inKey := slices.Contains(key, c.Name)
		rows = append(rows, []string{c.Name, c.Type.String(), strconv.FormatBool(!c.NotNull && !(inKey && !nullableKey)), strconv.FormatBool(inKey)})
	}
	cs, _ := s.describe(ctx, st, nil)
	return &pgwire.Result{Columns: cs, Rows: rowsOf(rows...), Tag: fmt.Sprintf("DESCRIBE %d", len(rows))}, nil
}

func (s *Session) explain(ctx context.Context, st *ddl.Explain) (*pgwire.Result, error) {
	if st.Analyze {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "EXPLAIN ANALYZE is not supported: EXPLAIN shows the plan without running it")
	}
	var text string
	switch in := st.Statement.(type) {
	case *ddl.Query:
		p, err := s.e.Bind(ctx, s.db, in.Node, in.Text(), s.evalContext(), nil)
		if err != nil {
			return nil, err
		}
		text = plan.Explain(p)
	case *ddl.CreateView:
		out, err := s.e.ExplainView(ctx, s.db, in.QueryText)
		if err != nil {
			return nil, shiftPosition(err, st.Text(), in.QueryText)
		}
		text = out
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "EXPLAIN of this statement is not supported; explain a SELECT or a CREATE MATERIALIZED VIEW")
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		rows = append(rows, []string{l})
	}
	return &pgwire.Result{Columns: textCols("QUERY PLAN"), Rows: rowsOf(rows...), Tag: "EXPLAIN"}, nil
}

// oneDatabaseHint answers SHOW DATABASES, CATALOGS and SCHEMAS.
// copyFromHint and copyToHint say what to use instead of COPY FROM (or
// \copy ... from) and COPY TO, with the file connector's syntax of the
// README's connector table and file sinks.
const (
	copyFromHint = "Strata has no COPY: use INSERT ... VALUES with many rows per statement, or read a file with the file connector: CREATE TABLE t2 (...) WITH (connector = 'file', path = '/dir/or/file.csv', format = 'csv', csv.header = 'true') fills a table (CREATE SOURCE ... WITH (connector = 'file', ...) feeds the views that read it)."
	copyToHint   = "Strata has no COPY: run the SELECT and keep its output (psql: \\o file), or write a table or view to files: CREATE SINK k FROM v WITH (connector = 'file', path = '/dir', format = 'csv')."
)

const oneDatabaseHint = "Strata serves one database, dev, with its objects in the schema public: SHOW TABLES, MATERIALIZED VIEWS, SOURCES and JOBS list them (psql: \\l, \\d)."

// showHints answer SHOW of what Flink and RisingWave list and Strata
// lists otherwise (PostgreSQL reads SHOW x as a parameter).
var showHints = map[string]string{
	"views":     "Strata's views are materialized: SHOW MATERIALIZED VIEWS lists them (SHOW TABLES, SOURCES and JOBS list the rest).",
	"databases": oneDatabaseHint,
	"catalogs":  oneDatabaseHint,
	"schemas":   oneDatabaseHint,
	"functions": "Views and SELECT take PostgreSQL's built-in functions (string, math, date/time, JSON, regular expressions); there are no user-defined functions.",
}
