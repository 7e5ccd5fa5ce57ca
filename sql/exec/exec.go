package exec

import (
	"sort"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/agg"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Scanner supplies the rows of a relation a plan scans.
type Scanner interface {
	Scan(rel *plan.Relation) ([]types.Row, error)
}

// checkEvery is how many rows a loop handles between two looks at
// ctx.Interrupted.
const checkEvery = 1024

// interrupted returns ctx.Interrupted() on every checkEvery-th i.
func interrupted(ctx *expr.Context, i int) error {
	if i%checkEvery != 0 {
		return nil
	}
	return ctx.Interrupted()
}

// Run executes n and returns its rows. It stops with the error of
// ctx.Interrupt soon after that context ends.
func Run(ctx *expr.Context, n plan.Node, sc Scanner) ([]types.Row, error) {
	if err := ctx.Interrupted(); err != nil {
		return nil, err
	}
	switch n := n.(type) {
	case *plan.Values:
		out := make([]types.Row, 0, len(n.Rows))
		for k, r := range n.Rows {
			if err := interrupted(ctx, k); err != nil {
				return nil, err
			}
			row := make(types.Row, len(r))
			for i, e := range r {
				v, err := e.Eval(ctx, nil)
				if err != nil {
					return nil, err
				}
				row[i] = v
			}
			out = append(out, row)
		}
		return out, nil
	case *plan.WindowTVF:
		return runWindow(ctx, n, sc)
	case *plan.Scan:
		if sc == nil {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "relation %q cannot be read here", n.Rel.Name)
		}
		return sc.Scan(n.Rel)
	case *plan.Project:
		in, err := Run(ctx, n.Input, sc)
		if err != nil {
			return nil, err
		}
		out := make([]types.Row, len(in))
		for i, r := range in {
			if err := interrupted(ctx, i); err != nil {
				return nil, err
			}
			row := make(types.Row, len(n.Exprs))
			for j, e := range n.Exprs {
				if row[j], err = e.Eval(ctx, r); err != nil {
					return nil, err
				}
			}
			out[i] = row
		}
		return out, nil
	case *plan.Filter:
		in, err := Run(ctx, n.Input, sc)
		if err != nil {
			return nil, err
		}
		out := in[:0:0]
		for i, r := range in {
			if err := interrupted(ctx, i); err != nil {
				return nil, err
			}
			v, err := n.Pred.Eval(ctx, r)
			if err != nil {
				return nil, err
			}
			if !v.IsNull() && v.Bool() {
				out = append(out, r)
			}
		}
		return out, nil
	case *plan.Aggregate:
		return runAggregate(ctx, n, sc)
	case *plan.Join:
		return runJoin(ctx, n, sc)
	case *plan.Union:
		var out []types.Row
		for _, in := range n.Ins {
			rows, err := Run(ctx, in, sc)
			if err != nil {
				return nil, err
			}
			out = append(out, rows...)
		}
		return out, nil
	case *plan.Sort:
		in, err := Run(ctx, n.Input, sc)
		if err != nil {
			return nil, err
		}
		return sortRows(ctx, in, n.Keys)
	case *plan.Limit:
		in, err := Run(ctx, n.Input, sc)
		if err != nil {
			return nil, err
		}
		off := min(int(n.Offset), len(in))
		in = in[off:]
		if n.Count >= 0 && int(n.Count) < len(in) {
			in = in[:n.Count]
		}
		return in, nil
	}
	return nil, sqlerr.New(sqlerr.FeatureNotSupported, "%T cannot run in a batch query", n)
}

type group struct {
	keys types.Row
	accs []agg.Accumulator
}

func runAggregate(ctx *expr.Context, n *plan.Aggregate, sc Scanner) ([]types.Row, error) {
	in, err := Run(ctx, n.Input, sc)
	if err != nil {
		return nil, err
	}
	specs := make([]agg.Spec, len(n.Aggs))
	for i, a := range n.Aggs {
		ts := make([]types.Type, len(a.Args))
		for j, e := range a.Args {
			ts[j] = e.Type()
		}
		specs[i] = agg.Spec{Func: a.Func, Args: ts, Distinct: a.Distinct}
	}
	keyTypes := make([]types.Type, len(n.GroupBy))
	for i, e := range n.GroupBy {
		keyTypes[i] = e.Type()
	}
	newGroup := func(keys types.Row) (*group, error) {
		g := &group{keys: keys, accs: make([]agg.Accumulator, len(specs))}
		for i, s := range specs {
			a, err := agg.New(s)
			if err != nil {
				return nil, err
			}
			g.accs[i] = a
		}
		return g, nil
	}
	groups := map[string]*group{}
	var order []string
	for k, r := range in {
		if err := interrupted(ctx, k); err != nil {
			return nil, err
		}
		keys := make(types.Row, len(n.GroupBy))
		var kb []byte
		for i, e := range n.GroupBy {
			v, err := e.Eval(ctx, r)
			if err != nil {
				return nil, err
			}
			keys[i] = v
			kb = types.AppendKey(kb, v, keyTypes[i])
		}
		g, ok := groups[string(kb)]
		if !ok {
			if g, err = newGroup(keys); err != nil {
				return nil, err
			}
			groups[string(kb)] = g
			order = append(order, string(kb))
		}
		for i, a := range n.Aggs {
			if a.Filter != nil {
				v, err := a.Filter.Eval(ctx, r)
				if err != nil {
					return nil, err
				}
				if v.IsNull() || !v.Bool() {
					continue
				}
			}
			args := make([]types.Datum, len(a.Args))
			for j, e := range a.Args {
				if args[j], err = e.Eval(ctx, r); err != nil {
					return nil, err
				}
			}
			if err := g.accs[i].Add(args); err != nil {
				return nil, err
			}
		}
	}
	if len(n.GroupBy) == 0 && len(groups) == 0 {
		// A global aggregate yields one row over empty input.
		g, err := newGroup(nil)
		if err != nil {
			return nil, err
		}
		groups[""] = g
		order = append(order, "")
	}
	sort.Strings(order) // deterministic output: key order
	out := make([]types.Row, 0, len(order))
	for _, k := range order {
		g := groups[k]
		row := append(types.Row(nil), g.keys...)
		for _, a := range g.accs {
			v, err := a.Result()
			if err != nil {
				return nil, err
			}
			row = append(row, v)
		}
		out = append(out, row)
	}
	return out, nil
}

func runJoin(ctx *expr.Context, n *plan.Join, sc Scanner) ([]types.Row, error) {
	left, err := Run(ctx, n.Left, sc)
	if err != nil {
		return nil, err
	}
	right, err := Run(ctx, n.Right, sc)
	if err != nil {
		return nil, err
	}
	lw, rw := len(n.Left.Schema()), len(n.Right.Schema())
	rightMatched := make([]bool, len(right))
	var out []types.Row
	steps := 0
	for _, l := range left {
		matched := false
		for j, r := range right {
			if steps++; steps%checkEvery == 0 {
				if err := ctx.Interrupted(); err != nil {
					return nil, err
				}
			}
			row := append(append(make(types.Row, 0, lw+rw), l...), r...)
			if n.On != nil {
				v, err := n.On.Eval(ctx, row)
				if err != nil {
					return nil, err
				}
				if v.IsNull() || !v.Bool() {
					continue
				}
			}
			matched = true
			rightMatched[j] = true
			out = append(out, row)
		}
		if !matched && (n.Kind == plan.LeftJoin || n.Kind == plan.FullJoin) {
			out = append(out, append(append(make(types.Row, 0, lw+rw), l...), make(types.Row, rw)...))
		}
	}
	if n.Kind == plan.RightJoin || n.Kind == plan.FullJoin {
		for j, r := range right {
			if !rightMatched[j] {
				out = append(out, append(make(types.Row, lw, lw+rw), r...))
			}
		}
	}
	return out, nil
}

func sortRows(ctx *expr.Context, rows []types.Row, keys []plan.SortKey) ([]types.Row, error) {
	vals := make([]types.Row, len(rows))
	for i, r := range rows {
		vals[i] = make(types.Row, len(keys))
		for j, k := range keys {
			v, err := k.Expr.Eval(ctx, r)
			if err != nil {
				return nil, err
			}
			vals[i][j] = v
		}
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		for j, k := range keys {
			x, y := vals[idx[a]][j], vals[idx[b]][j]
			var c int
			switch {
			case x.IsNull() && y.IsNull():
				c = 0
			case x.IsNull():
				c = 1
				if k.NullsFirst {
					c = -1
				}
			case y.IsNull():
				c = -1
				if k.NullsFirst {
					c = 1
				}
			default:
				c = types.Compare(x, y)
				if k.Desc {
					c = -c
				}
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	out := make([]types.Row, len(rows))
	for i, j := range idx {
		out[i] = rows[j]
	}
	return out, nil
}
