package server

import (
	"context"
	"strings"
	"sync"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/ddl"
	"github.com/stratadb/strata/sql/olap"
	"github.com/stratadb/strata/sql/pgwire"
	"github.com/stratadb/strata/sql/sqlerr"
)

// systemOLAP is the DuckDB engine that answers queries over the system
// tables that Strata's own executor refuses as unsupported (0A000), such
// as a scalar subquery that computes no aggregate
// (SELECT (SELECT committed_epoch FROM strata_catalog.tables WHERE ...)):
// the same forms run on the OLAP engine over user tables. The system
// tables' rows are computed by the executor (SELECT * FROM each) and
// handed to DuckDB by value for that query only (olap.QueryRelations), so
// the engine caches nothing between queries. It is opened at first use
// with one thread and shared by every session of the process, since
// olap.Engine is safe for concurrent queries; it lives as long as the
// process.
var systemOLAP struct {
	once sync.Once
	e    *olap.Engine
	err  error
}

// systemEngine returns systemOLAP's engine, opening it at first use.
func systemEngine() (*olap.Engine, error) {
	systemOLAP.once.Do(func() {
		systemOLAP.e, systemOLAP.err = olap.Open(olap.Options{Threads: 1, MemoryLimit: "256MB", CacheTables: 1, CacheRows: 1})
	})
	return systemOLAP.e, systemOLAP.err
}

// systemRelations returns the rows of the system tables q reads, as
// relations for systemOLAP, and ok true, when q reads system tables only
// and names no epoch; otherwise ok is false.
func (s *Session) systemRelations(ctx context.Context, q *ddl.Query) (rels []olap.Relation, ok bool, err error) {
	if q.AtEpoch != nil || !strings.Contains(strings.ToLower(q.QueryText), engine.SystemSchema) {
		return nil, false, nil // not worth opening systemOLAP for
	}
	oe, err := systemEngine()
	if err != nil {
		return nil, false, nil
	}
	names, err := oe.ReferencedTables(ctx, q.QueryText)
	if err != nil || len(names) == 0 {
		return nil, false, nil
	}
	for _, n := range names {
		if !strings.HasPrefix(n, engine.SystemSchema+".") {
			return nil, false, nil
		}
	}
	for _, n := range names {
		stmts, err := ddl.Parse("SELECT * FROM " + n)
		if err != nil || len(stmts) != 1 {
			return nil, false, nil
		}
		all, isQuery := stmts[0].(*ddl.Query)
		if !isQuery {
			return nil, false, nil
		}
		res, err := s.query(ctx, all, nil)
		if err != nil {
			return nil, true, err
		}
		rel := olap.Relation{Name: n, Rows: res.Rows}
		for _, c := range res.Columns {
			rel.Columns = append(rel.Columns, olap.Column{Name: c.Name, Type: c.Type})
		}
		rels = append(rels, rel)
	}
	return rels, true, nil
}

// prepareSystem prepares q, which Strata's executor refused with refused
// (0A000), for systemOLAP when it reads system tables only; handled is
// false otherwise, and when DuckDB cannot prepare it either (the
// executor's error then stands).
func (s *Session) prepareSystem(ctx context.Context, text string, q *ddl.Query, refused error) (*pgwire.Statement, bool) {
	if sqlerr.Code(refused) != sqlerr.FeatureNotSupported {
		return nil, false
	}
	rels, ok, err := s.systemRelations(ctx, q)
	if !ok || err != nil {
		return nil, false
	}
	oe, err := systemEngine()
	if err != nil {
		return nil, false
	}
	cols, params, err := oe.DescribeRelations(ctx, rels, q.QueryText)
	if err != nil {
		return nil, false
	}
	for i, p := range params {
		if p.Kind == types.KindUnknown {
			params[i] = types.Text
		}
	}
	return &pgwire.Statement{SQL: text, Columns: olapColumns(cols), Params: params,
		Impl: &olapStatement{q: q, system: true, text: q.QueryText}}, true
}

// runSystem runs a statement prepareSystem prepared, over the system
// tables' rows as they are now.
func (s *Session) runSystem(ctx context.Context, st *olapStatement, params []types.Datum) (*pgwire.Result, error) {
	rels, ok, err := s.systemRelations(ctx, st.q)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "the query no longer reads system tables only")
	}
	oe, err := systemEngine()
	if err != nil {
		return nil, err
	}
	res, err := oe.QueryRelations(ctx, rels, st.text, olap.QueryOptions{Location: s.loc, Params: params})
	if err != nil {
		return nil, err
	}
	return &pgwire.Result{Columns: olapColumns(res.Columns), Rows: res.Rows, Tag: pgwire.SelectTag(len(res.Rows))}, nil
}
