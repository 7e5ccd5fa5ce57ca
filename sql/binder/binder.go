package binder

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Catalog resolves the relations a query names.
type Catalog interface {
	// Relation returns the table, materialized view or source called name
	// (lower case unless quoted), or an error; a missing relation should be
	// reported as sqlerr.UndefinedTable.
	Relation(name string) (*plan.Relation, error)
}

// Binder binds the statements of one input text.
type Binder struct {
	cat Catalog
	fns *expr.Registry
	sql string
	ctx *expr.Context
	// params holds the statement's parameters; nil when $n is not
	// allowed (views, simple queries).
	params *plan.Params
	// contextual[i] is set once $i+1 occurs where a context could type
	// it: anywhere but as the bare operand of IS [NOT] NULL
	// ([param-typed-by-context]).
	contextual []bool
	// hint holds the target column types of an INSERT for its top query;
	// set by BindInsertSource, taken by the first query bound.
	hint []types.Type
	// litLocs holds the location of each quoted string literal bound
	// (an unknown-typed Const): an input-syntax error of its coercion
	// points at the literal, as Postgres's does, not at the operator or
	// function that coerced it.
	litLocs map[*expr.Const]int32
	// ctes are the common table expressions in scope, innermost first.
	ctes *cteFrame
}

// cteFrame is one WITH query in scope. A reference binds its query anew
// (the CTE is inlined, as Postgres inlines a CTE referenced once that is
// not MATERIALIZED; for a view, two references are two reads of the same
// inputs), with only the CTEs defined before it in scope (outer).
type cteFrame struct {
	cte   *pg_query.CommonTableExpr
	outer *cteFrame
}

// lookupCTE finds the CTE that an unqualified relation name refers to.
func (b *Binder) lookupCTE(rv *pg_query.RangeVar) *cteFrame {
	if rv.GetSchemaname() != "" {
		return nil
	}
	for f := b.ctes; f != nil; f = f.outer {
		if f.cte.GetCtename() == rv.GetRelname() {
			return f
		}
	}
	return nil
}

// New returns a binder for statements parsed from sqlText (used to turn
// node locations into positions), resolving names in cat and functions in
// expr.Builtins, folding constants in ctx (the session's time zone).
func New(cat Catalog, sqlText string, ctx *expr.Context) *Binder {
	if ctx == nil {
		ctx = &expr.Context{}
	}
	return &Binder{cat: cat, fns: expr.Builtins, sql: sqlText, ctx: ctx}
}

// errAt returns a SQL error positioned at byte offset loc of the input.
func (b *Binder) errAt(loc int32, code, format string, args ...any) error {
	e := sqlerr.New(code, format, args...)
	if p := parser.Position(b.sql, int(loc)); p > 0 {
		e = e.WithPosition(p)
	}
	return e
}

// atLoc adds a position to err when it is a *sqlerr.Error without one.
func (b *Binder) atLoc(loc int32, err error) error {
	if err == nil {
		return nil
	}
	e := sqlerr.From(err)
	if e.Position == 0 {
		if p := parser.Position(b.sql, int(loc)); p > 0 {
			e = e.WithPosition(p)
		}
	}
	return e
}

// WithParams lets the statement use parameters $1, $2, ... (the extended
// query protocol) and returns the Params that the bound plan's Param
// expressions read. ts gives the types the client declared, $1 first;
// types.Unknown (or a missing entry, when the statement uses more
// parameters than ts has) asks the binder to infer the type from the
// context, as Postgres does: the other operand of an operator (WHERE k =
// $1 gives $1 k's type, $1 + 1 INTEGER), a function's parameter, a cast's
// target, a CASE or IN list's common type, BOOLEAN where a condition is
// expected. A parameter in a place that asks no type of it (the select
// list, a VALUES row, an operator whose other operand is untyped too)
// becomes TEXT; one the statement does not use, or uses only as the
// operand of IS [NOT] NULL, is the error 42P18 "could not determine data
// type of parameter $n", as in Postgres. After BindQuery, Params.Types
// holds every parameter's type; a parameter deduced with two different
// types is the error 42P08. Without
// WithParams, $n is the error 42P02 "there is no parameter $n".
//
// Example, a prepared statement run twice:
//
//	b := binder.New(cat, sql, ctx)
//	params := b.WithParams([]types.Type{types.Unknown})
//	p, err := b.BindQuery(stmt.Node) // SELECT name FROM person WHERE id = $1
//	// params.Types is [BIGINT], id's type: answer ParameterDescription.
//	err = params.Set([]types.Datum{types.NewInt64(7)})
//	rows, err := exec.Run(ctx, p, scanner)
//	err = params.Set([]types.Datum{types.NewInt64(8)})
//	rows, err = exec.Run(ctx, p, scanner)
func (b *Binder) WithParams(ts []types.Type) *plan.Params {
	b.params = &plan.Params{Types: append([]types.Type(nil), ts...)}
	return b.params
}

// BindQuery binds a SELECT (including VALUES and UNION ALL) to a logical
// plan.
func (b *Binder) BindQuery(n *pg_query.Node) (plan.Node, error) {
	p, err := b.bindQuery(n)
	if err != nil {
		return nil, err
	}
	if b.params != nil {
		for i, t := range b.params.Types {
			if t.Kind != types.KindUnknown {
				continue
			}
			if i >= len(b.contextual) || !b.contextual[i] {
				return nil, sqlerr.New(indeterminateParameter, "could not determine data type of parameter $%d", i+1)
			}
			b.params.Types[i] = types.Text
		}
	}
	return p, nil
}

// BindInsertSource binds the query of INSERT INTO t [(columns)] query, as
// BindQuery does, where target holds the types of the columns the query
// fills, in order. As in Postgres, an untyped literal or parameter in the
// query's VALUES rows or select list takes its target column's type
// (INSERT INTO t (a, b) VALUES ($1, $2) gives $1 and $2 the types of a and
// b); other values keep their own types for the INSERT's assignment cast.
// A UNION's columns are typed by the UNION, not by the target.
func (b *Binder) BindInsertSource(n *pg_query.Node, target []types.Type) (plan.Node, error) {
	b.hint = target
	defer func() { b.hint = nil }()
	return b.BindQuery(n)
}

func (b *Binder) bindQuery(n *pg_query.Node) (plan.Node, error) {
	sel := n.GetSelectStmt()
	if sel == nil {
		return nil, b.errAt(nodeLoc(n), sqlerr.FeatureNotSupported, "statement is not a query")
	}
	return b.bindSelectStmt(sel)
}

// scopeCol is one column visible to expressions over a node's output.
type scopeCol struct {
	table  string
	name   string
	typ    types.Type
	hidden bool // USING/NATURAL duplicate: invisible to unqualified names and *
}

// scope lists the columns of a node's output in order.
type scope struct {
	cols []scopeCol
}

func scopeOf(n plan.Node) *scope {
	s := &scope{}
	for _, c := range n.Schema() {
		s.cols = append(s.cols, scopeCol{table: c.Table, name: c.Name, typ: c.Type})
	}
	return s
}

// requalify sets every column's qualifier to alias (a subquery or a
// renamed relation).
func (s *scope) requalify(alias string) {
	for i := range s.cols {
		s.cols[i].table = alias
	}
}

func (s *scope) concat(o *scope) *scope {
	out := &scope{cols: append(append([]scopeCol(nil), s.cols...), o.cols...)}
	return out
}

// resolve finds a column by optional qualifier and name.
func (b *Binder) resolve(s *scope, qual, name string, loc int32) (int, error) {
	found := -1
	qualSeen := qual == ""
	for i, c := range s.cols {
		if qual != "" {
			if c.table != qual {
				continue
			}
			qualSeen = true
		} else if c.hidden {
			continue
		}
		if c.name != name {
			continue
		}
		if found >= 0 {
			return 0, b.errAt(loc, sqlerr.AmbiguousColumn, "column reference %q is ambiguous", name)
		}
		found = i
	}
	if found < 0 {
		if !qualSeen {
			return 0, b.errAt(loc, sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", qual)
		}
		e := sqlerr.New(sqlerr.UndefinedColumn, "column %q does not exist", name)
		if qual != "" {
			e = sqlerr.New(sqlerr.UndefinedColumn, "column %s.%s does not exist", qual, name)
		}
		e.Hint = columnHint(s, qual, name)
		return 0, b.atLoc(loc, e)
	}
	return found, nil
}

func strVal(n *pg_query.Node) string {
	if s := n.GetString_(); s != nil {
		return s.GetSval()
	}
	return ""
}

func names(ns []*pg_query.Node) []string {
	out := make([]string, 0, len(ns))
	for _, n := range ns {
		out = append(out, strVal(n))
	}
	return out
}

// qualifiedName joins a possibly schema-qualified name; the "public" and
// "pg_catalog" schemas are the only ones, and are dropped.
func relName(rv *pg_query.RangeVar) string {
	name := rv.GetRelname()
	if s := rv.GetSchemaname(); s != "" && s != "public" {
		return s + "." + name
	}
	return name
}

func lower(s string) string { return strings.ToLower(s) }
