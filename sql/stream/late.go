package stream

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// LateCounter counts the rows the LateFilter subtasks of one relation
// dropped. Each subtask reports its own total, which is part of its
// checkpointed state: after a restore the subtask's total goes back to the
// checkpoint's and the replay counts the same rows again, so once the job
// has caught up the count is what a run without failures gives. It is
// safe for concurrent use; the zero value is ready.
type LateCounter struct {
	mu struct {
		sync.Mutex
		bySubtask map[int]int64 // guarded by mu
	}
}

func (c *LateCounter) set(subtask int, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.bySubtask == nil {
		c.mu.bySubtask = map[int]int64{}
	}
	c.mu.bySubtask[subtask] = n
}

// Load returns the number of late rows dropped, summed over subtasks.
func (c *LateCounter) Load() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int64
	for _, v := range c.mu.bySubtask {
		n += v
	}
	return n
}

// LateFilter drops late rows right after a source: it tracks the largest
// event time its subtask has seen in column TimeCol (the watermark of
// WATERMARK FOR col AS col - delay is that maximum minus Delay, as
// Flink's bounded-out-of-orderness strategy) and drops every row whose
// time is below the watermark, counting it in Counter. The check is per
// row in input order, before the row raises the maximum, so the outcome is
// deterministic for a given input order. A row whose time is NULL passes
// and does not move the watermark; nor does one at 'infinity' (which
// would make every later row late), while '-infinity' is late as soon as
// there is a watermark.
//
// The input must be append-only: dropping a late retraction whose row was
// admitted, or admitting one whose row was dropped, would corrupt every
// operator downstream, and telling them apart would need every dropped
// row kept. The planner refuses a watermark on a changelog with updates;
// the operator fails on a retraction.
//
// State: operator state late-filter holds the maximum (with a flag for
// none yet) and the number of rows dropped, written at each checkpoint.
type LateFilter struct {
	operator.Base
	TimeCol int
	// Delay in microseconds (>= 0).
	Delay   int64
	Counter *LateCounter

	ctx     *operator.Context
	seen    bool
	maxTime int64
	late    int64
}

const lateState = "late-filter"

// Open implements operator.Operator.
func (f *LateFilter) Open(ctx *operator.Context) error {
	f.ctx = ctx
	if f.Delay < 0 {
		return fmt.Errorf("late filter %s: negative delay %d us: %w", ctx.Vertex, f.Delay, base.ErrInvalidArgument)
	}
	b, ok, err := ctx.State.OperatorValue(lateState).Get()
	if err != nil {
		return err
	}
	if ok {
		if len(b) < 1 || b[0] > 1 {
			return f.corrupt()
		}
		f.seen = b[0] == 1
		b = b[1:]
		var k1, k2 int
		f.maxTime, k1 = binary.Varint(b)
		if k1 > 0 {
			f.late, k2 = binary.Varint(b[k1:])
		}
		if k1 <= 0 || k2 <= 0 || k1+k2 != len(b) {
			return f.corrupt()
		}
	}
	if f.Counter != nil {
		f.Counter.set(ctx.Subtask, f.late)
	}
	return nil
}

func (f *LateFilter) corrupt() error {
	return fmt.Errorf("late filter %s subtask %d: state: %w", f.ctx.Vertex, f.ctx.Subtask, base.ErrCorruption)
}

// Watermark returns the subtask's current watermark and whether it has
// one (it has none before the first row with a time).
func (f *LateFilter) Watermark() (int64, bool) { return f.maxTime - f.Delay, f.seen }

// Process implements operator.Operator.
func (f *LateFilter) Process(_ int, c *types.Chunk) error {
	keep := make([]int, 0, c.Len())
	dropped := int64(0)
	for i := range c.Len() {
		if c.Kinds[i].IsRetract() {
			return fmt.Errorf("late filter %s: a %s in an append-only input with a watermark: %w", f.ctx.Vertex, c.Kinds[i], base.ErrInvalidArgument)
		}
		d := c.Datum(f.TimeCol, i)
		if d.IsNull() {
			keep = append(keep, i)
			continue
		}
		t := d.Micros()
		if f.seen && t < f.maxTime-f.Delay {
			dropped++
			continue
		}
		if (!f.seen || t > f.maxTime) && !infinite(t) {
			f.maxTime, f.seen = t, true
		}
		keep = append(keep, i)
	}
	if dropped > 0 {
		f.late += dropped
		if f.Counter != nil {
			f.Counter.set(f.ctx.Subtask, f.late)
		}
	}
	if len(keep) == 0 {
		return nil
	}
	if len(keep) == c.Len() {
		return f.ctx.Output.Emit(c)
	}
	return f.ctx.Output.Emit(c.Select(keep))
}

// Snapshot implements operator.Operator.
func (f *LateFilter) Snapshot(base.CheckpointID) error {
	b := []byte{0}
	if f.seen {
		b[0] = 1
	}
	b = binary.AppendVarint(b, f.maxTime)
	b = binary.AppendVarint(b, f.late)
	return f.ctx.State.OperatorValue(lateState).Set(b)
}
