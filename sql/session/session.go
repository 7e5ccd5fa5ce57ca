package session

import (
	"context"
	"fmt"
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/exec"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/pgwire"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Session is one client's SQL session.
type Session struct {
	cat  binder.Catalog
	scan exec.Scanner
	loc  *time.Location
}

// noRelations is the catalog of a session without tables.
type noRelations struct{}

func (noRelations) Relation(name string) (*plan.Relation, error) {
	return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

// New returns a session reading relations from cat and their rows from
// scan (both may be nil: no relations).
func New(cat binder.Catalog, scan exec.Scanner) *Session {
	if cat == nil {
		cat = noRelations{}
	}
	return &Session{cat: cat, scan: scan, loc: time.UTC}
}

// Location returns the session time zone.
func (s *Session) Location() *time.Location { return s.loc }

// Close releases nothing yet.
func (s *Session) Close() {}

// Split divides text into statements.
func (s *Session) Split(text string) ([]string, error) {
	stmts, err := parser.Parse(text)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(stmts))
	for i, st := range stmts {
		out[i] = st.SQL
	}
	return out, nil
}

// prepared is the session's form of a statement.
type prepared struct {
	kind  string // "query", "set", "show"
	plan  plan.Node
	value string // SET value or SHOW name
}

// Prepare parses and binds one statement.
func (s *Session) Prepare(_ context.Context, text string, paramTypes []types.Type) (*pgwire.Statement, error) {
	stmts, err := parser.Parse(text)
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
	node := stmts[0].Node
	st := &pgwire.Statement{SQL: text}
	switch {
	case node.GetSelectStmt() != nil:
		p, err := binder.New(s.cat, text, s.ctx()).BindQuery(node)
		if err != nil {
			return nil, err
		}
		for _, c := range p.Schema() {
			st.Columns = append(st.Columns, pgwire.Column{Name: c.Name, Type: c.Type})
		}
		st.Impl = &prepared{kind: "query", plan: p}
	case node.GetVariableSetStmt() != nil:
		vs := node.GetVariableSetStmt()
		name := strings.ToLower(vs.GetName())
		if name != "timezone" {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", vs.GetName())
		}
		val := "UTC"
		if args := vs.GetArgs(); len(args) == 1 {
			c := args[0].GetAConst()
			switch {
			case c != nil && c.GetSval() != nil:
				val = c.GetSval().GetSval()
			case c != nil && c.GetIval() != nil:
				return nil, sqlerr.New(sqlerr.FeatureNotSupported, "numeric time zone offsets are not supported; name the zone")
			}
		}
		if vs.GetKind() == pg_query.VariableSetKind_VAR_SET_DEFAULT || vs.GetKind() == pg_query.VariableSetKind_VAR_RESET {
			val = "UTC"
		}
		if _, err := loadZone(val); err != nil {
			return nil, err
		}
		st.Impl = &prepared{kind: "set", value: val}
	case node.GetVariableShowStmt() != nil:
		name := strings.ToLower(node.GetVariableShowStmt().GetName())
		if name != "timezone" && name != "server_version" {
			return nil, sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
		}
		st.Columns = []pgwire.Column{{Name: name, Type: types.Text}}
		st.Impl = &prepared{kind: "show", value: name}
	default:
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "statement %s is not supported yet", statementName(node))
	}
	return st, nil
}

// statementName names a statement's kind for messages: "CreateStmt"
// becomes "Create".
func statementName(n *pg_query.Node) string {
	t := strings.TrimPrefix(fmt.Sprintf("%T", n.GetNode()), "*pg_query.Node_")
	return strings.TrimSuffix(t, "Stmt")
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

func (s *Session) ctx() *expr.Context { return &expr.Context{Loc: s.loc, Now: time.Now()} }

// Execute runs a prepared statement.
func (s *Session) Execute(ctx context.Context, st *pgwire.Statement, _ []types.Datum) (*pgwire.Result, error) {
	p := st.Impl.(*prepared)
	switch p.kind {
	case "set":
		loc, err := loadZone(p.value)
		if err != nil {
			return nil, err
		}
		s.loc = loc
		return &pgwire.Result{Tag: "SET"}, nil
	case "show":
		v := ServerVersion
		if p.value == "timezone" {
			v = s.loc.String()
		}
		return &pgwire.Result{Columns: st.Columns, Rows: []types.Row{{types.NewText(v)}}, Tag: "SHOW"}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rows, err := exec.Run(s.ctx(), p.plan, s.scan)
	if err != nil {
		return nil, err
	}
	return &pgwire.Result{Columns: st.Columns, Rows: rows, Tag: pgwire.SelectTag(len(rows))}, nil
}

// ServerVersion is what SHOW server_version returns.
const ServerVersion = pgwire.ServerVersion

// Handler opens a Session per connection for any user and the database
// "dev" (the default database; others are refused with 3D000).
type Handler struct {
	Catalog binder.Catalog
	Scanner exec.Scanner
}

// NewSession implements pgwire.Handler.
func (h Handler) NewSession(_ context.Context, _, database string) (pgwire.Session, error) {
	if database != "dev" && database != "" {
		return nil, sqlerr.New(sqlerr.InvalidCatalogName, "database %q does not exist", database)
	}
	return New(h.Catalog, h.Scanner), nil
}
