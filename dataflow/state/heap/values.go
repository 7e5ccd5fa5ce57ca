package heap

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	"github.com/zeebo/xxh3"

	"github.com/stratadb/strata/internal/base"
)

// values holds the entries whose user key is empty (value state, a list's
// length, a map state's empty key), by namespace, without a Go pointer per
// entry: namespaces and values are appended to one byte arena, and an
// open-addressing table with linear probing indexes them by a hash of the
// namespace, at most four fifths full (a smaller table misses the cache
// less often in a snapshot's stream of writes, which paid more than the
// longer probes cost). A Go map of strings to byte slices cost the garbage
// collector a scan of every entry in every cycle, about as much as the
// pipeline spent on the values themselves.
//
// Invariant (arena-append-only): bytes in the arena below its length are
// never written again. A Set appends a new copy and leaves the old one as
// garbage; compact copies the live entries into a new arena. So a value
// returned by get stays unchanged for as long as its holder keeps it, and
// a snapshot can keep the arena slice and a copy of the slots and encode
// them later while the backend goes on changing.
type values struct {
	// seed keys the hash (a fresh one per table, so that nobody can pick
	// namespaces that collide).
	seed  uint64
	slots []slot
	// n counts used slots; garbage counts arena bytes no slot references.
	n       int
	arena   []byte
	garbage int
	// gen counts compactions: a new arena is a new generation, whose
	// bytes no earlier snapshot's arena files hold.
	gen uint64
	// log records the entries changed since the last snapshot while an
	// incremental slot table is kept (slotlog.go).
	log slotChanges
	// spare is the arena's next buffer, allocated and touched by prepare
	// on a goroutine of its own; preparing is set while it runs.
	spare     atomic.Pointer[[]byte]
	preparing atomic.Bool
}

// slot is one entry: the namespace at arena[off:off+nsLen], the value at
// arena[voff:voff+vLen]. A new entry appends both, together; a Set of an
// existing entry appends only the new value, so that rewriting the value
// of a large key (a group's state keyed by its columns) leaves only the old
// value as garbage, not a copy of the key. hash is never 0 in a used slot
// (the low bit is forced on).
type slot struct {
	hash  uint64
	off   int
	voff  int
	nsLen uint32
	vLen  uint32
}

func newValues() *values { return &values{seed: rand.Uint64()} }

// hash is XXH3 (github.com/zeebo/xxh3), seeded: on this machine six times
// as fast as hash/maphash for a 1 KB namespace (a group's key columns) and
// faster for a short one; a restore hashes every namespace it reads.
func (t *values) hash(ns []byte) uint64 { return xxh3.HashSeed(ns, t.seed) | 1 }

// ns and value of slot s in arena a.
func (s *slot) ns(a []byte) []byte { return a[s.off : s.off+int(s.nsLen) : s.off+int(s.nsLen)] }

func (s *slot) value(a []byte) []byte {
	return a[s.voff : s.voff+int(s.vLen) : s.voff+int(s.vLen)]
}

// find returns the index of ns's slot and whether it is used; when not, the
// index is the free slot where ns belongs.
func (t *values) find(ns []byte, h uint64) (int, bool) {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.hash == 0 {
			return int(i), false
		}
		if s.hash == h && bytes.Equal(s.ns(t.arena), ns) {
			return int(i), true
		}
	}
}

// get returns the value of ns (a slice of the arena, capacity capped).
func (t *values) get(ns []byte) ([]byte, bool) {
	if t.n == 0 {
		return nil, false
	}
	i, ok := t.find(ns, t.hash(ns))
	if !ok {
		return nil, false
	}
	return t.slots[i].value(t.arena), true
}

// set stores a copy of v under ns.
func (t *values) set(ns, v []byte) {
	if 5*(t.n+1) > 4*len(t.slots) {
		t.grow()
	}
	h := t.hash(ns)
	i, ok := t.find(ns, h)
	s := &t.slots[i]
	t.reserve(len(ns) + len(v))
	if ok {
		t.log.changed(s)
		t.garbage += int(s.vLen)
		s.voff, s.vLen = len(t.arena), uint32(len(v))
		t.arena = append(t.arena, v...)
	} else {
		t.n++
		*s = slot{hash: h, off: len(t.arena), voff: len(t.arena) + len(ns), nsLen: uint32(len(ns)), vLen: uint32(len(v))}
		t.arena = append(append(t.arena, ns...), v...)
		t.log.added(s)
	}
	t.maybeCompact()
}

// del removes ns (backward-shift deletion: the entries after it in its
// probe run move up, so that no tombstones are needed).
func (t *values) del(ns []byte) {
	if t.n == 0 {
		return
	}
	i, ok := t.find(ns, t.hash(ns))
	if !ok {
		return
	}
	t.log.del(&t.slots[i])
	t.removeAt(i)
	t.maybeCompact()
}

// removeAt empties used slot i (backward-shift deletion).
func (t *values) removeAt(i int) {
	t.garbage += int(t.slots[i].nsLen) + int(t.slots[i].vLen)
	t.n--
	mask := len(t.slots) - 1
	for {
		t.slots[i] = slot{}
		j := i
		for {
			j = (j + 1) & mask
			if t.slots[j].hash == 0 {
				return
			}
			// The entry at j stays unless its home slot k lies
			// cyclically outside (i, j].
			k := int(t.slots[j].hash) & mask
			if (i < j && i < k && k <= j) || (i > j && (i < k || k <= j)) {
				continue
			}
			t.slots[i] = t.slots[j]
			i = j
			break
		}
	}
}

// grow doubles the slots (to 256 at first) and re-places every entry.
func (t *values) grow() {
	old := t.slots
	t.slots = make([]slot, max(2*len(old), 256))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.hash == 0 {
			continue
		}
		i := s.hash & mask
		for t.slots[i].hash != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
}

// maybeCompact copies the live entries into a new arena once garbage is
// more than a third of it (and worth the copy). The arena is what a
// snapshot stores and a restore reads, garbage included: at a half, a
// restore read up to twice the live state; a third bounds it at 1.5 times,
// for a compaction (and a full snapshot after it) every time the garbage
// reaches half the live bytes.
//
// Worth the copy: 64 KiB of garbage or more; in an arena smaller than
// inlineTail, 4 KiB or more (and a byte per slot, as the copy visits every
// slot). Such an arena has no files (a snapshot's handle carries it
// whole), so the copy is small and rewrites no file, while its garbage
// went into every checkpoint: a job whose state is a few operator values
// rewritten at each checkpoint carried up to 64 KiB of their old versions
// in each of them.
func (t *values) maybeCompact() {
	if 3*t.garbage < len(t.arena) {
		if c := cap(t.arena); c >= prefaultFrom && c <= prefaultTo && 4*t.garbage >= len(t.arena) {
			// A compaction is near: its buffer too is prepared ahead
			// (reserve).
			t.prepare(len(t.arena))
		}
		return
	}
	small := len(t.arena) < inlineTail && t.garbage >= max(1<<12, len(t.slots))
	if t.garbage < 1<<16 && !small {
		return
	}
	na := t.buffer(len(t.arena) - t.garbage + t.garbage/4)
	for i := range t.slots {
		s := &t.slots[i]
		if s.hash == 0 {
			continue
		}
		off := len(na)
		na = append(na, s.ns(t.arena)...)
		voff := len(na)
		na = append(na, s.value(t.arena)...)
		s.off, s.voff = off, voff
	}
	t.arena, t.garbage = na, 0
	t.gen++
	t.log.stop()
}

// prefaultFrom and prefaultTo bound the arena capacities whose next
// buffer is prepared ahead (reserve): below, growing costs little; above,
// holding a spare of one and a half times the arena, and touching it on a
// core a restore or the pipeline needs, costs more than the rare growth
// (large state belongs in the pebble backend). Variables so that tests
// can prepare small ones.
var prefaultFrom, prefaultTo = 1 << 20, 64 << 20

// reserve makes room for n more arena bytes. Growing the arena copies it
// into a new buffer, and the kernel supplies a new buffer's pages on
// first touch: on the benchmark machine, a virtual machine, at 12 µs a
// page (4 KiB), so that copying a 12 MB arena into fresh memory took 45 to
// 150 ms, inside the synchronous part of a checkpoint (a keyed
// aggregation writes its changed groups at the barrier) where a warm copy
// takes 3 ms. So once the arena is three quarters full its next buffer is
// allocated and touched on another goroutine (prepare), as a JVM's
// AlwaysPreTouch touches its heap before it is needed, and growing takes
// that buffer when it is ready (and grows as append does when it is not).
func (t *values) reserve(n int) {
	need := len(t.arena) + n
	if need <= cap(t.arena) {
		if c := cap(t.arena); c >= prefaultFrom && c <= prefaultTo && 4*need > 3*c {
			t.prepare(cap(t.arena) + cap(t.arena)/2)
		}
		return
	}
	if p := t.spare.Swap(nil); p != nil && cap(*p) >= need {
		t.arena = append((*p)[:0], t.arena...)
	}
}

// buffer returns an empty buffer of capacity at least n for a new arena:
// the prepared one when it is large enough.
func (t *values) buffer(n int) []byte {
	if p := t.spare.Swap(nil); p != nil && cap(*p) >= n {
		return (*p)[:0]
	}
	return make([]byte, 0, n)
}

// prepare allocates a buffer of size bytes and touches each of its pages
// on a goroutine of its own, then leaves it in spare (replacing a smaller
// one), unless a buffer is being prepared or one at least that large is
// ready.
func (t *values) prepare(size int) {
	if p := t.spare.Load(); p != nil && cap(*p) >= size {
		return
	}
	if !t.preparing.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer t.preparing.Store(false)
		b := make([]byte, size)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 0
		}
		b = b[:0]
		t.spare.Store(&b)
	}()
}

// restore makes the table hold entries, whose namespaces and values lie in
// arena (which it takes), garbage bytes of arena being no entry's. The
// namespaces are hashed on every core, then placed in a table sized for
// them (no growth on the way). A namespace that appears twice gives an
// error wrapping base.ErrCorruption.
func (t *values) restore(arena []byte, entries []slot, garbage int) error {
	const chunk = 1 << 14
	_ = parallel((len(entries)+chunk-1)/chunk, func(c int) error {
		for i := c * chunk; i < min(len(entries), (c+1)*chunk); i++ {
			entries[i].hash = t.hash(entries[i].ns(arena))
		}
		return nil
	})
	return t.restoreHashed(arena, entries, garbage)
}

// restoreHashed is restore of entries whose hash is set.
func (t *values) restoreHashed(arena []byte, entries []slot, garbage int) error {
	size := 256
	for 5*(len(entries)+1) > 4*size {
		size *= 2
	}
	t.slots, t.arena, t.n, t.garbage = make([]slot, size), arena, 0, garbage
	for _, e := range entries {
		i, ok := t.find(e.ns(arena), e.hash)
		if ok {
			return fmt.Errorf("heap state handle: namespace %x stored twice: %w", e.ns(arena), base.ErrCorruption)
		}
		t.slots[i] = e
		t.n++
	}
	return nil
}

// frozen is a view of the entries at one instant: a copy of the used slots
// and the arena as it was (arena-append-only keeps it unchanged).
type frozen struct {
	slots []slot
	arena []byte
}

func (t *values) freeze() frozen {
	f := frozen{slots: make([]slot, 0, t.n), arena: t.arena}
	for _, s := range t.slots {
		if s.hash != 0 {
			f.slots = append(f.slots, s)
		}
	}
	return f
}
