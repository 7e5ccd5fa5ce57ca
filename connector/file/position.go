package file

import "fmt"

// Position packing (see doc.go, Positions): the file's ordinal in the
// high OrdinalBits bits, the byte offset in the low OffsetBits.
const (
	OffsetBits  = 40
	OrdinalBits = 64 - OffsetBits
	// MaxOffset is one past the largest byte offset a position holds (a
	// file up to 1 TiB).
	MaxOffset = int64(1) << OffsetBits
	// MaxFiles is the number of files a source can read (16,777,216).
	MaxFiles = 1 << OrdinalBits
)

// Pack returns the position of byte offset off in the file of ordinal
// ord. It panics when either is out of range (a broken invariant: the
// Reader refuses such files before packing).
func Pack(ord int, off int64) uint64 {
	if ord < 0 || ord >= MaxFiles || off < 0 || off >= MaxOffset {
		panic(fmt.Sprintf("file: position (%d, %d) out of range", ord, off))
	}
	return uint64(ord)<<OffsetBits | uint64(off)
}

// Unpack returns the file ordinal and byte offset of pos.
func Unpack(pos uint64) (ord int, off int64) {
	return int(pos >> OffsetBits), int64(pos & (uint64(MaxOffset) - 1))
}
