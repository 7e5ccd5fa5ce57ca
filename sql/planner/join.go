package planner

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
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

// join builds a join. Each conjunct of ON that equates (= or IS NOT
// DISTINCT FROM) an expression of the left side with one of the right of
// the same type kind is a join key; the rest is the residual predicate.
// Without any key (a cross join, a theta join, a disjunction, an ON that
// folded to a constant) it is a nested-loop join: both sides keyed by one
// constant, so that every row of both sides meets in one subtask and one
// state key, and the whole ON is the residual.
func (b *builder) join(n *plan.Join) (stage, error) {
	if s, ok := n.Right.(*plan.Scan); ok && s.Lookup {
		return b.lookupJoin(n, s)
	}
	lw := len(n.Left.Schema())
	var lkeys, rkeys, residual []expr.Expr
	var nullSafe []bool
	var on []expr.Expr
	if n.On != nil {
		on = conjuncts(n.On)
	}
	for _, c := range on {
		var l, r expr.Expr
		safe := false
		switch c := c.(type) {
		case *expr.Call:
			if c.Fn.Name == "=" && len(c.Args) == 2 {
				l, r = c.Args[0], c.Args[1]
			}
		case *expr.IsDistinctFrom:
			if c.Negate {
				l, r, safe = c.Left, c.Right, true
			}
		}
		if l != nil {
			ls, rs := sideOf(l, lw), sideOf(r, lw)
			if ls == 1 && rs == 0 {
				l, r, ls, rs = r, l, rs, ls
			}
			if ls == 0 && rs == 1 && l.Type().Kind == r.Type().Kind {
				lkeys = append(lkeys, l)
				rkeys = append(rkeys, rebase(r, lw))
				nullSafe = append(nullSafe, safe)
				continue
			}
		}
		residual = append(residual, c)
	}
	nested := len(lkeys) == 0
	if nested {
		one := &expr.Const{Value: types.NewBool(true), Typ: types.Bool}
		lkeys, rkeys, nullSafe = []expr.Expr{one}, []expr.Expr{one}, []bool{false}
	}
	left, lsel, err := b.joinSide(n.Left)
	if err != nil {
		return stage{}, err
	}
	right, rsel, err := b.joinSide(n.Right)
	if err != nil {
		return stage{}, err
	}
	// The exchange and state key of an equality whose sides differ only
	// in type modifiers (NUMERIC(6,2) = NUMERIC(8,2), VARCHAR(4) =
	// VARCHAR(8), CHAR(2) = CHAR(3)) is the common type without
	// modifiers: the key bytes (types.AppendKey) depend on the value and
	// the kind only (NUMERIC by its reduced value, CHAR without trailing
	// blanks), so equal values of both sides meet in one subtask and one
	// state key, as Postgres's numeric_eq, texteq and bpchareq match them.
	keyTypes := make([]types.Type, len(lkeys))
	for i, k := range lkeys {
		keyTypes[i] = k.Type()
		if keyTypes[i] != rkeys[i].Type() {
			keyTypes[i] = types.Type{Kind: keyTypes[i].Kind}
		}
	}
	eval := b.opts.Eval
	withKeys := func(in stage, sel *plan.Project, keys []expr.Expr) (stage, []int) {
		// The side's narrowing Project, if any, is computed here: the
		// keys read its columns, which are columns of in.
		exprs, at, columns := keyStepColumns(in, sel)
		detail := columns + "join keys"
		if at != nil {
			for i, k := range keys {
				keys[i] = remap(k, at)
			}
		}
		width := len(exprs)
		cols := make([]int, len(keys))
		for i, k := range keys {
			cols[i] = len(exprs)
			exprs = append(exprs, k)
		}
		ts := make([]types.Type, len(exprs))
		for i, e := range exprs {
			ts[i] = e.Type()
		}
		st := b.addOperator("join-keys", in.par, in, graph.Forward, nil, nil, ts, in.mode,
			func(int) operator.Operator { return &stream.Map{Exprs: exprs, Eval: eval} }, detail)
		// The join's rows are the side's columns; the keys follow them.
		st.types = ts[:width]
		return st, cols
	}
	lkeys, rkeys = slices.Clone(lkeys), slices.Clone(rkeys)
	lk, lcols := withKeys(left, lsel, lkeys)
	rk, rcols := withKeys(right, rsel, rkeys)
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
	if nested {
		par = 1
	}
	lt, rt := lk.types, rk.types
	kind := n.Kind
	var interval *stream.JoinInterval
	if left.mode == AppendOnly && right.mode == AppendOnly && kind != plan.CrossJoin {
		interval = b.intervalOf(n, residual)
	}
	b.job.Vertices = append(b.job.Vertices, graph.Vertex{Name: name, Parallelism: par,
		NewOperator: b.wrap("join", func(int) operator.Operator {
			return &stream.Join{Kind: kind, LeftTypes: lt, RightTypes: rt, LeftKeys: lcols, RightKeys: rcols,
				KeyTypes: keyTypes, NullSafe: nullSafe, Residual: res, Eval: eval, Interval: interval}
		})})
	b.job.Edges = append(b.job.Edges,
		graph.Edge{From: lk.vertex, To: name, Input: 0, Partitioning: graph.Hash, KeyColumns: lcols, KeyTypes: keyTypes},
		graph.Edge{From: rk.vertex, To: name, Input: 1, Partitioning: graph.Hash, KeyColumns: rcols, KeyTypes: keyTypes})
	detail := n.Kind.String() + "Join"
	mode := Retract
	if (kind == plan.InnerJoin || kind == plan.CrossJoin) && left.mode == AppendOnly && right.mode == AppendOnly {
		// Inputs that only insert meet only in inserts (Flink's regular
		// join keeps an insert-only output for them too).
		mode = AppendOnly
	}
	if interval != nil {
		detail = n.Kind.String() + "IntervalJoin"
		if kind == plan.InnerJoin {
			// Append-only inputs and rows dropped only when they can
			// match nothing more: the inner join never retracts.
			mode = AppendOnly
		}
	}
	if n.On != nil {
		detail += " on " + n.On.String()
	}
	if interval != nil {
		detail += fmt.Sprintf(" (state kept for right time - left time in [%s, %s])", micros(interval.Lo), micros(interval.Hi))
	}
	if nested {
		detail += " (nested loop)"
	}
	b.explain = append(b.explain, name+" "+detail+" (parallelism "+strconv.Itoa(par)+", "+mode.String()+")")
	return stage{vertex: name, types: append(append([]types.Type(nil), lt...), rt...), mode: mode, par: par}, nil
}

// joinSide builds one side of a join. A side that is a Project of plain
// columns (the narrowing Project of column pruning, prune.go, or one of
// the query's own) is not built as a Map vertex of its own: its input is
// built and the Project returned, for the join's key Map to compute, so
// that narrowing a join's input adds no vertex.
func (b *builder) joinSide(n plan.Node) (stage, *plan.Project, error) {
	if p, ok := n.(*plan.Project); ok && len(p.Exprs) > 0 {
		in := p.Input.Schema()
		plain := true
		for _, e := range p.Exprs {
			c, isCol := e.(*expr.ColumnRef)
			if !isCol || c.Index >= len(in) || c.Typ != in[c.Index].Type {
				plain = false
				break
			}
		}
		if plain {
			s, err := b.node(p.Input)
			return s, p, err
		}
	}
	s, err := b.node(n)
	return s, nil, err
}

// keyStepColumns returns the leading expressions of a key step (a Map
// that computes an operator's keys after the row it passes on) over
// stage in: in's columns as they are when sel is nil, else the columns
// the narrowing Project sel keeps (prune.go). at maps sel's column i to
// its column of in (nil without sel), for remapping expressions over
// sel's output; detail names the kept columns for EXPLAIN ("columns a, b
// (2 of 7), "; empty without sel).
func keyStepColumns(in stage, sel *plan.Project) (exprs []expr.Expr, at []int, detail string) {
	if sel == nil {
		for i, t := range in.types {
			exprs = append(exprs, &expr.ColumnRef{Index: i, Typ: t})
		}
		return exprs, nil, ""
	}
	exprs = append(exprs, sel.Exprs...)
	at = make([]int, len(sel.Exprs))
	names := make([]string, len(sel.Exprs))
	for i, e := range sel.Exprs {
		at[i] = e.(*expr.ColumnRef).Index
		names[i] = e.String()
	}
	return exprs, at, fmt.Sprintf("columns %s (%d of %d), ", strings.Join(names, ", "), len(sel.Exprs), len(in.types))
}
