package record

import (
	"bytes"
	"encoding/binary"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// KV is one record.
type KV struct {
	// Key is the memcomparable encoding of the row's primary key
	// (types.EncodeKey); nil in append tables.
	Key []byte
	// Seq is the record's sequence number within its bucket ([seq-order]).
	Seq base.SeqNum
	// Kind is the row kind; retract kinds (-U, -D) are kept in files until
	// compaction reaches the oldest data of the bucket.
	Kind types.RowKind
	// Row holds every column of the table, in schema order.
	Row types.Row
}

// Less orders records by key, then by sequence number ([sorted-run]).
func Less(a, b *KV) bool {
	if c := bytes.Compare(a.Key, b.Key); c != 0 {
		return c < 0
	}
	return a.Seq < b.Seq
}

// Bucket returns the bucket of memcomparable key among n buckets: FNV-1a
// (32 bit) of the key modulo n. Every record of a key lands in one bucket;
// writers and point lookups must agree on this function, and changing it
// changes the table format.
func Bucket(key []byte, n int) int32 {
	h := uint32(2166136261)
	for _, c := range key {
		h ^= uint32(c)
		h *= 16777619
	}
	return int32(h % uint32(n))
}

// CompareKeys orders memcomparable keys as bytes.Compare does, deciding
// on the first 8 bytes as one big-endian word when both keys have them
// (a BIGINT key's 9 bytes mostly differ there), which spares merges a
// call into the general comparison for every pair of records.
func CompareKeys(a, b []byte) int {
	if len(a) >= 8 && len(b) >= 8 {
		x, y := binary.BigEndian.Uint64(a), binary.BigEndian.Uint64(b)
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
		return bytes.Compare(a[8:], b[8:])
	}
	return bytes.Compare(a, b)
}
