package binder

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// GROUP BY ROLLUP (...), CUBE (...) and GROUPING SETS (...) bind as the
// UNION ALL of one grouped query per grouping set, in which the grouping
// expressions outside the set read as NULL (Postgres's result, without
// the GROUPING() function): a select-list or HAVING sub-expression that
// is, up to positions in the text, one of those expressions becomes NULL.
// Plain GROUP BY items beside the grouping sets are in every set. ORDER
// BY and LIMIT with grouping sets, nested grouping sets and GROUPING()
// are 0A000.

// groupingSets returns the grouping sets of sel's GROUP BY, or nil when
// it has none.
func (b *Binder) groupingSets(sel *pg_query.SelectStmt) ([][]*pg_query.Node, error) {
	var plain []*pg_query.Node
	sets := [][]*pg_query.Node{nil}
	found := false
	for _, g := range sel.GetGroupClause() {
		gs := g.GetGroupingSet()
		if gs == nil {
			plain = append(plain, g)
			continue
		}
		found = true
		var these [][]*pg_query.Node
		items := gs.GetContent()
		for _, it := range items {
			if it.GetGroupingSet() != nil && gs.GetKind() != pg_query.GroupingSetKind_GROUPING_SET_SETS {
				return nil, b.errAt(gs.GetLocation(), sqlerr.FeatureNotSupported, "nested grouping sets are not supported")
			}
		}
		switch gs.GetKind() {
		case pg_query.GroupingSetKind_GROUPING_SET_ROLLUP:
			for i := len(items); i >= 0; i-- {
				these = append(these, items[:i])
			}
		case pg_query.GroupingSetKind_GROUPING_SET_CUBE:
			if len(items) > 8 {
				return nil, b.errAt(gs.GetLocation(), sqlerr.FeatureNotSupported, "CUBE of more than 8 items is not supported")
			}
			for mask := (1 << len(items)) - 1; mask >= 0; mask-- {
				var set []*pg_query.Node
				for i, it := range items {
					if mask&(1<<i) != 0 {
						set = append(set, it)
					}
				}
				these = append(these, set)
			}
		case pg_query.GroupingSetKind_GROUPING_SET_SETS:
			for _, it := range items {
				switch inner := it.GetGroupingSet(); {
				case inner == nil:
					these = append(these, []*pg_query.Node{it})
				case inner.GetKind() == pg_query.GroupingSetKind_GROUPING_SET_EMPTY:
					these = append(these, nil)
				case inner.GetKind() == pg_query.GroupingSetKind_GROUPING_SET_SIMPLE:
					these = append(these, inner.GetContent())
				default:
					return nil, b.errAt(inner.GetLocation(), sqlerr.FeatureNotSupported, "nested grouping sets are not supported")
				}
			}
		case pg_query.GroupingSetKind_GROUPING_SET_EMPTY:
			these = [][]*pg_query.Node{nil}
		default:
			return nil, b.errAt(gs.GetLocation(), sqlerr.FeatureNotSupported, "grouping set kind %s is not supported", gs.GetKind())
		}
		// Cross product with the sets so far.
		var next [][]*pg_query.Node
		for _, s := range sets {
			for _, t := range these {
				next = append(next, append(append([]*pg_query.Node(nil), s...), t...))
			}
		}
		sets = next
	}
	if !found {
		return nil, nil
	}
	for i := range sets {
		sets[i] = append(append([]*pg_query.Node(nil), plain...), sets[i]...)
	}
	return sets, nil
}

// bindGroupingSets binds sel, whose GROUP BY has grouping sets, as the
// UNION ALL of one query per set.
func (b *Binder) bindGroupingSets(sel *pg_query.SelectStmt, sets [][]*pg_query.Node) (plan.Node, error) {
	if len(sel.GetSortClause()) > 0 || sel.GetLimitCount() != nil || sel.GetLimitOffset() != nil || len(sel.GetDistinctClause()) > 0 {
		return nil, b.errAt(deepLoc(sel), sqlerr.FeatureNotSupported, "ORDER BY, LIMIT and DISTINCT with grouping sets are not supported")
	}
	var all []*pg_query.Node // every grouping expression
	seen := map[string]bool{}
	for _, s := range sets {
		for _, e := range s {
			if k := canonical(e); !seen[k] {
				seen[k] = true
				all = append(all, e)
			}
		}
	}
	// A NULL in place of an expression has the expression's type, so
	// that the branches' columns unite.
	nullOf := map[string]*pg_query.Node{}
	if len(sel.GetFromClause()) > 0 {
		_, sc, err := b.bindFrom(sel.GetFromClause())
		if err != nil {
			return nil, err
		}
		for _, e := range all {
			x, err := b.bindExpr(e, exprCtx{scope: sc, clause: "GROUP BY"})
			if err != nil {
				return nil, err
			}
			t := resolvedType(x)
			tree, err := pg_query.Parse("SELECT NULL::" + typeName(t))
			if err != nil {
				return nil, b.errAt(nodeLoc(e), sqlerr.FeatureNotSupported, "grouping set over an expression of type %s is not supported", typeName(t))
			}
			nullOf[canonical(e)] = tree.GetStmts()[0].GetStmt().GetSelectStmt().GetTargetList()[0].GetResTarget().GetVal()
		}
	}
	var branches []*pg_query.SelectStmt
	for _, set := range sets {
		in := map[string]bool{}
		for _, e := range set {
			in[canonical(e)] = true
		}
		nulls := map[string]bool{}
		for _, e := range all {
			if k := canonical(e); !in[k] {
				nulls[k] = true
			}
		}
		br := proto.Clone(sel).(*pg_query.SelectStmt)
		br.GroupClause = nil
		for _, e := range set {
			br.GroupClause = append(br.GroupClause, proto.Clone(e).(*pg_query.Node))
		}
		var grouping error
		// Aggregate arguments read input rows: they are not nulled.
		var nullOut func(m protoreflect.Message)
		nullOut = func(m protoreflect.Message) {
			if n, ok := m.Interface().(*pg_query.Node); ok {
				if n.GetSubLink() != nil {
					return
				}
				if fc := n.GetFuncCall(); fc != nil {
					if funcName(fc) == "grouping" {
						grouping = b.errAt(fc.GetLocation(), sqlerr.FeatureNotSupported, "GROUPING() is not supported")
					}
					if aggNames[funcName(fc)] {
						return
					}
				}
				if k := canonical(n); nulls[k] {
					if typed := nullOf[k]; typed != nil {
						n.Node = proto.Clone(typed).(*pg_query.Node).Node
					} else {
						n.Node = &pg_query.Node_AConst{AConst: &pg_query.A_Const{Isnull: true, Location: -1}}
					}
					return
				}
			}
			m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
				switch {
				case fd.IsList() && fd.Message() != nil:
					l := v.List()
					for i := 0; i < l.Len(); i++ {
						nullOut(l.Get(i).Message())
					}
				case !fd.IsMap() && fd.Message() != nil:
					nullOut(v.Message())
				}
				return true
			})
		}
		for _, t := range br.TargetList {
			nullOut(t.ProtoReflect())
		}
		if br.HavingClause != nil {
			nullOut(br.HavingClause.ProtoReflect())
		}
		if grouping != nil {
			return nil, grouping
		}
		if len(br.GroupClause) == 0 {
			// The empty set groups the whole input: a global aggregate,
			// which needs an aggregate to be one.
			br.GroupClause = nil
		}
		branches = append(branches, br)
	}
	// One UNION ALL over the branches.
	u := branches[0]
	for _, br := range branches[1:] {
		u = &pg_query.SelectStmt{Op: pg_query.SetOperation_SETOP_UNION, All: true, Larg: u, Rarg: br}
	}
	return b.bindSelectStmt(u)
}

// canonical is a node's text with its positions cleared, so that the same
// expression written twice compares equal.
func canonical(n *pg_query.Node) string {
	c := proto.Clone(n)
	var clear func(m protoreflect.Message)
	clear = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.Name() == "location" && fd.Kind() == protoreflect.Int32Kind:
				m.Set(fd, protoreflect.ValueOfInt32(0))
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len(); i++ {
					clear(l.Get(i).Message())
				}
			case !fd.IsMap() && fd.Message() != nil:
				clear(v.Message())
			}
			return true
		})
	}
	clear(c.ProtoReflect())
	b, _ := proto.MarshalOptions{Deterministic: true}.Marshal(c)
	return string(b)
}
