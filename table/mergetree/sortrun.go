package mergetree

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
)

// sortEntry stands for one record of a buffer being sorted: the first 16
// bytes of its key as two big-endian words (zero-padded), the key's
// length, its sequence number and its position in the buffer. Sorting
// these 32-byte entries instead of the records themselves moves less
// memory per swap and decides most comparisons on two integers, without
// following the key pointer.
type sortEntry struct {
	hi, lo uint64
	seq    base.SeqNum
	n      uint32 // key length
	idx    uint32 // position in the buffer
}

func newSortEntry(kv *record.KV, idx int) sortEntry {
	e := sortEntry{seq: kv.Seq, n: uint32(len(kv.Key)), idx: uint32(idx)}
	k := kv.Key
	if len(k) >= 16 {
		e.hi, e.lo = binary.BigEndian.Uint64(k), binary.BigEndian.Uint64(k[8:])
		return e
	}
	var pad [16]byte
	copy(pad[:], k)
	e.hi, e.lo = binary.BigEndian.Uint64(pad[:]), binary.BigEndian.Uint64(pad[8:])
	return e
}

// compareEntries orders entries as record.Less orders their records: by
// key, then by sequence number. Keys of at most 16 bytes whose padded
// prefixes are equal differ only in length, the shorter (a prefix of the
// other followed by zero bytes) sorting first, as bytes.Compare has it;
// longer keys with equal prefixes are compared in full.
func compareEntries(kvs []record.KV, a, b *sortEntry) int {
	if a.hi != b.hi {
		return cmp.Compare(a.hi, b.hi)
	}
	if a.lo != b.lo {
		return cmp.Compare(a.lo, b.lo)
	}
	if a.n > 16 && b.n > 16 {
		if c := bytes.Compare(kvs[a.idx].Key[16:], kvs[b.idx].Key[16:]); c != 0 {
			return c
		}
	} else if a.n != b.n {
		return cmp.Compare(a.n, b.n)
	}
	return cmp.Compare(a.seq, b.seq)
}

// less orders entries as compareEntries does, deciding on the prefix words
// inline and calling compareEntries only when they are equal.
func (a *sortEntry) less(kvs []record.KV, b *sortEntry) bool {
	if a.hi != b.hi {
		return a.hi < b.hi
	}
	if a.lo != b.lo {
		return a.lo < b.lo
	}
	return compareEntries(kvs, a, b) < 0
}

// sortEntries sorts e by compareEntries: a quicksort (median-of-three
// pivot, insertion sort for short ranges) whose comparison is inlined; a
// generic sort calls its comparison through a function value at every
// step. After depth levels of partitioning it hands the range to
// slices.SortFunc, which bounds the worst case. Entries are all distinct
// (sequence numbers are unique).
func sortEntries(kvs []record.KV, e []sortEntry, depth int) {
	for len(e) > 16 {
		if depth == 0 {
			slices.SortFunc(e, func(a, b sortEntry) int { return compareEntries(kvs, &a, &b) })
			return
		}
		depth--
		p := partitionEntries(kvs, e)
		// Recurse into the shorter side, loop on the longer.
		if p < len(e)-p {
			sortEntries(kvs, e[:p], depth)
			e = e[p+1:]
		} else {
			sortEntries(kvs, e[p+1:], depth)
			e = e[:p]
		}
	}
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && e[j].less(kvs, &e[j-1]); j-- {
			e[j], e[j-1] = e[j-1], e[j]
		}
	}
}

// partitionEntries moves the median of e's first, middle and last entries
// to its sorted place p, smaller entries before it and larger after, and
// returns p.
func partitionEntries(kvs []record.KV, e []sortEntry) int {
	n := len(e)
	m := n / 2
	if e[m].less(kvs, &e[0]) {
		e[m], e[0] = e[0], e[m]
	}
	if e[n-1].less(kvs, &e[0]) {
		e[n-1], e[0] = e[0], e[n-1]
	}
	if e[n-1].less(kvs, &e[m]) {
		e[n-1], e[m] = e[m], e[n-1]
	}
	e[0], e[m] = e[m], e[0]
	pivot := e[0]
	i, j := 1, n-1
	for {
		for i <= j && e[i].less(kvs, &pivot) {
			i++
		}
		for i <= j && pivot.less(kvs, &e[j]) {
			j--
		}
		if i >= j {
			break
		}
		e[i], e[j] = e[j], e[i]
		i++
		j--
	}
	e[0], e[j] = e[j], e[0]
	return j
}

// SortMerge sorts kvs (a write buffer in any order) by key and sequence
// number and merges each key's records with f, as SortKVs followed by
// MergeSorted would, without reordering kvs itself. The result's rows and
// keys are copies laid out one after another in key order, in one block of
// memory each: a write buffer's rows sit in arrival order, so after
// sorting they would be scattered, and every later pass over the run
// (encoding, the lookup changelog, compaction) would wait on a cache miss
// per row.
func SortMerge(kvs []record.KV, f Func, dropRetracts bool) []record.KV {
	if len(kvs) == 0 {
		return nil
	}
	entries := make([]sortEntry, len(kvs))
	for i := range kvs {
		entries[i] = newSortEntry(&kvs[i], i)
	}
	sortEntries(kvs, entries, 2*bits.Len(uint(len(entries))))
	_, dedupe := f.(*dedup)
	out := make([]record.KV, 0, len(kvs))
	for i := 0; i < len(entries); {
		j := i + 1
		for j < len(entries) && sameKey(kvs, &entries[i], &entries[j]) {
			j++
		}
		if dedupe {
			// Deduplicate's result is the newest record as it is.
			kv := kvs[entries[j-1].idx]
			if !(dropRetracts && kv.Kind.IsRetract()) {
				out = append(out, kv)
			}
			i = j
			continue
		}
		f.Reset()
		var maxSeq base.SeqNum
		for _, e := range entries[i:j] {
			f.Add(&kvs[e.idx])
			maxSeq = max(maxSeq, e.seq)
		}
		if kv, ok := f.Result(); ok && !(dropRetracts && kv.Kind.IsRetract()) {
			kv.Seq = maxSeq
			out = append(out, kv)
		}
		i = j
	}
	CompactRows(out)
	return out
}

func sameKey(kvs []record.KV, a, b *sortEntry) bool {
	if a.hi != b.hi || a.lo != b.lo || a.n != b.n {
		return false
	}
	return a.n <= 16 || bytes.Equal(kvs[a.idx].Key[16:], kvs[b.idx].Key[16:])
}

// CompactRows copies the rows and keys of kvs into one new block each,
// in order, and points the records at the copies (see SortMerge for why).
func CompactRows(kvs []record.KV) {
	n, nk := 0, 0
	for i := range kvs {
		n += len(kvs[i].Row)
		nk += len(kvs[i].Key)
	}
	slab := make([]types.Datum, n)
	keys := make([]byte, 0, nk)
	off := 0
	for i := range kvs {
		kv := &kvs[i]
		w := len(kv.Row)
		copy(slab[off:off+w], kv.Row)
		kv.Row = types.Row(slab[off : off+w : off+w])
		off += w
		if kv.Key != nil {
			k := len(keys)
			keys = append(keys, kv.Key...)
			kv.Key = keys[k:len(keys):len(keys)]
		}
	}
}
