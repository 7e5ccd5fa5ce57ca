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

// Window aggregates over whole partitions, agg(...) OVER (PARTITION BY
// ...) without ORDER BY or frame, are the aggregate of the row's
// partition: the query's input joined with its own aggregation grouped by
// the partition keys (IS NOT DISTINCT FROM, so that NULL keys form a
// partition as they form a group); without PARTITION BY, with its global
// aggregate through a nested loop. The call's place in the select list
// reads the joined value through a column of the scope only that
// reference names. Window functions with ORDER BY (running aggregates,
// rank()) and window aggregates in a grouped query are 0A000; ROW_NUMBER()
// is the Top-N pattern (topn.go).

// windowAggregates rewrites the window aggregates of the select list
// targets and returns the targets to bind (copies when one was
// rewritten), the joined input and its scope.
func (b *Binder) windowAggregates(targets []*pg_query.Node, input plan.Node, sc *scope, grouped bool) ([]*pg_query.Node, plan.Node, *scope, error) {
	isWindowAgg := func(fc *pg_query.FuncCall) bool {
		if fc == nil || fc.GetOver() == nil {
			return false
		}
		w := fc.GetOver()
		// No ORDER BY, no named window, no frame clause (the
		// FRAMEOPTION_NONDEFAULT bit): the frame is the whole partition.
		return aggNames[funcName(fc)] && len(w.GetOrderClause()) == 0 && w.GetRefname() == "" && w.GetName() == "" &&
			w.GetFrameOptions()&1 == 0
	}
	found := false
	walkNodes(targets, func(n *pg_query.Node) bool {
		found = found || isWindowAgg(n.GetFuncCall())
		return !found
	})
	if !found {
		return targets, input, sc, nil
	}
	if grouped {
		return nil, nil, nil, b.errAt(deepLoc(targets[0]), sqlerr.FeatureNotSupported, "window functions in a query with GROUP BY or aggregates are not supported")
	}
	copies := make([]*pg_query.Node, len(targets))
	for i, t := range targets {
		copies[i] = proto.Clone(t).(*pg_query.Node)
	}
	count := 0
	var err error
	walkNodes(copies, func(n *pg_query.Node) bool {
		fc := n.GetFuncCall()
		if !isWindowAgg(fc) {
			return true
		}
		count++
		var ref *pg_query.Node
		input, sc, ref, err = b.windowAggregate(fc, input, sc, count)
		if err != nil {
			return false
		}
		n.Node = ref.Node
		return true
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return copies, input, sc, nil
}

func (b *Binder) windowAggregate(fc *pg_query.FuncCall, input plan.Node, sc *scope, n int) (plan.Node, *scope, *pg_query.Node, error) {
	loc := fc.GetLocation()
	over := fc.GetOver()
	if len(fc.GetAggOrder()) > 0 {
		return nil, nil, nil, b.errAt(loc, sqlerr.FeatureNotSupported, "aggregate ORDER BY is not implemented for window functions")
	}
	if fc.GetAggDistinct() {
		return nil, nil, nil, b.errAt(loc, sqlerr.FeatureNotSupported, "DISTINCT is not implemented for window functions")
	}
	call := proto.Clone(fc).(*pg_query.FuncCall)
	call.Over = nil
	aggs := &aggCollector{}
	v, err := b.bindFuncCall(call, exprCtx{scope: sc, aggs: aggs, clause: "window function"})
	if err != nil {
		return nil, nil, nil, err
	}
	ref, ok := v.(*aggRef)
	if !ok {
		return nil, nil, nil, b.errAt(loc, sqlerr.FeatureNotSupported, "unsupported window function")
	}
	agg := &plan.Aggregate{Input: input, Aggs: aggs.calls}
	for _, p := range over.GetPartitionClause() {
		e, err := b.bindExpr(p, exprCtx{scope: sc, clause: "PARTITION BY"})
		if err != nil {
			return nil, nil, nil, err
		}
		if isUnknownLiteral(e) {
			if e, err = b.coerce(e, types.Text, false, loc); err != nil {
				return nil, nil, nil, err
			}
		}
		agg.GroupBy = append(agg.GroupBy, e)
		agg.Cols = append(agg.Cols, plan.Column{Name: e.String(), Type: e.Type()})
	}
	for _, c := range aggs.calls {
		agg.Cols = append(agg.Cols, plan.Column{Name: c.Func, Type: c.Type})
	}
	lw := len(input.Schema())
	var conds []expr.Expr
	for i, g := range agg.GroupBy {
		conds = append(conds, &expr.IsDistinctFrom{Left: g, Right: &expr.ColumnRef{Index: lw + i, Typ: g.Type()}, Negate: true})
	}
	var on expr.Expr = &expr.Const{Value: types.NewBool(true), Typ: types.Bool}
	if len(conds) > 0 {
		on = andAll(conds)
	}
	joined := plan.NewJoin(plan.InnerJoin, input, agg, on)
	qual := "?window?"
	out := &scope{cols: append([]scopeCol(nil), sc.cols...)}
	for i, c := range agg.Cols {
		name := "k" + strconv.Itoa(n) + "_" + strconv.Itoa(i)
		if i == len(agg.GroupBy)+ref.idx {
			name = "v" + strconv.Itoa(n)
		}
		out.cols = append(out.cols, scopeCol{table: qual, name: name, typ: c.Type, hidden: true})
	}
	col := &pg_query.Node{Node: &pg_query.Node_ColumnRef{ColumnRef: &pg_query.ColumnRef{Location: loc, Fields: []*pg_query.Node{
		{Node: &pg_query.Node_String_{String_: &pg_query.String{Sval: qual}}},
		{Node: &pg_query.Node_String_{String_: &pg_query.String{Sval: "v" + strconv.Itoa(n)}}},
	}}}}
	return joined, out, col, nil
}

// walkNodes calls fn on every Node of the trees (preorder), not entering
// subqueries; fn returns false to stop.
func walkNodes(nodes []*pg_query.Node, fn func(*pg_query.Node) bool) {
	stop := false
	var visit func(m protoreflect.Message)
	visit = func(m protoreflect.Message) {
		if node, ok := m.Interface().(*pg_query.Node); ok {
			if node.GetSubLink() != nil {
				return
			}
			if !fn(node) {
				stop = true
				return
			}
		}
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() != nil:
				l := v.List()
				for i := 0; i < l.Len() && !stop; i++ {
					visit(l.Get(i).Message())
				}
			case !fd.IsMap() && fd.Message() != nil:
				visit(v.Message())
			}
			return !stop
		})
	}
	for _, n := range nodes {
		if stop {
			return
		}
		visit(n.ProtoReflect())
	}
}
