package server

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/ddl"
	"github.com/stratadb/strata/sql/olap"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/pgwire"
	"github.com/stratadb/strata/sql/sqlerr"
)

// What psql sends beyond SELECTs of tables.
//
// psql's \d SCHEMA.NAME looks the relation up in pg_class by schema and
// name; the emulated catalog (sql/olap, [catalog-emulation]) lists the
// database's tables and views, and for the system tables
// (strata_catalog.tables, .jobs, ...) the session adds them, in schema
// strata_catalog, as views (their rows are computed when read). Their
// columns are those the binder gives SELECT * of each, found once per
// process: the system tables are fixed in the binary.
//
// pg_sleep(seconds), which scripts and tests call to wait, is answered by
// the session, since neither executor has it: a SELECT without FROM whose
// select list calls pg_sleep with a constant waits that long (all its
// calls, one after the other, as PostgreSQL evaluates them) when it is
// executed, then runs with each call replaced by a NULL named pg_sleep,
// which is what psql shows of PostgreSQL's void. The wait ends early with
// 57014 on a cancel request or statement_timeout. A pg_sleep anywhere
// else (over a table, in a WHERE) is refused as an unknown function.

// systemRelations are the system tables as TableInfos, found once (nil
// until found).
var systemRelations struct {
	sync.Mutex
	rels []olap.TableInfo
}

// catalogContext returns ctx carrying the system tables for the emulated
// catalog (olap.WithSystemRelations).
func (s *Session) catalogContext(ctx context.Context) (context.Context, error) {
	systemRelations.Lock()
	defer systemRelations.Unlock()
	if systemRelations.rels == nil {
		var rels []olap.TableInfo
		for _, name := range engine.SystemTables() {
			st, err := parser.ParseOne("SELECT * FROM " + name)
			if err != nil {
				return ctx, err
			}
			p, err := s.e.Bind(ctx, s.db, st.Node, st.SQL, s.evalContext(), nil)
			if err != nil {
				return ctx, fmt.Errorf("system table %s: %w", name, err)
			}
			schema, table, _ := strings.Cut(name, ".")
			ti := olap.TableInfo{Schema: schema, Name: table, Kind: olap.KindView}
			for _, c := range p.Schema() {
				ti.Columns = append(ti.Columns, olap.ColumnInfo{Name: c.Name, Type: c.Type})
			}
			rels = append(rels, ti)
		}
		systemRelations.rels = rels
	}
	return olap.WithSystemRelations(ctx, systemRelations.rels), nil
}

// sleepStatement is a SELECT whose pg_sleep calls the session answers: it
// waits d, then runs inner.
type sleepStatement struct {
	d     time.Duration
	inner *pgwire.Statement
}

// sleepCalls returns, for a SELECT without FROM whose select list calls
// pg_sleep(constant), its text with each such call replaced by
// NULL::text AS pg_sleep and the total wait; ok is false for any other
// statement.
func sleepCalls(q *ddl.Query) (text string, d time.Duration, ok bool, err error) {
	sel := q.Node.GetSelectStmt()
	if sel == nil || len(sel.FromClause) > 0 || sel.Op != pg_query.SetOperation_SETOP_NONE || !strings.Contains(strings.ToLower(q.QueryText), "pg_sleep") {
		return "", 0, false, nil
	}
	node := proto.Clone(q.Node).(*pg_query.Node)
	sel = node.GetSelectStmt()
	var total float64
	for _, t := range sel.TargetList {
		rt := t.GetResTarget()
		if rt == nil {
			continue
		}
		fc := rt.Val.GetFuncCall()
		if fc == nil || !isPgSleep(fc) {
			continue
		}
		if len(fc.Args) != 1 {
			return "", 0, false, sqlerr.New(sqlerr.UndefinedFunction, "function pg_sleep with %d arguments does not exist", len(fc.Args))
		}
		secs, isConst := constSeconds(fc.Args[0])
		if !isConst {
			return "", 0, false, sqlerr.New(sqlerr.FeatureNotSupported, "pg_sleep takes a constant number of seconds here")
		}
		if secs > 0 {
			total += secs
		}
		rt.Val = nullText()
		if rt.Name == "" {
			rt.Name = "pg_sleep"
		}
		ok = true
	}
	if !ok {
		return "", 0, false, nil
	}
	text, err = parser.Deparse(node)
	if err != nil {
		return "", 0, false, err
	}
	total = min(total, float64(math.MaxInt64/int64(time.Second)))
	return text, time.Duration(total * float64(time.Second)), true, nil
}

// nullText returns the expression NULL::text, parsed.
func nullText() *pg_query.Node {
	st, err := parser.ParseOne("SELECT NULL::text")
	if err != nil {
		panic("server: the parser refuses SELECT NULL::text: " + err.Error())
	}
	return st.Node.GetSelectStmt().TargetList[0].GetResTarget().Val
}

// isPgSleep tells a call of pg_sleep or pg_catalog.pg_sleep.
func isPgSleep(fc *pg_query.FuncCall) bool {
	var parts []string
	for _, n := range fc.Funcname {
		parts = append(parts, n.GetString_().GetSval())
	}
	name := strings.Join(parts, ".")
	return name == "pg_sleep" || name == "pg_catalog.pg_sleep"
}

// constSeconds reads a constant number of seconds: an integer or decimal
// literal, possibly negated or cast (pg_sleep(0.5), pg_sleep('1')).
func constSeconds(n *pg_query.Node) (float64, bool) {
	switch {
	case n.GetTypeCast() != nil:
		return constSeconds(n.GetTypeCast().Arg)
	case n.GetAExpr() != nil:
		e := n.GetAExpr()
		if e.Lexpr == nil && len(e.Name) == 1 && e.Name[0].GetString_().GetSval() == "-" {
			v, ok := constSeconds(e.Rexpr)
			return -v, ok
		}
	case n.GetAConst() != nil:
		c := n.GetAConst()
		switch {
		case c.GetIval() != nil:
			return float64(c.GetIval().Ival), true
		case c.GetFval() != nil:
			v, err := strconv.ParseFloat(c.GetFval().Fval, 64)
			return v, err == nil
		case c.GetSval() != nil:
			v, err := strconv.ParseFloat(strings.TrimSpace(c.GetSval().Sval), 64)
			return v, err == nil
		}
	}
	return 0, false
}

// prepareSleep prepares a SELECT that calls pg_sleep (see above), or
// reports that q is not one.
func (s *Session) prepareSleep(ctx context.Context, q *ddl.Query, paramTypes []types.Type) (*pgwire.Statement, bool, error) {
	text, d, ok, err := sleepCalls(q)
	if err != nil || !ok {
		return nil, ok, err
	}
	inner, err := s.prepare(ctx, text, paramTypes)
	if err != nil {
		return nil, true, err
	}
	return &pgwire.Statement{SQL: inner.SQL, Columns: inner.Columns, Params: inner.Params, Impl: &sleepStatement{d: d, inner: inner}}, true, nil
}

// sleep waits d or until ctx ends (its error).
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
