package binder

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// bindFrom binds the FROM list; several items are cross-joined left to
// right (their join condition comes from WHERE).
func (b *Binder) bindFrom(items []*pg_query.Node) (plan.Node, *scope, error) {
	var node plan.Node
	var sc *scope
	for _, it := range items {
		n, s, err := b.bindFromItem(it)
		if err != nil {
			return nil, nil, err
		}
		if isLookupScan(n) {
			return nil, nil, b.errAt(nodeLoc(it), sqlerr.FeatureNotSupported, "LOOKUP(%s) is read by key: it may only be the right side of an INNER or LEFT JOIN", n.(*plan.Scan).Rel.Name)
		}
		if node == nil {
			node, sc = n, s
			continue
		}
		if err := b.checkDuplicateAliases(sc, s, nodeLoc(it)); err != nil {
			return nil, nil, err
		}
		node = plan.NewJoin(plan.CrossJoin, node, n, nil)
		sc = sc.concat(s)
	}
	return node, sc, nil
}

func (b *Binder) checkDuplicateAliases(l, r *scope, loc int32) error {
	seen := map[string]bool{}
	for _, c := range l.cols {
		seen[c.table] = true
	}
	for _, c := range r.cols {
		if c.table != "" && seen[c.table] {
			return b.errAt(loc, sqlerr.DuplicateObject, "table name %q specified more than once", c.table)
		}
	}
	return nil
}

func (b *Binder) bindFromItem(n *pg_query.Node) (plan.Node, *scope, error) {
	switch {
	case n.GetRangeVar() != nil && b.lookupCTE(n.GetRangeVar()) != nil:
		rv := n.GetRangeVar()
		f := b.lookupCTE(rv)
		saved := b.ctes
		b.ctes = f.outer
		sub, err := b.bindQuery(f.cte.GetCtequery())
		b.ctes = saved
		if err != nil {
			return nil, nil, err
		}
		sc := scopeOf(sub)
		alias := rv.GetAlias().GetAliasname()
		if alias == "" {
			alias = f.cte.GetCtename()
		}
		sc.requalify(alias)
		if err := b.renameColumns(sc, &pg_query.Alias{Aliasname: f.cte.GetCtename(), Colnames: f.cte.GetAliascolnames()}, f.cte.GetLocation()); err != nil {
			return nil, nil, err
		}
		if err := b.renameColumns(sc, rv.GetAlias(), rv.GetLocation()); err != nil {
			return nil, nil, err
		}
		return sub, sc, nil
	case n.GetRangeVar() != nil:
		rv := n.GetRangeVar()
		rel, err := b.cat.Relation(relName(rv))
		if err != nil {
			return nil, nil, b.atLoc(rv.GetLocation(), err)
		}
		alias := rv.GetAlias().GetAliasname()
		scan := plan.NewScan(rel, alias)
		sc := scopeOf(scan)
		if err := b.renameColumns(sc, rv.GetAlias(), rv.GetLocation()); err != nil {
			return nil, nil, err
		}
		return scan, sc, nil
	case n.GetJoinExpr() != nil:
		return b.bindJoin(n.GetJoinExpr())
	case n.GetRangeSubselect() != nil:
		rs := n.GetRangeSubselect()
		if rs.GetLateral() {
			return nil, nil, b.errAt(nodeLoc(n), sqlerr.FeatureNotSupported, "LATERAL is not supported")
		}
		sub, err := b.bindQuery(rs.GetSubquery())
		if err != nil {
			return nil, nil, err
		}
		sc := scopeOf(sub)
		sc.requalify(rs.GetAlias().GetAliasname())
		if err := b.renameColumns(sc, rs.GetAlias(), nodeLoc(n)); err != nil {
			return nil, nil, err
		}
		return sub, sc, nil
	case n.GetRangeFunction() != nil:
		if rf := n.GetRangeFunction(); isLookup(rf) {
			return b.bindLookup(rf)
		} else if isGenerateSeries(rf) {
			return b.bindGenerateSeries(rf)
		}
		return b.bindWindowTVF(n.GetRangeFunction())
	}
	return nil, nil, b.errAt(nodeLoc(n), sqlerr.FeatureNotSupported, "unsupported FROM item %T", n.GetNode())
}

// renameColumns applies an alias's column list: AS t(a, b).
func (b *Binder) renameColumns(sc *scope, alias *pg_query.Alias, loc int32) error {
	cols := alias.GetColnames()
	if len(cols) > len(sc.cols) {
		return b.errAt(loc, sqlerr.InvalidColumnReference, "table %q has %d columns available but %d columns specified", alias.GetAliasname(), len(sc.cols), len(cols))
	}
	for i, c := range cols {
		sc.cols[i].name = strVal(c)
	}
	return nil
}

func (b *Binder) bindJoin(j *pg_query.JoinExpr) (plan.Node, *scope, error) {
	left, ls, err := b.bindFromItem(j.GetLarg())
	if err != nil {
		return nil, nil, err
	}
	right, rs, err := b.bindFromItem(j.GetRarg())
	if err != nil {
		return nil, nil, err
	}
	rloc := nodeLoc(j.GetRarg())
	if err := b.checkDuplicateAliases(ls, rs, rloc); err != nil {
		return nil, nil, err
	}
	if isLookupScan(left) {
		return nil, nil, b.errAt(nodeLoc(j.GetLarg()), sqlerr.FeatureNotSupported, "LOOKUP(%s) may only be the right side of an INNER or LEFT JOIN", left.(*plan.Scan).Rel.Name)
	}
	var kind plan.JoinKind
	switch j.GetJointype() {
	case pg_query.JoinType_JOIN_INNER:
		kind = plan.InnerJoin
		if j.GetQuals() == nil && len(j.GetUsingClause()) == 0 && !j.GetIsNatural() {
			kind = plan.CrossJoin
		}
	case pg_query.JoinType_JOIN_LEFT:
		kind = plan.LeftJoin
	case pg_query.JoinType_JOIN_RIGHT:
		kind = plan.RightJoin
	case pg_query.JoinType_JOIN_FULL:
		kind = plan.FullJoin
	default:
		return nil, nil, b.errAt(rloc, sqlerr.FeatureNotSupported, "join type %s is not supported", j.GetJointype())
	}
	if isLookupScan(right) && kind != plan.InnerJoin && kind != plan.LeftJoin {
		return nil, nil, b.errAt(rloc, sqlerr.FeatureNotSupported, "LOOKUP(%s) may only be the right side of an INNER or LEFT JOIN, not of a %s JOIN", right.(*plan.Scan).Rel.Name, strings.ToUpper(kind.String()))
	}
	sc := ls.concat(rs)
	var on expr.Expr
	using := names(j.GetUsingClause())
	if j.GetIsNatural() {
		for _, l := range ls.cols {
			for _, r := range rs.cols {
				if !l.hidden && !r.hidden && l.name == r.name {
					using = append(using, l.name)
				}
			}
		}
	}
	var merged []expr.Expr // FULL JOIN USING: COALESCE of each pair
	var mergedCols []scopeCol
	if len(using) > 0 {
		var conds []expr.Expr
		for _, name := range using {
			li, err := b.resolve(ls, "", name, rloc)
			if err != nil {
				return nil, nil, err
			}
			ri, err := b.resolve(rs, "", name, rloc)
			if err != nil {
				return nil, nil, err
			}
			l := &expr.ColumnRef{Index: li, Typ: ls.cols[li].typ, Name: qualified(ls.cols[li])}
			r := &expr.ColumnRef{Index: len(ls.cols) + ri, Typ: rs.cols[ri].typ, Name: qualified(rs.cols[ri])}
			eq, err := b.call("=", []expr.Expr{l, r}, rloc)
			if err != nil {
				return nil, nil, err
			}
			conds = append(conds, eq)
			// The merged column is the left one (the right one for a right
			// join; for a full join COALESCE of both, put first); hide
			// the others from unqualified names and *.
			if kind == plan.FullJoin {
				es, t, err := b.coerceAll([]expr.Expr{l, r}, "JOIN/USING", rloc)
				if err != nil {
					return nil, nil, err
				}
				merged = append(merged, &expr.Coalesce{Args: es, Typ: t})
				mergedCols = append(mergedCols, scopeCol{name: name, typ: t})
				sc.cols[li].hidden = true
				sc.cols[len(ls.cols)+ri].hidden = true
			} else if kind == plan.RightJoin {
				sc.cols[li].hidden = true
			} else {
				sc.cols[len(ls.cols)+ri].hidden = true
			}
		}
		if len(conds) == 1 {
			on = conds[0]
		} else {
			on = &expr.And{Args: conds}
		}
	} else if q := j.GetQuals(); q != nil {
		if on, err = b.bindBool(q, exprCtx{scope: sc, clause: "JOIN conditions"}, nodeLoc(q)); err != nil {
			return nil, nil, err
		}
	}
	if isLookupScan(right) {
		loc := rloc
		if q := j.GetQuals(); q != nil {
			loc = deepLoc(q) // the start of ON's expression
		}
		if err := b.checkLookupKey(right.(*plan.Scan), on, len(ls.cols), loc); err != nil {
			return nil, nil, err
		}
	}
	var node plan.Node = plan.NewJoin(kind, left, right, on)
	if len(merged) > 0 {
		// The merged columns, then every column of the join (the sides'
		// own columns stay reachable by qualified name).
		p := &plan.Project{Input: node, Exprs: merged}
		for _, c := range mergedCols {
			p.Cols = append(p.Cols, plan.Column{Name: c.name, Type: c.typ})
		}
		for i, c := range node.Schema() {
			p.Exprs = append(p.Exprs, &expr.ColumnRef{Index: i, Typ: c.Type, Name: c.Name})
			p.Cols = append(p.Cols, c)
		}
		node = p
		sc = &scope{cols: append(mergedCols, sc.cols...)}
	}
	if a := j.GetAlias(); a != nil {
		sc.requalify(a.GetAliasname())
		if err := b.renameColumns(sc, a, rloc); err != nil {
			return nil, nil, err
		}
	}
	return node, sc, nil
}

func qualified(c scopeCol) string {
	if c.table == "" {
		return c.name
	}
	return c.table + "." + c.name
}

// bindWindowTVF binds TUMBLE(rel, time_col, size [, offset]),
// HOP(rel, time_col, slide, size), CUMULATE(rel, time_col, step, size)
// and SESSION(rel, time_col, gap [, partition]), RisingWave's spelling of
// Flink's window table-valued functions. The result has rel's columns plus
// window_start and window_end of the time column's type.
//
// The time column may also be written DESCRIPTOR(col), as Flink does.
// Flink's partitioned session, SESSION(TABLE t PARTITION BY k,
// DESCRIPTOR(ts), gap), is not in the PostgreSQL grammar (TABLE t is a
// syntax error in an argument list), so its partition is a last
// argument instead: a column, (k1, k2), DESCRIPTOR(k1, k2), or any of
// these named, partition_by => k.
func (b *Binder) bindWindowTVF(rf *pg_query.RangeFunction) (plan.Node, *scope, error) {
	if len(rf.GetFunctions()) != 1 {
		return nil, nil, b.errAt(deepLoc(rf), sqlerr.FeatureNotSupported, "ROWS FROM is not supported")
	}
	fc := rf.GetFunctions()[0].GetList().GetItems()[0].GetFuncCall()
	if fc == nil {
		return nil, nil, b.errAt(deepLoc(rf), sqlerr.FeatureNotSupported, "unsupported function in FROM")
	}
	loc := fc.GetLocation()
	name := lower(strings.Join(names(fc.GetFuncname()), "."))
	kinds := map[string]plan.WindowKind{"tumble": plan.Tumble, "hop": plan.Hop, "cumulate": plan.Cumulate, "session": plan.Session}
	kind, ok := kinds[name]
	if !ok {
		return nil, nil, b.errAt(loc, sqlerr.UndefinedFunction, "table function %s does not exist (TUMBLE, HOP, CUMULATE and SESSION are)", name)
	}
	args := fc.GetArgs()
	var part *pg_query.Node // SESSION's partition argument
	if n := len(args); n > 0 {
		if na := args[n-1].GetNamedArgExpr(); na != nil {
			if kind != plan.Session || (na.GetName() != "partition_by" && na.GetName() != "partition") {
				return nil, nil, b.errAt(na.GetLocation(), sqlerr.UndefinedFunction, "%s has no argument named %s (the only named argument is SESSION's partition_by)", strings.ToUpper(name), na.GetName())
			}
			part, args = na.GetArg(), args[:n-1]
		} else if kind == plan.Session && n == 4 {
			part, args = args[3], args[:3]
		}
	}
	for _, a := range args {
		if na := a.GetNamedArgExpr(); na != nil {
			return nil, nil, b.errAt(na.GetLocation(), sqlerr.FeatureNotSupported, "named arguments of %s are not supported, except a last partition_by of SESSION", strings.ToUpper(name))
		}
	}
	nargs := map[plan.WindowKind][2]int{plan.Tumble: {3, 4}, plan.Hop: {4, 4}, plan.Cumulate: {4, 4}, plan.Session: {3, 3}}[kind]
	if len(args) < nargs[0] || len(args) > nargs[1] {
		if kind == plan.Session {
			return nil, nil, b.errAt(loc, sqlerr.UndefinedFunction, "SESSION takes 3 or 4 arguments: (relation, time column, gap [, partition_by => columns])")
		}
		return nil, nil, b.errAt(loc, sqlerr.UndefinedFunction, "%s takes %d arguments: (relation, time column, intervals...)", strings.ToUpper(name), nargs[0])
	}
	relRef := args[0].GetColumnRef()
	if relRef == nil || len(relRef.GetFields()) != 1 {
		return nil, nil, b.errAt(loc, sqlerr.SyntaxError, "the first argument of %s must name a table, view or source", strings.ToUpper(name))
	}
	rel, err := b.cat.Relation(strVal(relRef.GetFields()[0]))
	if err != nil {
		return nil, nil, b.atLoc(relRef.GetLocation(), err)
	}
	scan := plan.NewScan(rel, "")
	inSc := scopeOf(scan)
	tnode := args[1]
	if d := tnode.GetFuncCall(); d != nil && funcName(d) == "descriptor" && len(d.GetArgs()) == 1 {
		tnode = d.GetArgs()[0]
	}
	tcol := tnode.GetColumnRef()
	if tcol == nil || len(tcol.GetFields()) != 1 {
		return nil, nil, b.errAt(loc, sqlerr.SyntaxError, "the second argument of %s must be a time column", strings.ToUpper(name))
	}
	ti, err := b.resolve(inSc, "", strVal(tcol.GetFields()[0]), tcol.GetLocation())
	if err != nil {
		return nil, nil, err
	}
	tt := inSc.cols[ti].typ
	if tt.Kind != types.KindTimestamp && tt.Kind != types.KindTimestampTZ {
		return nil, nil, b.errAt(tcol.GetLocation(), sqlerr.DatatypeMismatch, "the time column of %s must be a timestamp, not %s", strings.ToUpper(name), typeName(tt))
	}
	intervals := make([]types.IntervalValue, 0, len(args)-2)
	for _, a := range args[2:] {
		e, err := b.bindExpr(a, exprCtx{clause: strings.ToUpper(name)})
		if err != nil {
			return nil, nil, err
		}
		if e, err = b.coerce(e, types.Interval, false, loc); err != nil {
			return nil, nil, err
		}
		c, ok := e.(*expr.Const)
		if !ok || c.Value.IsNull() {
			return nil, nil, b.errAt(loc, sqlerr.InvalidParameterValue, "window sizes of %s must be constant intervals", strings.ToUpper(name))
		}
		iv := c.Value.Interval()
		if iv.Months != 0 || iv.Days < 0 || iv.Micros < 0 || (iv.Days == 0 && iv.Micros == 0) {
			return nil, nil, b.errAt(loc, sqlerr.InvalidParameterValue, "window sizes must be positive intervals without months, got %s", types.FormatText(c.Value, nil))
		}
		intervals = append(intervals, iv)
	}
	w := &plan.WindowTVF{Input: scan, Kind: kind, TimeCol: ti}
	switch kind {
	case plan.Tumble:
		w.Size = intervals[0]
		if len(intervals) > 1 {
			w.Offset = intervals[1]
		}
	case plan.Hop, plan.Cumulate:
		w.Slide, w.Size = intervals[0], intervals[1]
		if micros(w.Size)%micros(w.Slide) != 0 {
			return nil, nil, b.errAt(loc, sqlerr.InvalidParameterValue, "the window size of %s must be a multiple of its slide", strings.ToUpper(name))
		}
	case plan.Session:
		w.Size = intervals[0]
		if part != nil {
			if w.Partition, err = b.partitionColumns(part, inSc); err != nil {
				return nil, nil, err
			}
		}
	}
	alias := rf.GetAlias().GetAliasname()
	if alias == "" {
		alias = rel.Name
	}
	w.Cols = append(w.Cols, scan.Schema()...)
	w.Cols = append(w.Cols,
		plan.Column{Name: "window_start", Type: tt, NotNull: true},
		plan.Column{Name: "window_end", Type: tt, NotNull: true})
	for i := range w.Cols {
		w.Cols[i].Table = alias
	}
	sc := scopeOf(w)
	if err := b.renameColumns(sc, rf.GetAlias(), loc); err != nil {
		return nil, nil, err
	}
	return w, sc, nil
}

func micros(iv types.IntervalValue) int64 {
	return int64(iv.Days)*86_400_000_000 + iv.Micros
}

// partitionColumns resolves SESSION's partition argument, a column, a
// parenthesized list of columns or DESCRIPTOR(columns), to positions of the
// relation's columns.
func (b *Binder) partitionColumns(n *pg_query.Node, sc *scope) ([]int, error) {
	items := []*pg_query.Node{n}
	switch {
	case n.GetRowExpr() != nil:
		items = n.GetRowExpr().GetArgs()
	case n.GetFuncCall() != nil && funcName(n.GetFuncCall()) == "descriptor":
		items = n.GetFuncCall().GetArgs()
	}
	var out []int
	for _, it := range items {
		cr := it.GetColumnRef()
		if cr == nil || len(cr.GetFields()) != 1 || cr.GetFields()[0].GetString_() == nil {
			return nil, b.errAt(nodeLoc(it), sqlerr.FeatureNotSupported, "SESSION partitions by columns of its relation (partition_by => k or (k1, k2)), not by expressions")
		}
		i, err := b.resolve(sc, "", strVal(cr.GetFields()[0]), cr.GetLocation())
		if err != nil {
			return nil, err
		}
		out = append(out, i)
	}
	return out, nil
}

// checkLookupKey checks that on equates every primary-key column of the
// LOOKUP scan (the join's right side, after lw left columns) with an
// expression that reads no column of it, as the planner's lookup join
// needs (0A000 at loc otherwise).
func (b *Binder) checkLookupKey(s *plan.Scan, on expr.Expr, lw int, loc int32) error {
	fixed := map[int]bool{}
	var walk func(e expr.Expr)
	walk = func(e expr.Expr) {
		switch e := e.(type) {
		case *expr.And:
			for _, a := range e.Args {
				walk(a)
			}
		case *expr.Call:
			if e.Fn == nil || e.Fn.Name != "=" || len(e.Args) != 2 {
				return
			}
			for i, a := range e.Args {
				c, ok := a.(*expr.ColumnRef)
				if !ok || c.Index < lw {
					continue
				}
				readsRight := false
				expr.Walk(e.Args[1-i], func(x expr.Expr) bool {
					if r, ok := x.(*expr.ColumnRef); ok && r.Index >= lw {
						readsRight = true
					}
					return !readsRight
				})
				if !readsRight {
					fixed[c.Index-lw] = true
				}
			}
		}
	}
	if on != nil {
		walk(on)
	}
	var missing []string
	for _, k := range s.Rel.PrimaryKey {
		if !fixed[k] {
			missing = append(missing, s.Rel.Columns[k].Name)
		}
	}
	if len(missing) > 0 {
		return b.errAt(loc, sqlerr.FeatureNotSupported, "a lookup join reads LOOKUP(%s) by its whole primary key: ON must equate %s with values of the other side", s.Rel.Name, strings.Join(missing, ", "))
	}
	return nil
}

func isLookupScan(n plan.Node) bool {
	s, ok := n.(*plan.Scan)
	return ok && s.Lookup
}

// isLookup reports whether rf is LOOKUP(...).
func isLookup(rf *pg_query.RangeFunction) bool {
	if len(rf.GetFunctions()) != 1 {
		return false
	}
	items := rf.GetFunctions()[0].GetList().GetItems()
	if len(items) == 0 || items[0].GetFuncCall() == nil {
		return false
	}
	return lower(strings.Join(names(items[0].GetFuncCall().GetFuncname()), ".")) == "lookup"
}

// bindLookup binds LOOKUP(table) [AS alias]: a stored table with a
// primary key read by key at the epoch being processed, the right side of
// a lookup join in a view (plan.Scan.Lookup; PostgreSQL's grammar has no
// FOR SYSTEM_TIME AS OF, which Flink writes for it).
func (b *Binder) bindLookup(rf *pg_query.RangeFunction) (plan.Node, *scope, error) {
	fc := rf.GetFunctions()[0].GetList().GetItems()[0].GetFuncCall()
	loc := fc.GetLocation()
	args := fc.GetArgs()
	var ref *pg_query.ColumnRef
	if len(args) == 1 {
		ref = args[0].GetColumnRef()
	}
	if ref == nil || len(ref.GetFields()) < 1 || len(ref.GetFields()) > 2 {
		return nil, nil, b.errAt(loc, sqlerr.SyntaxError, "LOOKUP takes one argument, the name of a table with a primary key")
	}
	parts := make([]string, len(ref.GetFields()))
	for i, f := range ref.GetFields() {
		parts[i] = strVal(f)
	}
	rel, err := b.cat.Relation(strings.Join(parts, "."))
	if err != nil {
		return nil, nil, b.atLoc(ref.GetLocation(), err)
	}
	if rel.IsSource || len(rel.PrimaryKey) == 0 {
		return nil, nil, b.errAt(ref.GetLocation(), sqlerr.FeatureNotSupported, "LOOKUP(%s): a lookup reads a stored table by its primary key, and %s has none", rel.Name, rel.Name)
	}
	scan := plan.NewScan(rel, rf.GetAlias().GetAliasname())
	scan.Lookup = true
	sc := scopeOf(scan)
	if err := b.renameColumns(sc, rf.GetAlias(), loc); err != nil {
		return nil, nil, err
	}
	return scan, sc, nil
}
