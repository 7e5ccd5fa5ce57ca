package server

import (
	"context"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/ddl"
	"github.com/stratadb/strata/sql/sqlerr"
)

// oneShotCopyNotice is the NOTICE (00000) after an INSERT INTO t SELECT
// ... that read a table a connector fills: Flink's INSERT INTO is a
// continuous job, Strata's copies the rows the table holds now, once;
// CREATE SINK ... INTO t AS SELECT is the continuous form (README,
// "Sinks into tables"). nil when the query reads no such table, or the
// catalog cannot be read (the INSERT has succeeded: the notice is
// advice, never its error).
func (s *Session) oneShotCopyNotice(ctx context.Context, st *ddl.Insert) *sqlerr.Error {
	var names []string
	rangeVars(st.Rows, &names)
	if len(names) == 0 {
		return nil
	}
	cat, err := s.e.Catalog(ctx)
	if err != nil {
		return nil
	}
	for _, n := range names {
		if fedByConnector(cat, ddl.ObjectName(n, s.db)) {
			return sqlerr.New(sqlerr.SuccessfulCompletion,
				"INSERT copied the rows of %s once; CREATE SINK name INTO %s AS SELECT ... keeps copying them into %s as %s changes", n, st.Table, st.Table, n)
		}
	}
	return nil
}

// fedByConnector reports whether a connector fills table name: one named
// by its WITH (connector = '...'), or a CDC source's (FROM src TABLE
// '...').
func fedByConnector(cat *catalog.Catalog, name catalog.ObjectName) bool {
	t, err := cat.Table(name)
	if err != nil {
		return false
	}
	return t.Options["connector"] != "" || t.Options[engine.OptionSource] != ""
}

// rangeVars appends the names of the relations a query's FROM clauses
// name (db.name when qualified), through joins, subqueries in FROM,
// set operations and WITH; other expressions are not searched.
func rangeVars(n *pg_query.Node, out *[]string) {
	if n == nil {
		return
	}
	switch {
	case n.GetSelectStmt() != nil:
		sel := n.GetSelectStmt()
		for _, f := range sel.GetFromClause() {
			rangeVars(f, out)
		}
		for _, cte := range sel.GetWithClause().GetCtes() {
			rangeVars(cte.GetCommonTableExpr().GetCtequery(), out)
		}
		if sel.GetLarg() != nil {
			rangeVars(&pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel.GetLarg()}}, out)
		}
		if sel.GetRarg() != nil {
			rangeVars(&pg_query.Node{Node: &pg_query.Node_SelectStmt{SelectStmt: sel.GetRarg()}}, out)
		}
	case n.GetRangeVar() != nil:
		rv := n.GetRangeVar()
		name := rv.GetRelname()
		if rv.GetSchemaname() != "" {
			name = rv.GetSchemaname() + "." + name
		}
		*out = append(*out, name)
	case n.GetJoinExpr() != nil:
		rangeVars(n.GetJoinExpr().GetLarg(), out)
		rangeVars(n.GetJoinExpr().GetRarg(), out)
	case n.GetRangeSubselect() != nil:
		rangeVars(n.GetRangeSubselect().GetSubquery(), out)
	}
}
