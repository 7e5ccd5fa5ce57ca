package testkit

import "math/bits"

// accSlot is one slot of an accTable: a BIGINT key and its running sum and
// count. An empty slot is all zeros (slots are never emptied once used), so
// a slot whose key equals a key other than 0 holds that key: the counting
// loop's home-slot shortcut (KeyedSum.countHits) relies on it.
type accSlot struct {
	key      int64
	sum, cnt int64
	flags    uint8
}

// Slot flags.
const (
	// slotUsed marks a slot that holds a key.
	slotUsed uint8 = 1 << iota
	// slotDirty marks an accumulator changed since the last snapshot.
	slotDirty
	// slotChanged marks an accumulator changed in the open epoch (its
	// key is in KeyedSum.changed).
	slotChanged
)

// accTable maps BIGINT keys to accumulators: open addressing with linear
// probing over a power-of-two array of slots, at most four fifths full
// (a fuller table is smaller, and its cache misses, not its probe lengths,
// are what a row costs), indexed by
// Fibonacci hashing of the key (Knuth's multiplicative hash, which spreads
// arithmetic progressions of keys). The zero value is an empty table.
// Slots hold no pointers, so the garbage collector never scans them.
// Entries are never removed.
type accTable struct {
	slots []accSlot
	// shift is 64 - log2(len(slots)).
	shift uint
	n     int
}

const fibonacci = 0x9e3779b97f4a7c15

// find returns k's slot, or nil when k is absent. The pointer is valid
// until the next insert.
func (t *accTable) find(k int64) *accSlot {
	if t.n == 0 {
		return nil
	}
	mask := uint64(len(t.slots) - 1)
	for i := (uint64(k) * fibonacci) >> t.shift; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.flags&slotUsed == 0 {
			return nil
		}
		if s.key == k {
			return s
		}
	}
}

// insert adds k, which must be absent, with a zero accumulator and returns
// its slot, valid until the next insert.
func (t *accTable) insert(k int64) *accSlot {
	if 5*(t.n+1) > 4*len(t.slots) {
		t.grow()
	}
	t.n++
	return t.place(k)
}

// place puts k in its first free slot.
func (t *accTable) place(k int64) *accSlot {
	mask := uint64(len(t.slots) - 1)
	i := (uint64(k) * fibonacci) >> t.shift
	for t.slots[i].flags&slotUsed != 0 {
		i = (i + 1) & mask
	}
	s := &t.slots[i]
	*s = accSlot{key: k, flags: slotUsed}
	return s
}

// grow doubles the slots (to 1024 at first) and re-places every entry.
func (t *accTable) grow() {
	old := t.slots
	size := max(2*len(old), 1024)
	t.slots = make([]accSlot, size)
	t.shift = uint(64 - bits.TrailingZeros(uint(size)))
	for i := range old {
		if o := &old[i]; o.flags&slotUsed != 0 {
			s := t.place(o.key)
			*s = *o
		}
	}
}
