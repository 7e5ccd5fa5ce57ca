package state

import (
	"math/bits"
	"slices"

	"github.com/stratadb/strata/internal/types"
)

// FNV-1a parameters of Hash64.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fmix64 is murmur3's 64-bit finalizer, the last step of Hash64.
func fmix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// GroupOfHash returns the key group of a key whose Hash64 is h:
// KeyGroupOf(key, maxParallelism) == GroupOfHash(Hash64(key),
// maxParallelism).
func GroupOfHash(h uint64, maxParallelism int) KeyGroup {
	m := uint64(maxParallelism)
	if m&(m-1) == 0 {
		return KeyGroup(h & (m - 1)) // the same as h % m, without a division
	}
	return KeyGroup(h % m)
}

// HashKeys sets dst[r] to Hash64(types.EncodeKey(row r of c, cols, ts)) for
// every row r of c and returns dst (grown to c.Len() rows; pass the
// previous result to reuse it). ts[i] is the key type of column cols[i],
// as for EncodeKey.
//
// It works column by column instead of encoding each row's key: FNV-1a
// folds bytes one at a time, so the hash of a composite key is the running
// hash carried from one column's bytes to the next, and a column of a
// fixed-width integer type (BIGINT, INTEGER, SMALLINT, DATE, TIME,
// TIMESTAMP, TIMESTAMPTZ, read from Vector.Ints) folds its key bytes
// (keyenc.md: a marker byte, then the value big-endian with the sign bit
// flipped) straight from the integer, in a loop whose rows do not depend on
// each other. Other types go through types.AppendKey per row. The result
// is the same as Hash64 of the encoded key for every type (the
// equivalence is tested on random chunks), so key groups, which
// checkpoints persist, do not depend on which path computed them.
//
// The exchange routes rows with it; a row-at-a-time AppendKey and Hash64
// per row was a fifth of the keyed pipeline's CPU time.
func HashKeys(c *types.Chunk, cols []int, ts []types.Type, dst []uint64) []uint64 {
	n := c.Len()
	dst = slices.Grow(dst[:0], n)[:n]
	for r := range dst {
		dst[r] = fnvOffset
	}
	var buf []byte
	for k, col := range cols {
		v, t := &c.Cols[col], ts[k]
		if w := fixedKeyWidth(t.Kind); w > 0 && v.Type.Kind == t.Kind && len(v.Ints) == n {
			if w == 8 {
				hashInt64Keys(dst, v.Nulls[:n], v.Ints[:n])
			} else {
				hashIntKeys(dst, v.Nulls[:n], v.Ints[:n], w)
			}
			continue
		}
		for r := range dst {
			buf = types.AppendKey(buf[:0], v.Get(r), t)
			h := dst[r]
			for _, b := range buf {
				h ^= uint64(b)
				h *= fnvPrime
			}
			dst[r] = h
		}
	}
	for r, h := range dst {
		dst[r] = fmix64(h)
	}
	return dst
}

// fixedKeyWidth returns the width in bytes of the key encoding's payload of
// an integer-backed kind whose key is its Ints value, big-endian, with the
// sign bit flipped (keyenc.md), or 0 for any other kind.
func fixedKeyWidth(k types.Kind) int {
	switch k {
	case types.KindInt16:
		return 2
	case types.KindInt32, types.KindDate:
		return 4
	case types.KindInt64, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		return 8
	}
	return 0
}

// Key-encoding column markers (keyenc.md).
const (
	keyNullMarker    = 0x00
	keyNotNullMarker = 0x01
)

// hashInt64Keys folds the 9-byte keys of an 8-byte integer column into the
// running hashes h.
func hashInt64Keys(h []uint64, nulls []bool, ints []int64) {
	nulls, ints = nulls[:len(h)], ints[:len(h)]
	for r := range h {
		x := h[r]
		if nulls[r] {
			h[r] = (x ^ keyNullMarker) * fnvPrime
			continue
		}
		// The big-endian bytes, most significant first, taken from the
		// low end of the byte-reversed value (fewer instructions than a
		// shift and mask per byte).
		v := bits.ReverseBytes64(uint64(ints[r]) ^ (1 << 63))
		x = (x ^ keyNotNullMarker) * fnvPrime
		x = (x ^ (v & 0xff)) * fnvPrime
		v >>= 8
		x = (x ^ (v & 0xff)) * fnvPrime
		v >>= 8
		x = (x ^ (v & 0xff)) * fnvPrime
		v >>= 8
		x = (x ^ (v & 0xff)) * fnvPrime
		v >>= 8
		x = (x ^ (v & 0xff)) * fnvPrime
		v >>= 8
		x = (x ^ (v & 0xff)) * fnvPrime
		v >>= 8
		x = (x ^ (v & 0xff)) * fnvPrime
		v >>= 8
		x = (x ^ v) * fnvPrime
		h[r] = x
	}
}

// hashIntKeys folds the (1+w)-byte keys of a w-byte integer column into the
// running hashes h.
func hashIntKeys(h []uint64, nulls []bool, ints []int64, w int) {
	nulls, ints = nulls[:len(h)], ints[:len(h)]
	flip := uint64(1) << (8*w - 1)
	for r := range h {
		x := h[r]
		if nulls[r] {
			h[r] = (x ^ keyNullMarker) * fnvPrime
			continue
		}
		u := uint64(ints[r]) ^ flip
		x = (x ^ keyNotNullMarker) * fnvPrime
		for s := 8 * (w - 1); s >= 0; s -= 8 {
			x = (x ^ (u >> s & 0xff)) * fnvPrime
		}
		h[r] = x
	}
}
