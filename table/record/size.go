package record

import (
	"slices"
	"unsafe"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Per-record sizes in memory of the slices a block holds ([mem-bytes]).
const (
	sizeKind    = int(unsafe.Sizeof(types.RowKind(0)))
	sizeSeq     = int(unsafe.Sizeof(base.SeqNum(0)))
	sizeKeyOff  = int(unsafe.Sizeof(int(0)))
	sizeNull    = int(unsafe.Sizeof(false))
	sizeInt     = int(unsafe.Sizeof(int64(0)))
	sizeFloat   = int(unsafe.Sizeof(float64(0)))
	sizeStr     = int(unsafe.Sizeof(""))
	sizeDecimal = int(unsafe.Sizeof((*apd.Decimal)(nil))) + int(unsafe.Sizeof(apd.Decimal{}))
)

// Bytes returns the memory the block's records take ([mem-bytes]): per
// record its row kind, sequence number and key (bytes and offset), and
// per column its NULL flag and value, a string counting its header and its
// bytes, a decimal its pointer and the decimal it points to (its digits
// aside when they fit inline, as they mostly do). Spare capacity and the
// sharing of string bytes between records are not counted: the figure is
// what the records would take copied into a block of their own, which is
// what caches and rolling writers bound.
func (b *Block) Bytes() int {
	n := b.Len()
	if n == 0 {
		return 0
	}
	size := n * (sizeKind + sizeSeq)
	if b.KeyOffs != nil {
		size += n*sizeKeyOff + b.KeyOffs[n] - b.KeyOffs[0]
	}
	for c := range b.Cols {
		v := &b.Cols[c]
		size += n * sizeNull
		switch layoutOf(v.Type.Kind) {
		case layoutInts:
			size += n * sizeInt
		case layoutInterval:
			size += 2 * n * sizeInt
		case layoutFloats:
			size += n * sizeFloat
		case layoutDecimals:
			size += n * sizeDecimal
		case layoutStrs:
			size += n * sizeStr
			for _, s := range v.Strs[:n] {
				size += len(s)
			}
		}
	}
	return size
}

// OwnStringsFrom copies the string values of records lo and after into
// new buffers, one per string column, so that they no longer point into
// the blocks they were gathered or appended from: a block being built
// from blocks that come and go (a streaming merge's output) then holds
// none of them alive. It modifies b in place, so b must be the caller's
// own, unshared block.
func (b *Block) OwnStringsFrom(lo int) {
	for c := range b.Cols {
		v := &b.Cols[c]
		if v.Strs == nil || lo >= len(v.Strs) {
			continue
		}
		ownStrings(v.Strs[lo:], v.Strs[lo:])
	}
}

// Trim returns b, or, when its slices have more spare capacity than an
// eighth of their length (a block grown by appending), a copy of b whose
// slices are just long enough. A block kept for long (a cache entry)
// would otherwise hold up to twice the memory Bytes counts. It shares
// string bytes and decimals with b.
func (b *Block) Trim() *Block {
	n := b.Len()
	spare := func(length, capacity int) bool { return capacity-length > length/8 }
	wasteful := spare(n, cap(b.Kinds)) || spare(n, cap(b.Seqs)) || spare(len(b.Keys), cap(b.Keys))
	for c := range b.Cols {
		v := &b.Cols[c]
		wasteful = wasteful || spare(len(v.Nulls), cap(v.Nulls)) || spare(len(v.Ints), cap(v.Ints)) ||
			spare(len(v.Floats), cap(v.Floats)) || spare(len(v.Strs), cap(v.Strs)) || spare(len(v.Decimals), cap(v.Decimals))
	}
	if !wasteful {
		return b
	}
	t := &Block{Chunk: types.Chunk{Kinds: slices.Clone(b.Kinds), Cols: make([]types.Vector, len(b.Cols))},
		Seqs: slices.Clone(b.Seqs), Keys: slices.Clone(b.Keys), KeyOffs: slices.Clone(b.KeyOffs), ownsStrings: b.ownsStrings}
	for c := range b.Cols {
		v, d := &b.Cols[c], &t.Cols[c]
		d.Type = v.Type
		d.Nulls = slices.Clone(v.Nulls)
		d.Ints, d.Aux, d.Floats = slices.Clone(v.Ints), slices.Clone(v.Aux), slices.Clone(v.Floats)
		d.Decimals, d.Strs = slices.Clone(v.Decimals), slices.Clone(v.Strs)
	}
	return t
}

// Grow makes room in b for n more records without reallocating (keyBytes
// more bytes of keys), as slices.Grow does for each of its slices: a
// builder that knows how many records are coming saves the copies of
// growing by doubling.
func (b *Block) Grow(n, keyBytes int) {
	if n <= 0 {
		return
	}
	b.Kinds = slices.Grow(b.Kinds, n)
	b.Seqs = slices.Grow(b.Seqs, n)
	if b.KeyOffs != nil {
		b.KeyOffs = slices.Grow(b.KeyOffs, n)
		b.Keys = slices.Grow(b.Keys, keyBytes)
	}
	for c := range b.Cols {
		v := &b.Cols[c]
		v.Nulls = slices.Grow(v.Nulls, n)
		switch layoutOf(v.Type.Kind) {
		case layoutInts:
			v.Ints = slices.Grow(v.Ints, n)
		case layoutInterval:
			v.Ints = slices.Grow(v.Ints, n)
			v.Aux = slices.Grow(v.Aux, n)
		case layoutFloats:
			v.Floats = slices.Grow(v.Floats, n)
		case layoutDecimals:
			v.Decimals = slices.Grow(v.Decimals, n)
		case layoutStrs:
			v.Strs = slices.Grow(v.Strs, n)
		}
	}
}
