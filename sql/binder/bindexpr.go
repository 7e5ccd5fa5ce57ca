package binder

import (
	"fmt"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/agg"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// aggCollector gathers the aggregate calls of a grouped query. nil where
// aggregates are not allowed (WHERE, ON, GROUP BY, inside an aggregate).
type aggCollector struct {
	calls []plan.AggCall
	index map[string]int
}

// aggRef stands for the result of aggregate idx until the grouped query is
// rewritten over the Aggregate's output; it is never evaluated.
type aggRef struct {
	idx  int
	typ  types.Type
	text string
}

func (a *aggRef) Type() types.Type { return a.typ }
func (a *aggRef) Eval(*expr.Context, types.Row) (types.Datum, error) {
	panic("binder: aggregate reference evaluated before the grouping rewrite")
}
func (a *aggRef) String() string { return a.text }

// exprCtx says where an expression appears, for error messages and rules.
type exprCtx struct {
	scope  *scope
	aggs   *aggCollector // nil: aggregates not allowed
	clause string        // "WHERE", "JOIN conditions", "GROUP BY", ...
}

// bindExpr binds one expression.
func (b *Binder) bindExpr(n *pg_query.Node, ec exprCtx) (expr.Expr, error) {
	switch {
	case n.GetColumnRef() != nil:
		return b.bindColumnRef(n.GetColumnRef(), ec)
	case n.GetAConst() != nil:
		return b.bindConst(n.GetAConst())
	case n.GetTypeCast() != nil:
		tc := n.GetTypeCast()
		t, err := b.resolveType(tc.GetTypeName())
		if err != nil {
			return nil, err
		}
		// INTERVAL '10' SECOND: a bare number takes the qualifier's unit.
		if t.Kind == types.KindInterval {
			if c := tc.GetArg().GetAConst(); c != nil && c.GetSval() != nil {
				if unit := intervalUnit(tc.GetTypeName()); unit != "" {
					s := strings.TrimSpace(c.GetSval().GetSval())
					if _, err := strconv.ParseFloat(s, 64); err == nil {
						v, err := types.ParseText(types.Interval, s+" "+unit, b.ctx.Location())
						if err != nil {
							return nil, b.atLoc(tc.GetLocation(), err)
						}
						return &expr.Const{Value: v, Typ: types.Interval}, nil
					}
				}
			}
		}
		arg, err := b.bindExpr(tc.GetArg(), ec)
		if err != nil {
			return nil, err
		}
		return b.coerce(arg, t, true, tc.GetLocation())
	case n.GetAExpr() != nil:
		return b.bindAExpr(n.GetAExpr(), ec)
	case n.GetBoolExpr() != nil:
		be := n.GetBoolExpr()
		args := make([]expr.Expr, 0, len(be.GetArgs()))
		for _, a := range be.GetArgs() {
			e, err := b.bindBool(a, ec, be.GetLocation())
			if err != nil {
				return nil, err
			}
			args = append(args, e)
		}
		var out expr.Expr
		switch be.GetBoolop() {
		case pg_query.BoolExprType_AND_EXPR:
			if c, ok := foldBool(args, true); ok {
				return c, nil
			}
			out = &expr.And{Args: args}
		case pg_query.BoolExprType_OR_EXPR:
			if c, ok := foldBool(args, false); ok {
				return c, nil
			}
			out = &expr.Or{Args: args}
		default:
			out = &expr.Not{Arg: args[0]}
		}
		return b.fold(out, be.GetLocation())
	case n.GetNullTest() != nil:
		nt := n.GetNullTest()
		var arg expr.Expr
		var err error
		if pr := nt.GetArg().GetParamRef(); pr != nil {
			arg, err = b.bindParamOccurrence(pr)
		} else {
			arg, err = b.bindExpr(nt.GetArg(), ec)
		}
		if err != nil {
			return nil, err
		}
		return b.fold(&expr.IsNull{Arg: arg, Negate: nt.GetNulltesttype() == pg_query.NullTestType_IS_NOT_NULL}, nt.GetLocation())
	case n.GetBooleanTest() != nil:
		bt := n.GetBooleanTest()
		arg, err := b.bindBool(bt.GetArg(), ec, bt.GetLocation())
		if err != nil {
			return nil, err
		}
		tru := &expr.Const{Value: types.NewBool(true), Typ: types.Bool}
		fls := &expr.Const{Value: types.NewBool(false), Typ: types.Bool}
		var out expr.Expr
		switch bt.GetBooltesttype() {
		case pg_query.BoolTestType_IS_TRUE:
			out = &expr.IsDistinctFrom{Left: arg, Right: tru, Negate: true}
		case pg_query.BoolTestType_IS_NOT_TRUE:
			out = &expr.IsDistinctFrom{Left: arg, Right: tru}
		case pg_query.BoolTestType_IS_FALSE:
			out = &expr.IsDistinctFrom{Left: arg, Right: fls, Negate: true}
		case pg_query.BoolTestType_IS_NOT_FALSE:
			out = &expr.IsDistinctFrom{Left: arg, Right: fls}
		case pg_query.BoolTestType_IS_UNKNOWN:
			out = &expr.IsNull{Arg: arg}
		default:
			out = &expr.IsNull{Arg: arg, Negate: true}
		}
		return b.fold(out, bt.GetLocation())
	case n.GetCaseExpr() != nil:
		return b.bindCase(n.GetCaseExpr(), ec)
	case n.GetCoalesceExpr() != nil:
		ce := n.GetCoalesceExpr()
		args, err := b.bindList(ce.GetArgs(), ec)
		if err != nil {
			return nil, err
		}
		args, t, err := b.coerceAll(args, "COALESCE", ce.GetLocation())
		if err != nil {
			return nil, err
		}
		return b.fold(&expr.Coalesce{Args: args, Typ: t}, ce.GetLocation())
	case n.GetMinMaxExpr() != nil:
		mm := n.GetMinMaxExpr()
		args, err := b.bindList(mm.GetArgs(), ec)
		if err != nil {
			return nil, err
		}
		what := "GREATEST"
		if mm.GetOp() == pg_query.MinMaxOp_IS_LEAST {
			what = "LEAST"
		}
		args, _, err = b.coerceAll(args, what, mm.GetLocation())
		if err != nil {
			return nil, err
		}
		return b.call(strings.ToLower(what), args, mm.GetLocation())
	case n.GetFuncCall() != nil:
		return b.bindFuncCall(n.GetFuncCall(), ec)
	case n.GetSqlvalueFunction() != nil:
		sv := n.GetSqlvalueFunction()
		name := map[pg_query.SQLValueFunctionOp]string{
			pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIMESTAMP: "now",
			pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:      "current_date",
			pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER:      "current_user",
			pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER:      "current_user",
			pg_query.SQLValueFunctionOp_SVFOP_USER:              "current_user",
			pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:      "current_user",
			pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:    "current_schema",
			pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:   "current_database",
		}[sv.GetOp()]
		switch sv.GetOp() {
		case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME:
			// The statement's start time in the session's time zone, as
			// PostgreSQL's GetSQLLocalTimestamp: now() cast without zone.
			now, err := b.call("now", nil, sv.GetLocation())
			if err != nil {
				return nil, err
			}
			to := types.Timestamp
			if sv.GetOp() == pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME {
				to = types.Time
			}
			return b.coerce(now, to, true, sv.GetLocation())
		}
		if name == "" || !b.fns.Has(name) {
			return nil, b.errAt(sv.GetLocation(), sqlerr.FeatureNotSupported, "this SQL value function is not supported")
		}
		return b.call(name, nil, sv.GetLocation())
	case n.GetSubLink() != nil:
		e := sqlerr.New(sqlerr.FeatureNotSupported, "subqueries in expressions are not supported")
		e.Hint = subqueryHint
		return nil, b.atLoc(n.GetSubLink().GetLocation(), e)
	case n.GetParamRef() != nil:
		return b.bindParam(n.GetParamRef())
	}
	return nil, b.errAt(nodeLoc(n), sqlerr.FeatureNotSupported, "unsupported expression %T", n.GetNode())
}

// subqueryHint is the hint of a subquery the binder refuses (a scalar
// subquery in WHERE, EXISTS in the select list): the forms a view takes,
// and the join that replaces the others.
const subqueryHint = "Write it as a join: a view takes [NOT] EXISTS and [NOT] IN subqueries in WHERE and scalar aggregate subqueries in the select list; join any other subquery's result instead, as in FROM t JOIN (SELECT ...) AS s ON ..."

func (b *Binder) bindList(ns []*pg_query.Node, ec exprCtx) ([]expr.Expr, error) {
	out := make([]expr.Expr, 0, len(ns))
	for _, n := range ns {
		e, err := b.bindExpr(n, ec)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}

// bindBool binds an expression that must be BOOLEAN (42804 otherwise).
func (b *Binder) bindBool(n *pg_query.Node, ec exprCtx, loc int32) (expr.Expr, error) {
	e, err := b.bindExpr(n, ec)
	if err != nil {
		return nil, err
	}
	if loc < 0 {
		loc = nodeLoc(n)
	}
	if isUnknownLiteral(e) {
		return b.coerce(e, types.Bool, false, loc)
	}
	if e.Type().Kind != types.KindBool {
		return nil, b.errAt(loc, sqlerr.DatatypeMismatch, "argument of %s must be type boolean, not type %s", ec.clauseOr("AND/OR/NOT"), typeName(e.Type()))
	}
	return e, nil
}

func (ec exprCtx) clauseOr(def string) string {
	if ec.clause != "" {
		return ec.clause
	}
	return def
}

func (b *Binder) bindColumnRef(cr *pg_query.ColumnRef, ec exprCtx) (expr.Expr, error) {
	fields := cr.GetFields()
	var qual, name string
	for _, f := range fields {
		if f.GetAStar() != nil {
			return nil, b.errAt(cr.GetLocation(), sqlerr.FeatureNotSupported, "* is only allowed at the top of a select list")
		}
	}
	switch len(fields) {
	case 1:
		name = strVal(fields[0])
	case 2:
		qual, name = strVal(fields[0]), strVal(fields[1])
	default:
		return nil, b.errAt(cr.GetLocation(), sqlerr.FeatureNotSupported, "cross-database references are not implemented: %s", strings.Join(names(fields), "."))
	}
	if ec.scope == nil {
		return nil, b.errAt(cr.GetLocation(), sqlerr.UndefinedColumn, "column %q does not exist", name)
	}
	i, err := b.resolve(ec.scope, qual, name, cr.GetLocation())
	if err != nil {
		return nil, err
	}
	c := ec.scope.cols[i]
	display := name
	if qual != "" {
		display = qual + "." + name
	}
	return &expr.ColumnRef{Index: i, Typ: c.typ, Name: display}, nil
}

func (b *Binder) bindConst(c *pg_query.A_Const) (expr.Expr, error) {
	switch {
	case c.GetIsnull():
		return &expr.Const{Value: types.Null, Typ: types.Unknown}, nil
	case c.GetIval() != nil:
		return &expr.Const{Value: types.NewInt32(c.GetIval().GetIval()), Typ: types.Int32}, nil
	case c.GetFval() != nil:
		s := c.GetFval().GetFval()
		if !strings.ContainsAny(s, ".eE") {
			// An integer beyond INTEGER (or -2147483648, which the grammar
			// folds from a negated 2147483648) is BIGINT, or INTEGER when
			// it fits after all, as Postgres's make_const decides.
			if v, err := strconv.ParseInt(s, 10, 64); err == nil {
				if v == int64(int32(v)) {
					return &expr.Const{Value: types.NewInt32(int32(v)), Typ: types.Int32}, nil
				}
				return &expr.Const{Value: types.NewInt64(v), Typ: types.Int64}, nil
			}
		}
		v, err := types.ParseText(types.Numeric, s, nil)
		if err != nil {
			return nil, b.atLoc(c.GetLocation(), err)
		}
		return &expr.Const{Value: v, Typ: types.Numeric}, nil
	case c.GetSval() != nil:
		k := &expr.Const{Value: types.NewText(c.GetSval().GetSval()), Typ: types.Unknown}
		if b.litLocs == nil {
			b.litLocs = map[*expr.Const]int32{}
		}
		b.litLocs[k] = c.GetLocation()
		return k, nil
	case c.GetBoolval() != nil:
		return &expr.Const{Value: types.NewBool(c.GetBoolval().GetBoolval()), Typ: types.Bool}, nil
	}
	return nil, b.errAt(c.GetLocation(), sqlerr.FeatureNotSupported, "bit-string literals are not supported")
}

// resolveType turns a TypeName into a Strata type; arrays and unknown
// names are errors.
func (b *Binder) resolveType(tn *pg_query.TypeName) (types.Type, error) {
	parts := names(tn.GetNames())
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	if len(tn.GetArrayBounds()) > 0 {
		return types.Type{}, b.errAt(tn.GetLocation(), sqlerr.FeatureNotSupported, "array types are not supported")
	}
	name := strings.Join(parts, ".")
	// Internal names the grammar produces for SQL spellings.
	switch name {
	case "int2":
		name = "smallint"
	case "int4":
		name = "integer"
	case "int8":
		name = "bigint"
	case "float4":
		name = "real"
	case "float8":
		name = "double precision"
	case "bpchar":
		name = "char"
	case "timestamptz":
		name = "timestamp with time zone"
	case "timetz":
		return types.Type{}, b.errAt(tn.GetLocation(), sqlerr.FeatureNotSupported, "type time with time zone is not supported")
	}
	if name == "interval" {
		return types.Interval, nil // field qualifiers are handled by the caller
	}
	var mods []string
	for _, m := range tn.GetTypmods() {
		c := m.GetAConst()
		if c == nil || c.GetIval() == nil {
			return types.Type{}, b.errAt(tn.GetLocation(), sqlerr.SyntaxError, "type modifiers must be simple constants or identifiers")
		}
		mods = append(mods, strconv.Itoa(int(c.GetIval().GetIval())))
	}
	spelled := name
	if len(mods) > 0 {
		if i := strings.Index(name, " with"); i >= 0 {
			spelled = name[:i] + "(" + strings.Join(mods, ",") + ")" + name[i:]
		} else {
			spelled = name + "(" + strings.Join(mods, ",") + ")"
		}
	}
	t, err := types.ParseType(spelled)
	if err != nil {
		return types.Type{}, b.errAt(tn.GetLocation(), sqlerr.UndefinedObject, "type %q does not exist", spelled)
	}
	return t, nil
}

// Interval field masks of Postgres's datetime.h (INTERVAL_MASK).
const (
	maskMonth  = 1 << 1
	maskYear   = 1 << 2
	maskDay    = 1 << 3
	maskHour   = 1 << 10
	maskMinute = 1 << 11
	maskSecond = 1 << 12
)

// intervalUnit returns the unit a bare number in an INTERVAL literal with
// field qualifiers stands for: the qualifier's last (smallest) field.
func intervalUnit(tn *pg_query.TypeName) string {
	mods := tn.GetTypmods()
	if len(mods) == 0 {
		return ""
	}
	c := mods[0].GetAConst()
	if c == nil || c.GetIval() == nil {
		return ""
	}
	m := c.GetIval().GetIval()
	switch {
	case m&maskSecond != 0:
		return "seconds"
	case m&maskMinute != 0:
		return "minutes"
	case m&maskHour != 0:
		return "hours"
	case m&maskDay != 0:
		return "days"
	case m&maskMonth != 0:
		return "months"
	case m&maskYear != 0:
		return "years"
	}
	return ""
}

func opName(ns []*pg_query.Node) string {
	parts := names(ns)
	return parts[len(parts)-1]
}

func (b *Binder) bindAExpr(a *pg_query.A_Expr, ec exprCtx) (expr.Expr, error) {
	loc := a.GetLocation()
	switch a.GetKind() {
	case pg_query.A_Expr_Kind_AEXPR_OP:
		op := opName(a.GetName())
		if a.GetLexpr() == nil {
			r, err := b.bindExpr(a.GetRexpr(), ec)
			if err != nil {
				return nil, err
			}
			if op == "+" {
				return r, nil
			}
			return b.call(op, []expr.Expr{r}, loc)
		}
		l, err := b.bindExpr(a.GetLexpr(), ec)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(a.GetRexpr(), ec)
		if err != nil {
			return nil, err
		}
		return b.call(op, []expr.Expr{l, r}, loc)
	case pg_query.A_Expr_Kind_AEXPR_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT, pg_query.A_Expr_Kind_AEXPR_NULLIF:
		l, err := b.bindExpr(a.GetLexpr(), ec)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(a.GetRexpr(), ec)
		if err != nil {
			return nil, err
		}
		what := "IS DISTINCT FROM"
		if a.GetKind() == pg_query.A_Expr_Kind_AEXPR_NULLIF {
			what = "NULLIF"
		}
		args, _, err := b.coerceAll([]expr.Expr{l, r}, what, loc)
		if err != nil {
			return nil, err
		}
		var out expr.Expr
		switch a.GetKind() {
		case pg_query.A_Expr_Kind_AEXPR_NULLIF:
			out = &expr.NullIf{Left: args[0], Right: args[1]}
		default:
			out = &expr.IsDistinctFrom{Left: args[0], Right: args[1], Negate: a.GetKind() == pg_query.A_Expr_Kind_AEXPR_NOT_DISTINCT}
		}
		return b.fold(out, loc)
	case pg_query.A_Expr_Kind_AEXPR_IN:
		l, err := b.bindExpr(a.GetLexpr(), ec)
		if err != nil {
			return nil, err
		}
		list := a.GetRexpr().GetList()
		if list == nil {
			return nil, b.errAt(loc, sqlerr.FeatureNotSupported, "IN (subquery) is not supported")
		}
		items, err := b.bindList(list.GetItems(), ec)
		if err != nil {
			return nil, err
		}
		all, _, err := b.coerceAll(append([]expr.Expr{l}, items...), "IN", loc)
		if err != nil {
			return nil, err
		}
		return b.fold(&expr.In{Arg: all[0], List: all[1:], Negate: opName(a.GetName()) == "<>"}, loc)
	case pg_query.A_Expr_Kind_AEXPR_LIKE, pg_query.A_Expr_Kind_AEXPR_ILIKE:
		l, err := b.bindExpr(a.GetLexpr(), ec)
		if err != nil {
			return nil, err
		}
		r, err := b.bindExpr(a.GetRexpr(), ec)
		if err != nil {
			return nil, err
		}
		op := opName(a.GetName()) // ~~, !~~, ~~*, !~~*
		if b.fns.Has(op) {
			return b.call(op, []expr.Expr{l, r}, loc)
		}
		name := "like"
		if strings.Contains(op, "*") {
			name = "ilike"
		}
		e, err := b.call(name, []expr.Expr{l, r}, loc)
		if err != nil {
			return nil, err
		}
		if strings.HasPrefix(op, "!") {
			return b.fold(&expr.Not{Arg: e}, loc)
		}
		return e, nil
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN,
		pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM, pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM:
		x, err := b.bindExpr(a.GetLexpr(), ec)
		if err != nil {
			return nil, err
		}
		bounds, err := b.bindList(a.GetRexpr().GetList().GetItems(), ec)
		if err != nil {
			return nil, err
		}
		if len(bounds) != 2 {
			return nil, b.errAt(loc, sqlerr.SyntaxError, "BETWEEN needs two bounds")
		}
		between := func(lo, hi expr.Expr) (expr.Expr, error) {
			ge, err := b.call(">=", []expr.Expr{x, lo}, loc)
			if err != nil {
				return nil, err
			}
			le, err := b.call("<=", []expr.Expr{x, hi}, loc)
			if err != nil {
				return nil, err
			}
			return &expr.And{Args: []expr.Expr{ge, le}}, nil
		}
		e, err := between(bounds[0], bounds[1])
		if err != nil {
			return nil, err
		}
		k := a.GetKind()
		if k == pg_query.A_Expr_Kind_AEXPR_BETWEEN_SYM || k == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM {
			e2, err := between(bounds[1], bounds[0])
			if err != nil {
				return nil, err
			}
			e = &expr.Or{Args: []expr.Expr{e, e2}}
		}
		if k == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN || k == pg_query.A_Expr_Kind_AEXPR_NOT_BETWEEN_SYM {
			e = &expr.Not{Arg: e}
		}
		return b.fold(e, loc)
	}
	return nil, b.errAt(loc, sqlerr.FeatureNotSupported, "operator form %s is not supported", strings.TrimPrefix(a.GetKind().String(), "AEXPR_"))
}

func (b *Binder) bindCase(ce *pg_query.CaseExpr, ec exprCtx) (expr.Expr, error) {
	loc := ce.GetLocation()
	var operand expr.Expr
	if ce.GetArg() != nil {
		var err error
		if operand, err = b.bindExpr(ce.GetArg(), ec); err != nil {
			return nil, err
		}
	}
	var conds, results []expr.Expr
	for _, w := range ce.GetArgs() {
		cw := w.GetCaseWhen()
		var cond expr.Expr
		var err error
		if operand != nil {
			v, err := b.bindExpr(cw.GetExpr(), ec)
			if err != nil {
				return nil, err
			}
			if cond, err = b.call("=", []expr.Expr{operand, v}, cw.GetLocation()); err != nil {
				return nil, err
			}
		} else if cond, err = b.bindBool(cw.GetExpr(), ec, cw.GetLocation()); err != nil {
			return nil, err
		}
		r, err := b.bindExpr(cw.GetResult(), ec)
		if err != nil {
			return nil, err
		}
		conds, results = append(conds, cond), append(results, r)
	}
	all := results
	if ce.GetDefresult() != nil {
		d, err := b.bindExpr(ce.GetDefresult(), ec)
		if err != nil {
			return nil, err
		}
		all = append(append([]expr.Expr(nil), results...), d)
	}
	all, t, err := b.coerceAll(all, "CASE", loc)
	if err != nil {
		return nil, err
	}
	out := &expr.Case{Typ: t}
	for i := range conds {
		out.Whens = append(out.Whens, expr.When{Cond: conds[i], Result: all[i]})
	}
	if len(all) > len(conds) {
		out.Else = all[len(all)-1]
	}
	return b.fold(out, loc)
}

// Aggregate function names; package agg gives their result types.
var aggNames = map[string]bool{
	"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"bool_and": true, "bool_or": true, "every": true, "string_agg": true,
	"percentile_cont": true, "percentile_disc": true,
}

func (b *Binder) bindFuncCall(fc *pg_query.FuncCall, ec exprCtx) (expr.Expr, error) {
	loc := fc.GetLocation()
	parts := names(fc.GetFuncname())
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	name := lower(strings.Join(parts, "."))
	if fc.GetOver() != nil {
		if name == "row_number" {
			return nil, b.errAt(loc, sqlerr.FeatureNotSupported, "ROW_NUMBER() is only supported as a Top-N: an item of the select list of a FROM subquery (the only FROM item), "+
				"whose enclosing query's WHERE bounds it: rn <= N, rn < N, rn = 1 or rn BETWEEN 1 AND N")
		}
		return nil, b.errAt(loc, sqlerr.FeatureNotSupported, "window function %s() is not supported; window functions are ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...) "+
			"in a FROM subquery whose enclosing query's WHERE bounds it (the Top-N and deduplication patterns), "+
			"and aggregates over whole partitions, such as sum(x) OVER (PARTITION BY ...), without ORDER BY or frame", name)
	}
	if aggNames[name] {
		return b.bindAggregate(name, fc, ec)
	}
	if !b.fns.Has(name) && name != "pg_typeof" {
		return nil, b.noFunction(name, fc, ec)
	}
	if fc.GetAggStar() || fc.GetAggDistinct() || fc.GetAggFilter() != nil || len(fc.GetAggOrder()) > 0 {
		return nil, b.errAt(loc, sqlerr.WrongObjectType, "%s is not an aggregate function", name)
	}
	args, err := b.bindList(fc.GetArgs(), ec)
	if err != nil {
		return nil, err
	}
	if name == "pg_typeof" && len(args) == 1 {
		// PostgreSQL's pg_typeof names its argument's type (a regtype,
		// shown as text); the type is known here, whatever the value.
		return &expr.Const{Value: types.NewText(types.PGTypeName(args[0].Type())), Typ: types.Text}, nil
	}
	return b.call(name, args, loc)
}

// noFunctionHint is PostgreSQL's hint for a call that no function takes.
const noFunctionHint = "No function matches the given name and argument types. You might need to add explicit type casts."

// noFunction is PostgreSQL's error for a call of a function name that
// does not exist, whether it is called as an aggregate (with *,
// DISTINCT, ORDER BY or FILTER) or as a scalar: `function cnt(*) does
// not exist` or `function f(integer, text) does not exist` (42883), at
// the call, with the hint of 42883.
func (b *Binder) noFunction(name string, fc *pg_query.FuncCall, ec exprCtx) error {
	call := name + "(*)"
	if !fc.GetAggStar() {
		args, err := b.bindList(fc.GetArgs(), ec)
		if err != nil {
			return err
		}
		ts := make([]types.Type, len(args))
		for i, a := range args {
			ts[i] = a.Type()
		}
		call = describeTypes(name, ts)
	}
	e := sqlerr.From(b.errAt(fc.GetLocation(), sqlerr.UndefinedFunction, "function %s does not exist", call))
	e.Hint = noFunctionHint
	return e
}

func (b *Binder) bindAggregate(name string, fc *pg_query.FuncCall, ec exprCtx) (expr.Expr, error) {
	loc := fc.GetLocation()
	if ec.aggs == nil {
		if ec.clause == "" {
			return nil, b.errAt(loc, sqlerr.GroupingError, "aggregate function calls cannot be nested")
		}
		return nil, b.errAt(loc, sqlerr.GroupingError, "aggregate functions are not allowed in %s", ec.clause)
	}
	inner := exprCtx{scope: ec.scope} // no nested aggregates
	var args []expr.Expr
	if !fc.GetAggStar() {
		var err error
		if args, err = b.bindList(fc.GetArgs(), inner); err != nil {
			return nil, err
		}
	} else if name != "count" {
		return nil, b.errAt(loc, sqlerr.SyntaxError, "%s(*) is not allowed", name)
	}
	// The ordered-set aggregates percentile_cont(f) and percentile_disc(f)
	// WITHIN GROUP (ORDER BY x) take x, then f (DOUBLE PRECISION; x too
	// for percentile_cont).
	if name == "percentile_cont" || name == "percentile_disc" {
		if !fc.GetAggWithinGroup() || len(fc.GetAggOrder()) != 1 || len(args) != 1 {
			return nil, b.errAt(loc, sqlerr.WrongObjectType, "%s is an ordered-set aggregate: %s(fraction) WITHIN GROUP (ORDER BY expression)", name, name)
		}
		sb := fc.GetAggOrder()[0].GetSortBy()
		if sb.GetSortbyDir() == pg_query.SortByDir_SORTBY_DESC {
			return nil, b.errAt(loc, sqlerr.FeatureNotSupported, "%s WITHIN GROUP (ORDER BY ... DESC) is not supported", name)
		}
		x, err := b.bindExpr(sb.GetNode(), inner)
		if err != nil {
			return nil, err
		}
		if name == "percentile_cont" || isUnknownLiteral(x) {
			t := types.Float64
			if name == "percentile_disc" {
				t = types.Text
			}
			if x, err = b.coerce(x, t, false, loc); err != nil {
				return nil, err
			}
		}
		f, err := b.coerce(args[0], types.Float64, false, loc)
		if err != nil {
			return nil, err
		}
		args = []expr.Expr{x, f}
	} else if fc.GetAggWithinGroup() {
		return nil, b.errAt(loc, sqlerr.WrongObjectType, "%s is not an ordered-set aggregate, so it cannot have WITHIN GROUP", name)
	}
	// ORDER BY inside the call orders string_agg's values; the other
	// aggregates do not depend on their input's order, so it is dropped.
	var order []plan.SortKey
	if name == "string_agg" && !fc.GetAggWithinGroup() {
		for _, n := range fc.GetAggOrder() {
			sb := n.GetSortBy()
			k := sortKeyOf(sb)
			e, err := b.bindExpr(sb.GetNode(), inner)
			if err != nil {
				return nil, err
			}
			if isUnknownLiteral(e) {
				if e, err = b.coerce(e, types.Text, false, loc); err != nil {
					return nil, err
				}
			}
			k.Expr = e
			order = append(order, k)
		}
	}
	if name == "every" {
		name = "bool_and"
	}
	for i, a := range args {
		if isUnknownLiteral(a) {
			c, err := b.coerce(a, types.Text, false, loc)
			if err != nil {
				return nil, err
			}
			args[i] = c
		}
	}
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	spec := agg.Spec{Func: name, Args: ts}
	for _, k := range order {
		spec.Args = append(spec.Args, k.Expr.Type())
		spec.Order = append(spec.Order, agg.OrderKey{Desc: k.Desc, NullsFirst: k.NullsFirst})
	}
	rt, rerr := spec.ResultType()
	if rerr != nil || (name != "count" && name != "string_agg" && !strings.HasPrefix(name, "percentile_") && len(args) != 1) || (name == "count" && len(args) > 1) {
		return nil, b.errAt(loc, sqlerr.UndefinedFunction, "function %s does not exist", describeTypes(name, ts))
	}
	call := plan.AggCall{Func: name, Args: args, Distinct: fc.GetAggDistinct(), Order: order, Type: rt}
	if f := fc.GetAggFilter(); f != nil {
		pred, err := b.bindBool(f, exprCtx{scope: ec.scope, clause: "FILTER"}, loc)
		if err != nil {
			return nil, err
		}
		call.Filter = pred
	}
	key := call.String()
	if ec.aggs.index == nil {
		ec.aggs.index = map[string]int{}
	}
	idx, seen := ec.aggs.index[key]
	if !seen {
		idx = len(ec.aggs.calls)
		ec.aggs.calls = append(ec.aggs.calls, call)
		ec.aggs.index[key] = idx
	}
	return &aggRef{idx: idx, typ: rt, text: key}, nil
}

func describeTypes(name string, ts []types.Type) string {
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = typeName(t)
	}
	return fmt.Sprintf("%s(%s)", name, strings.Join(parts, ", "))
}
