package types

import (
	"encoding/binary"
	"fmt"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
)

// DefaultChunkSize is the number of rows operators aim for in one Chunk:
// large enough to amortise per-message costs, small enough to keep latency
// and channel state small.
const DefaultChunkSize = 1024

// Vector is one column of a Chunk: a typed slice per representation and a
// NULL flag per row. Only the slice that belongs to the column's type is
// used:
//
//	BOOLEAN, integers, DATE, TIME, TIMESTAMP(TZ)  Ints (BOOLEAN as 0/1)
//	INTERVAL                                      Ints (µs) and Aux (months<<32|days)
//	REAL, DOUBLE PRECISION                        Floats
//	NUMERIC                                       Decimals (shared, never mutated)
//	CHAR, VARCHAR, TEXT, BYTEA, UUID, JSONB       Strs
//
// A NULL row holds the zero value in its slot.
type Vector struct {
	Type     Type
	Nulls    []bool
	Ints     []int64
	Aux      []int64
	Floats   []float64
	Decimals []*apd.Decimal
	Strs     []string
}

// Len returns the number of rows in v.
func (v *Vector) Len() int { return len(v.Nulls) }

// IsNull reports whether row i is NULL.
func (v *Vector) IsNull(i int) bool { return v.Nulls[i] }

// Append adds d at the end. A non-NULL d of another type family panics.
func (v *Vector) Append(d Datum) {
	null := d.IsNull()
	if !null && family(d.kind) != family(v.Type.Kind) {
		panic("types: Vector.Append of a " + d.kind.String() + " to a " + v.Type.String() + " column")
	}
	v.Nulls = append(v.Nulls, null)
	switch family(v.Type.Kind) {
	case famBool, famInt, famDate, famTime, famTimestamp, famTimestampTZ:
		v.Ints = append(v.Ints, d.i)
	case famInterval:
		v.Ints = append(v.Ints, d.i)
		v.Aux = append(v.Aux, d.aux)
	case famFloat:
		v.Floats = append(v.Floats, d.f)
	case famNumeric:
		v.Decimals = append(v.Decimals, d.dec)
	case famString, famBytes, famUUID, famJSONB:
		v.Strs = append(v.Strs, d.s)
	default:
		panic("types: Vector of unsupported type " + v.Type.String())
	}
}

// AppendRange adds rows lo..hi-1 of src at the end of v, slice by slice,
// as Append of each of src's datums would. src's type must be of v's
// family (the same kind, or both string kinds: Append's rule); another
// panics, as Append does.
func (v *Vector) AppendRange(src *Vector, lo, hi int) {
	if family(src.Type.Kind) != family(v.Type.Kind) {
		panic("types: Vector.AppendRange of a " + src.Type.String() + " column to a " + v.Type.String() + " column")
	}
	v.Nulls = append(v.Nulls, src.Nulls[lo:hi]...)
	switch family(v.Type.Kind) {
	case famBool, famInt, famDate, famTime, famTimestamp, famTimestampTZ:
		v.Ints = append(v.Ints, src.Ints[lo:hi]...)
	case famInterval:
		v.Ints = append(v.Ints, src.Ints[lo:hi]...)
		v.Aux = append(v.Aux, src.Aux[lo:hi]...)
	case famFloat:
		v.Floats = append(v.Floats, src.Floats[lo:hi]...)
	case famNumeric:
		v.Decimals = append(v.Decimals, src.Decimals[lo:hi]...)
	case famString, famBytes, famUUID, famJSONB:
		v.Strs = append(v.Strs, src.Strs[lo:hi]...)
	default:
		panic("types: Vector of unsupported type " + v.Type.String())
	}
}

// Get returns row i as a Datum of the column's kind (Strings keep the kind
// they were appended with only as far as the column type: a VARCHAR column
// returns VARCHAR datums).
func (v *Vector) Get(i int) Datum {
	if v.Nulls[i] {
		return Null
	}
	k := v.Type.Kind
	switch family(k) {
	case famBool, famInt, famDate, famTime, famTimestamp, famTimestampTZ:
		return Datum{kind: k, i: v.Ints[i]}
	case famInterval:
		return Datum{kind: k, i: v.Ints[i], aux: v.Aux[i]}
	case famFloat:
		return Datum{kind: k, f: v.Floats[i]}
	case famNumeric:
		return Datum{kind: k, dec: v.Decimals[i]}
	default:
		return Datum{kind: k, s: v.Strs[i]}
	}
}

func (v *Vector) reset() {
	v.Nulls = v.Nulls[:0]
	v.Ints = v.Ints[:0]
	v.Aux = v.Aux[:0]
	v.Floats = v.Floats[:0]
	clear(v.Decimals)
	v.Decimals = v.Decimals[:0]
	clear(v.Strs)
	v.Strs = v.Strs[:0]
}

// Chunk is a batch of rows with their row kinds, stored by column: the unit
// that moves between operators (DESIGN.md vocabulary "chunk"). A chunk is
// owned by one goroutine at a time; sending it on a queue hands it over.
type Chunk struct {
	Kinds []RowKind
	Cols  []Vector
}

// NewChunk returns an empty chunk for columns of types ts with room for
// capacity rows.
func NewChunk(ts []Type, capacity int) *Chunk {
	c := &Chunk{Kinds: make([]RowKind, 0, capacity), Cols: make([]Vector, len(ts))}
	for i, t := range ts {
		c.Cols[i].Type = t
		c.Cols[i].Nulls = make([]bool, 0, capacity)
	}
	return c
}

// Types returns the column types.
func (c *Chunk) Types() []Type {
	ts := make([]Type, len(c.Cols))
	for i := range c.Cols {
		ts[i] = c.Cols[i].Type
	}
	return ts
}

// Len returns the number of rows.
func (c *Chunk) Len() int { return len(c.Kinds) }

// Width returns the number of columns.
func (c *Chunk) Width() int { return len(c.Cols) }

// Append adds one row with its row kind. The row must have one value per
// column; a wrong width or a value of another type family panics.
func (c *Chunk) Append(kind RowKind, row Row) {
	if len(row) != len(c.Cols) {
		panic(fmt.Sprintf("types: Chunk.Append of %d values to %d columns", len(row), len(c.Cols)))
	}
	if !kind.Valid() {
		panic("types: Chunk.Append with invalid " + kind.String())
	}
	c.Kinds = append(c.Kinds, kind)
	for i := range c.Cols {
		c.Cols[i].Append(row[i])
	}
}

// Kind returns row i's row kind.
func (c *Chunk) Kind(i int) RowKind { return c.Kinds[i] }

// Datum returns the value at column col, row i.
func (c *Chunk) Datum(col, i int) Datum { return c.Cols[col].Get(i) }

// Row returns row i as a new Row.
func (c *Chunk) Row(i int) Row { return c.AppendRowTo(nil, i) }

// AppendRowTo appends row i's values to dst and returns it, for callers
// that reuse a buffer.
func (c *Chunk) AppendRowTo(dst Row, i int) Row {
	for col := range c.Cols {
		dst = append(dst, c.Cols[col].Get(i))
	}
	return dst
}

// Reset empties the chunk and keeps its capacity.
func (c *Chunk) Reset() {
	c.Kinds = c.Kinds[:0]
	for i := range c.Cols {
		c.Cols[i].reset()
	}
}

// Select returns a new chunk with the rows at sel, in that order.
func (c *Chunk) Select(sel []int) *Chunk {
	out := NewChunk(c.Types(), len(sel))
	for _, i := range sel {
		out.Kinds = append(out.Kinds, c.Kinds[i])
		for col := range c.Cols {
			out.Cols[col].Append(c.Cols[col].Get(i))
		}
	}
	return out
}

// String formats the chunk one row a line, "+I (1, a)", for tests and
// debugging.
func (c *Chunk) String() string {
	var b []byte
	for i := range c.Kinds {
		b = append(b, c.Kinds[i].String()...)
		b = append(b, ' ')
		b = append(b, c.Row(i).String()...)
		b = append(b, '\n')
	}
	return string(b)
}

// Chunk encoding, for channel state and spilling:
//
//	chunk = version:1 ncols:uvarint type* nrows:uvarint (kind:1 row)*
//	type  = len:uvarint SQL spelling (Type.String)
//	row   = the row codec (codec.go)

// ChunkCodecVersion is the first byte of an encoded chunk.
const ChunkCodecVersion = 1

// AppendChunk appends the encoding of c to dst.
func AppendChunk(dst []byte, c *Chunk) []byte {
	dst = append(dst, ChunkCodecVersion)
	ts := c.Types()
	dst = binary.AppendUvarint(dst, uint64(len(ts)))
	for _, t := range ts {
		s := t.String()
		dst = binary.AppendUvarint(dst, uint64(len(s)))
		dst = append(dst, s...)
	}
	dst = binary.AppendUvarint(dst, uint64(c.Len()))
	row := make(Row, 0, len(ts))
	for i := range c.Kinds {
		dst = append(dst, byte(c.Kinds[i]))
		row = c.AppendRowTo(row[:0], i)
		dst = AppendRow(dst, row, ts)
	}
	return dst
}

// DecodeChunk decodes one chunk written by AppendChunk and returns it with
// the rest of b. Errors wrap base.ErrCorruption.
func DecodeChunk(b []byte) (*Chunk, []byte, error) {
	bad := func(what string) error {
		return fmt.Errorf("chunk codec: %s: %w", what, base.ErrCorruption)
	}
	if len(b) < 1 || b[0] != ChunkCodecVersion {
		return nil, nil, bad("missing or unknown version")
	}
	b = b[1:]
	uv := func() (uint64, bool) {
		v, k := binary.Uvarint(b)
		if k <= 0 {
			return 0, false
		}
		b = b[k:]
		return v, true
	}
	ncols, ok := uv()
	if !ok || ncols > uint64(len(b)) {
		return nil, nil, bad("bad column count")
	}
	ts := make([]Type, ncols)
	for i := range ts {
		n, ok := uv()
		if !ok || n > uint64(len(b)) {
			return nil, nil, bad("truncated type")
		}
		t, err := ParseType(string(b[:n]))
		if err != nil {
			return nil, nil, fmt.Errorf("chunk codec: column %d: %v: %w", i, err, base.ErrCorruption)
		}
		ts[i] = t
		b = b[n:]
	}
	nrows, ok := uv()
	if !ok || nrows > uint64(len(b)) {
		return nil, nil, bad("bad row count")
	}
	// Grow as rows decode: a corrupt count must not reserve memory.
	c := NewChunk(ts, int(min(nrows, DefaultChunkSize)))
	for range nrows {
		if len(b) < 1 || !RowKind(b[0]).Valid() {
			return nil, nil, bad("bad row kind")
		}
		kind := RowKind(b[0])
		row, rest, err := DecodeRow(b[1:], ts)
		if err != nil {
			return nil, nil, fmt.Errorf("chunk codec: %w", err)
		}
		c.Append(kind, row)
		b = rest
	}
	return c, b, nil
}
