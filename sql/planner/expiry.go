package planner

import (
	"fmt"
	"math"
	"strings"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/stream"
)

// timeBound says how a column's value v relates to its row's event time
// t (the watermark column of the relation the row comes from): for every
// row whose value is finite, v + lo <= t <= v + hi, in microseconds. The
// event-time column itself has [0, 0]; date_bin(S, t, origin) and a
// window_start of size S have [0, S - 1]; a window_end [-S, -1].
type timeBound struct{ lo, hi int64 }

// ordered is what groupExpiry needs to know of a plan node's rows: the
// columns that are bounds of the event time, and the watermark delay, of
// rows that reach the next step from one LateFilter subtask over forward
// steps only (stream.GroupExpiry's watermark derivation).
type ordered struct {
	bounds map[int]timeBound
	delay  int64
}

// orderedTime follows n down through filters, projections and TUMBLE,
// HOP and CUMULATE windows (forward steps of the input's parallelism) to a
// scan of an append-only relation with a watermark whose source has one
// subtask, and returns the columns of n's output that are bounds of its
// event time. ok is false for any other shape (joins, unions, other
// aggregates, SESSION windows, keyed or upsert relations).
func (b *builder) orderedTime(n plan.Node) (ordered, bool) {
	switch n := n.(type) {
	case *plan.Scan:
		rel := n.Rel
		wm := rel.Watermark
		if wm == nil || n.Lookup || rel.Upsert || rel.Multiset || len(rel.PrimaryKey) > 0 || b.ep.SourceParallelism(rel) > 1 {
			return ordered{}, false
		}
		d, err := stream.WindowMicros(wm.Delay)
		if err != nil || d < 0 || wm.Column < 0 || wm.Column >= len(rel.Columns) {
			return ordered{}, false
		}
		return ordered{bounds: map[int]timeBound{wm.Column: {0, 0}}, delay: d}, true
	case *plan.Filter:
		return b.orderedTime(n.Input)
	case *plan.Project:
		in, ok := b.orderedTime(n.Input)
		if !ok {
			return ordered{}, false
		}
		out := ordered{bounds: map[int]timeBound{}, delay: in.delay}
		for i, e := range n.Exprs {
			if tb, ok := boundOf(e, in.bounds); ok {
				out.bounds[i] = tb
			}
		}
		return out, len(out.bounds) > 0
	case *plan.WindowTVF:
		if n.Kind == plan.Session {
			return ordered{}, false
		}
		in, ok := b.orderedTime(n.Input)
		if !ok {
			return ordered{}, false
		}
		out := ordered{bounds: map[int]timeBound{}, delay: in.delay}
		for c, tb := range in.bounds {
			out.bounds[c] = tb
		}
		tb, timed := in.bounds[n.TimeCol]
		size, err := stream.WindowMicros(n.Size)
		// A window of calendar days of the session time zone (a
		// TIMESTAMPTZ with days, windowTVFProject) lasts 23 to 25 hours:
		// its bounds are left out.
		local := n.Input.Schema()[n.TimeCol].Type.Kind == types.KindTimestampTZ && b.opts.Eval.Loc != nil &&
			(n.Size.Days != 0 || n.Slide.Days != 0 || n.Offset.Days != 0)
		if timed && err == nil && size > 0 && !local {
			// TUMBLE, HOP and CUMULATE alike: a row at time u lies in
			// [start, start + size) of every window it is expanded into
			// (a CUMULATE window's start is its largest window's), and
			// before its end, which is at most start + size.
			w := len(n.Input.Schema())
			if hi, ok := addBounds(tb.hi, size-1); ok {
				out.bounds[w] = timeBound{tb.lo, hi}
			}
			if lo, ok := addBounds(tb.lo, -size); ok {
				if hi, ok := addBounds(tb.hi, -1); ok {
					out.bounds[w+1] = timeBound{lo, hi}
				}
			}
		}
		return out, true
	}
	return ordered{}, false
}

// addBounds adds without overflow.
func addBounds(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// truncUnits are date_trunc's units on a TIMESTAMP with the longest span
// of one unit, in microseconds.
var truncUnits = map[string]int64{
	"microsecond": 1, "microseconds": 1,
	"millisecond": 1_000, "milliseconds": 1_000,
	"second": 1_000_000, "seconds": 1_000_000,
	"minute": 60_000_000, "minutes": 60_000_000,
	"hour": 3_600_000_000, "hours": 3_600_000_000,
	"day": 86_400_000_000, "days": 86_400_000_000,
	"week": 7 * 86_400_000_000, "weeks": 7 * 86_400_000_000,
	"month": 31 * 86_400_000_000, "months": 31 * 86_400_000_000,
	"quarter": 92 * 86_400_000_000,
	"year":    366 * 86_400_000_000, "years": 366 * 86_400_000_000,
}

// boundOf returns e's bound of the event time over input columns with
// bounds in: a column with one; date_bin(constant interval, e', constant
// origin) and date_trunc('unit', e') of a TIMESTAMP e' with one, which
// round down to the start of a bin no longer than the interval or the
// unit (so v <= e' < v + span).
func boundOf(e expr.Expr, in map[int]timeBound) (timeBound, bool) {
	switch e := e.(type) {
	case *expr.ColumnRef:
		tb, ok := in[e.Index]
		return tb, ok
	case *expr.Call:
		if e.Fn == nil {
			return timeBound{}, false
		}
		var span int64
		var arg expr.Expr
		switch {
		case e.Fn.Name == "date_bin" && len(e.Args) == 3:
			stride, ok := constant(e.Args[0], types.KindInterval)
			if !ok {
				return timeBound{}, false
			}
			s, err := stream.WindowMicros(stride.Interval())
			if err != nil || s <= 0 {
				return timeBound{}, false
			}
			if origin, ok := constant(e.Args[2], e.Args[1].Type().Kind); !ok || origin.Micros() == types.TimestampInfinity || origin.Micros() == types.TimestampNegInfinity {
				return timeBound{}, false
			}
			span, arg = s, e.Args[1]
		case e.Fn.Name == "date_trunc" && len(e.Args) == 2 && e.Args[1].Type().Kind == types.KindTimestamp:
			unit, ok := constant(e.Args[0], types.KindText)
			if !ok {
				return timeBound{}, false
			}
			if span, ok = truncUnits[strings.ToLower(unit.Str())]; !ok {
				return timeBound{}, false
			}
			arg = e.Args[1]
		default:
			return timeBound{}, false
		}
		if k := arg.Type().Kind; k != types.KindTimestamp && k != types.KindTimestampTZ {
			return timeBound{}, false
		}
		tb, ok := boundOf(arg, in)
		if !ok {
			return timeBound{}, false
		}
		hi, ok := addBounds(tb.hi, span-1)
		return timeBound{tb.lo, hi}, ok
	}
	return timeBound{}, false
}

// constant returns the value of a non-NULL constant of kind k.
func constant(e expr.Expr, k types.Kind) (types.Datum, bool) {
	c, ok := e.(*expr.Const)
	if !ok || c.Value.IsNull() || c.Typ.Kind != k {
		return types.Datum{}, false
	}
	return c.Value, true
}

// groupExpiry returns the expiry rule of a GROUP BY over n's input, or
// nil: when the input is insert-only rows of one LateFilter subtask over
// forward steps (orderedTime) and a group key is a window bound of their
// event time, the GroupAgg frees a group once its window value w has
// w + Horizon <= the largest window value seen, Horizon being
// hi - lo + delay + 1 (stream.GroupExpiry proves the rule). Of several
// such keys the one with the smallest horizon is taken. what describes
// it for Explain.
func (b *builder) groupExpiry(n *plan.Aggregate, in stage) (exp *stream.GroupExpiry, what string) {
	if len(n.GroupBy) == 0 || in.mode != AppendOnly {
		return nil, ""
	}
	ord, ok := b.orderedTime(n.Input)
	if !ok {
		return nil, ""
	}
	for i, g := range n.GroupBy {
		if k := g.Type().Kind; k != types.KindTimestamp && k != types.KindTimestampTZ {
			continue
		}
		tb, ok := boundOf(g, ord.bounds)
		if !ok {
			continue
		}
		h := float64(tb.hi) - float64(tb.lo) + float64(ord.delay) + 1
		if h > math.MaxInt64/2 {
			continue
		}
		if exp == nil || int64(h) < exp.Horizon {
			exp = &stream.GroupExpiry{Col: i, Horizon: int64(h)}
		}
	}
	if exp == nil {
		return nil, ""
	}
	name := n.Schema()[exp.Col].Name
	if name == "" {
		name = n.GroupBy[exp.Col].String()
	}
	return exp, fmt.Sprintf("groups freed once %s + %s <= its largest value seen", name, micros(exp.Horizon))
}
