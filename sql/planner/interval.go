package planner

import (
	"math"
	"slices"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/stream"
)

// eventTime finds the columns of n's output that carry the event time of
// a relation with a watermark, unchanged, and the watermark's delay in
// microseconds: through Filters and through Projects that pass the column
// on, down to a Scan whose source has one subtask (stream.JoinInterval:
// the join derives the watermark from the rows it receives, which is safe
// only for rows of one LateFilter subtask).
func (b *builder) eventTime(n plan.Node) (cols []int, delay int64, ok bool) {
	switch n := n.(type) {
	case *plan.Scan:
		wm := n.Rel.Watermark
		if wm == nil || b.ep.SourceParallelism(n.Rel) > 1 {
			return nil, 0, false
		}
		d, err := stream.WindowMicros(wm.Delay)
		if err != nil || d < 0 {
			return nil, 0, false
		}
		return []int{wm.Column}, d, true
	case *plan.Filter:
		return b.eventTime(n.Input)
	case *plan.Project:
		in, d, ok := b.eventTime(n.Input)
		if !ok {
			return nil, 0, false
		}
		for i, e := range n.Exprs {
			if c, isCol := e.(*expr.ColumnRef); isCol && slices.Contains(in, c.Index) {
				cols = append(cols, i)
			}
		}
		return cols, d, len(cols) > 0
	}
	return nil, 0, false
}

// timeTerm reads e as a column of the join row plus a constant interval
// (col, col + iv, iv + col, col - iv); the interval is a range [lo, hi]
// of microseconds, since a day added to a TIMESTAMPTZ is a calendar day of
// the session time zone, 23 to 25 hours.
func timeTerm(e expr.Expr, tz bool) (col int, lo, hi int64, ok bool) {
	if c, isCol := e.(*expr.ColumnRef); isCol {
		return c.Index, 0, 0, true
	}
	call, isCall := e.(*expr.Call)
	if !isCall || call.Fn == nil || len(call.Args) != 2 || (call.Fn.Name != "+" && call.Fn.Name != "-") {
		return 0, 0, 0, false
	}
	c, isCol := call.Args[0].(*expr.ColumnRef)
	k, isConst := call.Args[1].(*expr.Const)
	if !isCol && call.Fn.Name == "+" {
		c, isCol = call.Args[1].(*expr.ColumnRef)
		k, isConst = call.Args[0].(*expr.Const)
	}
	if !isCol || !isConst || k.Typ.Kind != types.KindInterval || k.Value.IsNull() {
		return 0, 0, 0, false
	}
	iv := k.Value.Interval()
	if iv.Months != 0 {
		return 0, 0, 0, false
	}
	mid := int64(iv.Days)*86_400_000_000 + iv.Micros
	var slack int64
	if tz {
		slack = int64(max(iv.Days, -iv.Days)) * 3_600_000_000
	}
	lo, hi = mid-slack, mid+slack
	if call.Fn.Name == "-" {
		lo, hi = -hi, -lo
	}
	return c.Index, lo, hi, true
}

// intervalOf recognizes an interval join: both inputs append-only with an
// event time (eventTime), and conjuncts of ON that bound the right time
// minus the left time from below and from above:
//
//	r.ts BETWEEN l.ts - INTERVAL '10' SECOND AND l.ts + INTERVAL '5' SECOND
//	r.ts >= l.ts - INTERVAL '10' SECOND AND r.ts < l.ts + INTERVAL '5' SECOND
//	l.ts <= r.ts + INTERVAL '10' SECOND AND ...
//
// The tightest bounds found are the operator's; nil when a bound is
// missing (a regular join then, whose state is never dropped).
func (b *builder) intervalOf(n *plan.Join, residual []expr.Expr) *stream.JoinInterval {
	lw := len(n.Left.Schema())
	lcols, ldelay, ok := b.eventTime(n.Left)
	if !ok {
		return nil
	}
	rcols, rdelay, ok := b.eventTime(n.Right)
	if !ok {
		return nil
	}
	lt, rt := n.Left.Schema()[lcols[0]].Type, n.Right.Schema()[rcols[0]].Type
	if lt.Kind != rt.Kind {
		return nil
	}
	tz := lt.Kind == types.KindTimestampTZ
	for i := range rcols {
		rcols[i] += lw
	}
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	var lcol, rcol = -1, -1
	for _, c := range residual {
		call, isCall := c.(*expr.Call)
		if !isCall || call.Fn == nil || len(call.Args) != 2 {
			continue
		}
		op := call.Fn.Name
		if op != ">=" && op != ">" && op != "<=" && op != "<" {
			continue
		}
		xc, xlo, xhi, ok1 := timeTerm(call.Args[0], tz)
		yc, ylo, yhi, ok2 := timeTerm(call.Args[1], tz)
		if !ok1 || !ok2 {
			continue
		}
		greater := op == ">=" || op == ">"
		switch {
		case slices.Contains(rcols, xc) && slices.Contains(lcols, yc):
			// r + x op l + y: r - l op y - x.
			if greater {
				lo = max(lo, ylo-xhi)
			} else {
				hi = min(hi, yhi-xlo)
			}
		case slices.Contains(lcols, xc) && slices.Contains(rcols, yc):
			// l + x op r + y: r - l op' x - y, the comparison turned.
			if greater {
				hi = min(hi, xhi-ylo)
			} else {
				lo = max(lo, xlo-yhi)
			}
		default:
			continue
		}
		lcol, rcol = lcols[0], rcols[0]-lw
	}
	if lo == math.MinInt64 || hi == math.MaxInt64 || lo > hi {
		return nil
	}
	return &stream.JoinInterval{TimeCols: [2]int{lcol, rcol}, Lo: lo, Hi: hi, Delay: [2]int64{ldelay, rdelay}}
}

// micros renders a span of microseconds for Explain.
func micros(us int64) string { return time.Duration(us * 1000).String() }
