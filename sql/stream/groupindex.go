package stream

// fixedIndex finds a GroupAgg's groups by their fixedKey: an
// open-addressing hash table with linear probing over the groups
// themselves (each holds its key and hash), deleted by backward shift
// (Knuth, TAOCP vol. 3, 6.4, Algorithm R), so no tombstones pile up as
// windows expire. It replaced a Go map keyed by fixedKey, whose generic
// hashing of the 40-byte key cost more than the rest of the lookup.
type fixedIndex struct {
	slots []*group // nil: empty; the length is zero or a power of two
	n     int
}

// hashFixed mixes a fixedKey into 64 bits (splitmix64's finalizer per
// word, chained).
func hashFixed(fk *fixedKey) uint64 {
	h := uint64(fk.nulls) + 0x9e3779b97f4a7c15
	for _, v := range fk.v {
		h ^= uint64(v)
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 31
	}
	h *= 0x94d049bb133111eb
	return h ^ h>>29
}

// get returns the group of key fk whose hash is h, or nil.
func (x *fixedIndex) get(fk *fixedKey, h uint64) *group {
	if x.n == 0 {
		return nil
	}
	mask := uint64(len(x.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := x.slots[i]
		if s == nil {
			return nil
		}
		if s.fh == h && s.fk == *fk {
			return s
		}
	}
}

// put adds gr, whose fk and fh are set and which the index does not
// hold.
func (x *fixedIndex) put(gr *group) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow()
	}
	mask := uint64(len(x.slots) - 1)
	i := gr.fh & mask
	for x.slots[i] != nil {
		i = (i + 1) & mask
	}
	x.slots[i] = gr
	x.n++
}

func (x *fixedIndex) grow() {
	old := x.slots
	x.slots = make([]*group, max(16, 2*len(old)))
	mask := uint64(len(x.slots) - 1)
	for _, s := range old {
		if s == nil {
			continue
		}
		i := s.fh & mask
		for x.slots[i] != nil {
			i = (i + 1) & mask
		}
		x.slots[i] = s
	}
}

// remove removes gr if the index holds it.
func (x *fixedIndex) remove(gr *group) {
	if x.n == 0 {
		return
	}
	mask := uint64(len(x.slots) - 1)
	i := gr.fh & mask
	for x.slots[i] != gr {
		if x.slots[i] == nil {
			return
		}
		i = (i + 1) & mask
	}
	// Backward shift: move up each later entry of the run whose home
	// slot is not cyclically in (i, j].
	for j := (i + 1) & mask; x.slots[j] != nil; j = (j + 1) & mask {
		home := x.slots[j].fh & mask
		if i <= j && (home <= i || home > j) || i > j && home <= i && home > j {
			x.slots[i] = x.slots[j]
			i = j
		}
	}
	x.slots[i] = nil
	x.n--
}

// len returns the number of groups the index holds.
func (x *fixedIndex) len() int { return x.n }
