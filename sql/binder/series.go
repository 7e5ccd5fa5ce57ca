package binder

import (
	"math"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// maxSeriesRows bounds the rows generate_series makes in a statement the
// batch executor runs (INSERT ... SELECT, UPDATE and DELETE): they are
// bound as constants and held in memory. A SELECT over generate_series
// runs on the OLAP engine, which streams it, and has no bound.
const maxSeriesRows = 1_000_000

// isGenerateSeries reports whether rf is generate_series(...).
func isGenerateSeries(rf *pg_query.RangeFunction) bool {
	if len(rf.GetFunctions()) != 1 {
		return false
	}
	items := rf.GetFunctions()[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return false
	}
	n := names(items[0].GetFuncCall().GetFuncname())
	return len(n) > 0 && lower(n[len(n)-1]) == "generate_series" && (len(n) == 1 || lower(n[0]) == "pg_catalog")
}

// bindGenerateSeries binds Postgres's generate_series(start, stop [,
// step]) over integers with constant arguments as the constant relation
// of its values (one column, named by the alias or generate_series; an
// integer type, bigint when an argument is). A zero step is 22023, as in
// Postgres; more than maxSeriesRows rows is 54000.
func (b *Binder) bindGenerateSeries(rf *pg_query.RangeFunction) (plan.Node, *scope, error) {
	fc := rf.GetFunctions()[0].GetList().GetItems()[0].GetFuncCall()
	loc := fc.GetLocation()
	args := fc.GetArgs()
	if len(args) != 2 && len(args) != 3 {
		return nil, nil, b.errAt(loc, sqlerr.UndefinedFunction, "function generate_series takes 2 or 3 arguments, not %d", len(args))
	}
	typ := types.Int32
	var vals [3]int64
	vals[2] = 1
	for i, a := range args {
		e, err := b.bindExpr(a, exprCtx{clause: "FROM"})
		if err != nil {
			return nil, nil, err
		}
		if e, err = b.fold(e, nodeLoc(a)); err != nil {
			return nil, nil, err
		}
		c, ok := e.(*expr.Const)
		switch {
		case !ok:
			return nil, nil, b.errAt(nodeLoc(a), sqlerr.FeatureNotSupported, "generate_series needs constant arguments")
		case c.Value.IsNull():
			// Postgres returns no rows for a NULL argument.
			return b.seriesValues(rf, nil, typ)
		}
		switch c.Typ.Kind {
		case types.KindInt64:
			typ = types.Int64
		case types.KindInt16, types.KindInt32:
		default:
			return nil, nil, b.errAt(nodeLoc(a), sqlerr.UndefinedFunction, "function generate_series(%s) does not exist: Strata's takes integers", c.Typ)
		}
		vals[i] = c.Value.Int64()
	}
	start, stop, step := vals[0], vals[1], vals[2]
	if step == 0 {
		return nil, nil, b.errAt(loc, sqlerr.InvalidParameterValue, "step size cannot equal zero")
	}
	var rows []int64
	for v := start; (step > 0 && v <= stop) || (step < 0 && v >= stop); v += step {
		if len(rows) == maxSeriesRows {
			e := sqlerr.From(b.errAt(loc, sqlerr.ProgramLimitExceeded, "generate_series makes more than %d rows, the most INSERT ... SELECT, UPDATE, DELETE and EXPLAIN take from a series", maxSeriesRows))
			e.Hint = "A SELECT reads any number of rows from generate_series; to insert more, insert the series in parts (generate_series(1, 1000000), then generate_series(1000001, 2000000), ...)."
			return nil, nil, e
		}
		rows = append(rows, v)
		if (step > 0 && v > math.MaxInt64-step) || (step < 0 && v < math.MinInt64-step) {
			break
		}
	}
	return b.seriesValues(rf, rows, typ)
}

// seriesValues is the constant relation of a series' values, named by
// rf's alias.
func (b *Binder) seriesValues(rf *pg_query.RangeFunction, vals []int64, typ types.Type) (plan.Node, *scope, error) {
	table, col := "generate_series", "generate_series"
	if a := rf.GetAlias(); a != nil {
		table = a.GetAliasname()
		if cn := a.GetColnames(); len(cn) > 1 {
			return nil, nil, b.errAt(deepLoc(rf), sqlerr.SyntaxError, "table %q has 1 column available but %d columns specified", table, len(cn))
		} else if len(cn) == 1 {
			col = strVal(cn[0])
		} else {
			col = table
		}
	}
	v := &plan.Values{Cols: []plan.Column{{Table: table, Name: col, Type: typ, NotNull: true}}}
	for _, x := range vals {
		d := types.NewInt64(x)
		if typ.Kind == types.KindInt32 {
			d = types.NewInt32(int32(x))
		}
		v.Rows = append(v.Rows, []expr.Expr{&expr.Const{Value: d, Typ: typ}})
	}
	sc := &scope{cols: []scopeCol{{table: table, name: col, typ: typ}}}
	return v, sc, nil
}
