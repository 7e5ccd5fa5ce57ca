package exec

import (
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/sql/stream"
)

// runWindow expands each row into the TUMBLE, HOP or CUMULATE windows it
// belongs to, appending window_start and window_end, with the same window
// arithmetic as the streaming operator (stream.AppendWindows), so that a
// batch recomputation of a view agrees with it. SESSION windows depend on
// the neighbouring rows and are not run here.
func runWindow(ctx *expr.Context, n *plan.WindowTVF, sc Scanner) ([]types.Row, error) {
	if n.Kind == plan.Session {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "SESSION windows cannot run in a batch query")
	}
	size, err := stream.WindowMicros(n.Size)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err)
	}
	slide, _ := stream.WindowMicros(n.Slide)
	offset, _ := stream.WindowMicros(n.Offset)
	if err := stream.CheckWindow(n.Kind, size, slide); err != nil {
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err)
	}
	in, err := Run(ctx, n.Input, sc)
	if err != nil {
		return nil, err
	}
	tt := n.Input.Schema()[n.TimeCol].Type
	// Days are calendar days of the session time zone for a TIMESTAMPTZ,
	// as the streaming planner does it.
	var loc *time.Location
	if tt.Kind == types.KindTimestampTZ && ctx != nil && ctx.Loc != nil && (n.Size.Days != 0 || n.Slide.Days != 0 || n.Offset.Days != 0) {
		loc = ctx.Loc
	}
	mk := types.NewTimestamp
	if tt.Kind == types.KindTimestampTZ {
		mk = types.NewTimestampTZ
	}
	var out []types.Row
	var wins []stream.Window
	for _, r := range in {
		t := r[n.TimeCol]
		if t.IsNull() || t.Micros() == types.TimestampInfinity || t.Micros() == types.TimestampNegInfinity {
			continue
		}
		if loc == nil {
			wins = stream.AppendWindows(wins[:0], n.Kind, t.Micros(), size, slide, offset)
		} else {
			wins = stream.AppendWindows(wins[:0], n.Kind, stream.WallTime(t.Micros(), loc), size, slide, offset)
			for j := range wins {
				wins[j] = stream.Window{Start: stream.FromWallTime(wins[j].Start, loc), End: stream.FromWallTime(wins[j].End, loc)}
			}
		}
		for _, w := range wins {
			row := make(types.Row, 0, len(r)+2)
			row = append(append(row, r...), mk(w.Start), mk(w.End))
			out = append(out, row)
		}
	}
	return out, nil
}
