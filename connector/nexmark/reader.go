package nexmark

import (
	"sync"
	"time"

	"github.com/stratadb/strata/internal/types"
)

// pacedWindow is the most wall-clock time one transaction of a
// rate-limited Reader spans: with Rate > 0 a transaction holds the table's
// events among Rate*pacedWindow consecutive event numbers at most, so that
// a sparse table (one person per 50 events) still shows up promptly.
const pacedWindow = 10 * time.Millisecond

// Reader reads one Nexmark table for an ingest source (it implements
// connector/ingest.Reader). A position is a global event number: the
// number of the next event to consider, whatever its table, so the
// positions of the three tables' Readers over one Config mean the same
// thing.
//
// Next(pos) returns one transaction: the events of the Reader's table among
// the event numbers [s, e), where s is the first of the table's events at
// or after pos, at most ChunkRows of them, and with Rate > 0 at most
// max(1, Rate/100) event numbers long. It returns e, or the number after
// the last event taken when ChunkRows cut the transaction. The boundaries
// depend only on pos and the Config (invariant transaction-purity), so a
// replay from a checkpointed position repeats the same transactions.
//
// A Reader is safe for concurrent use; the generator is shared under a
// mutex.
type Reader struct {
	table Table
	cfg   Config // with defaults; immutable
	types []types.Type
	limit uint64 // one past the last event number
	span  uint64 // event numbers per transaction; 0 when not paced

	mu struct {
		sync.Mutex
		gen  *Generator
		nums []uint64
		// The pacing anchor: event anchorPos is due at anchorAt; event n
		// at anchorAt + (n-anchorPos)/Rate.
		anchored  bool
		anchorPos uint64
		anchorAt  time.Time
	}
}

// NewReader returns a Reader of table t over cfg. The error wraps
// base.ErrInvalidArgument and names the bad field.
func NewReader(t Table, cfg Config) (*Reader, error) {
	if _, err := ParseTable(string(t)); err != nil {
		return nil, err
	}
	g, err := NewGenerator(cfg)
	if err != nil {
		return nil, err
	}
	cfg = g.cfg
	r := &Reader{table: t, cfg: cfg, types: t.Schema().Types(), limit: cfg.Events}
	if r.limit == 0 {
		r.limit = maxEvents
	}
	if cfg.Rate > 0 {
		r.span = max(1, cfg.Rate*uint64(pacedWindow)/uint64(time.Second))
	}
	r.mu.gen = g
	return r, nil
}

// Table returns the table the Reader reads.
func (r *Reader) Table() Table { return r.table }

// Schema returns the schema of the chunks Next returns.
func (r *Reader) Schema() Schema { return r.table.Schema() }

// Config returns the Reader's configuration with defaults filled in.
func (r *Reader) Config() Config { return r.cfg }

// Exhausted reports whether no event of the Reader's table remains at or
// after pos: Events is reached. Next keeps returning nil from there on; a
// driver that wants a bounded job to end can ask this.
func (r *Reader) Exhausted(pos uint64) bool {
	start := nextOf(r.table, pos)
	return start >= r.limit || start < pos
}

// Next implements connector/ingest.Reader: it returns the transaction at
// pos and the position after it, or a nil chunk when the events are
// exhausted (Events reached) or, with Rate > 0, when the transaction's
// last event is not due yet. It never blocks and never fails.
func (r *Reader) Next(pos uint64) (*types.Chunk, uint64, error) {
	if r.Exhausted(pos) {
		return nil, pos, nil
	}
	start := nextOf(r.table, pos)
	end := r.limit
	if r.span > 0 && end-start > r.span {
		end = start + r.span
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	g := r.mu.gen
	nums := r.mu.nums[:0]
	for n := start; n < end && len(nums) < r.cfg.ChunkRows; n = nextOf(r.table, n+1) {
		nums = append(nums, n)
	}
	r.mu.nums = nums
	last := nums[len(nums)-1]
	next := end
	if len(nums) == r.cfg.ChunkRows {
		next = last + 1
	}
	if r.span > 0 && !r.dueLocked(pos, last) {
		return nil, pos, nil
	}
	c := newChunk(r.types, len(nums))
	for _, n := range nums {
		g.appendEvent(c, r.table, n)
	}
	g.finish(c)
	return c, next, nil
}

// dueLocked reports whether event last is due by the wall clock. The
// first call anchors the schedule: the event at pos is due now, later ones
// 1/Rate seconds apart. A replay that rewinds below the anchor finds its
// events overdue and catches up at full speed.
func (r *Reader) dueLocked(pos, last uint64) bool {
	now := r.cfg.Now()
	if !r.mu.anchored {
		r.mu.anchored, r.mu.anchorPos, r.mu.anchorAt = true, pos, now
	}
	if last <= r.mu.anchorPos {
		return true
	}
	ahead := float64(last-r.mu.anchorPos) / float64(r.cfg.Rate) * float64(time.Second)
	if ahead > float64(1<<62) {
		return false // centuries ahead
	}
	return !now.Before(r.mu.anchorAt.Add(time.Duration(ahead)))
}

// newChunk returns an empty chunk for ts with room for n rows in every
// slice the generator fills (types.NewChunk reserves only the NULL flags).
func newChunk(ts []types.Type, n int) *types.Chunk {
	c := types.NewChunk(ts, n)
	for i := range c.Cols {
		if ts[i].Kind == types.KindVarchar {
			c.Cols[i].Strs = make([]string, 0, n)
		} else {
			c.Cols[i].Ints = make([]int64, 0, n)
		}
	}
	return c
}
