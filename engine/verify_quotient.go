package engine

import (
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
)

// quotientColumns says, for each output column of p, whether its values
// are NUMERIC quotients: computed by a division (/) or an avg, directly
// or through the expressions, aggregates (sum, min, max, ...) and
// operators that carry a value from their input to their output. Verify
// compares such columns to the precision of the less precise side
// (sql/olap's [verify-quotient]); every other column compares exactly.
// A node this function does not know marks nothing, so that the
// comparison stays exact there.
func quotientColumns(p plan.Node) []bool {
	out := make([]bool, len(p.Schema()))
	switch n := p.(type) {
	case *plan.Project:
		in := quotientColumns(n.Input)
		for i, e := range n.Exprs {
			out[i] = quotientExpr(e, in)
		}
	case *plan.Aggregate:
		in := quotientColumns(n.Input)
		for i, e := range n.GroupBy {
			out[i] = quotientExpr(e, in)
		}
		for k, a := range n.Aggs {
			i := len(n.GroupBy) + k
			if i >= len(out) || a.Type.Kind != types.KindNumeric {
				continue
			}
			switch a.Func {
			case "avg":
				out[i] = true
			case "count", "count_star":
			default:
				for _, arg := range a.Args {
					out[i] = out[i] || quotientExpr(arg, in)
				}
			}
		}
	case *plan.Filter, *plan.Sort, *plan.Limit, *plan.TopN, *plan.WindowTVF, *plan.Repeat:
		// The input's columns first, as they are (a rank or window
		// bounds after them; a Repeat drops the input's last).
		copy(out, quotientColumns(n.Inputs()[0]))
	case *plan.Join:
		l := quotientColumns(n.Left)
		copy(out, l)
		if len(l) < len(out) {
			copy(out[len(l):], quotientColumns(n.Right))
		}
	case *plan.Union:
		for _, in := range n.Ins {
			for i, q := range quotientColumns(in) {
				if i < len(out) {
					out[i] = out[i] || q
				}
			}
		}
	}
	return out
}

// quotientExpr tells whether e's value is a NUMERIC quotient, in is the
// same of e's input columns: a division whose result is NUMERIC, or a
// NUMERIC expression whose value comes from one (a cast, round, a sum of
// two, a CASE whose result is one; a CASE's conditions and a function's
// boolean arguments carry no value into the result).
func quotientExpr(e expr.Expr, in []bool) bool {
	if e.Type().Kind != types.KindNumeric {
		return false
	}
	switch n := e.(type) {
	case *expr.ColumnRef:
		return n.Index < len(in) && in[n.Index]
	case *expr.Call:
		if n.Fn.Name == "/" {
			return true
		}
	case *expr.Case:
		for _, w := range n.Whens {
			if quotientExpr(w.Result, in) {
				return true
			}
		}
		return n.Else != nil && quotientExpr(n.Else, in)
	}
	for _, c := range expr.Children(e) {
		if quotientExpr(c, in) {
			return true
		}
	}
	return false
}
