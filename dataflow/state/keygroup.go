package state

import "fmt"

// KeyGroup is a key's partition for rescaling: 0..maxParallelism-1.
type KeyGroup uint16

// OperatorGroup is the reserved key group of operator (non-keyed) state.
const OperatorGroup KeyGroup = 0xFFFF

// MaxParallelismLimit is the largest maximum parallelism: key groups are 16
// bits and OperatorGroup is reserved.
const MaxParallelismLimit = 1 << 15

// Hash64 hashes b with FNV-1a followed by the murmur3 finalizer, so that
// keys that differ in a few low bits spread over all groups. It is fixed
// forever: key groups are persisted in checkpoints.
func Hash64(b []byte) uint64 {
	h := uint64(fnvOffset)
	for _, c := range b {
		h ^= uint64(c)
		h *= fnvPrime
	}
	return fmix64(h)
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
