package binder

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Subqueries in WHERE become joins (the decorrelation of Postgres's
// pull_up_sublinks and of Flink's and RisingWave's planners), which a view
// can maintain incrementally. A conjunct of WHERE that is
//
//	[NOT] EXISTS (SELECT ... FROM ... WHERE ...)
//	x [NOT] IN (SELECT y FROM ... WHERE ...)
//
// joins the outer query with the distinct correlation keys of the
// subquery: the subquery's WHERE conjuncts of the form inner = outer (an
// expression of the subquery's FROM equal to one of the outer query's)
// are the keys, the others filter the subquery, and IN adds y = x. EXISTS
// and IN are an inner join with those distinct keys (each outer row at
// most once); NOT EXISTS a left join that keeps the rows without a match
// (a marker column of the subquery's side is NULL). A subquery without
// keys joins through a nested loop. In WHERE, a NULL and FALSE both drop
// the row, so IN's NULL answers need no more. NOT IN, whose NULL rules
// differ, is notIn's two left joins. Subqueries with GROUP BY, DISTINCT,
// LIMIT or set operations, correlations other than equalities and
// subqueries elsewhere than as a conjunct of WHERE are 0A000.

// semiJoin turns WHERE conjunct c into a join of input when it is one of
// the subquery forms above; ok false leaves it to bindBool.
func (b *Binder) semiJoin(c *pg_query.Node, input plan.Node, sc *scope) (out plan.Node, ok bool, err error) {
	neg := false
	if be := c.GetBoolExpr(); be != nil && be.GetBoolop() == pg_query.BoolExprType_NOT_EXPR && len(be.GetArgs()) == 1 {
		neg, c = true, be.GetArgs()[0]
	}
	sl := c.GetSubLink()
	if sl == nil {
		return nil, false, nil
	}
	loc := sl.GetLocation()
	switch sl.GetSubLinkType() {
	case pg_query.SubLinkType_EXISTS_SUBLINK:
	case pg_query.SubLinkType_ANY_SUBLINK:
		if op := names(sl.GetOperName()); len(op) > 0 && (len(op) != 1 || op[0] != "=") {
			return nil, false, nil
		}
	default:
		return nil, false, nil
	}
	sub := sl.GetSubselect().GetSelectStmt()
	if sub == nil || sub.GetOp() != pg_query.SetOperation_SETOP_NONE || len(sub.GetGroupClause()) > 0 ||
		sub.GetHavingClause() != nil || len(sub.GetDistinctClause()) > 0 || len(sub.GetSortClause()) > 0 ||
		sub.GetLimitCount() != nil || sub.GetLimitOffset() != nil || len(sub.GetWithClause().GetCtes()) > 0 ||
		len(sub.GetValuesLists()) > 0 {
		return nil, true, b.errAt(loc, sqlerr.FeatureNotSupported, "a subquery in WHERE with GROUP BY, HAVING, DISTINCT, ORDER BY, LIMIT, WITH, VALUES or a set operation is not supported")
	}
	var subPlan plan.Node
	var subSc *scope
	if from := sub.GetFromClause(); len(from) > 0 {
		if subPlan, subSc, err = b.bindFrom(from); err != nil {
			return nil, true, err
		}
	} else {
		subPlan, subSc = &plan.Values{Rows: [][]expr.Expr{{}}}, &scope{}
	}
	var inner, outer, filters []expr.Expr
	innerCtx := exprCtx{scope: subSc, clause: "WHERE"}
	for _, cc := range conjuncts(sub.GetWhereClause()) {
		if ae := cc.GetAExpr(); ae != nil && ae.GetKind() == pg_query.A_Expr_Kind_AEXPR_OP {
			if op := names(ae.GetName()); len(op) == 1 && op[0] == "=" {
				l, lerr := b.bindExpr(ae.GetLexpr(), innerCtx)
				r, rerr := b.bindExpr(ae.GetRexpr(), innerCtx)
				if lerr == nil && rerr != nil && unresolved(rerr) {
					if o, err := b.bindExpr(ae.GetRexpr(), exprCtx{scope: sc, clause: "WHERE"}); err == nil {
						inner, outer = append(inner, l), append(outer, o)
						continue
					}
				}
				if rerr == nil && lerr != nil && unresolved(lerr) {
					if o, err := b.bindExpr(ae.GetLexpr(), exprCtx{scope: sc, clause: "WHERE"}); err == nil {
						inner, outer = append(inner, r), append(outer, o)
						continue
					}
				}
			}
		}
		f, err := b.bindBool(cc, innerCtx, nodeLoc(cc))
		if err != nil {
			if unresolved(err) {
				return nil, true, b.errAt(nodeLoc(cc), sqlerr.FeatureNotSupported, "a correlated subquery condition other than inner = outer is not supported: %v", err)
			}
			return nil, true, err
		}
		filters = append(filters, f)
	}
	if sl.GetSubLinkType() == pg_query.SubLinkType_ANY_SUBLINK {
		tl := sub.GetTargetList()
		if len(tl) != 1 || tl[0].GetResTarget() == nil {
			return nil, true, b.errAt(loc, sqlerr.SyntaxError, "subquery has too many columns")
		}
		y, err := b.bindExpr(tl[0].GetResTarget().GetVal(), innerCtx)
		if err != nil {
			return nil, true, err
		}
		if sl.GetTestexpr().GetRowExpr() != nil {
			return nil, true, b.errAt(loc, sqlerr.FeatureNotSupported, "a row IN (subquery) is not supported")
		}
		x, err := b.bindExpr(sl.GetTestexpr(), exprCtx{scope: sc, clause: "WHERE"})
		if err != nil {
			return nil, true, err
		}
		if len(filters) > 0 {
			subPlan = filterAll(subPlan, filters)
			filters = nil
		}
		if neg {
			return b.notIn(input, subPlan, inner, outer, y, x, loc)
		}
		inner, outer = append(inner, y), append(outer, x)
	}
	subPlan = filterAll(subPlan, filters)
	// The subquery's side: its distinct keys, then a TRUE marker.
	keys := &plan.Project{Input: subPlan}
	for i, e := range inner {
		e, err := b.coerce(e, resolvedType(e), false, loc)
		if err != nil {
			return nil, true, err
		}
		keys.Exprs = append(keys.Exprs, e)
		keys.Cols = append(keys.Cols, plan.Column{Name: "?key" + string(rune('0'+i%10)) + "?", Type: e.Type()})
	}
	keys.Exprs = append(keys.Exprs, &expr.Const{Value: types.NewBool(true), Typ: types.Bool})
	keys.Cols = append(keys.Cols, plan.Column{Name: "?found?", Type: types.Bool, NotNull: true})
	right := distinct(keys)
	lw := len(input.Schema())
	var conds []expr.Expr
	for i, o := range outer {
		k := &expr.ColumnRef{Index: lw + i, Typ: keys.Cols[i].Type, Name: keys.Cols[i].Name}
		eq, err := b.call("=", []expr.Expr{o, k}, loc)
		if err != nil {
			return nil, true, err
		}
		conds = append(conds, eq)
	}
	var on expr.Expr
	switch len(conds) {
	case 0:
		on = &expr.Const{Value: types.NewBool(true), Typ: types.Bool}
	case 1:
		on = conds[0]
	default:
		on = &expr.And{Args: conds}
	}
	var joined plan.Node
	if neg {
		found := &expr.ColumnRef{Index: lw + len(inner), Typ: types.Bool, Name: "?found?"}
		joined = &plan.Filter{Input: plan.NewJoin(plan.LeftJoin, input, right, on), Pred: &expr.IsNull{Arg: found}}
	} else {
		joined = plan.NewJoin(plan.InnerJoin, input, right, on)
	}
	// Back to the outer query's columns.
	back := &plan.Project{Input: joined}
	for i, c := range input.Schema() {
		back.Exprs = append(back.Exprs, &expr.ColumnRef{Index: i, Typ: c.Type, Name: c.Name})
		back.Cols = append(back.Cols, c)
	}
	return back, true, nil
}

// notIn joins input for x NOT IN (SELECT y FROM sub WHERE inner = outer
// ...), which in WHERE keeps a row when the subquery's rows S (those
// whose inner keys equal the row's outer ones) are empty, or when x is
// not NULL, no y equals x and no y is NULL (SQL's NOT IN is NULL, which
// drops the row, when x or some y is NULL and nothing equals). Two left
// joins: with the distinct (inner keys, y) for the match, and with the
// count of S's rows and of its NULL ys per inner key (a global count when
// uncorrelated).
func (b *Binder) notIn(input, sub plan.Node, inner, outer []expr.Expr, y, x expr.Expr, loc int32) (plan.Node, bool, error) {
	lw := len(input.Schema())
	y, err := b.coerce(y, resolvedType(y), false, loc)
	if err != nil {
		return nil, true, err
	}
	// Side A: distinct (inner keys, y, TRUE).
	a := &plan.Project{Input: sub}
	for _, e := range append(append([]expr.Expr(nil), inner...), y) {
		a.Exprs = append(a.Exprs, e)
		a.Cols = append(a.Cols, plan.Column{Name: "?key?", Type: e.Type()})
	}
	a.Exprs = append(a.Exprs, &expr.Const{Value: types.NewBool(true), Typ: types.Bool})
	a.Cols = append(a.Cols, plan.Column{Name: "?found?", Type: types.Bool, NotNull: true})
	right := distinct(a)
	eqs := func(outs []expr.Expr, base int, cols []plan.Column) ([]expr.Expr, error) {
		var out []expr.Expr
		for i, o := range outs {
			eq, err := b.call("=", []expr.Expr{o, &expr.ColumnRef{Index: base + i, Typ: cols[i].Type}}, loc)
			if err != nil {
				return nil, err
			}
			out = append(out, eq)
		}
		return out, nil
	}
	onA, err := eqs(append(append([]expr.Expr(nil), outer...), x), lw, a.Cols)
	if err != nil {
		return nil, true, err
	}
	joinA := plan.NewJoin(plan.LeftJoin, input, right, andAll(onA))
	found := &expr.ColumnRef{Index: lw + len(inner) + 1, Typ: types.Bool}
	wa := len(joinA.Schema())
	// Side B: per inner key, count(*) and count(*) FILTER (y IS NULL).
	agg := &plan.Aggregate{Input: sub}
	for _, e := range inner {
		agg.GroupBy = append(agg.GroupBy, e)
		agg.Cols = append(agg.Cols, plan.Column{Name: "?key?", Type: e.Type()})
	}
	agg.Aggs = []plan.AggCall{{Func: "count", Type: types.Int64}, {Func: "count", Type: types.Int64, Filter: &expr.IsNull{Arg: y}}}
	agg.Cols = append(agg.Cols, plan.Column{Name: "?rows?", Type: types.Int64, NotNull: true}, plan.Column{Name: "?nulls?", Type: types.Int64, NotNull: true})
	onB, err := eqs(outer, wa, agg.Cols)
	if err != nil {
		return nil, true, err
	}
	var on expr.Expr = &expr.Const{Value: types.NewBool(true), Typ: types.Bool}
	if len(onB) > 0 {
		on = andAll(onB)
	}
	joinB := plan.NewJoin(plan.LeftJoin, joinA, agg, on)
	rows := &expr.ColumnRef{Index: wa + len(inner), Typ: types.Int64}
	nulls := &expr.ColumnRef{Index: wa + len(inner) + 1, Typ: types.Int64}
	zero := &expr.Const{Value: types.NewInt64(0), Typ: types.Int64}
	rowsZero, err := b.call("=", []expr.Expr{rows, zero}, loc)
	if err != nil {
		return nil, true, err
	}
	nullsZero, err := b.call("=", []expr.Expr{nulls, zero}, loc)
	if err != nil {
		return nil, true, err
	}
	keep := &expr.Or{Args: []expr.Expr{
		&expr.IsNull{Arg: rows}, rowsZero,
		&expr.And{Args: []expr.Expr{&expr.IsNull{Arg: x, Negate: true}, nullsZero, &expr.IsNull{Arg: found}}},
	}}
	back := &plan.Project{Input: &plan.Filter{Input: joinB, Pred: keep}}
	for i, c := range input.Schema() {
		back.Exprs = append(back.Exprs, &expr.ColumnRef{Index: i, Typ: c.Type, Name: c.Name})
		back.Cols = append(back.Cols, c)
	}
	return back, true, nil
}

func andAll(es []expr.Expr) expr.Expr {
	if len(es) == 1 {
		return es[0]
	}
	return &expr.And{Args: es}
}

// isSubLinkConjunct reports whether c is a subquery, or NOT of one.
func isSubLinkConjunct(c *pg_query.Node) bool {
	if be := c.GetBoolExpr(); be != nil && be.GetBoolop() == pg_query.BoolExprType_NOT_EXPR && len(be.GetArgs()) == 1 {
		c = be.GetArgs()[0]
	}
	return c.GetSubLink() != nil
}

// unresolved reports whether err is a name that the scope does not have
// (a column or table of an enclosing query, for a subquery).
func unresolved(err error) bool {
	c := sqlerr.Code(err)
	return c == sqlerr.UndefinedColumn || c == sqlerr.UndefinedTable
}

// Scalar subqueries in the select list, (SELECT agg(...) FROM ... WHERE
// inner = outer AND ...), become a left join of the outer query with the
// subquery grouped by its correlation keys (a cross join with its global
// aggregate when it has none); the subquery's place in the expression
// reads the joined value, through a column of the scope that only that
// reference can name. A correlated count has no group for an outer row
// without rows, so its NULL is read as 0, as count over no rows is; other
// aggregates are NULL over no rows anyway. The subquery must compute one
// aggregate (so one row per key), and a correlated one must be a bare
// aggregate call.

// scalarSubqueries rewrites the scalar subqueries of the select list
// targets and returns the targets to bind (copies when one had a
// subquery: the caller's parse tree is left as it was), the joined input
// and its scope.
func (b *Binder) scalarSubqueries(targets []*pg_query.Node, input plan.Node, sc *scope) ([]*pg_query.Node, plan.Node, *scope, error) {
	if !hasScalarSubquery(targets) {
		return targets, input, sc, nil
	}
	copies := make([]*pg_query.Node, len(targets))
	for i, t := range targets {
		copies[i] = proto.Clone(t).(*pg_query.Node)
	}
	targets = copies
	n := 0
	var visit func(m protoreflect.Message) error
	visit = func(m protoreflect.Message) error {
		if node, ok := m.Interface().(*pg_query.Node); ok {
			if sl := node.GetSubLink(); sl != nil {
				if sl.GetSubLinkType() != pg_query.SubLinkType_EXPR_SUBLINK {
					return nil
				}
				n++
				var repl *pg_query.Node
				var err error
				input, sc, repl, err = b.scalarSubquery(sl, input, sc, n)
				if err != nil {
					return err
				}
				node.Node = repl.Node
				return nil
			}
		}
		var err error
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len() && err == nil; i++ {
					err = visit(l.Get(i).Message())
				}
			case !fd.IsMap() && fd.Message() != nil:
				err = visit(v.Message())
			}
			return err == nil
		})
		return err
	}
	for _, t := range targets {
		if err := visit(t.ProtoReflect()); err != nil {
			return nil, nil, nil, err
		}
	}
	return targets, input, sc, nil
}

// hasScalarSubquery reports whether a scalar subquery occurs in nodes
// (outside nested subqueries).
func hasScalarSubquery(nodes []*pg_query.Node) bool {
	found := false
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		if node, ok := m.Interface().(*pg_query.Node); ok {
			if sl := node.GetSubLink(); sl != nil {
				found = found || sl.GetSubLinkType() == pg_query.SubLinkType_EXPR_SUBLINK
				return
			}
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					visit(l.Get(i).Message())
				}
			case !fd.IsMap() && fd.Message() != nil:
				visit(v.Message())
			}
			return !found
		})
	}
	for _, n := range nodes {
		visit(n.ProtoReflect())
	}
	return found
}

func (b *Binder) scalarSubquery(sl *pg_query.SubLink, input plan.Node, sc *scope, n int) (plan.Node, *scope, *pg_query.Node, error) {
	loc := sl.GetLocation()
	sub := sl.GetSubselect().GetSelectStmt()
	if sub == nil || sub.GetOp() != pg_query.SetOperation_SETOP_NONE || len(sub.GetGroupClause()) > 0 ||
		sub.GetHavingClause() != nil || len(sub.GetDistinctClause()) > 0 || len(sub.GetSortClause()) > 0 ||
		sub.GetLimitCount() != nil || sub.GetLimitOffset() != nil || len(sub.GetWithClause().GetCtes()) > 0 ||
		len(sub.GetFromClause()) == 0 || len(sub.GetTargetList()) != 1 || sub.GetTargetList()[0].GetResTarget() == nil {
		return nil, nil, nil, b.errAt(loc, sqlerr.FeatureNotSupported, "a scalar subquery must be SELECT of one aggregate FROM ... [WHERE ...], without GROUP BY, HAVING, DISTINCT, ORDER BY, LIMIT or WITH")
	}
	_, subSc, err := b.bindFrom(sub.GetFromClause())
	if err != nil {
		return nil, nil, nil, err
	}
	innerCtx := exprCtx{scope: subSc, clause: "WHERE"}
	var keyNodes, filterNodes []*pg_query.Node
	var outer []expr.Expr
	for _, cc := range conjuncts(sub.GetWhereClause()) {
		if ae := cc.GetAExpr(); ae != nil && ae.GetKind() == pg_query.A_Expr_Kind_AEXPR_OP {
			if op := names(ae.GetName()); len(op) == 1 && op[0] == "=" {
				_, lerr := b.bindExpr(ae.GetLexpr(), innerCtx)
				_, rerr := b.bindExpr(ae.GetRexpr(), innerCtx)
				if lerr == nil && rerr != nil && unresolved(rerr) {
					if o, err := b.bindExpr(ae.GetRexpr(), exprCtx{scope: sc, clause: "WHERE"}); err == nil {
						keyNodes, outer = append(keyNodes, ae.GetLexpr()), append(outer, o)
						continue
					}
				}
				if rerr == nil && lerr != nil && unresolved(lerr) {
					if o, err := b.bindExpr(ae.GetLexpr(), exprCtx{scope: sc, clause: "WHERE"}); err == nil {
						keyNodes, outer = append(keyNodes, ae.GetRexpr()), append(outer, o)
						continue
					}
				}
			}
		}
		if _, err := b.bindBool(cc, innerCtx, nodeLoc(cc)); err != nil {
			if unresolved(err) {
				return nil, nil, nil, b.errAt(nodeLoc(cc), sqlerr.FeatureNotSupported, "a correlated subquery condition other than inner = outer is not supported: %v", err)
			}
			return nil, nil, nil, err
		}
		filterNodes = append(filterNodes, cc)
	}
	target := sub.GetTargetList()[0].GetResTarget().GetVal()
	isCount := false
	if len(keyNodes) > 0 {
		fc := target.GetFuncCall()
		if fc == nil || fc.GetOver() != nil {
			return nil, nil, nil, b.errAt(loc, sqlerr.FeatureNotSupported, "a correlated scalar subquery must select one aggregate call (its value over no rows is then known)")
		}
		isCount = lower(names(fc.GetFuncname())[len(fc.GetFuncname())-1]) == "count"
	}
	// The subquery grouped by its correlation keys: keys, then the value.
	grouped := &pg_query.SelectStmt{FromClause: sub.GetFromClause(), GroupClause: keyNodes}
	for _, k := range keyNodes {
		grouped.TargetList = append(grouped.TargetList, &pg_query.Node{Node: &pg_query.Node_ResTarget{ResTarget: &pg_query.ResTarget{Val: k, Location: -1}}})
	}
	grouped.TargetList = append(grouped.TargetList, sub.GetTargetList()[0])
	switch len(filterNodes) {
	case 0:
	case 1:
		grouped.WhereClause = filterNodes[0]
	default:
		grouped.WhereClause = &pg_query.Node{Node: &pg_query.Node_BoolExpr{BoolExpr: &pg_query.BoolExpr{
			Boolop: pg_query.BoolExprType_AND_EXPR, Args: filterNodes, Location: -1}}}
	}
	right, err := b.bindSelectStmt(grouped)
	if err != nil {
		return nil, nil, nil, err
	}
	if p, ok := right.(*plan.Project); !ok || !isAggregate(p.Input) {
		return nil, nil, nil, b.errAt(loc, sqlerr.FeatureNotSupported, "a scalar subquery must compute an aggregate (one row per outer row)")
	}
	lw := len(input.Schema())
	rcols := right.Schema()
	var conds []expr.Expr
	for i, o := range outer {
		eq, err := b.call("=", []expr.Expr{o, &expr.ColumnRef{Index: lw + i, Typ: rcols[i].Type}}, loc)
		if err != nil {
			return nil, nil, nil, err
		}
		conds = append(conds, eq)
	}
	var on expr.Expr = &expr.Const{Value: types.NewBool(true), Typ: types.Bool}
	if len(conds) > 0 {
		on = andAll(conds)
	}
	joined := plan.NewJoin(plan.LeftJoin, input, right, on)
	qual := "?subquery?"
	out := &scope{cols: append([]scopeCol(nil), sc.cols...)}
	for i, c := range rcols {
		name := "k" + strconv.Itoa(n) + "_" + strconv.Itoa(i)
		if i == len(rcols)-1 {
			name = "v" + strconv.Itoa(n)
		}
		out.cols = append(out.cols, scopeCol{table: qual, name: name, typ: c.Type, hidden: true})
	}
	ref := &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: &pg_query.ColumnRef{Location: loc, Fields: []*pg_query.Node{
		{Node: &pg_query.Node_String_{String_: &pg_query.String{Sval: qual}}},
		{Node: &pg_query.Node_String_{String_: &pg_query.String{Sval: "v" + strconv.Itoa(n)}}},
	}}}}
	if isCount {
		zero := &pg_query.Node{Node: &pg_query.Node_AConst{AConst: &pg_query.A_Const{Val: &pg_query.A_Const_Ival{Ival: &pg_query.Integer{Ival: 0}}, Location: loc}}}
		ref = &pg_query.Node{Node: &pg_query.Node_CoalesceExpr{CoalesceExpr: &pg_query.CoalesceExpr{Args: []*pg_query.Node{ref, zero}, Location: loc}}}
	}
	return joined, out, ref, nil
}

func isAggregate(n plan.Node) bool {
	_, ok := n.(*plan.Aggregate)
	return ok
}
