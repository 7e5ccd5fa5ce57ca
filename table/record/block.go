package record

import (
	"slices"
	"strings"
	"unsafe"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Block is a run of records stored by column: the row kinds and one
// types.Vector per table column (the embedded chunk), the sequence
// numbers, and the keys one after another in one byte slice. It is what
// the store decodes data files into, what a writer buffers rows in, what
// merges and compactions read and write, and what files are encoded from.
//
// A record's values are spread over a few slices of plain integers and
// string headers rather than held in a types.Row of 56-byte datums: a
// block of a million records is a handful of allocations that the garbage
// collector scans quickly (integer and key slices not at all), copying a
// record copies a few words, and a pass over one column reads memory in
// order. Rows are built (KVs, AppendRowTo) only where a caller wants them.
//
// Key i is Keys[KeyOffs[i]:KeyOffs[i+1]]; a block of an append table has
// no keys (KeyOffs is nil and Key returns nil). Blocks made by Slice share
// memory with their parent; a block that a cache or a caller shares is not
// modified.
type Block struct {
	types.Chunk
	Seqs    []base.SeqNum
	Keys    []byte
	KeyOffs []int

	// ownsStrings says that the string values point into memory no other
	// block's values use (OwnStrings' copy, MarkOwnsStrings); the methods
	// that add records clear it.
	ownsStrings bool
}

// OwnStrings returns b, or when b has string values a copy of b sharing
// every slice but the string columns, whose values are copied into one
// new buffer per column (once for values that are one string in memory,
// as a constant column's are: see ownStrings). A block kept for long (the
// store's file cache) must own its strings: values that are substrings of a source's buffer
// (a generator builds a chunk's strings in one allocation) would keep the
// whole buffer alive, far beyond what the cache bounds count.
func (b *Block) OwnStrings() *Block {
	if b.ownsStrings {
		return b
	}
	var c *Block
	for i := range b.Cols {
		v := &b.Cols[i]
		if v.Strs == nil {
			continue
		}
		if c == nil {
			c = &Block{Chunk: types.Chunk{Kinds: b.Kinds, Cols: slices.Clone(b.Cols)}, Seqs: b.Seqs, Keys: b.Keys, KeyOffs: b.KeyOffs}
		}
		c.Cols[i].Strs = ownStrings(make([]string, len(v.Strs)), v.Strs)
	}
	if c == nil {
		return b
	}
	c.ownsStrings = true
	return c
}

// MarkOwnsStrings records that the block's string values point into
// memory that no other block's values use, as a builder that copied them
// (OwnStringsFrom over all its records) knows: OwnStrings then returns the
// block as it is. Adding records (AppendRow, Gather, Set) clears the
// mark; changing the vectors directly after marking is not allowed.
func (b *Block) MarkOwnsStrings() { b.ownsStrings = true }

// ownStrings sets dst (of strs's length; it may be strs itself) to copies
// of strs's values, all in one new buffer, and returns it.
// A value that is one of the last few distinct strings in memory (the
// same bytes at the same address: a constant or default column, a value
// a source repeats, the merge of blocks that each hold one copy) shares
// that string's copy: its bytes are copied once.
func ownStrings(dst, strs []string) []string {
	// recent holds the last distinct strings met, by their address, and
	// where their copies start in the buffer.
	type seen struct {
		ptr *byte
		n   int
		at  int
	}
	var recent [4]seen
	next := 0
	find := func(s string) (int, bool) {
		p := unsafe.StringData(s)
		for _, r := range recent {
			if r.ptr == p && r.n == len(s) && p != nil {
				return r.at, true
			}
		}
		return 0, false
	}
	n := 0
	for _, s := range strs {
		if len(s) == 0 {
			continue // NULLs and empty strings need no bytes
		}
		if _, ok := find(s); !ok {
			recent[next] = seen{ptr: unsafe.StringData(s), n: len(s), at: n}
			next = (next + 1) % len(recent)
			n += len(s)
		}
	}
	// One buffer, filled once: a strings.Builder hands its bytes over
	// as a string without the copy string(buf) would make. The second
	// pass meets the strings in the same order as the first, so recent
	// evolves the same way and gives the same offsets.
	var sb strings.Builder
	sb.Grow(n)
	recent = [4]seen{}
	next = 0
	offs := make([]int, len(strs))
	for j, s := range strs {
		if len(s) == 0 {
			continue
		}
		at, ok := find(s)
		if !ok {
			at = sb.Len()
			recent[next] = seen{ptr: unsafe.StringData(s), n: len(s), at: at}
			next = (next + 1) % len(recent)
			sb.WriteString(s)
		}
		offs[j] = at
	}
	all := sb.String()
	for j, s := range strs {
		if len(s) > 0 {
			dst[j] = all[offs[j] : offs[j]+len(s)]
		} else {
			dst[j] = "" // an empty substring would still hold its buffer
		}
	}
	return dst
}

// Ref names one record of one of several blocks: Block indexes the
// blocks, Row the record within it.
type Ref struct {
	Block, Row int32
}

// NewBlock returns an empty block for columns of types ts with room for
// capacity records; keyed says whether its records have keys.
func NewBlock(ts []types.Type, keyed bool, capacity int) *Block {
	b := &Block{Chunk: types.Chunk{Kinds: make([]types.RowKind, 0, capacity), Cols: make([]types.Vector, len(ts))},
		Seqs: make([]base.SeqNum, 0, capacity)}
	for i, t := range ts {
		v := &b.Cols[i]
		v.Type = t
		v.Nulls = make([]bool, 0, capacity)
		switch layoutOf(t.Kind) {
		case layoutInts:
			v.Ints = make([]int64, 0, capacity)
		case layoutInterval:
			v.Ints = make([]int64, 0, capacity)
			v.Aux = make([]int64, 0, capacity)
		case layoutFloats:
			v.Floats = make([]float64, 0, capacity)
		case layoutDecimals:
			v.Decimals = make([]*apd.Decimal, 0, capacity)
		case layoutStrs:
			v.Strs = make([]string, 0, capacity)
		}
	}
	if keyed {
		b.KeyOffs = make([]int, 1, capacity+1)
	}
	return b
}

// NewBlockLen returns a block of n records whose values are all zero (not
// NULL), kinds +I and sequence numbers 0, for a decoder to fill in place
// (Set, or the vectors' slices directly). With keyed, KeyOffs has n+1
// zero entries for the decoder to fill with Keys.
func NewBlockLen(ts []types.Type, keyed bool, n int) *Block {
	b := &Block{Chunk: types.Chunk{Kinds: make([]types.RowKind, n), Cols: make([]types.Vector, len(ts))},
		Seqs: make([]base.SeqNum, n)}
	for i, t := range ts {
		v := &b.Cols[i]
		v.Type = t
		v.Nulls = make([]bool, n)
		switch layoutOf(t.Kind) {
		case layoutInts:
			v.Ints = make([]int64, n)
		case layoutInterval:
			v.Ints = make([]int64, n)
			v.Aux = make([]int64, n)
		case layoutFloats:
			v.Floats = make([]float64, n)
		case layoutDecimals:
			v.Decimals = make([]*apd.Decimal, n)
		case layoutStrs:
			v.Strs = make([]string, n)
		}
	}
	if keyed {
		b.KeyOffs = make([]int, n+1)
	}
	return b
}

// Set sets column c of record i (of a block made by NewBlockLen) to d,
// which must be NULL or of the column's type family.
func (b *Block) Set(c, i int, d types.Datum) {
	b.ownsStrings = false
	v := &b.Cols[c]
	if d.IsNull() {
		v.Nulls[i] = true
		return
	}
	v.Nulls[i] = false
	switch k := v.Type.Kind; k {
	case types.KindBool:
		v.Ints[i] = 0
		if d.Bool() {
			v.Ints[i] = 1
		}
	case types.KindDate:
		v.Ints[i] = int64(d.Date())
	case types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		v.Ints[i] = d.Micros()
	case types.KindInterval:
		iv := d.Interval()
		v.Ints[i], v.Aux[i] = iv.Micros, int64(iv.Months)<<32|int64(uint32(iv.Days))
	case types.KindFloat32, types.KindFloat64:
		v.Floats[i] = d.Float64()
	case types.KindNumeric:
		v.Decimals[i] = d.Decimal()
	case types.KindBytea:
		v.Strs[i] = string(d.Bytes())
	case types.KindUUID:
		u := d.UUID()
		v.Strs[i] = string(u[:])
	case types.KindJSONB:
		v.Strs[i] = d.JSONB()
	case types.KindChar, types.KindVarchar, types.KindText:
		v.Strs[i] = d.Str()
	default:
		v.Ints[i] = d.Int64()
	}
}

// Keyed reports whether the block's records have keys.
func (b *Block) Keyed() bool { return b.KeyOffs != nil }

// Key returns record i's key (nil without keys). It aliases the block.
func (b *Block) Key(i int) []byte {
	if b.KeyOffs == nil {
		return nil
	}
	return b.Keys[b.KeyOffs[i]:b.KeyOffs[i+1]:b.KeyOffs[i+1]]
}

// Reset empties the block and keeps its capacity.
func (b *Block) Reset() {
	b.Chunk.Reset()
	b.Seqs = b.Seqs[:0]
	b.Keys = b.Keys[:0]
	if b.KeyOffs != nil {
		b.KeyOffs = b.KeyOffs[:1]
	}
}

// AppendRow adds one record. row must fit the column types (a value of
// another type family panics, as types.Vector.Append does).
func (b *Block) AppendRow(key []byte, seq base.SeqNum, kind types.RowKind, row types.Row) {
	b.ownsStrings = false
	b.Kinds = append(b.Kinds, kind)
	b.Seqs = append(b.Seqs, seq)
	if b.KeyOffs != nil {
		b.Keys = append(b.Keys, key...)
		b.KeyOffs = append(b.KeyOffs, len(b.Keys))
	}
	for c := range b.Cols {
		appendDatum(&b.Cols[c], &row[c])
	}
}

// AppendRange adds rows lo..hi-1 of c as records of an append table
// (b has no keys), with row kind kind and sequence numbers seq, seq+1,
// ...: AppendRow of each row, column by column. c's columns must be of
// b's type families (schema.CheckChunk); b must not be keyed.
func (b *Block) AppendRange(c *types.Chunk, lo, hi int, seq base.SeqNum, kind types.RowKind) {
	if b.KeyOffs != nil {
		panic("record: AppendRange to a keyed block")
	}
	b.ownsStrings = false
	for range hi - lo {
		b.Kinds = append(b.Kinds, kind)
		b.Seqs = append(b.Seqs, seq)
		seq++
	}
	for j := range b.Cols {
		b.Cols[j].AppendRange(&c.Cols[j], lo, hi)
	}
}

// appendDatum is v.Append(*d) with the common column types (integers and
// strings) appended without types.Vector.Append's check of d's family
// against the column's, which callers have made (schema.CheckRow): that
// check and its switches cost as much as the append.
func appendDatum(v *types.Vector, d *types.Datum) {
	if !d.IsNull() {
		switch v.Type.Kind {
		case types.KindInt16, types.KindInt32, types.KindInt64:
			v.Ints = append(v.Ints, d.Int64())
			v.Nulls = append(v.Nulls, false)
			return
		case types.KindChar, types.KindVarchar, types.KindText:
			v.Strs = append(v.Strs, d.Str())
			v.Nulls = append(v.Nulls, false)
			return
		}
	}
	v.Append(*d)
}

// AppendKV adds kv (see AppendRow).
func (b *Block) AppendKV(kv *KV) { b.AppendRow(kv.Key, kv.Seq, kv.Kind, kv.Row) }

// KV returns record i with a new row.
func (b *Block) KV(i int) KV {
	return KV{Key: b.Key(i), Seq: b.Seqs[i], Kind: b.Kinds[i], Row: b.AppendRowTo(make(types.Row, 0, len(b.Cols)), i)}
}

// KVs returns the block's records as KVs, their rows carved from one new
// block of datums; keys alias the block.
func (b *Block) KVs() []KV {
	n, w := b.Len(), len(b.Cols)
	out := make([]KV, n)
	slab := make([]types.Datum, n*w)
	for c := range b.Cols {
		v := &b.Cols[c]
		for i := 0; i < n; i++ {
			slab[i*w+c] = v.Get(i)
		}
	}
	for i := range out {
		out[i] = KV{Key: b.Key(i), Seq: b.Seqs[i], Kind: b.Kinds[i], Row: types.Row(slab[i*w : (i+1)*w : (i+1)*w])}
	}
	return out
}

// BlockOf returns a new block holding kvs, for columns of types ts.
func BlockOf(ts []types.Type, keyed bool, kvs []KV) *Block {
	b := NewBlock(ts, keyed, len(kvs))
	for i := range kvs {
		b.AppendKV(&kvs[i])
	}
	return b
}

// Slice returns a block of records [lo, hi) of b that shares b's memory.
func (b *Block) Slice(lo, hi int) *Block {
	s := &Block{Chunk: *SliceChunk(&b.Chunk, lo, hi), Seqs: b.Seqs[lo:hi:hi], Keys: b.Keys}
	if b.KeyOffs != nil {
		s.KeyOffs = b.KeyOffs[lo : hi+1 : hi+1]
	}
	return s
}

// SliceChunk returns rows [lo, hi) of c as a chunk that shares c's memory.
func SliceChunk(c *types.Chunk, lo, hi int) *types.Chunk {
	s := &types.Chunk{Kinds: c.Kinds[lo:hi:hi], Cols: make([]types.Vector, len(c.Cols))}
	for i := range c.Cols {
		v, d := &c.Cols[i], &s.Cols[i]
		d.Type = v.Type
		d.Nulls = v.Nulls[lo:hi:hi]
		switch layoutOf(v.Type.Kind) {
		case layoutInts:
			d.Ints = v.Ints[lo:hi:hi]
		case layoutInterval:
			d.Ints, d.Aux = v.Ints[lo:hi:hi], v.Aux[lo:hi:hi]
		case layoutFloats:
			d.Floats = v.Floats[lo:hi:hi]
		case layoutDecimals:
			d.Decimals = v.Decimals[lo:hi:hi]
		case layoutStrs:
			d.Strs = v.Strs[lo:hi:hi]
		}
	}
	return s
}

// Gather appends to b the records refs name in srcs, in refs' order,
// column by column. Every source has b's column types, and keys if b has.
func (b *Block) Gather(srcs []*Block, refs []Ref) {
	b.ownsStrings = false
	m := len(refs)
	b.Kinds = gather(b.Kinds, srcs, refs, func(s *Block) []types.RowKind { return s.Kinds })
	b.Seqs = gather(b.Seqs, srcs, refs, func(s *Block) []base.SeqNum { return s.Seqs })
	if b.KeyOffs != nil {
		b.KeyOffs = slices.Grow(b.KeyOffs, m)
		nk := 0
		for _, r := range refs {
			s := srcs[r.Block]
			nk += s.KeyOffs[r.Row+1] - s.KeyOffs[r.Row]
		}
		b.Keys = slices.Grow(b.Keys, nk)
		for _, r := range refs {
			s := srcs[r.Block]
			b.Keys = append(b.Keys, s.Keys[s.KeyOffs[r.Row]:s.KeyOffs[r.Row+1]]...)
			b.KeyOffs = append(b.KeyOffs, len(b.Keys))
		}
	}
	gatherCols(b.Cols, srcs, refs)
}

// GatherValues appends to c the values of the records refs name in srcs
// (blocks of c's column types), in refs' order, column by column, each
// with row kind +I: a batch read's rows, without keys or sequence
// numbers.
func GatherValues(c *types.Chunk, srcs []*Block, refs []Ref) {
	c.Kinds = append(c.Kinds, make([]types.RowKind, len(refs))...) // +I is 0
	gatherCols(c.Cols, srcs, refs)
}

func gatherCols(cols []types.Vector, srcs []*Block, refs []Ref) {
	for c := range cols {
		d := &cols[c]
		d.Nulls = gather(d.Nulls, srcs, refs, func(s *Block) []bool { return s.Cols[c].Nulls })
		switch layoutOf(d.Type.Kind) {
		case layoutInts:
			d.Ints = gather(d.Ints, srcs, refs, func(s *Block) []int64 { return s.Cols[c].Ints })
		case layoutInterval:
			d.Ints = gather(d.Ints, srcs, refs, func(s *Block) []int64 { return s.Cols[c].Ints })
			d.Aux = gather(d.Aux, srcs, refs, func(s *Block) []int64 { return s.Cols[c].Aux })
		case layoutFloats:
			d.Floats = gather(d.Floats, srcs, refs, func(s *Block) []float64 { return s.Cols[c].Floats })
		case layoutDecimals:
			d.Decimals = gather(d.Decimals, srcs, refs, func(s *Block) []*apd.Decimal { return s.Cols[c].Decimals })
		case layoutStrs:
			d.Strs = gather(d.Strs, srcs, refs, func(s *Block) []string { return s.Cols[c].Strs })
		}
	}
}

// gather appends to dst the values refs name, the slice of source block k
// being of(srcs[k]). The sources' slices are looked up once, and dst
// grown once.
func gather[T any](dst []T, srcs []*Block, refs []Ref, of func(*Block) []T) []T {
	n0 := len(dst)
	dst = slices.Grow(dst, len(refs))[:n0+len(refs)]
	out := dst[n0:]
	if len(srcs) == 1 {
		src := of(srcs[0])
		for i, r := range refs {
			out[i] = src[r.Row]
		}
		return dst
	}
	var small [8][]T
	from := small[:0]
	for _, s := range srcs {
		from = append(from, of(s))
	}
	for i, r := range refs {
		out[i] = from[r.Block][r.Row]
	}
	return dst
}

// SameRow reports whether record i of a and record j of b hold equal
// values in every column: both NULL or equal under types.Compare. The
// common cases (integers, equal strings) are decided without building
// datums.
func SameRow(a *Block, i int, b *Block, j int) bool {
	for c := range a.Cols {
		va, vb := &a.Cols[c], &b.Cols[c]
		na, nb := va.Nulls[i], vb.Nulls[j]
		if na || nb {
			if na != nb {
				return false
			}
			continue
		}
		switch layoutOf(va.Type.Kind) {
		case layoutInts:
			if va.Type.Kind != types.KindBool && va.Ints[i] == vb.Ints[j] {
				continue
			}
		case layoutStrs:
			if va.Strs[i] == vb.Strs[j] {
				continue
			}
		}
		if types.Compare(va.Get(i), vb.Get(j)) != 0 {
			return false
		}
	}
	return true
}

// layout names the slices of a types.Vector that a column type uses (the
// table in types.Vector's doc).
type layout uint8

const (
	layoutInts layout = iota
	layoutInterval
	layoutFloats
	layoutDecimals
	layoutStrs
)

func layoutOf(k types.Kind) layout {
	switch k {
	case types.KindInterval:
		return layoutInterval
	case types.KindFloat32, types.KindFloat64:
		return layoutFloats
	case types.KindNumeric:
		return layoutDecimals
	case types.KindChar, types.KindVarchar, types.KindText, types.KindBytea, types.KindUUID, types.KindJSONB:
		return layoutStrs
	}
	return layoutInts
}
