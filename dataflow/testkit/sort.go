package testkit

import (
	"cmp"
	"math/bits"
	"slices"
)

// sumRow is one output row of KeyedSum.
type sumRow struct{ key, sum, cnt int64 }

// sortRows sorts rows by key in ascending order (keys are distinct), using
// *buf as scratch space. It is an LSD radix sort over the bits in which
// the keys differ (their range max-min), in digits of 11 bits: two passes
// for the 100,000 keys of the benchmarks, where a comparison sort of an
// epoch's changed keys was a tenth of KeyedSum's time. Short slices go to
// slices.SortFunc.
func sortRows(rows []sumRow, buf *[]sumRow) {
	if len(rows) < 256 {
		slices.SortFunc(rows, func(a, b sumRow) int { return cmp.Compare(a.key, b.key) })
		return
	}
	lo, hi := rows[0].key, rows[0].key
	for i := range rows {
		lo, hi = min(lo, rows[i].key), max(hi, rows[i].key)
	}
	span := uint64(hi) - uint64(lo) // wraps correctly for any int64 pair
	width := bits.Len64(span)
	if width == 0 {
		return
	}
	const digit = 11
	if cap(*buf) < len(rows) {
		*buf = make([]sumRow, len(rows))
	}
	src, dst := rows, (*buf)[:len(rows)]
	var count [1 << digit]int
	for shift := 0; shift < width; shift += digit {
		clear(count[:])
		for i := range src {
			count[(uint64(src[i].key)-uint64(lo))>>shift&(1<<digit-1)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for i := range src {
			d := (uint64(src[i].key) - uint64(lo)) >> shift & (1<<digit - 1)
			dst[count[d]] = src[i]
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &rows[0] {
		copy(rows, src)
	}
}
