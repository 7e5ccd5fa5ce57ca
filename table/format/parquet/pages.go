package parquet

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go/encoding/delta"
	"github.com/parquet-go/parquet-go/encoding/plain"
	"github.com/parquet-go/parquet-go/encoding/rle"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
)

// errNotDirect reports a column chunk that directChunk leaves to the
// general reader: a page type, encoding, codec or column type it does not
// decode itself. It is never returned to callers.
var errNotDirect = errors.New("column chunk not decoded directly")

// directChunk decodes column chunk md of file data (a flat column whose
// values are at most optional: maxDef 0 or 1) into column t of out (or the
// system columns, t = -2 sequence numbers and -3 row kinds, of which ts
// says nothing), rows [first, first+n), without parquet-go's page reader.
//
// It reads what this package writes: version 2 data pages, integers
// DELTA_BINARY_PACKED or PLAIN, strings DELTA_LENGTH_BYTE_ARRAY,
// uncompressed or Snappy. Snappy pages go through s2.Decode, and a text
// column's values are slices of the page's decompressed buffer, which
// becomes theirs: no copy of the bytes after decompression. Anything else
// (a dictionary, version 1 pages, other codecs, encodings or types)
// returns errNotDirect before anything is written, or, where it shows up
// after the first page, after clearing the NULL marks it wrote; the
// general reader then reads the chunk. Malformed pages return errors that
// the caller wraps as corruption. Either way the block is the same
// ([direct-same], package doc).
//
// This is the scan's inner loop: where parquet-go's reader decompresses a
// page into a pooled buffer, decodes it into a page of its own and the
// caller then copies the values out (the text bytes once more), the page
// here goes from the file's bytes to the block's vectors in one pass per
// stage.
func directChunk(data []byte, md *format.ColumnMetaData, maxDef int, t int, ts []types.Type, out *record.Block, first, n int) error {
	kind, ok := directKind(md, maxDef, t, ts)
	if !ok {
		return errNotDirect
	}
	start, size := md.DataPageOffset, md.TotalCompressedSize
	if md.DictionaryPageOffset > 0 && md.DictionaryPageOffset < start {
		return errNotDirect
	}
	if start < 0 || size < 0 || start > int64(len(data)) || size > int64(len(data))-start {
		return fmt.Errorf("column chunk at %d+%d outside the file's %d bytes", start, size, len(data))
	}
	buf := data[start : start+size]
	var vec *types.Vector
	if t >= 0 {
		vec = &out.Cols[t]
	}
	var proto thrift.CompactProtocol
	reader := proto.NewReaderFromBytes(nil)
	decoder := thrift.NewDecoder(reader)
	var d pageDecoder
	row, end := first, first+n
	for len(buf) > 0 {
		var h format.PageHeader
		reader.ResetBytes(buf)
		if err := decoder.Decode(&h); err != nil {
			return fmt.Errorf("page header: %w", err)
		}
		buf = buf[reader.(interface{ BytesRead() int }).BytesRead():]
		if h.CompressedPageSize < 0 || int(h.CompressedPageSize) > len(buf) {
			return fmt.Errorf("page of %d bytes, %d left in the chunk", h.CompressedPageSize, len(buf))
		}
		body := buf[:h.CompressedPageSize]
		buf = buf[h.CompressedPageSize:]
		if h.Type == format.IndexPage {
			continue
		}
		if h.Type != format.DataPageV2 || !h.DataPageHeaderV2.Valid {
			if vec != nil {
				clear(vec.Nulls[first:end])
			}
			return errNotDirect
		}
		next, err := d.page(&h, body, md.Codec, maxDef, kind, t, vec, out, row, end)
		if err == errNotDirect && vec != nil {
			clear(vec.Nulls[first:end])
		}
		if err != nil {
			return err
		}
		row = next
	}
	if row != end {
		return fmt.Errorf("%d values for %d rows", row-first, n)
	}
	return nil
}

// directKind returns the column kind directChunk decodes column t as, and
// whether it decodes md at all.
func directKind(md *format.ColumnMetaData, maxDef int, t int, ts []types.Type) (types.Kind, bool) {
	if maxDef > 1 || (md.Codec != format.Uncompressed && md.Codec != format.Snappy) {
		return 0, false
	}
	for _, e := range md.Encoding {
		switch e {
		case format.Plain, format.DeltaBinaryPacked, format.DeltaLengthByteArray, format.RLE, format.BitPacked:
		default:
			return 0, false
		}
	}
	var k types.Kind
	switch t {
	case -2:
		k = types.KindInt64
	case -3:
		k = types.KindInt32
	default:
		k = ts[t].Kind
	}
	switch k {
	case types.KindInt64, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		return types.KindInt64, md.Type == format.Int64
	case types.KindInt32, types.KindInt16, types.KindDate:
		return types.KindInt32, md.Type == format.Int32
	case types.KindText, types.KindVarchar, types.KindChar:
		return types.KindText, md.Type == format.ByteArray
	}
	return 0, false
}

// pageDecoder holds the scratch buffers of one column chunk's pages.
type pageDecoder struct {
	levels []byte
	i32    []int32
	i64    []int64
}

// page decodes one version 2 data page (header h, bytes body) into rows
// [row, ...) of the column and returns the next row.
func (d *pageDecoder) page(h *format.PageHeader, body []byte, codec format.CompressionCodec, maxDef int, kind types.Kind, t int, vec *types.Vector, out *record.Block, row, end int) (int, error) {
	v2 := &h.DataPageHeaderV2.V
	rows := int(v2.NumValues)
	if v2.NumRows != v2.NumValues || rows < 0 || v2.NumNulls < 0 || v2.NumNulls > v2.NumValues {
		return row, fmt.Errorf("page of %d rows, %d values, %d nulls", v2.NumRows, v2.NumValues, v2.NumNulls)
	}
	if rows > end-row {
		return row, fmt.Errorf("more values than rows")
	}
	if v2.RepetitionLevelsByteLength != 0 {
		return row, errNotDirect
	}
	defLen := int(v2.DefinitionLevelsByteLength)
	if defLen < 0 || defLen > len(body) {
		return row, fmt.Errorf("definition levels of %d bytes in a page of %d", defLen, len(body))
	}
	values := body[defLen:]
	// A page is compressed unless its header says otherwise.
	owned := false
	if codec == format.Snappy && (!v2.IsCompressed.Valid || v2.IsCompressed.V) {
		var err error
		if values, err = s2.Decode(nil, values); err != nil {
			return row, err
		}
		owned = true
	}
	nonNull := rows - int(v2.NumNulls)
	var levels []byte
	if maxDef == 1 {
		var err error
		enc := rle.Encoding{BitWidth: 1}
		if d.levels, err = enc.DecodeLevels(d.levels, body[:defLen]); err != nil {
			return row, err
		}
		if len(d.levels) < rows {
			return row, fmt.Errorf("%d definition levels for %d values", len(d.levels), rows)
		}
		levels = d.levels[:rows]
		count := 0
		for _, l := range levels {
			if l > 1 {
				return row, fmt.Errorf("definition level %d", l)
			}
			count += int(l)
		}
		if count != nonNull {
			return row, fmt.Errorf("%d definition levels set, %d values", count, nonNull)
		}
	} else if nonNull != rows || defLen != 0 {
		return row, fmt.Errorf("NULL in a required column")
	}
	if t < 0 && nonNull != rows {
		return row, fmt.Errorf("NULL in a system column")
	}
	if levels != nil && nonNull != rows {
		for i, l := range levels {
			if l == 0 {
				vec.Nulls[row+i] = true
			}
		}
	}
	var err error
	switch kind {
	case types.KindInt64:
		err = d.int64s(v2.Encoding, values, nonNull, t, vec, out, levels, row, rows)
	case types.KindInt32:
		err = d.int32s(v2.Encoding, values, nonNull, t, vec, out, levels, row, rows)
	case types.KindText:
		err = d.texts(v2.Encoding, values, owned, nonNull, vec, levels, row)
	default:
		err = errNotDirect
	}
	return row + rows, err
}

func (d *pageDecoder) int64s(enc format.Encoding, values []byte, nonNull, t int, vec *types.Vector, out *record.Block, levels []byte, row, rows int) error {
	var err error
	switch enc {
	case format.DeltaBinaryPacked:
		var e delta.BinaryPackedEncoding
		d.i64, err = e.DecodeInt64(d.i64[:0], values)
	case format.Plain:
		var e plain.Encoding
		d.i64, err = e.DecodeInt64(d.i64[:0], values)
	default:
		return errNotDirect
	}
	if err != nil {
		return err
	}
	vals := d.i64
	if len(vals) != nonNull {
		return fmt.Errorf("%d values, %d expected", len(vals), nonNull)
	}
	if t == -2 {
		for i, v := range vals {
			out.Seqs[row+i] = base.SeqNum(v)
		}
		return nil
	}
	if nonNull == rows {
		copy(vec.Ints[row:row+rows], vals)
		return nil
	}
	spread(vec.Ints[row:row+rows], vals, levels, false, func(v int64) int64 { return v })
	return nil
}

func (d *pageDecoder) int32s(enc format.Encoding, values []byte, nonNull, t int, vec *types.Vector, out *record.Block, levels []byte, row, rows int) error {
	var err error
	switch enc {
	case format.DeltaBinaryPacked:
		var e delta.BinaryPackedEncoding
		d.i32, err = e.DecodeInt32(d.i32[:0], values)
	case format.Plain:
		var e plain.Encoding
		d.i32, err = e.DecodeInt32(d.i32[:0], values)
	default:
		return errNotDirect
	}
	if err != nil {
		return err
	}
	vals := d.i32
	if len(vals) != nonNull {
		return fmt.Errorf("%d values, %d expected", len(vals), nonNull)
	}
	if t == -3 {
		for i, v := range vals {
			k := types.RowKind(v)
			if int32(k) != v || !k.Valid() {
				return fmt.Errorf("row kind %d", v)
			}
			out.Kinds[row+i] = k
		}
		return nil
	}
	spread(vec.Ints[row:row+rows], vals, levels, nonNull == rows, func(v int32) int64 { return int64(v) })
	return nil
}

// texts decodes a DELTA_LENGTH_BYTE_ARRAY page of strings: the lengths
// (DELTA_BINARY_PACKED), then every value's bytes one after another, which
// end the page. When owned, values is a buffer no one else holds (the
// decompressed page) and the strings share it; otherwise it is the file's
// bytes, which the strings must not keep alive, and the bytes are copied
// once.
func (d *pageDecoder) texts(enc format.Encoding, values []byte, owned bool, nonNull int, vec *types.Vector, levels []byte, row int) error {
	if enc != format.DeltaLengthByteArray {
		return errNotDirect
	}
	var e delta.BinaryPackedEncoding
	var err error
	if d.i32, err = e.DecodeInt32(d.i32[:0], values); err != nil {
		return err
	}
	lens := d.i32
	if len(lens) != nonNull {
		return fmt.Errorf("%d lengths, %d expected", len(lens), nonNull)
	}
	total := 0
	for _, l := range lens {
		if l < 0 {
			return fmt.Errorf("negative length %d", l)
		}
		total += int(l)
		if total > len(values) || total > math.MaxInt32 {
			return fmt.Errorf("values of %d bytes in a page of %d", total, len(values))
		}
	}
	var all string
	switch raw := values[len(values)-total:]; {
	case total == 0:
	case owned:
		all = unsafe.String(unsafe.SliceData(raw), len(raw))
	default:
		all = string(raw)
	}
	off := 0
	if levels == nil || nonNull == len(levels) {
		strs := vec.Strs[row : row+nonNull]
		for i, l := range lens {
			strs[i] = all[off : off+int(l)]
			off += int(l)
		}
		return nil
	}
	strs := vec.Strs[row : row+len(levels)]
	j := 0
	for i, lv := range levels {
		if lv != 0 {
			l := int(lens[j])
			strs[i] = all[off : off+l]
			off += l
			j++
		}
	}
	return nil
}

// spread writes vals (the page's non-NULL values, converted by conv) into
// dst, in order when dense, else at the positions whose definition level
// is 1.
func spread[T any](dst []int64, vals []T, levels []byte, dense bool, conv func(T) int64) {
	if dense {
		for i, v := range vals {
			dst[i] = conv(v)
		}
		return
	}
	j := 0
	for i, l := range levels {
		if l != 0 {
			dst[i] = conv(vals[j])
			j++
		}
	}
}
