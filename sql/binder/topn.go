package binder

import (
	"math"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// This file binds the Top-N and deduplication patterns of Flink and
// RisingWave:
//
//	SELECT ... FROM (
//	  SELECT ..., ROW_NUMBER() OVER (PARTITION BY p ORDER BY o) AS rn
//	  FROM ...
//	) [AS alias] WHERE rn <= N [AND other predicates]
//
// to a plan.TopN inside the subquery. The enclosing query's WHERE decides
// N, so the pattern is recognised on the enclosing SelectStmt before its
// FROM is bound (topNPattern), and the subquery is bound with the result
// (bindSelect with a topNSpec). ROW_NUMBER() anywhere else, and every other
// window function, is refused with 0A000 by bindFuncCall.
//
// A predicate on rn is a comparison of rn with an integer literal, bare
// or cast to an integer type (<, <=, =, >=, >, either side), or rn BETWEEN
// a AND b. Each gives an interval of row numbers; N is the smallest upper
// bound. A bound whose interval holds every row number 1..N is implied by
// the TopN and dropped; any other one (rn = 3, rn > 2, rn BETWEEN 2 AND 5)
// stays in the enclosing Filter, over the row number column, as do
// predicates on other columns. An upper bound below 1 (rn < 1) keeps a
// TopN of one row under a Filter that removes it: the result is empty, as
// in Postgres.
//
// The row number is a column of the TopN's output only when the enclosing
// query mentions rn outside the bounds the TopN absorbed (or selects *, or
// renames the subquery's columns); without it the subquery's select list
// drops the rn item, which nothing can then refer to.
//
// Dropped design: an Offset in plan.TopN for rn > M AND rn <= N. The
// streaming TopN has one, but a TopN of N rows under a Filter rn > M gives
// the same rows from the same state (N rows per partition either way), and
// the plan keeps a single spelling of a Top-N.

// topNSpec is what the enclosing query decided for a subquery's
// ROW_NUMBER() item.
type topNSpec struct {
	fc      *pg_query.FuncCall // the ROW_NUMBER() call in the subquery's select list
	name    string             // the item's output name
	n       int64
	rankCol bool
}

// rowNumberItem returns the ROW_NUMBER() OVER (...) item of sel's select
// list, if there is one at the top of an item, with its position among the
// ResTargets and its output name.
func rowNumberItem(sel *pg_query.SelectStmt) (*pg_query.FuncCall, int, string) {
	if sel == nil || sel.GetOp() != pg_query.SetOperation_SETOP_NONE || len(sel.GetValuesLists()) > 0 {
		return nil, -1, ""
	}
	for i, n := range sel.GetTargetList() {
		rt := n.GetResTarget()
		fc := rt.GetVal().GetFuncCall()
		if fc == nil || fc.GetOver() == nil || funcName(fc) != "row_number" {
			continue
		}
		name := rt.GetName()
		if name == "" {
			name = "row_number"
		}
		return fc, i, name
	}
	return nil, -1, ""
}

// starBefore reports whether a select list has a * item before position i
// (which makes the item's output position unknown before binding).
func starBefore(list []*pg_query.Node, i int) bool {
	for _, n := range list[:i] {
		if f := n.GetResTarget().GetVal().GetColumnRef().GetFields(); len(f) > 0 && f[len(f)-1].GetAStar() != nil {
			return true
		}
	}
	return false
}

// topNPattern recognises the Top-N pattern on a SELECT whose only FROM
// item is a subquery with a ROW_NUMBER() item. It returns nil when sel
// is not of that shape, else the spec for the subquery and the enclosing
// WHERE without the bounds the TopN absorbs (nil when none is left).
func (b *Binder) topNPattern(sel *pg_query.SelectStmt) (*topNSpec, *pg_query.Node, error) {
	from := sel.GetFromClause()
	if len(from) != 1 {
		return nil, nil, nil
	}
	rs := from[0].GetRangeSubselect()
	if rs == nil || rs.GetLateral() {
		return nil, nil, nil
	}
	inner := rs.GetSubquery().GetSelectStmt()
	fc, pos, name := rowNumberItem(inner)
	if fc == nil {
		return nil, nil, nil
	}
	alias := rs.GetAlias()
	renamed := len(alias.GetColnames()) > 0
	if renamed {
		if starBefore(inner.GetTargetList(), pos) {
			return nil, nil, b.errAt(fc.GetLocation(), sqlerr.FeatureNotSupported, "a column list on a Top-N subquery whose select list has * before ROW_NUMBER() is not supported")
		}
		if pos < len(alias.GetColnames()) {
			name = strVal(alias.GetColnames()[pos])
		}
	}
	spec := &topNSpec{fc: fc, name: name}

	type bound struct {
		node   *pg_query.Node
		lo, hi int64
	}
	var bounds []bound
	var rest []*pg_query.Node
	for _, c := range conjuncts(sel.GetWhereClause()) {
		if lo, hi, ok := rnBound(c, name, alias.GetAliasname()); ok {
			bounds = append(bounds, bound{c, lo, hi})
		} else {
			rest = append(rest, c)
		}
	}
	hi := int64(math.MaxInt64)
	for _, bd := range bounds {
		hi = min(hi, bd.hi)
	}
	if hi == math.MaxInt64 {
		return nil, nil, b.errAt(fc.GetLocation(), sqlerr.FeatureNotSupported,
			"ROW_NUMBER() is only supported as a Top-N: the enclosing query's WHERE must bound %s by an integer (%s <= N, %s < N, %s = 1 or %s BETWEEN 1 AND N)",
			name, name, name, name, name)
	}
	spec.n = max(hi, 1)
	for _, bd := range bounds {
		if bd.lo > 1 || bd.hi < spec.n {
			rest = append(rest, bd.node) // not implied by the TopN: filter on rn
		}
	}
	var where *pg_query.Node
	switch len(rest) {
	case 0:
	case 1:
		where = rest[0]
	default:
		where = &pg_query.Node{Node: &pg_query.Node_BoolExpr{BoolExpr: &pg_query.BoolExpr{
			Boolop: pg_query.BoolExprType_AND_EXPR, Args: rest, Location: -1}}}
	}
	spec.rankCol = renamed || mentions(where, name)
	for _, n := range sel.GetTargetList() {
		spec.rankCol = spec.rankCol || mentions(n, name)
	}
	for _, n := range sel.GetGroupClause() {
		spec.rankCol = spec.rankCol || mentions(n, name)
	}
	for _, n := range sel.GetSortClause() {
		spec.rankCol = spec.rankCol || mentions(n, name)
	}
	for _, n := range sel.GetDistinctClause() {
		spec.rankCol = spec.rankCol || mentions(n, name)
	}
	spec.rankCol = spec.rankCol || mentions(sel.GetHavingClause(), name)
	return spec, where, nil
}

// conjuncts flattens a WHERE clause's top-level ANDs.
func conjuncts(n *pg_query.Node) []*pg_query.Node {
	if n == nil {
		return nil
	}
	if be := n.GetBoolExpr(); be != nil && be.GetBoolop() == pg_query.BoolExprType_AND_EXPR {
		var out []*pg_query.Node
		for _, a := range be.GetArgs() {
			out = append(out, conjuncts(a)...)
		}
		return out
	}
	return []*pg_query.Node{n}
}

// rnBound reads a comparison of the row number column with integer
// literals and returns the interval of row numbers it admits.
func rnBound(n *pg_query.Node, name, alias string) (lo, hi int64, ok bool) {
	a := n.GetAExpr()
	if a == nil {
		return 0, 0, false
	}
	isRN := func(x *pg_query.Node) bool {
		cr := x.GetColumnRef()
		if cr == nil {
			return false
		}
		f := cr.GetFields()
		switch len(f) {
		case 1:
			return strVal(f[0]) == name
		case 2:
			return alias != "" && strVal(f[0]) == alias && strVal(f[1]) == name
		}
		return false
	}
	lit := func(x *pg_query.Node) (int64, bool) {
		// 3::bigint, CAST(3 AS integer): an integer literal cast to an
		// integer type is the literal.
		if tc := x.GetTypeCast(); tc != nil {
			switch strings.Join(names(tc.GetTypeName().GetNames()), ".") {
			case "pg_catalog.int2", "pg_catalog.int4", "pg_catalog.int8", "int2", "int4", "int8", "smallint", "integer", "bigint":
				x = tc.GetArg()
			default:
				return 0, false
			}
		}
		c := x.GetAConst()
		if c == nil || c.GetIval() == nil {
			return 0, false
		}
		return int64(c.GetIval().GetIval()), true
	}
	switch a.GetKind() {
	case pg_query.A_Expr_Kind_AEXPR_BETWEEN:
		items := a.GetRexpr().GetList().GetItems()
		if !isRN(a.GetLexpr()) || len(items) != 2 {
			return 0, 0, false
		}
		l, ok1 := lit(items[0])
		h, ok2 := lit(items[1])
		return l, h, ok1 && ok2
	case pg_query.A_Expr_Kind_AEXPR_OP:
		op := opName(a.GetName())
		var k int64
		switch {
		case isRN(a.GetLexpr()):
			if k, ok = lit(a.GetRexpr()); !ok {
				return 0, 0, false
			}
		case isRN(a.GetRexpr()):
			if k, ok = lit(a.GetLexpr()); !ok {
				return 0, 0, false
			}
			// k op rn is rn op' k with the comparison mirrored.
			op = map[string]string{"<": ">", "<=": ">=", ">": "<", ">=": "<=", "=": "="}[op]
		default:
			return 0, 0, false
		}
		switch op {
		case "<":
			return math.MinInt64, k - 1, true
		case "<=":
			return math.MinInt64, k, true
		case "=":
			return k, k, true
		case ">=":
			return k, math.MaxInt64, true
		case ">":
			return k + 1, math.MaxInt64, true
		}
	}
	return 0, 0, false
}

// mentions reports whether the parse tree n has a column reference whose
// last name is name, or a *: conservative, it may say yes for a column of
// the same name elsewhere, which only keeps the row number column.
func mentions(n proto.Message, name string) bool {
	if n == nil || !n.ProtoReflect().IsValid() {
		return false
	}
	found := false
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		if found {
			return
		}
		if cr, ok := m.Interface().(*pg_query.ColumnRef); ok {
			f := cr.GetFields()
			if len(f) > 0 && (f[len(f)-1].GetAStar() != nil || strVal(f[len(f)-1]) == name) {
				found = true
			}
			return
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					walk(l.Get(i).Message())
				}
			case fd.IsMap():
			case fd.Message() != nil:
				walk(v.Message())
			}
			return !found
		})
	}
	walk(n.ProtoReflect())
	return found
}

// funcName is a function call's lower-case name without pg_catalog.
func funcName(fc *pg_query.FuncCall) string {
	parts := names(fc.GetFuncname())
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		parts = parts[1:]
	}
	return lower(strings.Join(parts, "."))
}

// windowOf binds the OVER clause of the ROW_NUMBER() item over the
// subquery's scope (aggregates allowed, as window functions run after
// grouping): its partition expressions and its order keys.
func (b *Binder) windowOf(fc *pg_query.FuncCall, sc *scope, aggs *aggCollector) ([]expr.Expr, []plan.SortKey, error) {
	loc := fc.GetLocation()
	if len(fc.GetArgs()) > 0 || fc.GetAggStar() || fc.GetAggDistinct() || fc.GetAggFilter() != nil || len(fc.GetAggOrder()) > 0 {
		return nil, nil, b.errAt(loc, sqlerr.UndefinedFunction, "ROW_NUMBER() takes no arguments")
	}
	over := fc.GetOver()
	if over.GetRefname() != "" || over.GetName() != "" {
		return nil, nil, b.errAt(loc, sqlerr.FeatureNotSupported, "named windows are not supported; write the window in OVER (...)")
	}
	ec := exprCtx{scope: sc, aggs: aggs, clause: "window definition"}
	var part []expr.Expr
	for _, p := range over.GetPartitionClause() {
		e, err := b.bindExpr(p, ec)
		if err != nil {
			return nil, nil, err
		}
		if isUnknownLiteral(e) {
			if e, err = b.coerce(e, types.Text, false, loc); err != nil {
				return nil, nil, err
			}
		}
		part = append(part, e)
	}
	if len(over.GetOrderClause()) == 0 {
		return nil, nil, b.errAt(loc, sqlerr.FeatureNotSupported, "ROW_NUMBER() for a Top-N needs ORDER BY in its OVER clause (without one the rows it keeps are not determined)")
	}
	var order []plan.SortKey
	for _, s := range over.GetOrderClause() {
		sb := s.GetSortBy()
		key := sortKeyOf(sb)
		e, err := b.bindExpr(sb.GetNode(), ec)
		if err != nil {
			return nil, nil, err
		}
		if isUnknownLiteral(e) {
			if e, err = b.coerce(e, types.Text, false, loc); err != nil {
				return nil, nil, err
			}
		}
		key.Expr = e
		order = append(order, key)
	}
	return part, order, nil
}

// sortKeyOf returns the direction and NULLS placement of a sort item
// (Postgres's default: NULLS LAST ascending, NULLS FIRST descending),
// without its expression.
func sortKeyOf(sb *pg_query.SortBy) plan.SortKey {
	key := plan.SortKey{Desc: sb.GetSortbyDir() == pg_query.SortByDir_SORTBY_DESC}
	key.NullsFirst = key.Desc
	switch sb.GetSortbyNulls() {
	case pg_query.SortByNulls_SORTBY_NULLS_FIRST:
		key.NullsFirst = true
	case pg_query.SortByNulls_SORTBY_NULLS_LAST:
		key.NullsFirst = false
	}
	return key
}

// bindTopNSubselect binds the FROM subquery of the Top-N pattern, as
// bindFromItem binds any subquery, with the TopN the enclosing WHERE asked
// for.
func (b *Binder) bindTopNSubselect(rs *pg_query.RangeSubselect, spec *topNSpec) (plan.Node, *scope, error) {
	sub, err := b.bindSelect(rs.GetSubquery().GetSelectStmt(), spec)
	if err != nil {
		return nil, nil, err
	}
	sc := scopeOf(sub)
	sc.requalify(rs.GetAlias().GetAliasname())
	if err := b.renameColumns(sc, rs.GetAlias(), deepLoc(rs)); err != nil {
		return nil, nil, err
	}
	return sub, sc, nil
}
