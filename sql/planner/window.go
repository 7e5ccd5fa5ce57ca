package planner

import (
	"fmt"
	"strings"
	"time"

	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/sql/stream"
)

// windowTVF builds a window TVF: TUMBLE, HOP and CUMULATE as a stateless
// WindowExpand after the input (forward edge, the input's parallelism and
// mode); SESSION as a SessionWindow behind a gather to one subtask (the
// plan's SESSION has no partition key, so the whole input is one
// partition), retract.
func (b *builder) windowTVF(n *plan.WindowTVF) (stage, error) {
	st, _, err := b.windowTVFProject(n, nil, "")
	return st, err
}

// windowTVFProject builds a window TVF whose rows the next step projects
// with exprs (over the window's output: the input's columns, then
// window_start and window_end; what names them in Explain). A TUMBLE,
// HOP or CUMULATE evaluates them in its WindowExpand, so that the
// expansion copies only the projected columns, and reports fused; a
// SESSION window, nil exprs or exprs that copy every column unchanged
// leave the projection to the caller.
func (b *builder) windowTVFProject(n *plan.WindowTVF, exprs []expr.Expr, what string) (stage, bool, error) {
	size, err := stream.WindowMicros(n.Size)
	if err == nil && n.Kind != plan.Session && n.Kind != plan.Tumble {
		var slide int64
		if slide, err = stream.WindowMicros(n.Slide); err == nil {
			err = stream.CheckWindow(n.Kind, size, slide)
		}
	} else if err == nil {
		err = stream.CheckWindow(n.Kind, size, 0)
	}
	if err != nil {
		return stage{}, false, sqlerr.New(sqlerr.InvalidParameterValue, "%s window: %v", n.Kind, err)
	}
	slide, _ := stream.WindowMicros(n.Slide)
	offset, err := stream.WindowMicros(n.Offset)
	if err != nil {
		return stage{}, false, sqlerr.New(sqlerr.InvalidParameterValue, "%s window offset: %v", n.Kind, err)
	}
	if n.Kind == plan.Session && offset != 0 {
		return stage{}, false, sqlerr.New(sqlerr.InvalidParameterValue, "a SESSION window has no offset")
	}
	in, err := b.node(n.Input)
	if err != nil {
		return stage{}, false, err
	}
	inTypes := in.types
	timeCol := n.TimeCol
	col := n.Input.Schema()[timeCol].Name
	if n.Kind != plan.Session {
		kind := n.Kind
		// Days are calendar days of the session time zone for a
		// TIMESTAMPTZ, as in Postgres's timestamptz + interval.
		var loc *time.Location
		if inTypes[timeCol].Kind == types.KindTimestampTZ && b.opts.Eval.Loc != nil &&
			(n.Size.Days != 0 || n.Slide.Days != 0 || n.Offset.Days != 0) {
			loc = b.opts.Eval.Loc
		}
		probe := &stream.WindowExpand{InTypes: inTypes, TimeCol: timeCol}
		detail := fmt.Sprintf("%s(%s, size %s", kind, col, ivText(n.Size))
		if kind != plan.Tumble {
			detail += ", slide " + ivText(n.Slide)
		}
		if offset != 0 {
			detail += ", offset " + ivText(n.Offset)
		}
		detail += ")"
		if loc != nil {
			detail += " in time zone " + loc.String()
		}
		outTypes := probe.OutputTypes()
		fused := exprs != nil && !identity(exprs, outTypes)
		eval := b.opts.Eval
		if fused {
			probe.Exprs = exprs
			outTypes = probe.OutputTypes()
			detail += ", then " + what
		} else {
			exprs = nil
		}
		st := b.addOperator("window", in.par, in, graph.Forward, nil, nil, outTypes, in.mode,
			func(int) operator.Operator {
				return &stream.WindowExpand{Kind: kind, InTypes: inTypes, TimeCol: timeCol, Size: size, Slide: slide, Offset: offset, Loc: loc,
					Exprs: exprs, Eval: eval}
			}, detail)
		return st, fused, nil
	}
	if len(n.Partition) > 0 {
		// SESSION with a partition key: sessions of different keys are
		// independent, so the exchange hashes by the key.
		partTypes := make([]types.Type, len(n.Partition))
		names := make([]string, len(n.Partition))
		for i, c := range n.Partition {
			partTypes[i] = inTypes[c]
			names[i] = n.Input.Schema()[c].Name
		}
		part := append([]int(nil), n.Partition...)
		probe := &stream.SessionWindow{InTypes: inTypes, Width: len(inTypes), PartCols: part, PartTypes: partTypes, TimeCol: timeCol}
		return b.addOperator("session-window", b.opts.Parallelism, in, graph.Hash, part, partTypes,
			probe.OutputTypes(), Retract,
			func(int) operator.Operator {
				return &stream.SessionWindow{InTypes: inTypes, Width: len(inTypes), PartCols: part, PartTypes: partTypes, TimeCol: timeCol, Gap: size}
			}, fmt.Sprintf("SESSION(%s, gap %s, partition by %s)", col, ivText(n.Size), strings.Join(names, ", "))), false, nil
	}
	// SESSION: a constant exchange key, one subtask.
	keyed := make([]expr.Expr, 0, len(inTypes)+1)
	for i, t := range inTypes {
		keyed = append(keyed, &expr.ColumnRef{Index: i, Typ: t})
	}
	keyed = append(keyed, &expr.Const{Value: types.NewBool(true), Typ: types.Bool})
	preTypes := append(append([]types.Type(nil), inTypes...), types.Bool)
	eval := b.opts.Eval
	pre := b.addOperator("session-key", in.par, in, graph.Forward, nil, nil, preTypes, in.mode,
		func(int) operator.Operator { return &stream.Map{Exprs: keyed, Eval: eval} }, "one partition")
	probe := &stream.SessionWindow{InTypes: preTypes, Width: len(inTypes), TimeCol: timeCol}
	return b.addOperator("session-window", 1, pre, graph.Hash, []int{len(inTypes)}, []types.Type{types.Bool},
		probe.OutputTypes(), Retract,
		func(int) operator.Operator {
			return &stream.SessionWindow{InTypes: preTypes, Width: len(inTypes), TimeCol: timeCol, Gap: size}
		}, fmt.Sprintf("SESSION(%s, gap %s)", col, ivText(n.Size))), false, nil
}

// watermark puts a LateFilter after the source of a relation with a
// watermark; the relation's changelog must be append-only.
func (b *builder) watermark(rel *plan.Relation, src stage) (stage, error) {
	wm := rel.Watermark
	if wm == nil {
		return src, nil
	}
	if src.mode != AppendOnly {
		return stage{}, sqlerr.New(sqlerr.FeatureNotSupported, "a watermark on %s, a changelog with updates and deletes, is not supported (only on append-only sources and tables)", rel.Name)
	}
	if wm.Column < 0 || wm.Column >= len(src.types) {
		return stage{}, sqlerr.New(sqlerr.InvalidParameterValue, "watermark column %d of %s out of range", wm.Column, rel.Name)
	}
	if k := src.types[wm.Column].Kind; k != types.KindTimestamp && k != types.KindTimestampTZ {
		return stage{}, sqlerr.New(sqlerr.DatatypeMismatch, "the watermark column %s of %s must be a timestamp", rel.Columns[wm.Column].Name, rel.Name)
	}
	delay, err := stream.WindowMicros(wm.Delay)
	if err != nil || delay < 0 {
		return stage{}, sqlerr.New(sqlerr.InvalidParameterValue, "watermark delay of %s must be a non-negative interval without months", rel.Name)
	}
	if b.late == nil {
		b.late = map[string]*stream.LateCounter{}
	}
	counter := b.late[rel.Name]
	if counter == nil {
		counter = &stream.LateCounter{}
		b.late[rel.Name] = counter
	}
	col := wm.Column
	return b.addOperator("watermark", src.par, src, graph.Forward, nil, nil, src.types, src.mode,
		func(int) operator.Operator {
			return &stream.LateFilter{TimeCol: col, Delay: delay, Counter: counter}
		}, fmt.Sprintf("%s - %s, late rows dropped", rel.Columns[col].Name, ivText(wm.Delay))), nil
}

func ivText(iv types.IntervalValue) string {
	return "'" + types.FormatText(types.NewInterval(iv), nil) + "'"
}
