package datagen

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"time"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Time columns (doc.go, "Time"): a random DATE or TIMESTAMP(TZ) column
// without min and max takes values at or shortly before its row's
// generation time.

var _ ingest.StatefulReader = (*Reader)(nil)

// startTime anchors generation times: row pos was generated at at (µs
// since 1970-01-01 UTC), and row n at at + (n-pos)/Rate seconds.
type startTime struct {
	set bool
	pos uint64
	at  int64
}

// stateVersion is the first byte of a Reader's checkpointed state
// (doc.go, "Checkpointed state").
const stateVersion = 1

const microsPerDay = 86_400_000_000

// startLocked sets the start time, when the Reader has time columns and
// none yet: row pos is generated at now.
func (r *Reader) startLocked(pos uint64, now time.Time) {
	if !r.c.hasNow || r.mu.start.set {
		return
	}
	r.mu.start = startTime{set: true, pos: pos, at: clampTimestamp(now.UnixMicro())}
}

// genTimeLocked returns row n's generation time in µs since 1970-01-01
// UTC: the start time plus (n-pos)/Rate seconds, rounded down to a µs
// (the start time itself without a rate), within TIMESTAMP's range. The
// start time must be set.
func (r *Reader) genTimeLocked(n uint64) int64 {
	s := r.mu.start
	if !s.set {
		panic("datagen: generation time asked before the start time is set")
	}
	rate := r.c.cfg.Rate
	if rate == 0 || n == s.pos {
		return s.at
	}
	d, later := n-s.pos, true
	if n < s.pos {
		d, later = s.pos-n, false
	}
	hi, lo := bits.Mul64(d, uint64(time.Second/time.Microsecond))
	// Unsigned differences: TIMESTAMP's range is wider than an int64's
	// positive half.
	minTS := int64(types.MinTimestamp)
	off := uint64(types.MaxTimestamp) - uint64(minTS)
	if hi < rate {
		if q, _ := bits.Div64(hi, lo, rate); q < off {
			off = q
		}
	}
	if later {
		if off > uint64(types.MaxTimestamp)-uint64(s.at) {
			return types.MaxTimestamp
		}
		return s.at + int64(off)
	}
	if off > uint64(s.at)-uint64(minTS) {
		return types.MinTimestamp
	}
	return s.at - int64(off)
}

// timeValue draws the value of time column col for a row generated at at
// (µs): a DATE uniformly among the UTC days that [at-maxPast, at]
// touches; a TIMESTAMP(p) uniformly among the multiples of its unit in
// that span, or at rounded down to the unit when the span holds none
// (max-past shorter than the unit).
func timeValue(col *column, rg *rng, at int64) int64 {
	lo := at - col.maxPast
	if lo < types.MinTimestamp || lo > at {
		lo = types.MinTimestamp
	}
	if col.typ.Kind == types.KindDate {
		dlo, dhi := floorDiv(lo, microsPerDay), floorDiv(at, microsPerDay)
		return dlo + int64(rg.intn(uint64(dhi-dlo)+1))
	}
	ulo, uhi := ceilDiv(lo, col.unit), floorDiv(at, col.unit)
	if ulo > uhi {
		return uhi * col.unit
	}
	return (ulo + int64(rg.intn(uint64(uhi-ulo)+1))) * col.unit
}

func clampTimestamp(us int64) int64 { return min(max(us, types.MinTimestamp), types.MaxTimestamp) }

// SnapshotState implements ingest.StatefulReader: the start time, nil
// when the Reader has no time columns or has generated no row yet. The
// format is doc.go's "Checkpointed state".
func (r *Reader) SnapshotState() ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.mu.start
	if !r.c.hasNow || !s.set {
		return nil, nil
	}
	b := []byte{stateVersion}
	b = binary.AppendUvarint(b, s.pos)
	b = binary.AppendVarint(b, s.at)
	return b, nil
}

// RestoreState implements ingest.StatefulReader: it sets the start time a
// checkpoint kept, so that rows from the checkpoint's position on are
// those of the run that wrote it; nil forgets the start time, and the
// next row generated sets a new one. A Reader without time columns
// ignores the state. Bytes that are not a state of this format give an
// error wrapping base.ErrCorruption.
func (r *Reader) RestoreState(state []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.c.hasNow {
		return nil
	}
	if state == nil {
		r.setStartLocked(startTime{})
		return nil
	}
	bad := func(why string) error {
		return fmt.Errorf("datagen: checkpointed start time %x: %s: %w", state, why, base.ErrCorruption)
	}
	if len(state) == 0 || state[0] != stateVersion {
		return bad(fmt.Sprintf("not version %d", stateVersion))
	}
	b := state[1:]
	pos, k1 := binary.Uvarint(b)
	if k1 <= 0 {
		return bad("bad position")
	}
	at, k2 := binary.Varint(b[k1:])
	if k2 <= 0 || k1+k2 != len(b) {
		return bad("bad time or trailing bytes")
	}
	if at < types.MinTimestamp || at > types.MaxTimestamp {
		return bad("time out of range")
	}
	r.setStartLocked(startTime{set: true, pos: pos, at: at})
	return nil
}

// setStartLocked replaces the start time; a new one also drops the rate
// limiting schedule, which the next Next starts again from the new start
// time (dueLocked), so that no row is due before its generation time.
func (r *Reader) setStartLocked(s startTime) {
	if s != r.mu.start {
		r.mu.anchored = false
	}
	r.mu.start = s
}
