package parquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"sync"
	"unsafe"

	"github.com/cockroachdb/apd/v3"
	"github.com/klauspost/compress/s2"
	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
)

// FormatVersion is the value of the "strata.format.version" metadata key.
const FormatVersion = 1

// System column names.
const (
	SeqColumn  = "_SEQUENCE_NUMBER"
	KindColumn = "_VALUE_KIND"
)

func node(f schema.Field, key bool) (pq.Node, error) {
	var n pq.Node
	switch f.Type.Kind {
	case types.KindBool:
		n = pq.Leaf(pq.BooleanType)
	case types.KindInt16:
		n = pq.Int(16)
	case types.KindInt32:
		n = pq.Int(32)
	case types.KindInt64:
		n = pq.Int(64)
	case types.KindFloat32:
		n = pq.Leaf(pq.FloatType)
	case types.KindFloat64:
		n = pq.Leaf(pq.DoubleType)
	case types.KindChar, types.KindVarchar, types.KindText, types.KindNumeric:
		n = pq.String()
	case types.KindUUID:
		n = pq.UUID()
	case types.KindBytea:
		n = pq.Leaf(pq.ByteArrayType)
	case types.KindDate:
		n = pq.Date()
	case types.KindTime:
		n = pq.Time(pq.Microsecond)
	case types.KindTimestamp:
		n = pq.TimestampAdjusted(pq.Microsecond, false)
	case types.KindTimestampTZ:
		n = pq.TimestampAdjusted(pq.Microsecond, true)
	case types.KindInterval:
		n = pq.Leaf(pq.FixedLenByteArrayType(16))
	case types.KindJSONB:
		n = pq.JSON()
	default:
		return nil, fmt.Errorf("column %q: type %s has no Parquet mapping: %w", f.Name, f.Type, base.ErrInvalidArgument)
	}
	n = encoded(n, f.Type.Kind)
	if !key {
		n = pq.Optional(n)
	}
	return n, nil
}

// Schema returns the Parquet schema of data files of s.
func Schema(s *schema.Schema) (*pq.Schema, error) {
	g := pq.Group{SeqColumn: encoded(pq.Int(64), types.KindInt64), KindColumn: encoded(pq.Int(8), types.KindInt32)}
	keys := map[string]bool{}
	for _, k := range s.PrimaryKey {
		keys[k] = true
	}
	for _, f := range s.Fields {
		// A key column is required unless the schema lets it hold NULL
		// (schema.OptionNullableKey).
		n, err := node(f, keys[f.Name] && !f.Nullable)
		if err != nil {
			return nil, err
		}
		g[f.Name] = n
	}
	return pq.NewSchema("strata", g), nil
}

type column struct {
	index int // leaf column index in the Parquet schema
	field int // position in the table schema, or -1 for system columns
	opt   bool
}

// Encode writes kvs (in the given order) as a Parquet file of schema s.
func Encode(s *schema.Schema, kvs []record.KV) ([]byte, error) {
	return EncodeBlock(s, record.BlockOf(s.Types(), s.HasPrimaryKey(), kvs))
}

// EncodeBlock writes the records of blk (in their order; blk's columns are
// s's) as a Parquet file of schema s.
func EncodeBlock(s *schema.Schema, blk *record.Block) ([]byte, error) {
	var out []byte
	err := EncodeBlockTo(s, blk, func(data []byte) error {
		out = make([]byte, len(data))
		copy(out, data)
		return nil
	})
	return out, err
}

// EncodeBlockTo is EncodeBlock that lends the file to use instead of
// returning a copy: data is valid only until use returns (it is in a
// buffer that goes back to encodeBuffers), so use writes it out and keeps
// no reference to it. use's error is returned as is.
func EncodeBlockTo(s *schema.Schema, blk *record.Block, use func(data []byte) error) error {
	buf, err := encodeBlock(s, blk)
	if err != nil {
		return err
	}
	defer encodeBuffers.put(buf)
	return use(buf.Bytes())
}

// encodeBlock encodes blk into a buffer of encodeBuffers, which the
// caller puts back.
func encodeBlock(s *schema.Schema, blk *record.Block) (*bytes.Buffer, error) {
	ps, err := Schema(s)
	if err != nil {
		return nil, err
	}
	cols := make([]column, len(s.Fields))
	for i, f := range s.Fields {
		leaf, _ := ps.Lookup(f.Name)
		cols[i] = column{index: leaf.ColumnIndex, field: i, opt: leaf.MaxDefinitionLevel > 0}
	}
	seqLeaf, _ := ps.Lookup(SeqColumn)
	kindLeaf, _ := ps.Lookup(KindColumn)
	buf := encodeBuffers.get()
	// Min/max statistics go into the column chunks and the page index,
	// where readers look for them; the copy in every data page header
	// (which the Parquet format deprecates in favour of the page index)
	// would cost a second pass over every page's values.
	w := pq.NewWriter(buf, ps,
		pq.DataPageStatistics(false),
		pq.KeyValueMetadata("strata.format.version", strconv.Itoa(FormatVersion)),
		pq.KeyValueMetadata("strata.schema.id", strconv.FormatInt(int64(s.ID), 10)))
	// The schema is flat, so every row has exactly one value per leaf
	// column: each column's values for a batch of rows are filled in a
	// loop of the column's type, straight from the block's vector, and
	// handed to the column's writer, which copies them. The row group's
	// row count is that of its columns, which all receive blk.Len()
	// values.
	writers := w.ColumnWriters()
	const batch = 1024
	seqCol, kindCol := seqLeaf.ColumnIndex, kindLeaf.ColumnIndex
	colVals := make([][]pq.Value, len(writers))
	for i := range colVals {
		colVals[i] = make([]pq.Value, batch)
	}
	defs := make([]int, len(cols))
	for j, c := range cols {
		if c.opt {
			defs[j] = 1
		}
	}
	n := blk.Len()
	for lo := 0; lo < n; lo += batch {
		hi := min(lo+batch, n)
		// Required columns: levels 0, the zero value's (see fillColumn).
		seqVals, kindVals := colVals[seqCol][:hi-lo], colVals[kindCol][:hi-lo]
		for i, q := range blk.Seqs[lo:hi] {
			seqVals[i] = pq.Int64Value(int64(q))
		}
		for i, k := range blk.Kinds[lo:hi] {
			kindVals[i] = pq.Int32Value(int32(k))
		}
		for j, c := range cols {
			if !fillColumn(colVals[c.index][:hi-lo], &blk.Cols[c.field], lo, c, defs[j]) {
				return nil, fmt.Errorf("column %q: NULL in a key column: %w", s.Fields[c.field].Name, base.ErrInvalidArgument)
			}
		}
		for ci, cw := range writers {
			if _, err := cw.WriteRowValues(colVals[ci][:hi-lo]); err != nil {
				return nil, err
			}
		}
	}
	if err := w.Close(); err != nil {
		encodeBuffers.put(buf)
		return nil, err
	}
	return buf, nil
}

// encodeBuffers holds the buffers files are encoded into: a file grows its
// buffer by doubling, and a fresh buffer per file allocated about twice
// the file's size on the way (most of the encoder's allocations).
// EncodeBlockTo lends the file in its buffer and puts the buffer back
// after; EncodeBlock copies the file out at its exact size first.
var encodeBuffers = bufferPool{maxBuffer: maxPooledBuffer, maxBytes: maxPoolBytes}

// maxPooledBuffer bounds each buffer kept for reuse, and maxPoolBytes all
// of them together (invariant bounded-pool). Flushes of a table's write
// buffer encode files of a few MiB (a demo table at 50K events/s: 3 MB
// on average, 6 MB at most) and reuse these; a larger
// file (a compaction's output) grows a buffer of its own, which the
// garbage collector takes back.
//
// A sync.Pool of buffers of up to 64 MiB each was tried first: every
// table's flushes and compactions running at once each put a buffer back,
// and the pool held 130-290 MB between garbage collections in a demo of
// nine tables.
const (
	maxPooledBuffer = 8 << 20
	maxPoolBytes    = 32 << 20
)

// bufferPool is a free list of buffers bounded in bytes: put keeps a
// buffer only while the buffers kept stay within maxBytes and it is no
// larger than maxBuffer.
type bufferPool struct {
	maxBuffer, maxBytes int
	mu                  struct {
		sync.Mutex
		free  []*bytes.Buffer // guarded by mu
		bytes int             // capacity of free, guarded by mu
	}
}

// get returns an empty buffer, a kept one if there is one.
func (p *bufferPool) get() *bytes.Buffer {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.mu.free)
	if n == 0 {
		return new(bytes.Buffer)
	}
	buf := p.mu.free[n-1]
	p.mu.free[n-1] = nil
	p.mu.free = p.mu.free[:n-1]
	p.mu.bytes -= buf.Cap()
	return buf
}

// put returns buf to the pool, or drops it when keeping it would pass the
// pool's bounds.
func (p *bufferPool) put(buf *bytes.Buffer) {
	c := buf.Cap()
	if c > p.maxBuffer {
		return
	}
	buf.Reset()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mu.bytes+c > p.maxBytes {
		return
	}
	p.mu.free = append(p.mu.free, buf)
	p.mu.bytes += c
}

// pooled returns the number and total capacity of the buffers p keeps.
func (p *bufferPool) pooled() (n, bytes int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.mu.free), p.mu.bytes
}

// fillColumn sets vals[i] to the Parquet value of row lo+i of column
// vector v, at definition level def (1 for optional columns). It returns
// false if a required column holds a NULL. Values of the common types get
// only their definition level set: a column writer reads no other level of
// a flat column's values, and the whole-value Level costs a copy per
// value.
func fillColumn(vals []pq.Value, v *types.Vector, lo int, c column, def int) bool {
	nulls := v.Nulls[lo : lo+len(vals)]
	null := pq.NullValue().Level(0, 0, c.index)
	for i, isNull := range nulls {
		if isNull {
			if !c.opt {
				return false
			}
			vals[i] = null
		}
	}
	switch v.Type.Kind {
	case types.KindInt64, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		for i, x := range v.Ints[lo : lo+len(vals)] {
			if !nulls[i] {
				vals[i] = pq.Int64Value(x)
				vals[i].SetDefinitionLevel(def)
			}
		}
	case types.KindInt32, types.KindInt16, types.KindDate:
		for i, x := range v.Ints[lo : lo+len(vals)] {
			if !nulls[i] {
				vals[i] = pq.Int32Value(int32(x))
				vals[i].SetDefinitionLevel(def)
			}
		}
	case types.KindFloat64:
		for i, x := range v.Floats[lo : lo+len(vals)] {
			if !nulls[i] {
				vals[i] = pq.DoubleValue(x)
				vals[i].SetDefinitionLevel(def)
			}
		}
	case types.KindChar, types.KindVarchar, types.KindText, types.KindJSONB:
		for i, x := range v.Strs[lo : lo+len(vals)] {
			if !nulls[i] {
				vals[i] = pq.ByteArrayValue(stringBytes(x))
				vals[i].SetDefinitionLevel(def)
			}
		}
	case types.KindNumeric:
		// The decimals' text goes into one buffer per batch rather than
		// a string and a copy of it per value: the column's writer copies
		// the bytes, and a buffer that grows leaves the values already
		// set pointing into its old array, which stays unchanged.
		var text []byte
		for i, d := range v.Decimals[lo : lo+len(vals)] {
			if !nulls[i] {
				if text == nil {
					text = make([]byte, 0, 16*len(vals))
				}
				start := len(text)
				text = appendDecimalText(text, d)
				vals[i] = pq.ByteArrayValue(text[start:len(text):len(text)])
				vals[i].SetDefinitionLevel(def)
			}
		}
	default:
		for i := range vals {
			if !nulls[i] {
				vals[i] = value(v.Get(lo+i), v.Type).Level(0, def, c.index)
			}
		}
	}
	return true
}

// appendDecimalText appends d.Text('f') to buf. A finite d whose
// coefficient fits 64 bits (nearly every value a table holds) is written
// from its digits here; apd's formatter, which this matches byte for byte
// (TestDecimalText), goes through its big-integer digit conversion.
func appendDecimalText(buf []byte, d *apd.Decimal) []byte {
	if d.Form != apd.Finite || !d.Coeff.IsUint64() {
		return d.Append(buf, 'f')
	}
	if d.Negative {
		buf = append(buf, '-')
	}
	var scratch [20]byte
	digits := strconv.AppendUint(scratch[:0], d.Coeff.Uint64(), 10)
	if d.Exponent >= 0 {
		buf = append(buf, digits...)
		for range d.Exponent {
			buf = append(buf, '0')
		}
		return buf
	}
	frac := -int(d.Exponent) // digits after the point
	if whole := len(digits) - frac; whole > 0 {
		buf = append(buf, digits[:whole]...)
		buf = append(buf, '.')
		return append(buf, digits[whole:]...)
	}
	buf = append(buf, '0', '.')
	for range frac - len(digits) {
		buf = append(buf, '0')
	}
	return append(buf, digits...)
}

func value(d types.Datum, t types.Type) pq.Value {
	switch t.Kind {
	case types.KindBool:
		return pq.BooleanValue(d.Bool())
	case types.KindInt16, types.KindInt32:
		return pq.Int32Value(int32(d.Int64()))
	case types.KindInt64:
		return pq.Int64Value(d.Int64())
	case types.KindFloat32:
		return pq.FloatValue(float32(d.Float64()))
	case types.KindFloat64:
		return pq.DoubleValue(d.Float64())
	case types.KindChar, types.KindVarchar, types.KindText:
		return pq.ByteArrayValue(stringBytes(d.Str()))
	case types.KindNumeric:
		return pq.ByteArrayValue([]byte(d.Decimal().Text('f')))
	case types.KindUUID:
		u := d.UUID()
		return pq.FixedLenByteArrayValue(u[:])
	case types.KindBytea:
		return pq.ByteArrayValue(d.Bytes())
	case types.KindDate:
		return pq.Int32Value(d.Date())
	case types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		return pq.Int64Value(d.Micros())
	case types.KindInterval:
		iv := d.Interval()
		var b [16]byte
		binary.LittleEndian.PutUint32(b[0:], uint32(iv.Months))
		binary.LittleEndian.PutUint32(b[4:], uint32(iv.Days))
		binary.LittleEndian.PutUint64(b[8:], uint64(iv.Micros))
		return pq.FixedLenByteArrayValue(b[:])
	case types.KindJSONB:
		return pq.ByteArrayValue(stringBytes(d.JSONB()))
	}
	panic(fmt.Sprintf("parquet: no mapping for %s", t))
}

func datum(v pq.Value, t types.Type) (types.Datum, error) {
	switch t.Kind {
	case types.KindBool:
		return types.NewBool(v.Boolean()), nil
	case types.KindInt16:
		return types.NewInt16(int16(v.Int32())), nil
	case types.KindInt32:
		return types.NewInt32(v.Int32()), nil
	case types.KindInt64:
		return types.NewInt64(v.Int64()), nil
	case types.KindFloat32:
		return types.NewFloat32(v.Float()), nil
	case types.KindFloat64:
		return types.NewFloat64(v.Double()), nil
	case types.KindChar:
		return types.NewChar(string(v.ByteArray())), nil
	case types.KindVarchar:
		return types.NewVarchar(string(v.ByteArray())), nil
	case types.KindText:
		return types.NewText(string(v.ByteArray())), nil
	case types.KindNumeric:
		d, _, err := apd.NewFromString(string(v.ByteArray()))
		if err != nil {
			return types.Datum{}, err
		}
		return types.NewNumeric(d), nil
	case types.KindUUID:
		var u [16]byte
		if copy(u[:], v.ByteArray()) != 16 {
			return types.Datum{}, errors.New("short UUID")
		}
		return types.NewUUID(u), nil
	case types.KindBytea:
		return types.NewBytea(append([]byte(nil), v.ByteArray()...)), nil
	case types.KindDate:
		return types.NewDate(v.Int32()), nil
	case types.KindTime:
		return types.NewTime(v.Int64()), nil
	case types.KindTimestamp:
		return types.NewTimestamp(v.Int64()), nil
	case types.KindTimestampTZ:
		return types.NewTimestampTZ(v.Int64()), nil
	case types.KindInterval:
		b := v.ByteArray()
		if len(b) != 16 {
			return types.Datum{}, errors.New("bad INTERVAL width")
		}
		return types.NewInterval(types.IntervalValue{
			Months: int32(binary.LittleEndian.Uint32(b[0:])),
			Days:   int32(binary.LittleEndian.Uint32(b[4:])),
			Micros: int64(binary.LittleEndian.Uint64(b[8:])),
		}), nil
	case types.KindJSONB:
		return types.NewJSONB(string(v.ByteArray()))
	}
	return types.Datum{}, fmt.Errorf("no mapping for %s", t)
}

// Decode reads a data file written with schema fileSchema and returns its
// records as rows of readSchema: columns are matched by field ID through
// their names in fileSchema, and columns readSchema added later are NULL.
// Keys are encoded from readSchema's primary key. name (the file's path)
// appears in errors, which wrap base.ErrCorruption.
func Decode(name string, data []byte, fileSchema, readSchema *schema.Schema) ([]record.KV, error) {
	blk, err := DecodeBlock(name, data, fileSchema, readSchema)
	if err != nil {
		return nil, err
	}
	return blk.KVs(), nil
}

// DecodeBlock is Decode returning the records as a block: pages are
// decoded straight into the block's column vectors, without a datum per
// value.
func DecodeBlock(name string, data []byte, fileSchema, readSchema *schema.Schema) (*record.Block, error) {
	corrupt := func(what string, err error) error {
		return fmt.Errorf("data file %s: %s: %v: %w", name, what, err, base.ErrCorruption)
	}
	f, err := pq.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return nil, corrupt("open", err)
	}
	if v, _ := f.Lookup("strata.format.version"); v != strconv.Itoa(FormatVersion) {
		return nil, fmt.Errorf("data file %s: unknown format version %q: %w", name, v, base.ErrCorruption)
	}
	ps := f.Schema()
	byID := map[int]string{}
	for _, fl := range fileSchema.Fields {
		byID[fl.ID] = fl.Name
	}
	seqLeaf, ok1 := ps.Lookup(SeqColumn)
	kindLeaf, ok2 := ps.Lookup(KindColumn)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("data file %s: system columns missing: %w", name, base.ErrCorruption)
	}
	// target[leaf column] is the read schema position it fills, -1 for
	// none, -2 for the sequence number, -3 for the row kind.
	target := make([]int, len(ps.Columns()))
	for i := range target {
		target[i] = -1
	}
	target[seqLeaf.ColumnIndex], target[kindLeaf.ColumnIndex] = -2, -3
	for i, fl := range readSchema.Fields {
		old, ok := byID[fl.ID]
		if !ok {
			continue
		}
		leaf, ok := ps.Lookup(old)
		if !ok {
			return nil, fmt.Errorf("data file %s: column %q missing: %w", name, old, base.ErrCorruption)
		}
		target[leaf.ColumnIndex] = i
	}
	ts := readSchema.Types()
	keyCols, keyTypes := readSchema.KeyIndexes(), readSchema.KeyTypes()
	total := int(f.NumRows())
	out := record.NewBlockLen(ts, len(keyCols) > 0, total)
	// Columns the file does not hold (added to the schema later) are NULL.
	filled := make([]bool, len(ts))
	for _, t := range target {
		if t >= 0 {
			filled[t] = true
		}
	}
	for t, ok := range filled {
		if !ok {
			for i := range out.Cols[t].Nulls {
				out.Cols[t].Nulls[i] = true
			}
		}
	}
	// maxDef[leaf column] is its maximum definition level.
	maxDef := make([]int, len(ps.Columns()))
	for ci, path := range ps.Columns() {
		leaf, _ := ps.Lookup(path...)
		maxDef[ci] = leaf.MaxDefinitionLevel
	}
	rowGroups := f.Metadata().RowGroups
	// decodeColumn reads column chunk ci of row group rg, whose rows are
	// [first, first+n), into out: directly (directChunk) where it can,
	// else through parquet-go's pages.
	decodeColumn := func(rg, ci int, chunk pq.ColumnChunk, first, n int) error {
		t := target[ci]
		if rg < len(rowGroups) && ci < len(rowGroups[rg].Columns) {
			err := directChunk(data, &rowGroups[rg].Columns[ci].MetaData, maxDef[ci], t, ts, out, first, n)
			if err == nil {
				return nil
			}
			if err != errNotDirect {
				return corrupt("column "+ps.Columns()[ci][0], err)
			}
		}
		vbuf := make([]pq.Value, 1024)
		row := first
		pages := chunk.Pages()
		err := func() error {
			defer pages.Close()
			for {
				page, err := pages.ReadPage()
				if err == io.EOF {
					return nil
				}
				if err != nil {
					return corrupt("read page", err)
				}
				// The page's buffers go back to parquet-go's pool once
				// it is read: nothing refers to them afterwards (text is
				// copied out, fastPage's too).
				err = func() error {
					defer pq.Release(page)
					if next, ok := fastPage(page, t, ts, out, row, first+n); ok {
						row = next
						return nil
					}
					vr := page.Values()
					for {
						k, err := vr.ReadValues(vbuf)
						if row+k > first+n {
							return corrupt("column "+ps.Columns()[ci][0], errors.New("more values than rows"))
						}
						for _, v := range vbuf[:k] {
							r := row
							row++
							switch t {
							case -2:
								out.Seqs[r] = base.SeqNum(v.Int64())
							case -3:
								out.Kinds[r] = types.RowKind(v.Int32())
								if !out.Kinds[r].Valid() {
									return corrupt("row kind", fmt.Errorf("%d", v.Int32()))
								}
							default:
								if v.IsNull() {
									out.Cols[t].Nulls[r] = true
									continue
								}
								d, err := datum(v, ts[t])
								if err != nil {
									return corrupt("column "+readSchema.Fields[t].Name, err)
								}
								out.Set(t, r, d)
							}
						}
						if err == io.EOF {
							break
						}
						if err != nil {
							return corrupt("read values", err)
						}
					}
					return nil
				}()
				if err != nil {
					return err
				}
			}
		}()
		if err != nil {
			return err
		}
		if row != first+n {
			return corrupt("column "+ps.Columns()[ci][0], fmt.Errorf("%d values for %d rows", row-first, n))
		}
		return nil
	}
	// The schema is flat (no repeated fields), so the i-th value of every
	// column chunk belongs to the i-th row of its row group: columns are
	// read without assembling rows, each into its own part of out, so the
	// columns of a row group are decoded in parallel (a scan decodes a few
	// files at a time; their columns keep every core busy until the last
	// file is done).
	first := 0
	for rgi, rg := range f.RowGroups() {
		n := int(rg.NumRows())
		if first+n > total {
			return nil, fmt.Errorf("data file %s: row groups hold more rows than the footer's %d: %w", name, total, base.ErrCorruption)
		}
		chunks := rg.ColumnChunks()
		errs := make([]error, len(chunks))
		var wg sync.WaitGroup
		for ci, chunk := range chunks {
			if ci >= len(target) || target[ci] == -1 {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[ci] = decodeColumn(rgi, ci, chunk, first, n)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return nil, err
			}
		}
		first += n
	}
	if first != total {
		return nil, corrupt("row groups", fmt.Errorf("%d rows, footer says %d", first, total))
	}
	if len(keyCols) > 0 {
		encodeKeys(out, keyCols, keyTypes)
	}
	return out, nil
}

// encodeKeys sets the memcomparable keys (types.EncodeKey) of the records
// of out, one after another in out.Keys. A lone BIGINT key, the most
// common, is encoded inline (marker byte 01, then the value big-endian
// with the sign bit flipped, as internal/types/keyenc.md has it) rather
// than through the general encoder; a NULL key value sends it back to the
// general path.
func encodeKeys(out *record.Block, keyCols []int, keyTypes []types.Type) {
	n := out.Len()
	if len(keyCols) == 1 && keyTypes[0].Kind == types.KindInt64 && !slices.Contains(out.Cols[keyCols[0]].Nulls, true) {
		const width = 9
		keys := make([]byte, width*n)
		for i, x := range out.Cols[keyCols[0]].Ints {
			k := keys[width*i : width*i+width : width*i+width]
			k[0] = 1
			binary.BigEndian.PutUint64(k[1:], uint64(x)^(1<<63))
			out.KeyOffs[i+1] = width * (i + 1)
		}
		out.Keys = keys
		return
	}
	idx := make([]int, len(keyCols))
	for j := range idx {
		idx[j] = j
	}
	row := make(types.Row, len(keyCols))
	var keys []byte
	for i := 0; i < n; i++ {
		for j, c := range keyCols {
			row[j] = out.Cols[c].Get(i)
		}
		keys = types.EncodeKey(keys, row, idx, keyTypes)
		out.KeyOffs[i+1] = len(keys)
	}
	out.Keys = keys
}

// fastSnappy is the Snappy codec with the faster of the two block
// encoders of github.com/klauspost/compress (parquet-go's own Snappy codec
// uses the slower "better" one). Its output is standard Snappy, read by
// any Snappy decoder; only the compression ratio differs slightly.
type fastSnappy struct{}

func (fastSnappy) String() string                            { return "SNAPPY" }
func (fastSnappy) CompressionCodec() format.CompressionCodec { return format.Snappy }
func (fastSnappy) Encode(dst, src []byte) ([]byte, error) {
	return s2.EncodeSnappy(dst, src), nil
}
func (fastSnappy) Decode(dst, src []byte) ([]byte, error) { return s2.Decode(dst, src) }

// stringBytes views s as bytes without copying. The writer copies values
// into its page buffers and never writes through them, and strings are
// immutable, so sharing is safe; it saves a copy per string value.
func stringBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// fastPage decodes a plain-encoded page of a common type straight from its
// value buffer and definition levels into the block's vectors, without a
// parquet.Value per cell. It fills column t (or the system columns, t = -2
// and -3) of out from row on and returns the next row; ok is false when
// the page is of another kind (dictionary-encoded, other types), which the
// generic path then reads.
func fastPage(page pq.Page, t int, ts []types.Type, out *record.Block, row, end int) (next int, ok bool) {
	if page.Dictionary() != nil || len(page.RepetitionLevels()) > 0 {
		return row, false
	}
	var kind types.Kind
	switch t {
	case -2:
		kind = types.KindInt64
	case -3:
		kind = types.KindInt32
	default:
		kind = ts[t].Kind
	}
	data := page.Data()
	levels := page.DefinitionLevels()
	rows := int(page.NumValues())
	if len(levels) > 0 && len(levels) != rows {
		return row, false
	}
	if row+rows > end {
		return row, false // the generic path reports the corruption
	}
	nonNull := rows
	if len(levels) > 0 {
		nonNull = 0
		for _, l := range levels {
			if l != 0 {
				nonNull++
			}
		}
	}
	var vec *types.Vector
	if t >= 0 {
		vec = &out.Cols[t]
	}
	// setNulls marks the page's absent values; it returns whether the
	// page has any (the loops below then skip them).
	setNulls := func() bool {
		if nonNull == rows {
			return false
		}
		for i, l := range levels {
			if l == 0 {
				vec.Nulls[row+i] = true
			}
		}
		return true
	}
	switch kind {
	case types.KindInt64, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		vals := data.Int64()
		if len(vals) != nonNull {
			return row, false
		}
		if t == -2 {
			if nonNull != rows {
				return row, false
			}
			for i, v := range vals {
				out.Seqs[row+i] = base.SeqNum(v)
			}
			break
		}
		if !setNulls() {
			copy(vec.Ints[row:row+rows], vals)
			break
		}
		j := 0
		for i, l := range levels {
			if l != 0 {
				vec.Ints[row+i] = vals[j]
				j++
			}
		}
	case types.KindInt32, types.KindInt16, types.KindDate:
		vals := data.Int32()
		if len(vals) != nonNull {
			return row, false
		}
		if t == -3 {
			if nonNull != rows {
				return row, false
			}
			for i, v := range vals {
				k := types.RowKind(v)
				if !k.Valid() {
					return row, false // the generic path reports the corruption
				}
				out.Kinds[row+i] = k
			}
			break
		}
		if !setNulls() {
			for i, v := range vals {
				vec.Ints[row+i] = int64(v)
			}
			break
		}
		j := 0
		for i, l := range levels {
			if l != 0 {
				vec.Ints[row+i] = int64(vals[j])
				j++
			}
		}
	case types.KindFloat64:
		vals := data.Double()
		if len(vals) != nonNull {
			return row, false
		}
		if !setNulls() {
			copy(vec.Floats[row:row+rows], vals)
			break
		}
		j := 0
		for i, l := range levels {
			if l != 0 {
				vec.Floats[row+i] = vals[j]
				j++
			}
		}
	case types.KindText, types.KindVarchar, types.KindChar:
		buf, offsets := data.ByteArray()
		if len(offsets) != nonNull+1 {
			return row, false
		}
		// One string holds the page's bytes; values are slices of it.
		all := string(buf)
		strs := vec.Strs[row : row+rows]
		if !setNulls() {
			for i := range strs {
				strs[i] = all[offsets[i]:offsets[i+1]]
			}
			break
		}
		j := 0
		for i, l := range levels {
			if l != 0 {
				strs[i] = all[offsets[j]:offsets[j+1]]
				j++
			}
		}
	default:
		return row, false
	}
	return row + rows, true
}

// encoded gives a column node of kind k its encoding and compression:
// integer columns (the system columns, SMALLINT, INTEGER, BIGINT, DATE,
// TIME, TIMESTAMP, TIMESTAMPTZ) DELTA_BINARY_PACKED and uncompressed, the
// others parquet-go's default encoding and Snappy. Delta bit-packing suits the integers a table
// holds (keys sorted within a file, sequence numbers, counters, times)
// better than Snappy over their plain bytes: on the table bench's data the
// files are half the size, and reading them costs less, since unpacking
// (vectorised in parquet-go) is cheaper than decompressing.
func encoded(n pq.Node, k types.Kind) pq.Node {
	switch k {
	case types.KindInt16, types.KindInt32, types.KindInt64, types.KindDate,
		types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		return pq.Compressed(pq.Encoded(n, &pq.DeltaBinaryPacked), &pq.Uncompressed)
	}
	return pq.Compressed(n, fastSnappy{})
}
