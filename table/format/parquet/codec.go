package parquet

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
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
	n = pq.Compressed(n, fastSnappy{})
	if !key {
		n = pq.Optional(n)
	}
	return n, nil
}

// Schema returns the Parquet schema of data files of s.
func Schema(s *schema.Schema) (*pq.Schema, error) {
	g := pq.Group{SeqColumn: pq.Int(64), KindColumn: pq.Int(8)}
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
	buf := encodeBuffers.Get().(*bytes.Buffer)
	buf.Reset()
	defer func() {
		if buf.Cap() <= maxPooledBuffer {
			encodeBuffers.Put(buf)
		}
	}()
	// Min/max statistics go into the column chunks and the page index,
	// where readers look for them; the copy in every data page header
	// (which the Parquet format deprecates in favour of the page index)
	// would cost a second pass over every page's values.
	w := pq.NewWriter(buf, ps,
		pq.DataPageStatistics(false),
		pq.KeyValueMetadata("strata.format.version", strconv.Itoa(FormatVersion)),
		pq.KeyValueMetadata("strata.schema.id", strconv.FormatInt(int64(s.ID), 10)))
	// The schema is flat, so every row has exactly one value per leaf
	// column: rows are read once per batch (they sit scattered in memory,
	// so touching each once matters most), their values gathered into one
	// array per column, and each column's batch is handed to its column
	// writer, which copies it. The row group's row count is that of its
	// columns, which all receive len(kvs) values.
	writers := w.ColumnWriters()
	const batch = 1024
	seqCol, kindCol := seqLeaf.ColumnIndex, kindLeaf.ColumnIndex
	colVals := make([][]pq.Value, len(writers))
	for i := range colVals {
		colVals[i] = make([]pq.Value, batch)
	}
	colTypes := make([]types.Type, len(cols))
	defs := make([]int, len(cols))
	for j, c := range cols {
		colTypes[j] = s.Fields[c.field].Type
		if c.opt {
			defs[j] = 1
		}
	}
	for start := 0; start < len(kvs); start += batch {
		part := kvs[start:min(start+batch, len(kvs))]
		if !contiguous(part) {
			touchRows(part)
		}
		// Column by column within the batch: each column's loop knows its
		// type, and the batch's rows (a few hundred KB) stay in cache
		// from one column to the next.
		seqVals, kindVals := colVals[seqCol][:len(part)], colVals[kindCol][:len(part)]
		// Required columns: levels 0, the zero value's (see fillColumn).
		for i := range part {
			seqVals[i] = pq.Int64Value(int64(part[i].Seq))
			kindVals[i] = pq.Int32Value(int32(part[i].Kind))
		}
		for j, c := range cols {
			if !fillColumn(colVals[c.index][:len(part)], part, c, colTypes[j], defs[j]) {
				return nil, fmt.Errorf("column %q: NULL in a key column: %w", s.Fields[c.field].Name, base.ErrInvalidArgument)
			}
		}
		for ci, cw := range writers {
			if _, err := cw.WriteRowValues(colVals[ci][:len(part)]); err != nil {
				return nil, err
			}
		}
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return bytes.Clone(buf.Bytes()), nil
}

// encodeBuffers holds the buffers files are encoded into: a file grows its
// buffer by doubling, and a fresh buffer per file allocated about twice
// the file's size on the way (most of the encoder's allocations). The
// encoded file is copied out once, at its exact size.
var encodeBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer bounds the buffers kept for reuse.
const maxPooledBuffer = 64 << 20

// fillColumn sets vals[i] to the Parquet value of column c of part[i], at
// definition level def (1 for optional columns). It returns false if a
// required column holds a NULL. Values of the common types get only their
// definition level set: a column writer reads no other level of a flat
// column's values, and the whole-value Level costs a copy per value.
func fillColumn(vals []pq.Value, part []record.KV, c column, t types.Type, def int) bool {
	f, idx := c.field, c.index
	null := pq.NullValue().Level(0, 0, idx)
	switch t.Kind {
	case types.KindInt64:
		for i := range part {
			d := &part[i].Row[f]
			if d.IsNull() {
				if !c.opt {
					return false
				}
				vals[i] = null
				continue
			}
			v := &vals[i]
			*v = pq.Int64Value(d.Int64())
			v.SetDefinitionLevel(def)
		}
	case types.KindChar, types.KindVarchar, types.KindText:
		for i := range part {
			d := &part[i].Row[f]
			if d.IsNull() {
				if !c.opt {
					return false
				}
				vals[i] = null
				continue
			}
			v := &vals[i]
			*v = pq.ByteArrayValue(stringBytes(d.Str()))
			v.SetDefinitionLevel(def)
		}
	default:
		for i := range part {
			d := &part[i].Row[f]
			if d.IsNull() {
				if !c.opt {
					return false
				}
				vals[i] = null
				continue
			}
			vals[i] = value(*d, t).Level(0, def, idx)
		}
	}
	return true
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
	out := make([]record.KV, total)
	// Rows are carved from one slab per file rather than allocated one by
	// one.
	width := len(ts)
	slab := make([]types.Datum, total*width)
	for i := range out {
		out[i].Row = types.Row(slab[i*width : (i+1)*width : (i+1)*width])
	}
	// The schema is flat (no repeated fields), so the i-th value of every
	// column chunk belongs to the i-th row of its row group: columns are
	// read one at a time, without assembling rows.
	vbuf := make([]pq.Value, 1024)
	first := 0
	for _, rg := range f.RowGroups() {
		n := int(rg.NumRows())
		if first+n > total {
			return nil, fmt.Errorf("data file %s: row groups hold more rows than the footer's %d: %w", name, total, base.ErrCorruption)
		}
		for ci, chunk := range rg.ColumnChunks() {
			if ci >= len(target) || target[ci] == -1 {
				continue
			}
			t := target[ci]
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
					if next, ok := fastPage(page, t, ts, out, row, first+n); ok {
						row = next
						continue
					}
					vr := page.Values()
					for {
						k, err := vr.ReadValues(vbuf)
						if row+k > first+n {
							return corrupt("column "+ps.Columns()[ci][0], errors.New("more values than rows"))
						}
						for _, v := range vbuf[:k] {
							kv := &out[row]
							row++
							switch t {
							case -2:
								kv.Seq = base.SeqNum(v.Int64())
							case -3:
								kv.Kind = types.RowKind(v.Int32())
								if !kv.Kind.Valid() {
									return corrupt("row kind", fmt.Errorf("%d", v.Int32()))
								}
							default:
								if v.IsNull() {
									continue
								}
								d, err := datum(v, ts[t])
								if err != nil {
									return corrupt("column "+readSchema.Fields[t].Name, err)
								}
								kv.Row[t] = d
							}
						}
						if err == io.EOF {
							break
						}
						if err != nil {
							return corrupt("read values", err)
						}
					}
				}
			}()
			if err != nil {
				return nil, err
			}
			if row != first+n {
				return nil, corrupt("column "+ps.Columns()[ci][0], fmt.Errorf("%d values for %d rows", row-first, n))
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

// encodeKeys sets the memcomparable key (types.EncodeKey) of every record
// of out, carved from one block. A lone BIGINT key, the most common, is
// encoded inline (marker byte 01, then the value big-endian with the sign
// bit flipped, as internal/types/keyenc.md has it) rather than through the
// general encoder; a NULL key value sends it back to the general path.
func encodeKeys(out []record.KV, keyCols []int, keyTypes []types.Type) {
	if len(keyCols) == 1 && keyTypes[0].Kind == types.KindInt64 {
		const width = 9
		keys := make([]byte, width*len(out))
		c := keyCols[0]
		ok := true
		for i := range out {
			d := &out[i].Row[c]
			if d.IsNull() {
				ok = false
				break
			}
			k := keys[width*i : width*i+width : width*i+width]
			k[0] = 1
			binary.BigEndian.PutUint64(k[1:], uint64(d.Int64())^(1<<63))
			out[i].Key = k
		}
		if ok {
			return
		}
	}
	var keys []byte
	for i := range out {
		start := len(keys)
		keys = types.EncodeKey(keys, out[i].Row, keyCols, keyTypes)
		out[i].Key = keys[start:len(keys):len(keys)]
	}
}

// contiguous reports whether the rows of kvs lie one after another in
// memory, as in a decoded file, a buffer sorted by mergetree.SortMerge or
// a compaction's output: the encoding loop then reads them in order, and
// touchRows would only add a pass.
func contiguous(kvs []record.KV) bool {
	const size = unsafe.Sizeof(types.Datum{})
	for i := 1; i < len(kvs); i++ {
		prev, cur := kvs[i-1].Row, kvs[i].Row
		if len(prev) == 0 || len(cur) == 0 ||
			uintptr(unsafe.Pointer(unsafe.SliceData(prev)))+uintptr(len(prev))*size != uintptr(unsafe.Pointer(unsafe.SliceData(cur))) {
			return false
		}
	}
	return true
}

// touched keeps touchRows' loads from being optimised away.
var touched types.Kind

// touchRows reads one byte of every datum of kvs' rows in a tight loop.
// Rows of a sorted buffer sit scattered in memory; loads that depend on
// nothing else let the processor fetch many rows' cache lines at once,
// where the encoding loop, with its long body per row, would wait for
// them one at a time.
func touchRows(kvs []record.KV) {
	var k types.Kind
	for i := range kvs {
		for j := range kvs[i].Row {
			k |= kvs[i].Row[j].Kind()
		}
	}
	touched = k
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
// value buffer and definition levels, without a parquet.Value per cell. It
// fills column t (or the system columns, t = -2 and -3) of out from row on
// and returns the next row; ok is false when the page is of another kind
// (dictionary-encoded, other types), which the generic path then reads.
func fastPage(page pq.Page, t int, ts []types.Type, out []record.KV, row, end int) (next int, ok bool) {
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
	present := func(i int) bool { return len(levels) == 0 || levels[i] != 0 }
	nonNull := rows
	if len(levels) > 0 {
		nonNull = 0
		for _, l := range levels {
			if l != 0 {
				nonNull++
			}
		}
	}
	switch kind {
	case types.KindInt64, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		vals := data.Int64()
		if len(vals) != nonNull {
			return row, false
		}
		j := 0
		for i := 0; i < rows; i++ {
			if !present(i) {
				continue
			}
			v := vals[j]
			j++
			kv := &out[row+i]
			switch {
			case t == -2:
				kv.Seq = base.SeqNum(v)
			case kind == types.KindInt64:
				kv.Row[t] = types.NewInt64(v)
			case kind == types.KindTime:
				kv.Row[t] = types.NewTime(v)
			case kind == types.KindTimestamp:
				kv.Row[t] = types.NewTimestamp(v)
			default:
				kv.Row[t] = types.NewTimestampTZ(v)
			}
		}
	case types.KindInt32, types.KindInt16, types.KindDate:
		vals := data.Int32()
		if len(vals) != nonNull {
			return row, false
		}
		j := 0
		for i := 0; i < rows; i++ {
			if !present(i) {
				continue
			}
			v := vals[j]
			j++
			kv := &out[row+i]
			switch {
			case t == -3:
				kv.Kind = types.RowKind(v)
				if !kv.Kind.Valid() {
					return row, false // the generic path reports the corruption
				}
			case kind == types.KindInt32:
				kv.Row[t] = types.NewInt32(v)
			case kind == types.KindInt16:
				kv.Row[t] = types.NewInt16(int16(v))
			default:
				kv.Row[t] = types.NewDate(v)
			}
		}
	case types.KindFloat64:
		vals := data.Double()
		if len(vals) != nonNull {
			return row, false
		}
		j := 0
		for i := 0; i < rows; i++ {
			if present(i) {
				out[row+i].Row[t] = types.NewFloat64(vals[j])
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
		j := 0
		for i := 0; i < rows; i++ {
			if !present(i) {
				continue
			}
			str := all[offsets[j]:offsets[j+1]]
			j++
			switch kind {
			case types.KindText:
				out[row+i].Row[t] = types.NewText(str)
			case types.KindVarchar:
				out[row+i].Row[t] = types.NewVarchar(str)
			default:
				out[row+i].Row[t] = types.NewChar(str)
			}
		}
	default:
		return row, false
	}
	return row + rows, true
}
