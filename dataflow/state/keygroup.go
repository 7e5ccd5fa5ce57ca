package state

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

// KeyGroup is a key's partition for rescaling: 0..maxParallelism-1.
type KeyGroup uint16

// OperatorGroup is the reserved key group of operator (non-keyed) state.
const OperatorGroup KeyGroup = 0xFFFF

// MaxParallelismLimit is the largest maximum parallelism: key groups are 16
// bits and OperatorGroup is reserved.
const MaxParallelismLimit = 1 << 15

// KeyGroupHash is the version of the key-group hash (Hash64) of this build.
// Key groups are persisted in checkpoints (they prefix every keyed-state
// entry and decide which subtask restores it), so a checkpoint records the
// version it was written with and a job refuses to restore a checkpoint of
// another version instead of routing its keys to the wrong groups
// (invariant key-group-hash-fixed).
//
//   - 1: FNV-1a over the key's bytes, then murmur3's 64-bit finalizer.
//     Checkpoints from before the version was recorded have it.
//   - 2: the key's bytes as little-endian 64-bit words, each folded in
//     with one multiplication, then the same finalizer (Hash64). A
//     BIGINT key (9 bytes) costs two multiplications instead of nine
//     before the finalizer.
const KeyGroupHash = 2

// wordPrime is the multiplier of Hash64's word step: 2^64 divided by the
// golden ratio, made odd (Knuth's multiplicative hashing constant), so that
// the step is a bijection of the running hash for a given word.
const wordPrime = 0x9e3779b97f4a7c15

// Hash64 hashes b for key groups (version KeyGroupHash, 2): starting from
// len(b), each 8-byte little-endian word of b, the last one padded with
// zeros, is folded in by h = rotl32((h ^ w) * wordPrime), and murmur3's
// 64-bit finalizer (fmix64) spreads the result over all bits, so that keys
// that differ in a few bits land in unrelated groups. The length seeds the
// hash so that zero padding cannot make two keys equal. Two keys that
// differ only in one word never collide: every step is a bijection of the
// running hash. It is fixed for a given KeyGroupHash version: key groups
// are persisted in checkpoints.
func Hash64(b []byte) uint64 {
	h := uint64(len(b))
	for ; len(b) >= 8; b = b[8:] {
		h = mixWord(h, binary.LittleEndian.Uint64(b))
	}
	if len(b) > 0 {
		var w uint64
		for i, c := range b {
			w |= uint64(c) << (8 * i)
		}
		h = mixWord(h, w)
	}
	return fmix64(h)
}

// mixWord folds the word w into the running hash h (Hash64's step).
func mixWord(h, w uint64) uint64 {
	return bits.RotateLeft64((h^w)*wordPrime, 32)
}

// KeyGroupOf returns the key group of an encoded key (types.EncodeKey) for
// a job with maxParallelism key groups.
func KeyGroupOf(key []byte, maxParallelism int) KeyGroup {
	return GroupOfHash(Hash64(key), maxParallelism)
}

// SubtaskOf returns the subtask (0..parallelism-1) that owns key group g:
// g*parallelism/maxParallelism, Flink's computeOperatorIndexForKeyGroup.
func SubtaskOf(g KeyGroup, maxParallelism, parallelism int) int {
	return int(g) * parallelism / maxParallelism
}

// Range is the key groups First..Last, both included, that one subtask
// owns.
type Range struct{ First, Last KeyGroup }

// Contains reports whether g is in r.
func (r Range) Contains(g KeyGroup) bool { return g >= r.First && g <= r.Last }

// RangeOf returns the key groups of subtask i of parallelism, the inverse
// of SubtaskOf (Flink's computeKeyGroupRangeForOperatorIndex). It panics
// unless 0 <= i < parallelism <= maxParallelism <= MaxParallelismLimit.
func RangeOf(i, parallelism, maxParallelism int) Range {
	if i < 0 || i >= parallelism || parallelism > maxParallelism || maxParallelism > MaxParallelismLimit {
		panic(fmt.Sprintf("state: subtask %d of %d with max parallelism %d", i, parallelism, maxParallelism))
	}
	first := (i*maxParallelism + parallelism - 1) / parallelism
	last := ((i+1)*maxParallelism - 1) / parallelism
	return Range{First: KeyGroup(first), Last: KeyGroup(last)}
}
