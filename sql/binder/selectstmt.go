package binder

import (
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

func (b *Binder) bindSelectStmt(sel *pg_query.SelectStmt) (plan.Node, error) {
	return b.bindSelect(sel, nil)
}

// takeHint returns the column types an INSERT asks of the statement's top
// query (BindInsertSource) and clears them, so that no nested query sees
// them.
func (b *Binder) takeHint() []types.Type {
	h := b.hint
	b.hint = nil
	return h
}

// hinted coerces an untyped literal or parameter in column i of an INSERT's
// source to the target column's type, as Postgres's transformInsertRow
// does; anything else is left to the assignment cast of the INSERT.
func (b *Binder) hinted(e expr.Expr, hint []types.Type, i int, loc int32) (expr.Expr, error) {
	if i >= len(hint) || !isUnknownLiteral(e) {
		return e, nil
	}
	return b.coerce(e, hint[i], false, loc)
}

// bindSelect binds a SELECT; tn, when set, makes its ROW_NUMBER() item a
// TopN (see topn.go).
func (b *Binder) bindSelect(sel *pg_query.SelectStmt, tn *topNSpec) (plan.Node, error) {
	hint := b.takeHint()
	if w := sel.GetWithClause(); len(w.GetCtes()) > 0 {
		if w.GetRecursive() {
			return nil, b.errAt(w.GetLocation(), sqlerr.FeatureNotSupported, "WITH RECURSIVE is not supported")
		}
		saved := b.ctes
		defer func() { b.ctes = saved }()
		for _, n := range w.GetCtes() {
			b.ctes = &cteFrame{cte: n.GetCommonTableExpr(), outer: b.ctes}
		}
	}
	switch sel.GetOp() {
	case pg_query.SetOperation_SETOP_UNION, pg_query.SetOperation_SETOP_INTERSECT, pg_query.SetOperation_SETOP_EXCEPT:
		return b.bindSetOp(sel)
	}
	if sets, err := b.groupingSets(sel); err != nil {
		return nil, err
	} else if sets != nil && tn == nil {
		return b.bindGroupingSets(sel, sets)
	}
	if len(sel.GetValuesLists()) > 0 {
		return b.bindValues(sel, hint)
	}
	if len(sel.GetWindowClause()) > 0 {
		return nil, b.errAt(nodeLoc(sel.GetWindowClause()[0]), sqlerr.FeatureNotSupported, "WINDOW clauses are not supported")
	}

	if tn != nil && (len(sel.GetDistinctClause()) > 0 || len(sel.GetSortClause()) > 0 ||
		sel.GetLimitCount() != nil || sel.GetLimitOffset() != nil) {
		return nil, b.errAt(tn.fc.GetLocation(), sqlerr.FeatureNotSupported, "ROW_NUMBER() in a query with DISTINCT, ORDER BY, LIMIT or OFFSET is not supported")
	}

	// FROM, and the Top-N pattern when the only FROM item is a subquery
	// with a ROW_NUMBER() item.
	var input plan.Node
	var sc *scope
	where := sel.GetWhereClause()
	if from := sel.GetFromClause(); len(from) > 0 {
		spec, rest, err := b.topNPattern(sel)
		if err != nil {
			return nil, err
		}
		if spec != nil {
			input, sc, err = b.bindTopNSubselect(from[0].GetRangeSubselect(), spec)
			where = rest
		} else {
			input, sc, err = b.bindFrom(from)
		}
		if err != nil {
			return nil, err
		}
	} else {
		input = &plan.Values{Rows: [][]expr.Expr{{}}}
		sc = &scope{}
	}

	// WHERE
	if w := where; w != nil {
		// Conjuncts that are EXISTS or IN subqueries become joins
		// (subquery.go) after the filter of the others.
		var preds []expr.Expr
		var subs, rest []*pg_query.Node
		for _, c := range conjuncts(w) {
			if isSubLinkConjunct(c) {
				subs = append(subs, c)
			} else {
				rest = append(rest, c)
			}
		}
		// The other conjuncts bind as one AND, so that constant folding
		// sees them together (k / 0 = 1 AND false is FALSE, no error).
		var others *pg_query.Node
		switch {
		case len(subs) == 0:
			others = w
		case len(rest) == 1:
			others = rest[0]
		case len(rest) > 1:
			others = &pg_query.Node{Node: &pg_query.Node_BoolExpr{BoolExpr: &pg_query.BoolExpr{
				Boolop: pg_query.BoolExprType_AND_EXPR, Args: rest, Location: -1}}}
		}
		if others != nil {
			pred, err := b.bindBool(others, exprCtx{scope: sc, clause: "WHERE"}, nodeLoc(others))
			if err != nil {
				return nil, err
			}
			preds = append(preds, pred)
		}
		input = filterAll(input, preds)
		preds = nil
		for _, c := range subs {
			joined, ok, err := b.semiJoin(c, input, sc)
			if err != nil {
				return nil, err
			}
			if ok {
				input = joined
				continue
			}
			pred, err := b.bindBool(c, exprCtx{scope: sc, clause: "WHERE"}, nodeLoc(c))
			if err != nil {
				return nil, err
			}
			preds = append(preds, pred)
		}
		input = filterAll(input, preds)
	}

	// Select list, with aggregates collected.
	aggs := &aggCollector{}
	var win *pg_query.FuncCall
	if tn != nil {
		win = tn.fc
	}
	targetList := sel.GetTargetList()
	var err error
	if tn == nil {
		if targetList, input, sc, err = b.windowAggregates(targetList, input, sc, len(sel.GetGroupClause()) > 0); err != nil {
			return nil, err
		}
	}
	if targetList, input, sc, err = b.scalarSubqueries(targetList, input, sc); err != nil {
		return nil, err
	}
	if win != nil && len(targetList) > 0 && targetList[0] != sel.GetTargetList()[0] {
		return nil, b.errAt(win.GetLocation(), sqlerr.FeatureNotSupported, "ROW_NUMBER() with a scalar subquery in the same select list is not supported")
	}
	targets, winIdx, err := b.bindTargets(targetList, sc, aggs, win)
	if err != nil {
		return nil, err
	}
	var winPart []expr.Expr
	var winOrder []plan.SortKey
	if tn != nil {
		if winPart, winOrder, err = b.windowOf(tn.fc, sc, aggs); err != nil {
			return nil, err
		}
	}

	// GROUP BY
	var groupBy []expr.Expr
	for _, g := range sel.GetGroupClause() {
		e, err := b.bindGroupItem(g, sc, targets)
		if err != nil {
			return nil, err
		}
		groupBy = append(groupBy, e)
	}

	// HAVING
	var having expr.Expr
	if h := sel.GetHavingClause(); h != nil {
		if having, err = b.bindBool(h, exprCtx{scope: sc, aggs: aggs, clause: "HAVING"}, nodeLoc(h)); err != nil {
			return nil, err
		}
	}

	// ORDER BY: output columns by ordinal or name, else expressions over
	// the input, computed as hidden columns.
	var sortKeys []plan.SortKey
	var hidden []expr.Expr
	var hiddenLocs []int32
	for _, s := range sel.GetSortClause() {
		sb := s.GetSortBy()
		key := sortKeyOf(sb)
		if i, ok, err := b.outputRef(sb.GetNode(), targets, "ORDER BY"); err != nil {
			return nil, err
		} else if ok {
			key.Expr = &expr.ColumnRef{Index: i, Typ: targets[i].e.Type(), Name: targets[i].name}
		} else {
			e, err := b.bindExpr(sb.GetNode(), exprCtx{scope: sc, aggs: aggs, clause: "ORDER BY"})
			if err != nil {
				return nil, err
			}
			key.Expr = &expr.ColumnRef{Index: len(targets) + len(hidden), Typ: e.Type(), Name: e.String()}
			hidden = append(hidden, e)
			hiddenLocs = append(hiddenLocs, nodeLoc(sb.GetNode()))
		}
		sortKeys = append(sortKeys, key)
	}

	// DISTINCT ON: output columns by ordinal or name, else expressions
	// over the input, computed as hidden columns like ORDER BY's.
	var distinctOn []int // columns of the projection
	if d := sel.GetDistinctClause(); len(d) > 0 && d[0] != nil && d[0].GetNode() != nil {
		for _, n := range d {
			if c := n.GetAConst(); c != nil {
				i, _, err := b.outputRef(n, targets, "DISTINCT ON")
				if err != nil {
					return nil, err
				}
				distinctOn = append(distinctOn, i)
				continue
			}
			if i, ok, err := b.outputRef(n, targets, "ORDER BY"); err != nil {
				return nil, err
			} else if ok {
				distinctOn = append(distinctOn, i)
				continue
			}
			e, err := b.bindExpr(n, exprCtx{scope: sc, aggs: aggs, clause: "DISTINCT ON"})
			if err != nil {
				return nil, err
			}
			distinctOn = append(distinctOn, len(targets)+len(hidden))
			hidden = append(hidden, e)
			hiddenLocs = append(hiddenLocs, nodeLoc(n))
		}
	}

	// Grouping: rewrite select list, HAVING and hidden sort columns over
	// the Aggregate's output.
	grouped := len(groupBy) > 0 || len(aggs.calls) > 0
	if grouped {
		agg := &plan.Aggregate{Input: input, GroupBy: groupBy, Aggs: aggs.calls}
		for _, g := range groupBy {
			agg.Cols = append(agg.Cols, plan.Column{Name: g.String(), Type: g.Type()})
		}
		for _, a := range aggs.calls {
			agg.Cols = append(agg.Cols, plan.Column{Name: a.Func, Type: a.Type, NotNull: a.Func == "count"})
		}
		input = agg
		for i := range targets {
			if targets[i].e, err = b.regroup(targets[i].e, groupBy, targets[i].loc); err != nil {
				return nil, err
			}
		}
		for i := range hidden {
			if hidden[i], err = b.regroup(hidden[i], groupBy, hiddenLocs[i]); err != nil {
				return nil, err
			}
		}
		for i := range winPart {
			if winPart[i], err = b.regroup(winPart[i], groupBy, tn.fc.GetLocation()); err != nil {
				return nil, err
			}
		}
		for i := range winOrder {
			if winOrder[i].Expr, err = b.regroup(winOrder[i].Expr, groupBy, tn.fc.GetLocation()); err != nil {
				return nil, err
			}
		}
		if having != nil {
			if having, err = b.regroup(having, groupBy, deepLoc(sel.GetHavingClause())); err != nil {
				return nil, err
			}
			input = &plan.Filter{Input: input, Pred: having}
		}
	} else if having != nil {
		// HAVING without grouping makes the query a global aggregate.
		return nil, b.errAt(deepLoc(sel.GetHavingClause()), sqlerr.FeatureNotSupported, "HAVING without GROUP BY or aggregates is not supported")
	}

	// Top-N: window functions run after grouping and HAVING, before the
	// projection; the row number, when kept, is the TopN's last column.
	if tn != nil {
		top := &plan.TopN{Input: input, Partition: winPart, Order: winOrder, N: tn.n, RankCol: tn.rankCol}
		top.Cols = append(top.Cols, input.Schema()...)
		if tn.rankCol {
			name := targets[winIdx].name
			top.Cols = append(top.Cols, plan.Column{Name: name, Type: types.Int64, NotNull: true})
			targets[winIdx].e = &expr.ColumnRef{Index: len(top.Cols) - 1, Typ: types.Int64, Name: name}
		} else {
			targets = append(targets[:winIdx:winIdx], targets[winIdx+1:]...)
		}
		input = top
	}

	// Projection (targets, then hidden sort columns).
	proj := &plan.Project{Input: input}
	for i, t := range targets {
		e, err := b.hinted(t.e, hint, i, t.loc)
		if err != nil {
			return nil, err
		}
		if e, err = b.coerce(e, resolvedType(e), false, t.loc); err != nil {
			return nil, err
		}
		proj.Exprs = append(proj.Exprs, e)
		proj.Cols = append(proj.Cols, plan.Column{Name: t.name, Type: e.Type()})
	}
	for _, h := range hidden {
		proj.Exprs = append(proj.Exprs, h)
		proj.Cols = append(proj.Cols, plan.Column{Name: h.String(), Type: h.Type()})
	}
	var out plan.Node = proj

	// DISTINCT
	if d := sel.GetDistinctClause(); len(distinctOn) > 0 {
		top, err := b.distinctOn(proj, distinctOn, sortKeys, nodeLoc(d[0]))
		if err != nil {
			return nil, err
		}
		out = top
		if sel.GetLimitCount() == nil && sel.GetLimitOffset() == nil {
			sortKeys = nil // the order chose each group's row; a view's rows have none
		}
	} else if len(d) > 0 {
		if len(hidden) > 0 {
			return nil, b.errAt(hiddenLocs[0], sqlerr.InvalidColumnReference, "for SELECT DISTINCT, ORDER BY expressions must appear in select list")
		}
		out = distinct(out)
	}

	if len(sortKeys) > 0 {
		out = &plan.Sort{Input: out, Keys: sortKeys}
	}
	if sel.GetLimitCount() != nil || sel.GetLimitOffset() != nil {
		lim := &plan.Limit{Input: out, Count: -1}
		if n := sel.GetLimitCount(); n != nil {
			v, ok, err := b.constInt(n, "LIMIT")
			if err != nil {
				return nil, err
			}
			if ok {
				lim.Count = v
			}
		}
		if n := sel.GetLimitOffset(); n != nil {
			v, _, err := b.constInt(n, "OFFSET")
			if err != nil {
				return nil, err
			}
			lim.Offset = v
		}
		out = lim
	}
	if len(hidden) > 0 {
		// Drop the hidden sort columns.
		final := &plan.Project{Input: out}
		for i, c := range out.Schema()[:len(targets)] {
			final.Exprs = append(final.Exprs, &expr.ColumnRef{Index: i, Typ: c.Type, Name: c.Name})
			final.Cols = append(final.Cols, c)
		}
		out = final
	}
	return out, nil
}

// distinctOn binds SELECT DISTINCT ON (...) ... ORDER BY ...: a TopN of
// one row per partition of the DISTINCT ON columns (positions in proj),
// in the ORDER BY order, which must begin with the DISTINCT ON
// expressions (42P10, as in Postgres). Without ORDER BY the row kept is
// not defined, which a view cannot have (0A000).
func (b *Binder) distinctOn(proj *plan.Project, on []int, order []plan.SortKey, loc int32) (plan.Node, error) {
	if len(order) == 0 {
		return nil, b.errAt(loc, sqlerr.FeatureNotSupported, "DISTINCT ON without ORDER BY keeps an undefined row of each group, which a view cannot hold; add an ORDER BY")
	}
	onText := map[string]bool{}
	for _, c := range on {
		onText[proj.Exprs[c].String()] = true
	}
	for i := range min(len(on), len(order)) {
		c := order[i].Expr.(*expr.ColumnRef).Index
		if !onText[proj.Exprs[c].String()] {
			return nil, b.errAt(loc, sqlerr.InvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions")
		}
	}
	top := &plan.TopN{Input: proj, Order: order, N: 1, Cols: proj.Schema()}
	for _, c := range on {
		top.Partition = append(top.Partition, &expr.ColumnRef{Index: c, Typ: proj.Cols[c].Type, Name: proj.Cols[c].Name})
	}
	return top, nil
}

// filterAll filters n by the conjunction of preds (n itself when none).
func filterAll(n plan.Node, preds []expr.Expr) plan.Node {
	switch len(preds) {
	case 0:
		return n
	case 1:
		return &plan.Filter{Input: n, Pred: preds[0]}
	}
	return &plan.Filter{Input: n, Pred: &expr.And{Args: preds}}
}

// resolvedType is e's type, with an unknown literal resolved to TEXT as a
// select-list item is.
func resolvedType(e expr.Expr) types.Type {
	if e.Type().Kind == types.KindUnknown {
		return types.Text
	}
	return e.Type()
}

// distinct groups n by all of its columns.
func distinct(n plan.Node) plan.Node {
	agg := &plan.Aggregate{Input: n}
	for i, c := range n.Schema() {
		agg.GroupBy = append(agg.GroupBy, &expr.ColumnRef{Index: i, Typ: c.Type, Name: c.Name})
		agg.Cols = append(agg.Cols, c)
	}
	return agg
}

// constInt reads a LIMIT/OFFSET constant; LIMIT NULL or ALL gives ok false.
func (b *Binder) constInt(n *pg_query.Node, what string) (int64, bool, error) {
	loc := nodeLoc(n)
	e, err := b.bindExpr(n, exprCtx{clause: what})
	if err != nil {
		return 0, false, err
	}
	e, err = b.coerce(e, types.Int64, false, loc)
	if err != nil {
		return 0, false, err
	}
	c, ok := e.(*expr.Const)
	if !ok {
		return 0, false, b.errAt(loc, sqlerr.FeatureNotSupported, "%s must be a constant (not a parameter or an expression over columns)", what)
	}
	if c.Value.IsNull() {
		return 0, false, nil
	}
	v := c.Value.Int64()
	if v < 0 {
		code := "2201W" // invalid_row_count_in_limit_clause
		if what == "OFFSET" {
			code = "2201X" // invalid_row_count_in_result_offset_clause
		}
		return 0, false, b.errAt(loc, code, "%s must not be negative", what)
	}
	return v, true, nil
}

// target is one bound select-list item.
type target struct {
	e    expr.Expr
	name string
	loc  int32
}

// bindTargets binds a select list. win, when set, is a ROW_NUMBER() call
// that a TopN computes: its item is a placeholder (a NULL BIGINT) whose
// position is returned.
func (b *Binder) bindTargets(list []*pg_query.Node, sc *scope, aggs *aggCollector, win *pg_query.FuncCall) ([]target, int, error) {
	var out []target
	winIdx := -1
	for _, n := range list {
		rt := n.GetResTarget()
		val := rt.GetVal()
		if win != nil && val.GetFuncCall() == win {
			winIdx = len(out)
			out = append(out, target{e: &expr.Const{Value: types.Null, Typ: types.Int64}, name: rt.GetName(), loc: rt.GetLocation()})
			if out[winIdx].name == "" {
				out[winIdx].name = "row_number"
			}
			continue
		}
		if cr := val.GetColumnRef(); cr != nil {
			fields := cr.GetFields()
			if last := fields[len(fields)-1]; last.GetAStar() != nil {
				qual := ""
				if len(fields) == 2 {
					qual = strVal(fields[0])
				}
				found := false
				for i, c := range sc.cols {
					if (qual == "" && c.hidden) || (qual != "" && c.table != qual) {
						continue
					}
					found = true
					out = append(out, target{e: &expr.ColumnRef{Index: i, Typ: c.typ, Name: c.name}, name: c.name, loc: cr.GetLocation()})
				}
				if qual != "" && !found {
					return nil, -1, b.errAt(cr.GetLocation(), sqlerr.UndefinedTable, "missing FROM-clause entry for table %q", qual)
				}
				if qual == "" && len(sc.cols) == 0 {
					return nil, -1, b.errAt(cr.GetLocation(), sqlerr.SyntaxError, "SELECT * with no tables specified is not valid")
				}
				continue
			}
		}
		e, err := b.bindExpr(val, exprCtx{scope: sc, aggs: aggs, clause: "SELECT"})
		if err != nil {
			return nil, -1, err
		}
		name := rt.GetName()
		if name == "" {
			name = derivedName(val)
		}
		out = append(out, target{e: e, name: name, loc: rt.GetLocation()})
	}
	return out, winIdx, nil
}

// derivedName is the column name Postgres gives an unaliased select item
// (FigureColname): a column's name, a function's name, a cast's inner
// name or type, "case", "coalesce", "greatest", else "?column?".
func derivedName(n *pg_query.Node) string {
	switch {
	case n.GetColumnRef() != nil:
		fields := n.GetColumnRef().GetFields()
		return strVal(fields[len(fields)-1])
	case n.GetFuncCall() != nil:
		parts := names(n.GetFuncCall().GetFuncname())
		return parts[len(parts)-1]
	case n.GetTypeCast() != nil:
		if inner := derivedName(n.GetTypeCast().GetArg()); inner != "?column?" {
			return inner
		}
		parts := names(n.GetTypeCast().GetTypeName().GetNames())
		return parts[len(parts)-1]
	case n.GetCaseExpr() != nil:
		return "case"
	case n.GetCoalesceExpr() != nil:
		return "coalesce"
	case n.GetMinMaxExpr() != nil:
		if n.GetMinMaxExpr().GetOp() == pg_query.MinMaxOp_IS_LEAST {
			return "least"
		}
		return "greatest"
	case n.GetAExpr() != nil && n.GetAExpr().GetKind() == pg_query.A_Expr_Kind_AEXPR_NULLIF:
		return "nullif"
	case n.GetSqlvalueFunction() != nil:
		return valueFunctionName(n.GetSqlvalueFunction().GetOp())
	}
	return "?column?"
}

// outputRef resolves an ORDER BY or GROUP BY item that names an output
// column: an integer ordinal, or a bare name equal to a select-list alias
// (Postgres prefers output names in ORDER BY, input names in GROUP BY; the
// caller passes which).
//
// A constant that is not an integer is refused with 42601, as Postgres's
// findTargetlistEntrySQL92 refuses it ("non-integer constant in GROUP
// BY"): grouping or ordering by a constant means nothing.
func (b *Binder) outputRef(n *pg_query.Node, targets []target, clause string) (int, bool, error) {
	if c := n.GetAConst(); c != nil && c.GetIval() == nil {
		return 0, false, b.errAt(c.GetLocation(), sqlerr.SyntaxError, "non-integer constant in %s", clause)
	}
	if c := n.GetAConst(); c != nil && c.GetIval() != nil {
		i := int(c.GetIval().GetIval())
		if i < 1 || i > len(targets) {
			return 0, false, b.errAt(c.GetLocation(), sqlerr.InvalidColumnReference, "%s position %d is not in select list", clause, i)
		}
		return i - 1, true, nil
	}
	if clause != "ORDER BY" {
		return 0, false, nil
	}
	if cr := n.GetColumnRef(); cr != nil && len(cr.GetFields()) == 1 && cr.GetFields()[0].GetString_() != nil {
		name := strVal(cr.GetFields()[0])
		found := -1
		for i, t := range targets {
			if t.name == name {
				if found >= 0 {
					return 0, false, b.errAt(cr.GetLocation(), sqlerr.AmbiguousColumn, "ORDER BY %q is ambiguous", name)
				}
				found = i
			}
		}
		if found >= 0 {
			return found, true, nil
		}
	}
	return 0, false, nil
}

// bindGroupItem binds a GROUP BY item: an ordinal or an output alias
// (when no input column has that name, as Postgres resolves it), else an
// expression over the input.
func (b *Binder) bindGroupItem(n *pg_query.Node, sc *scope, targets []target) (expr.Expr, error) {
	if i, ok, err := b.outputRef(n, targets, "GROUP BY"); err != nil {
		return nil, err
	} else if ok {
		return b.ungroupedTarget(targets[i])
	}
	if cr := n.GetColumnRef(); cr != nil && len(cr.GetFields()) == 1 && cr.GetFields()[0].GetString_() != nil {
		name := strVal(cr.GetFields()[0])
		inInput := false
		for _, c := range sc.cols {
			if c.name == name && !c.hidden {
				inInput = true
			}
		}
		if !inInput {
			for _, t := range targets {
				if t.name == name {
					return b.ungroupedTarget(t)
				}
			}
		}
	}
	return b.bindExpr(n, exprCtx{scope: sc, clause: "GROUP BY"})
}

func (b *Binder) ungroupedTarget(t target) (expr.Expr, error) {
	hasAgg := false
	expr.Walk(t.e, func(e expr.Expr) bool {
		if _, ok := e.(*aggRef); ok {
			hasAgg = true
		}
		return !hasAgg
	})
	if hasAgg {
		return nil, b.errAt(t.loc, sqlerr.GroupingError, "aggregate functions are not allowed in GROUP BY")
	}
	if isUnknownLiteral(t.e) {
		// A quoted string or NULL in the select list is TEXT (Postgres
		// resolves unknown output columns to text); grouped by its
		// ordinal it is a TEXT key, which the operators can hold.
		return b.coerce(t.e, types.Text, false, t.loc)
	}
	return t.e, nil
}

// regroup rewrites e, bound over the Aggregate's input, to refer to the
// Aggregate's output: GROUP BY expressions become key references,
// aggregate references become result references, and any other column
// reference is a grouping error.
func (b *Binder) regroup(e expr.Expr, groupBy []expr.Expr, loc int32) (expr.Expr, error) {
	for i, g := range groupBy {
		if g.String() == e.String() && g.Type() == e.Type() {
			return &expr.ColumnRef{Index: i, Typ: g.Type(), Name: g.String()}, nil
		}
	}
	switch n := e.(type) {
	case *aggRef:
		return &expr.ColumnRef{Index: len(groupBy) + n.idx, Typ: n.typ, Name: n.text}, nil
	case *expr.ColumnRef:
		return nil, b.errAt(loc, sqlerr.GroupingError, "column %q must appear in the GROUP BY clause or be used in an aggregate function", n.Name)
	}
	kids := expr.Children(e)
	if len(kids) == 0 {
		return e, nil
	}
	nk := make([]expr.Expr, len(kids))
	for i, k := range kids {
		var err error
		if nk[i], err = b.regroup(k, groupBy, loc); err != nil {
			return nil, err
		}
	}
	return expr.WithChildren(e, nk), nil
}

// bindSetOp binds UNION [ALL], INTERSECT and EXCEPT. UNION ALL is a
// plan.Union of both sides (cast to their common column types); UNION a
// grouping of it by every column. INTERSECT and EXCEPT tag each side's
// rows (two BOOLEAN columns: from the left, from the right), group the
// union by every other column counting each side's rows, keep the groups
// with rows on both sides (INTERSECT) or only on the left (EXCEPT) and
// drop the counts: each distinct row once, NULLs equal to NULLs, as SQL's
// set operations compare rows. Their ALL forms repeat each row min(l, r)
// or l - r times (intersectExcept).
func (b *Binder) bindSetOp(sel *pg_query.SelectStmt) (plan.Node, error) {
	op := "UNION"
	switch sel.GetOp() {
	case pg_query.SetOperation_SETOP_INTERSECT:
		op = "INTERSECT"
	case pg_query.SetOperation_SETOP_EXCEPT:
		op = "EXCEPT"
	}
	if len(sel.GetSortClause()) > 0 || sel.GetLimitCount() != nil {
		loc := nodeLoc(sel.GetLimitCount())
		if len(sel.GetSortClause()) > 0 {
			loc = nodeLoc(sel.GetSortClause()[0])
		}
		return nil, b.errAt(loc, sqlerr.FeatureNotSupported, "ORDER BY and LIMIT on a %s are not supported", op)
	}
	l, err := b.bindSelectStmt(sel.GetLarg())
	if err != nil {
		return nil, err
	}
	r, err := b.bindSelectStmt(sel.GetRarg())
	if err != nil {
		return nil, err
	}
	ls, rs := l.Schema(), r.Schema()
	if len(ls) != len(rs) {
		return nil, b.errAt(deepLoc(sel.GetRarg()), sqlerr.SyntaxError, "each %s query must have the same number of columns", op)
	}
	// Unify column types pairwise; cast each side where needed.
	lp := &plan.Project{Input: l}
	rp := &plan.Project{Input: r}
	u := &plan.Union{}
	for i := range ls {
		le := expr.Expr(&expr.ColumnRef{Index: i, Typ: ls[i].Type, Name: ls[i].Name})
		re := expr.Expr(&expr.ColumnRef{Index: i, Typ: rs[i].Type, Name: rs[i].Name})
		es, t, err := b.coerceAll([]expr.Expr{le, re}, op, deepLoc(sel.GetRarg()))
		if err != nil {
			return nil, err
		}
		lp.Exprs, rp.Exprs = append(lp.Exprs, es[0]), append(rp.Exprs, es[1])
		col := plan.Column{Name: ls[i].Name, Type: t}
		lp.Cols, rp.Cols = append(lp.Cols, col), append(rp.Cols, col)
		u.Cols = append(u.Cols, col)
	}
	if op != "UNION" {
		return b.intersectExcept(op, sel.GetAll(), lp, rp, u)
	}
	u.Ins = []plan.Node{lp, rp}
	if !sel.GetAll() {
		return distinct(u), nil
	}
	return u, nil
}

// intersectExcept finishes bindSetOp for INTERSECT and EXCEPT [ALL] over
// the projections lp and rp of both sides and the union u of their
// columns. The ALL forms repeat each row min(l, r) (INTERSECT ALL) or
// l - r (EXCEPT ALL) times, l and r its counts on each side (a Repeat).
func (b *Binder) intersectExcept(op string, all bool, lp, rp *plan.Project, u *plan.Union) (plan.Node, error) {
	n := len(u.Cols)
	yes := &expr.Const{Value: types.NewBool(true), Typ: types.Bool}
	no := &expr.Const{Value: types.NewBool(false), Typ: types.Bool}
	tags := []plan.Column{{Name: "?left?", Type: types.Bool, NotNull: true}, {Name: "?right?", Type: types.Bool, NotNull: true}}
	lp.Exprs, lp.Cols = append(lp.Exprs, yes, no), append(lp.Cols, tags...)
	rp.Exprs, rp.Cols = append(rp.Exprs, no, yes), append(rp.Cols, tags...)
	u.Cols = append(u.Cols, tags...)
	u.Ins = []plan.Node{lp, rp}
	agg := &plan.Aggregate{Input: u}
	for i, c := range u.Cols[:n] {
		agg.GroupBy = append(agg.GroupBy, &expr.ColumnRef{Index: i, Typ: c.Type, Name: c.Name})
		agg.Cols = append(agg.Cols, c)
	}
	for side := range 2 {
		agg.Aggs = append(agg.Aggs, plan.AggCall{Func: "count", Type: types.Int64,
			Filter: &expr.ColumnRef{Index: n + side, Typ: types.Bool, Name: tags[side].Name}})
		agg.Cols = append(agg.Cols, plan.Column{Name: "?count?", Type: types.Int64, NotNull: true})
	}
	cmp := func(fn string, col int) (expr.Expr, error) {
		f, _, err := b.fns.Lookup(fn, []types.Type{types.Int64, types.Int64})
		if err != nil {
			return nil, err
		}
		return expr.NewCall(f, &expr.ColumnRef{Index: col, Typ: types.Int64}, &expr.Const{Value: types.NewInt64(0), Typ: types.Int64}), nil
	}
	left, err := cmp(">", n)
	if err != nil {
		return nil, err
	}
	rightFn := ">"
	if op == "EXCEPT" {
		rightFn = "="
	}
	right, err := cmp(rightFn, n+1)
	if err != nil {
		return nil, err
	}
	var f *plan.Filter
	cl := &expr.ColumnRef{Index: n, Typ: types.Int64}
	cr := &expr.ColumnRef{Index: n + 1, Typ: types.Int64}
	var times expr.Expr
	switch {
	case !all:
		f = &plan.Filter{Input: agg, Pred: &expr.And{Args: []expr.Expr{left, right}}}
	case op == "EXCEPT":
		more, err := b.call(">", []expr.Expr{cl, cr}, -1)
		if err != nil {
			return nil, err
		}
		f = &plan.Filter{Input: agg, Pred: more}
		if times, err = b.call("-", []expr.Expr{cl, cr}, -1); err != nil {
			return nil, err
		}
	default:
		f = &plan.Filter{Input: agg, Pred: &expr.And{Args: []expr.Expr{left, right}}}
		// min(l, r) = (l + r - |l - r|) / 2
		d, err := b.call("-", []expr.Expr{cl, cr}, -1)
		if err == nil {
			d, err = b.call("abs", []expr.Expr{d}, -1)
		}
		var sum expr.Expr
		if err == nil {
			sum, err = b.call("+", []expr.Expr{cl, cr}, -1)
		}
		if err == nil {
			sum, err = b.call("-", []expr.Expr{sum, d}, -1)
		}
		if err == nil {
			times, err = b.call("/", []expr.Expr{sum, &expr.Const{Value: types.NewInt64(2), Typ: types.Int64}}, -1)
		}
		if err != nil {
			return nil, err
		}
	}
	out := &plan.Project{Input: f}
	for i, c := range u.Cols[:n] {
		out.Exprs = append(out.Exprs, &expr.ColumnRef{Index: i, Typ: c.Type, Name: c.Name})
		out.Cols = append(out.Cols, c)
	}
	if !all {
		return out, nil
	}
	out.Exprs = append(out.Exprs, times)
	out.Cols = append(out.Cols, plan.Column{Name: "?times?", Type: types.Int64})
	return &plan.Repeat{Input: out, Cols: out.Cols[:n]}, nil
}

func (b *Binder) bindValues(sel *pg_query.SelectStmt, hint []types.Type) (plan.Node, error) {
	lists := sel.GetValuesLists()
	var rows [][]expr.Expr
	for _, l := range lists {
		row, err := b.bindList(l.GetList().GetItems(), exprCtx{clause: "VALUES"})
		if err != nil {
			return nil, err
		}
		for i := range row {
			if row[i], err = b.hinted(row[i], hint, i, nodeLoc(l)); err != nil {
				return nil, err
			}
		}
		if len(rows) > 0 && len(row) != len(rows[0]) {
			return nil, b.errAt(nodeLoc(l), sqlerr.SyntaxError, "VALUES lists must all be the same length")
		}
		rows = append(rows, row)
	}
	v := &plan.Values{Rows: rows}
	for c := range rows[0] {
		col := make([]expr.Expr, len(rows))
		for r := range rows {
			col[r] = rows[r][c]
		}
		col, t, err := b.coerceAll(col, "VALUES", nodeLoc(lists[0]))
		if err != nil {
			return nil, err
		}
		for r := range rows {
			rows[r][c] = col[r]
		}
		v.Cols = append(v.Cols, plan.Column{Name: "column" + strconv.Itoa(c+1), Type: t})
	}
	return v, nil
}

// valueFunctionName is the column name PostgreSQL gives an SQL value
// function (FigureColnameInternal in parse_target.c): its keyword, with
// the _N forms that take a precision named as the plain ones.
func valueFunctionName(op pg_query.SQLValueFunctionOp) string {
	switch op {
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_DATE:
		return "current_date"
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIME, pg_query.SQLValueFunctionOp_SVFOP_CURRENT_TIME_N:
		return "current_time"
	case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIME_N:
		return "localtime"
	case pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP, pg_query.SQLValueFunctionOp_SVFOP_LOCALTIMESTAMP_N:
		return "localtimestamp"
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_ROLE:
		return "current_role"
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_USER:
		return "current_user"
	case pg_query.SQLValueFunctionOp_SVFOP_USER:
		return "user"
	case pg_query.SQLValueFunctionOp_SVFOP_SESSION_USER:
		return "session_user"
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_CATALOG:
		return "current_catalog"
	case pg_query.SQLValueFunctionOp_SVFOP_CURRENT_SCHEMA:
		return "current_schema"
	}
	return "current_timestamp"
}
