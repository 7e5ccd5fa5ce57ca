package state

import (
	"encoding/binary"
	"math/bits"
	"slices"

	"github.com/stratadb/strata/internal/types"
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
// A key of one fixed-width integer column (BIGINT, INTEGER, SMALLINT,
// DATE, TIME, TIMESTAMP, TIMESTAMPTZ, read from Vector.Ints) is hashed
// straight from the integers, in a loop whose rows do not depend on each
// other: its encoded key (keyenc.md: a marker byte, then the value
// big-endian with the sign bit flipped) is at most 9 bytes, so Hash64
// sees at most two words, which are the byte-reversed value shifted past
// the marker and, for BIGINT, its last byte. Other keys are encoded per
// row into one buffer, the integer columns without going through a Datum,
// and hashed with Hash64. The result is the same as Hash64 of the encoded
// key for every type (the equivalence is tested on random chunks), so key
// groups, which checkpoints persist, do not depend on which path computed
// them.
//
// The exchange routes rows with it; a row-at-a-time AppendKey and Hash64
// per row was a fifth of the keyed pipeline's CPU time, and the byte-wise
// FNV-1a of key-group hash version 1 still six nanoseconds a row.
func HashKeys(c *types.Chunk, cols []int, ts []types.Type, dst []uint64) []uint64 {
	n := c.Len()
	dst = slices.Grow(dst[:0], n)[:n]
	if len(cols) == 1 {
		v, t := &c.Cols[cols[0]], ts[0]
		if w := fixedKeyWidth(t.Kind); w > 0 && v.Type.Kind == t.Kind && len(v.Ints) == n {
			switch w {
			case 8:
				hashInt64Keys(dst, v.Nulls[:n], v.Ints[:n])
			case 4:
				hashInt32Keys(dst, v.Nulls[:n], v.Ints[:n])
			default:
				hashInt16Keys(dst, v.Nulls[:n], v.Ints[:n])
			}
			return dst
		}
	}
	var buf []byte
	for r := range dst {
		buf = buf[:0]
		for k, col := range cols {
			v, t := &c.Cols[col], ts[k]
			if w := fixedKeyWidth(t.Kind); w > 0 && v.Type.Kind == t.Kind && len(v.Ints) == n {
				buf = appendIntKey(buf, v.Nulls[r], v.Ints[r], w)
				continue
			}
			buf = types.AppendKey(buf, v.Get(r), t)
		}
		dst[r] = Hash64(buf)
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

// appendIntKey appends the key encoding of a w-byte integer column's value
// (NULL when null), as types.AppendKey does.
func appendIntKey(b []byte, null bool, x int64, w int) []byte {
	if null {
		return append(b, keyNullMarker)
	}
	b = append(b, keyNotNullMarker)
	switch w {
	case 8:
		return binary.BigEndian.AppendUint64(b, uint64(x)^(1<<63))
	case 4:
		return binary.BigEndian.AppendUint32(b, uint32(x)^(1<<31))
	}
	return binary.BigEndian.AppendUint16(b, uint16(x)^(1<<15))
}

// nullKeyHash is Hash64 of a NULL's key, the one byte keyNullMarker.
var nullKeyHash = Hash64([]byte{keyNullMarker})

// hashInt64Keys sets h[r] to Hash64 of the 9-byte key of ints[r]
// (HashInt64Key), or of a NULL's key: every value hashed eight at a time
// where the processor can (hashInt64s), then the NULL rows' hashes
// replaced.
func hashInt64Keys(h []uint64, nulls []bool, ints []int64) {
	nulls, ints = nulls[:len(h)], ints[:len(h)]
	hashInt64s(h, ints)
	for r, null := range nulls {
		if null {
			h[r] = nullKeyHash
		}
	}
}

// HashInt64Keys sets dst[r] to HashInt64Key(ints[r]) for every r and
// returns dst (grown to len(ints); pass the previous result to reuse it):
// the hashes HashKeys gives a key column of one 8-byte integer column
// without NULLs (Int64Keys). The exchange routes such a chunk with it.
//
// On a processor with AVX-512 (F, DQ and BW) it hashes eight keys per
// step in vector registers (hashvec_amd64.s), the same steps as
// HashInt64Key lane by lane; elsewhere, and for the last len(ints) % 8
// keys, one at a time. The scalar loop took about 4 ns a key on the 2-core
// development machine, a tenth of the keyed pipeline's CPU time: four
// dependent 64-bit multiplications and a dozen other operations a key.
// Both paths are tested against Hash64 of the encoded key.
func HashInt64Keys(dst []uint64, ints []int64) []uint64 {
	dst = slices.Grow(dst[:0], len(ints))[:len(ints)]
	hashInt64s(dst, ints)
	return dst
}

// hashInt64s sets h[r] to HashInt64Key(ints[r]) for every r < len(h).
func hashInt64s(h []uint64, ints []int64) {
	ints = ints[:len(h)]
	for r := hashInt64sVector(h, ints); r < len(h); r++ {
		h[r] = HashInt64Key(ints[r])
	}
}

// HashInt64Key returns Hash64 of the key encoding of the non-NULL value x
// of an 8-byte integer key column (BIGINT, TIME, TIMESTAMP, TIMESTAMPTZ):
// the hash HashKeys gives its row. The 9-byte key makes two words: the
// first is the marker and the value's seven high bytes, big-endian, which
// is the byte-reversed value shifted up past the marker; the second is the
// value's low byte. It is small enough to inline, so that a caller can
// hash and use the hash in one loop (the exchange routes rows so).
func HashInt64Key(x int64) uint64 {
	v := bits.ReverseBytes64(uint64(x) ^ (1 << 63))
	return fmix64(mixWord(mixWord(9, keyNotNullMarker|v<<8), v>>56))
}

// Int64Keys returns the values of c's key column when the key (cols, ts,
// as for HashKeys) is one 8-byte integer column read from Vector.Ints,
// whose non-NULL rows HashInt64Key hashes, and false otherwise. The caller
// checks the column's NULLs.
func Int64Keys(c *types.Chunk, cols []int, ts []types.Type) ([]int64, bool) {
	if len(cols) != 1 || fixedKeyWidth(ts[0].Kind) != 8 {
		return nil, false
	}
	v, n := &c.Cols[cols[0]], c.Len()
	if v.Type.Kind != ts[0].Kind || len(v.Ints) != n {
		return nil, false
	}
	return v.Ints[:n], true
}

// hashInt32Keys sets h[r] to Hash64 of the 5-byte key of ints[r] (INTEGER,
// DATE): one word, the marker then the value big-endian.
func hashInt32Keys(h []uint64, nulls []bool, ints []int64) {
	nulls, ints = nulls[:len(h)], ints[:len(h)]
	for r := range h {
		if nulls[r] {
			h[r] = nullKeyHash
			continue
		}
		v := uint64(bits.ReverseBytes32(uint32(ints[r]) ^ (1 << 31)))
		h[r] = fmix64(mixWord(5, keyNotNullMarker|v<<8))
	}
}

// hashInt16Keys sets h[r] to Hash64 of the 3-byte key of ints[r]
// (SMALLINT).
func hashInt16Keys(h []uint64, nulls []bool, ints []int64) {
	nulls, ints = nulls[:len(h)], ints[:len(h)]
	for r := range h {
		if nulls[r] {
			h[r] = nullKeyHash
			continue
		}
		v := uint64(bits.ReverseBytes16(uint16(ints[r]) ^ (1 << 15)))
		h[r] = fmix64(mixWord(3, keyNotNullMarker|v<<8))
	}
}
