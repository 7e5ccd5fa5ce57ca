package planner

import (
	"strconv"

	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/sql/stream"
)

// conjuncts splits an AND tree into its terms.
func conjuncts(e expr.Expr) []expr.Expr {
	if a, ok := e.(*expr.And); ok {
		var out []expr.Expr
		for _, x := range a.Args {
			out = append(out, conjuncts(x)...)
		}
		return out
	}
	return []expr.Expr{e}
}

// sideOf says which input's columns e reads: 0 left, 1 right, -1 none,
// 2 both.
func sideOf(e expr.Expr, lw int) int {
	side := -1
	expr.Walk(e, func(x expr.Expr) bool {
		if c, ok := x.(*expr.ColumnRef); ok {
			s := 0
			if c.Index >= lw {
				s = 1
			}
			switch {
			case side == -1:
				side = s
			case side != s:
				side = 2
			}
		}
		return side != 2
	})
	return side
}

// rebase shifts column references by -by (right-side expressions move to
// the right input's own positions).
func rebase(e expr.Expr, by int) expr.Expr {
	out, _ := expr.Transform(e, func(x expr.Expr) (expr.Expr, error) {
		if c, ok := x.(*expr.ColumnRef); ok {
			cp := *c
			cp.Index -= by
			return &cp, nil
		}
		return x, nil
	})
	return out
}

func (b *builder) join(n *plan.Join) (stage, error) {
	if n.On == nil {
		return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "a streaming join needs an equality between its two sides (cross joins are not supported)")
	}
	lw := len(n.Left.Schema())
	var lkeys, rkeys, residual []expr.Expr
	for _, c := range conjuncts(n.On) {
		call, ok := c.(*expr.Call)
		if ok && call.Fn.Name == "=" && len(call.Args) == 2 {
			l, r := call.Args[0], call.Args[1]
			ls, rs := sideOf(l, lw), sideOf(r, lw)
			if ls == 1 && rs == 0 {
				l, r, ls, rs = r, l, rs, ls
			}
			if ls == 0 && rs == 1 && l.Type() == r.Type() {
				lkeys = append(lkeys, l)
				rkeys = append(rkeys, rebase(r, lw))
				continue
			}
		}
		residual = append(residual, c)
	}
	if len(lkeys) == 0 {
		return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "a streaming join needs an equality between an expression of each side in ON")
	}
	left, err := b.node(n.Left)
	if err != nil {
		return stage{}, err
	}
	right, err := b.node(n.Right)
	if err != nil {
		return stage{}, err
	}
	keyTypes := make([]types.Type, len(lkeys))
	for i, k := range lkeys {
		keyTypes[i] = k.Type()
	}
	eval := b.opts.Eval
	withKeys := func(in stage, keys []expr.Expr) (stage, []int) {
		exprs := make([]expr.Expr, 0, len(in.types)+len(keys))
		for i, t := range in.types {
			exprs = append(exprs, &expr.ColumnRef{Index: i, Typ: t})
		}
		cols := make([]int, len(keys))
		for i, k := range keys {
			cols[i] = len(exprs)
			exprs = append(exprs, k)
		}
		ts := make([]types.Type, len(exprs))
		for i, e := range exprs {
			ts[i] = e.Type()
		}
		return b.addOperator("join-keys", in.par, in, graph.Forward, nil, nil, ts, in.mode,
			func(int) operator.Operator { return &stream.Map{Exprs: exprs, Eval: eval} }, "join keys"), cols
	}
	lk, lcols := withKeys(left, lkeys)
	rk, rcols := withKeys(right, rkeys)
	var res expr.Expr
	switch len(residual) {
	case 0:
	case 1:
		res = residual[0]
	default:
		res = &expr.And{Args: residual}
	}
	name := b.vertexName("join")
	par := b.opts.Parallelism
	lt, rt := left.types, right.types
	kind := n.Kind
	b.job.Vertices = append(b.job.Vertices, graph.Vertex{Name: name, Parallelism: par,
		NewOperator: b.wrap("join", func(int) operator.Operator {
			return &stream.Join{Kind: kind, LeftTypes: lt, RightTypes: rt, LeftKeys: lcols, RightKeys: rcols,
				KeyTypes: keyTypes, Residual: res, Eval: eval}
		})})
	b.job.Edges = append(b.job.Edges,
		graph.Edge{From: lk.vertex, To: name, Input: 0, Partitioning: graph.Hash, KeyColumns: lcols, KeyTypes: keyTypes},
		graph.Edge{From: rk.vertex, To: name, Input: 1, Partitioning: graph.Hash, KeyColumns: rcols, KeyTypes: keyTypes})
	detail := n.Kind.String() + "Join on " + n.On.String()
	b.explain = append(b.explain, name+" "+detail+" (parallelism "+strconv.Itoa(par)+", retract)")
	return stage{vertex: name, types: append(append([]types.Type(nil), lt...), rt...), mode: Retract, par: par}, nil
}
