package mergetree

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/stratadb/strata/internal/base"
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

func newSortEntry(k []byte, seq base.SeqNum, idx int) sortEntry {
	e := sortEntry{seq: seq, n: uint32(len(k)), idx: uint32(idx)}
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
func compareEntries(blk *record.Block, a, b *sortEntry) int {
	if a.hi != b.hi {
		return cmp.Compare(a.hi, b.hi)
	}
	if a.lo != b.lo {
		return cmp.Compare(a.lo, b.lo)
	}
	if a.n > 16 && b.n > 16 {
		if c := bytes.Compare(blk.Key(int(a.idx))[16:], blk.Key(int(b.idx))[16:]); c != 0 {
			return c
		}
	} else if a.n != b.n {
		return cmp.Compare(a.n, b.n)
	}
	return cmp.Compare(a.seq, b.seq)
}

// less orders entries as compareEntries does, deciding on the prefix words
// inline and calling compareEntries only when they are equal.
func (a *sortEntry) less(blk *record.Block, b *sortEntry) bool {
	if a.hi != b.hi {
		return a.hi < b.hi
	}
	if a.lo != b.lo {
		return a.lo < b.lo
	}
	return compareEntries(blk, a, b) < 0
}

// sortEntries sorts e by compareEntries: a quicksort (median-of-three
// pivot, insertion sort for short ranges) whose comparison is inlined; a
// generic sort calls its comparison through a function value at every
// step. After depth levels of partitioning it hands the range to
// slices.SortFunc, which bounds the worst case. Entries are all distinct
// (sequence numbers are unique).
func sortEntries(blk *record.Block, e []sortEntry, depth int) {
	for len(e) > 16 {
		if depth == 0 {
			slices.SortFunc(e, func(a, b sortEntry) int { return compareEntries(blk, &a, &b) })
			return
		}
		depth--
		p := partitionEntries(blk, e)
		// Recurse into the shorter side, loop on the longer.
		if p < len(e)-p {
			sortEntries(blk, e[:p], depth)
			e = e[p+1:]
		} else {
			sortEntries(blk, e[p+1:], depth)
			e = e[:p]
		}
	}
	for i := 1; i < len(e); i++ {
		for j := i; j > 0 && e[j].less(blk, &e[j-1]); j-- {
			e[j], e[j-1] = e[j-1], e[j]
		}
	}
}

// partitionEntries moves the median of e's first, middle and last entries
// to its sorted place p, smaller entries before it and larger after, and
// returns p.
func partitionEntries(blk *record.Block, e []sortEntry) int {
	n := len(e)
	m := n / 2
	if e[m].less(blk, &e[0]) {
		e[m], e[0] = e[0], e[m]
	}
	if e[n-1].less(blk, &e[0]) {
		e[n-1], e[0] = e[0], e[n-1]
	}
	if e[n-1].less(blk, &e[m]) {
		e[n-1], e[m] = e[m], e[n-1]
	}
	e[0], e[m] = e[m], e[0]
	pivot := e[0]
	i, j := 1, n-1
	for {
		for i <= j && e[i].less(blk, &pivot) {
			i++
		}
		for i <= j && pivot.less(blk, &e[j]) {
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

// radixMin is the buffer length from which sortBuffer sorts by radix.
const radixMin = 1024

// sortBuffer sorts e by compareEntries. Long buffers go through a stable
// least-significant-digit radix sort on the first 8 key bytes (hi), one
// pass per byte position where the entries' bytes differ (keys drawn from
// a narrow range, as BIGINT keys usually are, differ in only a few), and
// then each run of equal hi words is finished by comparison: insertion
// sort for short runs, sortEntries for long ones (many records of one
// key). Short buffers go to sortEntries directly. A quicksort costs some
// 2 log2(n) comparisons per entry with a hard-to-predict branch each; the
// radix passes cost a few sequential moves per entry.
func sortBuffer(blk *record.Block, e []sortEntry) {
	if len(e) < radixMin {
		sortEntries(blk, e, 2*bits.Len(uint(len(e))))
		return
	}
	var counts [8][256]int
	for i := range e {
		h := e[i].hi
		for d := range 8 {
			counts[d][byte(h>>(8*d))]++
		}
	}
	tmp := make([]sortEntry, len(e))
	src, dst := e, tmp
	for d := range 8 {
		c := &counts[d]
		if c[byte(src[0].hi>>(8*d))] == len(src) {
			continue // every entry has the same byte here
		}
		var pos [256]int
		sum := 0
		for b := range 256 {
			pos[b] = sum
			sum += c[b]
		}
		shift := 8 * d
		for i := range src {
			b := byte(src[i].hi >> shift)
			dst[pos[b]] = src[i]
			pos[b]++
		}
		src, dst = dst, src
	}
	if &src[0] != &e[0] {
		copy(e, src)
	}
	for i := 0; i < len(e); {
		j := i + 1
		for j < len(e) && e[j].hi == e[i].hi {
			j++
		}
		if run := e[i:j]; len(run) > 16 {
			sortEntries(blk, run, 2*bits.Len(uint(len(run))))
		} else {
			for a := 1; a < len(run); a++ {
				for b := a; b > 0 && run[b].less(blk, &run[b-1]); b-- {
					run[b], run[b-1] = run[b-1], run[b]
				}
			}
		}
		i = j
	}
}
