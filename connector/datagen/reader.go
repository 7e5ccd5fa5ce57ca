package datagen

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// pacedWindow is the most wall-clock time one transaction of a
// rate-limited Reader spans: Rate/100 rows.
const pacedWindow = 10 * time.Millisecond

// Reader generates the rows of a Config for an ingest source (it
// implements connector/ingest.Reader). A position is a row number.
//
// Next(pos) returns rows pos to e-1 as one transaction, e being the
// smallest of pos+ChunkRows, the row limit and, with Rate > 0,
// pos+max(1, Rate/100). The boundaries depend only on pos and the Config
// (invariant transaction-purity), so a replay from a checkpointed
// position repeats the same transactions.
//
// A Reader of a Config with time columns keeps a start time (doc.go,
// "Time"), which makes it an ingest.StatefulReader: the ingest source
// keeps the start time in its checkpoints and restores it, so that a
// replay gives the same rows.
//
// A Reader is safe for concurrent use.
type Reader struct {
	c    *compiled
	span uint64 // rows per transaction when paced; 0 when not
	// colMix[i] seeds column i's streams, so that a column's values do
	// not depend on the other columns' configuration.
	colMix []uint64

	mu struct {
		sync.Mutex
		buf   []byte    // the strings of the chunk being filled
		spans []strSpan // where each goes
		// The pacing anchor: row anchorPos is due at anchorAt, row n at
		// anchorAt + (n-anchorPos)/Rate.
		anchored  bool
		anchorPos uint64
		anchorAt  time.Time
		// start anchors the generation times of rows (time.go).
		start startTime
	}
}

type strSpan struct {
	col, row int32
	off, end int
}

// NewReader returns a Reader of cfg. The error wraps
// base.ErrInvalidArgument and names the column and field that are wrong.
func NewReader(cfg Config) (*Reader, error) {
	c, err := compile(cfg)
	if err != nil {
		return nil, err
	}
	r := &Reader{c: c}
	if cfg.Rate > 0 {
		r.span = max(1, cfg.Rate*uint64(pacedWindow)/uint64(time.Second))
	}
	mixed := seedMix(cfg.Seed)
	for i := range c.cols {
		r.colMix = append(r.colMix, mix64(mixed+uint64(i+1)*golden))
	}
	return r, nil
}

// Columns returns the schema of the chunks Next returns.
func (r *Reader) Columns() []catalog.Column { return r.c.cfg.Columns }

// Limit returns one past the last row number: Rows, or the length of the
// shortest bounded sequence; 2^64-1 when unbounded.
func (r *Reader) Limit() uint64 { return r.c.limit }

// Exhausted reports whether no row remains at or after pos. Next keeps
// returning nil from there on; a driver that wants a bounded job to end
// can ask this.
func (r *Reader) Exhausted(pos uint64) bool { return pos >= r.c.limit }

// Next implements connector/ingest.Reader: it returns the transaction at
// pos and the position after it, or a nil chunk when the rows are
// exhausted or, with Rate > 0, when the transaction's last row is not due
// yet. It never blocks and never fails.
func (r *Reader) Next(pos uint64) (*types.Chunk, uint64, error) {
	if r.Exhausted(pos) {
		return nil, pos, nil
	}
	end := pos + min(uint64(r.c.cfg.ChunkRows), r.c.limit-pos)
	if r.span > 0 && end-pos > r.span {
		end = pos + r.span
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var now time.Time
	if r.span > 0 || (r.c.hasNow && !r.mu.start.set) {
		now = r.c.cfg.Now()
	}
	r.startLocked(pos, now)
	if r.span > 0 && !r.dueLocked(now, pos, end-1) {
		return nil, pos, nil
	}
	c := newChunk(r.c.cols, r.c.types, int(end-pos))
	for n := pos; n < end; n++ {
		r.appendRowLocked(c, n)
	}
	r.finishLocked(c)
	return c, end, nil
}

// Row returns row n, for tests and tools. A Reader with time columns
// that has no start time yet takes row n's as now (doc.go, "Time").
func (r *Reader) Row(n uint64) types.Row {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.c.hasNow && !r.mu.start.set {
		r.startLocked(n, r.c.cfg.Now())
	}
	c := newChunk(r.c.cols, r.c.types, 1)
	r.appendRowLocked(c, n)
	r.finishLocked(c)
	return c.Row(0)
}

// dueLocked reports whether row last is due by the wall clock, which
// reads now; the first call anchors the schedule at its position (see
// connector/nexmark's Reader, which paces events the same way).
//
// With time columns the schedule starts no earlier than row pos's
// generation time, so that no row is handed out before its time (after a
// restore, the restored start time may put it later than now).
func (r *Reader) dueLocked(now time.Time, pos, last uint64) bool {
	if !r.mu.anchored {
		r.mu.anchored, r.mu.anchorPos, r.mu.anchorAt = true, pos, now
		if r.mu.start.set {
			if at := time.UnixMicro(r.genTimeLocked(pos)); at.After(now) {
				r.mu.anchorAt = at
			}
		}
	}
	if last <= r.mu.anchorPos {
		return true
	}
	ahead := float64(last-r.mu.anchorPos) / float64(r.c.cfg.Rate) * float64(time.Second)
	if ahead > float64(1<<62) {
		return false
	}
	return !now.Before(r.mu.anchorAt.Add(time.Duration(ahead)))
}

// newChunk returns an empty chunk with room for n rows in the slices the
// columns fill.
func newChunk(cols []column, ts []types.Type, n int) *types.Chunk {
	c := types.NewChunk(ts, n)
	for i, col := range cols {
		v := &c.Cols[i]
		switch col.rep {
		case repBool, repInt:
			v.Ints = make([]int64, 0, n)
		case repFloat:
			v.Floats = make([]float64, 0, n)
		case repNumeric:
			v.Decimals = make([]*apd.Decimal, 0, n)
		default:
			v.Strs = make([]string, 0, n)
		}
	}
	return c
}

// appendRowLocked appends row n. Each value has its own stream, seeded by
// the column and the row.
func (r *Reader) appendRowLocked(c *types.Chunk, n uint64) {
	row := int32(c.Len())
	c.Kinds = append(c.Kinds, types.Insert)
	var at int64 // row n's generation time, for time columns
	if r.c.hasNow {
		at = r.genTimeLocked(n)
	}
	for i := range r.c.cols {
		col := &r.c.cols[i]
		v := &c.Cols[i]
		rg := rowRNG(r.colMix[i], n)
		null := col.nullBelow > 0 && rg.next() < col.nullBelow
		v.Nulls = append(v.Nulls, null)
		switch col.rep {
		case repBool:
			x := int64(0)
			if !null {
				x = int64(rg.next() >> 63)
			}
			v.Ints = append(v.Ints, x)
		case repInt, repNumeric:
			var x int64
			switch {
			case null:
			case col.seq:
				x = col.start + int64(n)*col.step
			case col.now:
				x = timeValue(col, &rg, at)
			default:
				x = (col.lo + int64(rg.intn(col.span))) * col.unit
			}
			if col.rep == repInt {
				v.Ints = append(v.Ints, x)
			} else if null {
				v.Decimals = append(v.Decimals, nil)
			} else {
				v.Decimals = append(v.Decimals, apd.New(x, -col.scale))
			}
		case repFloat:
			x := 0.0
			if !null {
				x = col.flo + rg.float()*col.fspan
				if col.typ.Kind == types.KindFloat32 {
					x32 := float32(x)
					if float64(x32) >= col.flo+col.fspan { // rounded up onto max
						x32 = math.Nextafter32(x32, float32(col.flo))
					}
					x = float64(x32)
				}
			}
			v.Floats = append(v.Floats, x)
		default:
			v.Strs = append(v.Strs, "")
			if null {
				continue
			}
			off := len(r.mu.buf)
			switch {
			case col.rep == repUUID:
				r.mu.buf = rg.appendBytes(r.mu.buf, 16)
				u := r.mu.buf[off:]
				u[6] = u[6]&0x0f | 0x40 // version 4
				u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
			case col.rep == repBytes:
				r.mu.buf = rg.appendBytes(r.mu.buf, col.length)
			case col.seq:
				r.mu.buf = strconv.AppendInt(r.mu.buf, col.start+int64(n), 10)
			default:
				r.mu.buf = rg.appendLetters(r.mu.buf, col.length)
			}
			for len(r.mu.buf)-off < col.pad {
				r.mu.buf = append(r.mu.buf, ' ')
			}
			r.mu.spans = append(r.mu.spans, strSpan{col: int32(i), row: row, off: off, end: len(r.mu.buf)})
		}
	}
}

// finishLocked copies the chunk's strings into one string and points the
// values into it (one allocation per chunk; the values of a chunk share
// it), then empties the buffers.
func (r *Reader) finishLocked(c *types.Chunk) {
	if len(r.mu.spans) > 0 {
		s := string(r.mu.buf)
		for _, sp := range r.mu.spans {
			c.Cols[sp.col].Strs[sp.row] = s[sp.off:sp.end]
		}
	}
	r.mu.buf = r.mu.buf[:0]
	r.mu.spans = r.mu.spans[:0]
}
