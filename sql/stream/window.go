package stream

import (
	"fmt"
	"time"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
)

// WindowExpand is the stateless part of the window table-valued functions
// TUMBLE, HOP and CUMULATE (Flink's window TVFs, FLIP-145; RisingWave's
// HopWindowExecutor): it appends window_start and window_end to each input
// row, once per window the row's event time falls in, keeping the row
// kind. A retraction expands into the same windows as the row it retracts,
// so that a GroupAgg downstream (GROUP BY window_start, window_end, ...)
// sees each window's row retracted. A row whose time is NULL belongs to no
// window and is dropped, as Flink drops it; so is one at 'infinity' or
// '-infinity', which no window of finite bounds holds.
//
// Windows are half-open intervals [start, end) of microseconds since the
// Unix epoch, aligned to the epoch plus Offset:
//
//	TUMBLE(size)          start = t - floorMod(t - offset, size)
//	HOP(slide, size)      the size/slide windows [s, s+size) with s - offset
//	                      a multiple of slide and s <= t < s+size
//	CUMULATE(step, size)  with s = t - floorMod(t - offset, size), the
//	                      windows [s, s + k*step) for k = 1..size/step that
//	                      hold t
//
// An event exactly at a window's end belongs to the next window, not to
// that one. Alignment is in UTC unless Loc is set (local windows, below).
// Floor division makes times before 1970 fall in the windows their value
// says (Flink's `(t - offset + size) % size` does not for t < -size).
type WindowExpand struct {
	operator.Base
	Kind plan.WindowKind
	// InTypes are the input row's types; TimeCol is the event-time
	// column (TIMESTAMP or TIMESTAMPTZ).
	InTypes []types.Type
	TimeCol int
	// Size, Slide and Offset are in microseconds: Size is TUMBLE's and
	// HOP's size and CUMULATE's max size, Slide HOP's slide and CUMULATE's
	// step, Offset TUMBLE's offset.
	Size, Slide, Offset int64
	// Loc, when set, makes windows local: boundaries are computed on the
	// wall-clock time of Loc (a TIMESTAMPTZ shifted by its UTC offset)
	// and mapped back to instants, so a one-day window runs from local
	// midnight to local midnight and lasts 23 or 25 hours on a day of a
	// daylight-saving change (Flink's windows on TIMESTAMP_LTZ). The
	// planner sets it for a TIMESTAMPTZ column when a window interval
	// has days, which Postgres adds as calendar days in the session time
	// zone; windows of hours or less stay aligned in UTC.
	Loc *time.Location
	// Exprs, when set, project each expanded row (the input row, then
	// window_start and window_end) into the output row, so that the
	// expansion writes only the columns the next step reads: the planner
	// fuses an aggregate's pre-aggregation Map (group keys and arguments)
	// into the expansion, and a HOP that makes five copies of each bid
	// copies three columns instead of nine. Eval evaluates them.
	Exprs []expr.Expr
	Eval  *expr.Context

	ctx  *operator.Context
	outT []types.Type
	row  types.Row
	proj types.Row
	wins []Window
	// colSrc, when the output is built column-wise (see columnSources),
	// is each output column's position in the expanded row.
	colSrc  []int
	rowWise bool // tests: expand row by row even when colSrc is set
	counts  []int32
	bounds  [2][]int64 // window_start, window_end of the expanded rows
}

// Window is one window [Start, End) in microseconds.
type Window struct{ Start, End int64 }

// WindowMicros converts a window interval to microseconds (a day is 24
// hours); months are refused because their length varies.
func WindowMicros(iv types.IntervalValue) (int64, error) {
	if iv.Months != 0 {
		return 0, fmt.Errorf("window interval %s has months: %w", types.FormatText(types.NewInterval(iv), nil), base.ErrInvalidArgument)
	}
	return int64(iv.Days)*86_400_000_000 + iv.Micros, nil
}

// CheckWindow validates a window's sizes: Size (and Slide for HOP and
// CUMULATE) positive, Size a multiple of Slide (Flink refuses a HOP or
// CUMULATE whose size is not a multiple of its slide or step).
func CheckWindow(kind plan.WindowKind, size, slide int64) error {
	if size <= 0 {
		return fmt.Errorf("%s window size %d us is not positive: %w", kind, size, base.ErrInvalidArgument)
	}
	if kind == plan.Hop || kind == plan.Cumulate {
		if slide <= 0 {
			return fmt.Errorf("%s window slide %d us is not positive: %w", kind, slide, base.ErrInvalidArgument)
		}
		if size%slide != 0 {
			return fmt.Errorf("%s window size %d us is not a multiple of its slide %d us: %w", kind, size, slide, base.ErrInvalidArgument)
		}
	}
	return nil
}

func floorMod(a, b int64) int64 {
	m := a % b
	if m < 0 {
		m += b
	}
	return m
}

// AppendWindows appends the windows that hold event time t, in ascending
// order of start (then end), to dst.
func AppendWindows(dst []Window, kind plan.WindowKind, t, size, slide, offset int64) []Window {
	switch kind {
	case plan.Tumble:
		s := t - floorMod(t-offset, size)
		return append(dst, Window{s, s + size})
	case plan.Hop:
		last := t - floorMod(t-offset, slide)
		n := size / slide
		for i := n - 1; i >= 0; i-- {
			s := last - i*slide
			if t < s+size {
				dst = append(dst, Window{s, s + size})
			}
		}
		return dst
	case plan.Cumulate:
		s := t - floorMod(t-offset, size)
		for k := (t-s)/slide + 1; k*slide <= size; k++ {
			dst = append(dst, Window{s, s + k*slide})
		}
		return dst
	}
	panic(fmt.Sprintf("stream: window kind %s is not expanded per row", kind))
}

// OutputTypes returns the input types followed by window_start and
// window_end, of the time column's type; with Exprs, their types.
func (w *WindowExpand) OutputTypes() []types.Type {
	if w.Exprs != nil {
		ts := make([]types.Type, len(w.Exprs))
		for i, e := range w.Exprs {
			ts[i] = e.Type()
		}
		return ts
	}
	tt := w.InTypes[w.TimeCol]
	return append(append([]types.Type(nil), w.InTypes...), tt, tt)
}

// Open implements operator.Operator.
func (w *WindowExpand) Open(ctx *operator.Context) error {
	w.ctx = ctx
	if w.Kind == plan.Session {
		return fmt.Errorf("window %s: SESSION windows need SessionWindow: %w", ctx.Vertex, base.ErrInvalidArgument)
	}
	if err := CheckWindow(w.Kind, w.Size, w.Slide); err != nil {
		return fmt.Errorf("window %s: %w", ctx.Vertex, err)
	}
	w.outT = w.OutputTypes()
	if w.Eval == nil {
		w.Eval = &expr.Context{}
	}
	w.colSrc = w.columnSources()
	return nil
}

// columnSources returns, when each output column is a column of the
// expanded row (the input row, then window_start and window_end) of the
// same kind, each one's position there, so that Process can build the
// output column by column; nil when an expression computes something.
func (w *WindowExpand) columnSources() []int {
	n := len(w.InTypes)
	tt := w.InTypes[w.TimeCol]
	if w.Exprs == nil {
		src := make([]int, n+2)
		for i := range src {
			src[i] = i
		}
		return src
	}
	src := make([]int, len(w.Exprs))
	for i, e := range w.Exprs {
		ref, ok := e.(*expr.ColumnRef)
		if !ok || ref.Index < 0 || ref.Index >= n+2 {
			return nil
		}
		from := tt
		if ref.Index < n {
			from = w.InTypes[ref.Index]
		}
		if ref.Typ.Kind != from.Kind {
			return nil
		}
		src[i] = ref.Index
	}
	return src
}

// Process implements operator.Operator.
func (w *WindowExpand) Process(_ int, c *types.Chunk) error {
	if w.colSrc != nil && !w.rowWise {
		return w.processColumns(c)
	}
	out := types.NewChunk(w.outT, c.Len())
	mk := timeMaker(w.InTypes[w.TimeCol])
	for i := range c.Len() {
		t := c.Datum(w.TimeCol, i)
		if t.IsNull() || infinite(t.Micros()) {
			continue
		}
		if w.Loc == nil {
			w.wins = AppendWindows(w.wins[:0], w.Kind, t.Micros(), w.Size, w.Slide, w.Offset)
		} else {
			w.wins = AppendWindows(w.wins[:0], w.Kind, WallTime(t.Micros(), w.Loc), w.Size, w.Slide, w.Offset)
			for j := range w.wins {
				w.wins[j] = Window{Start: FromWallTime(w.wins[j].Start, w.Loc), End: FromWallTime(w.wins[j].End, w.Loc)}
			}
		}
		w.row = c.AppendRowTo(w.row[:0], i)
		n := len(w.row)
		for _, win := range w.wins {
			w.row = append(w.row[:n], mk(win.Start), mk(win.End))
			if w.Exprs == nil {
				out.Append(c.Kinds[i], w.row)
				continue
			}
			w.proj = w.proj[:0]
			for _, e := range w.Exprs {
				v, err := e.Eval(w.Eval, w.row)
				if err != nil {
					return err
				}
				w.proj = append(w.proj, v)
			}
			out.Append(c.Kinds[i], w.proj)
		}
	}
	if w.Exprs != nil {
		out = cancelNoise(out)
	}
	if out.Len() == 0 {
		return nil
	}
	return w.ctx.Output.Emit(out)
}

// processColumns expands c column by column: it computes each row's
// windows, then copies each input column with every row repeated once
// per window of that row and writes the window bounds' columns
// directly, instead of building and appending each output row (the
// output is the row path's, row for row).
func (w *WindowExpand) processColumns(c *types.Chunk) error {
	tv := &c.Cols[w.TimeCol]
	w.counts = w.counts[:0]
	w.bounds[0], w.bounds[1] = w.bounds[0][:0], w.bounds[1][:0]
	for i := range c.Len() {
		if tv.Nulls[i] || infinite(tv.Ints[i]) {
			w.counts = append(w.counts, 0)
			continue
		}
		t := tv.Ints[i]
		if w.Loc == nil {
			w.wins = AppendWindows(w.wins[:0], w.Kind, t, w.Size, w.Slide, w.Offset)
		} else {
			w.wins = AppendWindows(w.wins[:0], w.Kind, WallTime(t, w.Loc), w.Size, w.Slide, w.Offset)
			for j := range w.wins {
				w.wins[j] = Window{Start: FromWallTime(w.wins[j].Start, w.Loc), End: FromWallTime(w.wins[j].End, w.Loc)}
			}
		}
		w.counts = append(w.counts, int32(len(w.wins)))
		for _, win := range w.wins {
			w.bounds[0] = append(w.bounds[0], win.Start)
			w.bounds[1] = append(w.bounds[1], win.End)
		}
	}
	total := len(w.bounds[0])
	if total == 0 {
		return nil
	}
	out := types.NewChunk(w.outT, 0)
	out.Kinds = make([]types.RowKind, 0, total)
	for i, n := range w.counts {
		for range n {
			out.Kinds = append(out.Kinds, c.Kinds[i])
		}
	}
	n := len(w.InTypes)
	var given [2]bool // the bounds' slices handed to the chunk
	for j, src := range w.colSrc {
		v := &out.Cols[j]
		if src < n {
			v.AppendRepeated(&c.Cols[src], w.counts)
			continue
		}
		v.Nulls = make([]bool, total)
		if b := src - n; !given[b] {
			v.Ints, given[b] = w.bounds[b], true
		} else {
			v.Ints = append(make([]int64, 0, total), w.bounds[b]...)
		}
	}
	for b := range given {
		if given[b] {
			w.bounds[b] = make([]int64, 0, total)
		}
	}
	if w.Exprs != nil {
		out = cancelNoise(out)
	}
	if out.Len() == 0 {
		return nil
	}
	return w.ctx.Output.Emit(out)
}

const microsPerSecond = 1_000_000

// infinite reports a TIMESTAMP or TIMESTAMPTZ of 'infinity' or
// '-infinity'.
func infinite(us int64) bool {
	return us == types.TimestampInfinity || us == types.TimestampNegInfinity
}

// zoneOffset returns loc's UTC offset in microseconds at instant us.
func zoneOffset(us int64, loc *time.Location) int64 {
	sec := us / microsPerSecond
	if us%microsPerSecond < 0 {
		sec--
	}
	_, off := time.Unix(sec, 0).In(loc).Zone()
	return int64(off) * microsPerSecond
}

// WallTime returns the wall-clock time in loc of instant us, as
// microseconds since 1970-01-01 00:00 of that wall clock.
func WallTime(us int64, loc *time.Location) int64 { return us + zoneOffset(us, loc) }

// FromWallTime maps a wall-clock time of loc back to an instant. A wall
// time that occurs twice (the repeated hour of a fall-back change) maps
// to its later occurrence, one that does not occur (the hour skipped by a
// spring-forward change) with the offset before the change: Postgres's
// rules for reading a local time. Zone changes are taken to be more than
// a day apart.
func FromWallTime(wall int64, loc *time.Location) int64 {
	const day = 86_400 * microsPerSecond
	before := zoneOffset(wall-day, loc)
	after := zoneOffset(wall+day, loc)
	if before == after {
		return wall - before
	}
	okBefore := zoneOffset(wall-before, loc) == before
	okAfter := zoneOffset(wall-after, loc) == after
	switch {
	case okAfter:
		return wall - after
	case okBefore:
		return wall - before
	}
	return wall - before // skipped: read with the offset before the change
}

// timeMaker returns the constructor of datums of the time type t.
func timeMaker(t types.Type) func(int64) types.Datum {
	if t.Kind == types.KindTimestampTZ {
		return types.NewTimestampTZ
	}
	return types.NewTimestamp
}
