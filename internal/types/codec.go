package types

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
)

// Row codec (spec: codec.md beside this file): the exact, compact value
// encoding of a row for state, channel state and spill files. Unlike the key
// encoding it keeps every detail (NUMERIC scale, CHAR padding, INTERVAL
// fields, the bits of floats, -0 and NaN payloads included) and does not sort.
//
//	row     = version:1 ncols:uvarint nullbitmap:ceil(ncols/8) value*
//	value   = one per non-NULL column, in column order, encoded by type
//
// Decoding a row with fewer columns than the schema fills the missing
// trailing columns with NULL, so rows written before a nullable column was
// added still decode (schema evolution by adding columns).

// RowCodecVersion is the first byte of every encoded row.
const RowCodecVersion = 1

// AppendRow appends the encoding of row (whose i-th value has type ts[i])
// to dst. A value whose kind does not match its type's family panics.
func AppendRow(dst []byte, row Row, ts []Type) []byte {
	if len(row) != len(ts) {
		panic(fmt.Sprintf("types: AppendRow: %d values for %d types", len(row), len(ts)))
	}
	dst = append(dst, RowCodecVersion)
	dst = binary.AppendUvarint(dst, uint64(len(row)))
	bm := len(dst)
	for range (len(row) + 7) / 8 {
		dst = append(dst, 0)
	}
	for i, d := range row {
		if d.IsNull() {
			dst[bm+i/8] |= 1 << (i % 8)
			continue
		}
		dst = appendValue(dst, d, ts[i])
	}
	return dst
}

func appendValue(dst []byte, d Datum, t Type) []byte {
	if family(d.kind) != family(t.Kind) {
		panic("types: row codec: a " + d.kind.String() + " in a column of type " + t.String())
	}
	switch t.Kind {
	case KindBool:
		return append(dst, byte(d.i))
	case KindInt16, KindInt32, KindInt64, KindDate, KindTime, KindTimestamp, KindTimestampTZ:
		return binary.AppendVarint(dst, d.i)
	case KindFloat32:
		return binary.LittleEndian.AppendUint32(dst, math.Float32bits(float32(d.f)))
	case KindFloat64:
		return binary.LittleEndian.AppendUint64(dst, math.Float64bits(d.f))
	case KindNumeric:
		return appendDecimalValue(dst, d.dec)
	case KindChar, KindVarchar, KindText, KindBytea, KindJSONB:
		dst = binary.AppendUvarint(dst, uint64(len(d.s)))
		return append(dst, d.s...)
	case KindUUID:
		return append(dst, d.s...)
	case KindInterval:
		iv := d.Interval()
		dst = binary.AppendVarint(dst, int64(iv.Months))
		dst = binary.AppendVarint(dst, int64(iv.Days))
		return binary.AppendVarint(dst, iv.Micros)
	}
	panic("types: row codec: unsupported type " + t.String())
}

// appendDecimalValue writes [form|neg<<7:1][exponent:varint][len:uvarint]
// [coefficient magnitude, big-endian].
func appendDecimalValue(dst []byte, d *apd.Decimal) []byte {
	tag := byte(d.Form)
	if d.Negative {
		tag |= 0x80
	}
	dst = append(dst, tag)
	if d.Form != apd.Finite {
		return dst
	}
	dst = binary.AppendVarint(dst, int64(d.Exponent))
	mag := d.Coeff.Bytes() // magnitude; apd keeps the sign in Negative
	dst = binary.AppendUvarint(dst, uint64(len(mag)))
	return append(dst, mag...)
}

// DecodeRow decodes one row encoded by AppendRow with types ts and returns
// it and the rest of b. A row with more columns than ts, a bad version or
// a truncated value gives an error wrapping base.ErrCorruption.
func DecodeRow(b []byte, ts []Type) (Row, []byte, error) {
	if len(b) < 1 {
		return nil, nil, corruptRow("empty input")
	}
	if b[0] != RowCodecVersion {
		return nil, nil, corruptRow(fmt.Sprintf("unknown version %d", b[0]))
	}
	b = b[1:]
	n, k := binary.Uvarint(b)
	if k <= 0 {
		return nil, nil, corruptRow("bad column count")
	}
	b = b[k:]
	if n > uint64(len(ts)) {
		return nil, nil, corruptRow(fmt.Sprintf("%d columns, schema has %d", n, len(ts)))
	}
	nb := int(n+7) / 8
	if len(b) < nb {
		return nil, nil, corruptRow("truncated NULL bitmap")
	}
	bm := b[:nb]
	b = b[nb:]
	row := make(Row, len(ts))
	for i := 0; i < int(n); i++ {
		if bm[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		d, rest, err := decodeValue(b, ts[i])
		if err != nil {
			return nil, nil, fmt.Errorf("column %d (%s): %w", i, ts[i], err)
		}
		row[i] = d
		b = rest
	}
	return row, b, nil
}

func corruptRow(what string) error {
	return fmt.Errorf("row codec: %s: %w", what, base.ErrCorruption)
}

func decodeValue(b []byte, t Type) (Datum, []byte, error) {
	varint := func() (int64, error) {
		v, k := binary.Varint(b)
		if k <= 0 {
			return 0, corruptRow("bad varint")
		}
		b = b[k:]
		return v, nil
	}
	switch t.Kind {
	case KindBool:
		if len(b) < 1 || b[0] > 1 {
			return Null, nil, corruptRow("bad BOOLEAN")
		}
		return NewBool(b[0] == 1), b[1:], nil
	case KindInt16, KindInt32, KindInt64, KindDate, KindTime, KindTimestamp, KindTimestampTZ:
		v, err := varint()
		if err != nil {
			return Null, nil, err
		}
		switch t.Kind {
		case KindInt16:
			if v < math.MinInt16 || v > math.MaxInt16 {
				return Null, nil, corruptRow("SMALLINT out of range")
			}
		case KindInt32, KindDate:
			if v < math.MinInt32 || v > math.MaxInt32 {
				return Null, nil, corruptRow(t.Kind.String() + " out of range")
			}
		case KindTime:
			if v < 0 || v > microsPerDay {
				return Null, nil, corruptRow("TIME out of range")
			}
		}
		return Datum{kind: t.Kind, i: v}, b, nil
	case KindFloat32:
		if len(b) < 4 {
			return Null, nil, corruptRow("truncated REAL")
		}
		return NewFloat32(math.Float32frombits(binary.LittleEndian.Uint32(b))), b[4:], nil
	case KindFloat64:
		if len(b) < 8 {
			return Null, nil, corruptRow("truncated DOUBLE PRECISION")
		}
		return NewFloat64(math.Float64frombits(binary.LittleEndian.Uint64(b))), b[8:], nil
	case KindNumeric:
		if len(b) < 1 {
			return Null, nil, corruptRow("truncated NUMERIC")
		}
		tag := b[0]
		b = b[1:]
		d := &apd.Decimal{Form: apd.Form(tag & 0x7F), Negative: tag&0x80 != 0}
		if d.Form > apd.NaN {
			return Null, nil, corruptRow("bad NUMERIC form")
		}
		if d.Form == apd.Finite {
			e, err := varint()
			if err != nil {
				return Null, nil, err
			}
			if e < math.MinInt32 || e > math.MaxInt32 {
				return Null, nil, corruptRow("NUMERIC exponent out of range")
			}
			n, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < n {
				return Null, nil, corruptRow("truncated NUMERIC coefficient")
			}
			d.Exponent = int32(e)
			d.Coeff.SetBytes(b[k : k+int(n)])
			if !decodableNumeric(d.NumDigits(), e) {
				return Null, nil, corruptRow("NUMERIC out of range")
			}
			b = b[k+int(n):]
		}
		return newNumericOwned(d), b, nil
	case KindChar, KindVarchar, KindText, KindBytea, KindJSONB:
		n, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < n {
			return Null, nil, corruptRow("truncated " + t.Kind.String())
		}
		s := string(b[k : k+int(n)])
		if t.Kind == KindJSONB {
			// Other code trusts a JSONB datum to hold normalized JSON.
			d, err := NewJSONB(s)
			if err != nil || d.s != s {
				return Null, nil, corruptRow("JSONB is not normalized JSON")
			}
		}
		return Datum{kind: t.Kind, s: s}, b[k+int(n):], nil
	case KindUUID:
		if len(b) < 16 {
			return Null, nil, corruptRow("truncated UUID")
		}
		return Datum{kind: KindUUID, s: string(b[:16])}, b[16:], nil
	case KindInterval:
		mo, err := varint()
		if err != nil {
			return Null, nil, err
		}
		dd, err := varint()
		if err != nil {
			return Null, nil, err
		}
		us, err := varint()
		if err != nil {
			return Null, nil, err
		}
		if mo < math.MinInt32 || mo > math.MaxInt32 || dd < math.MinInt32 || dd > math.MaxInt32 {
			return Null, nil, corruptRow("INTERVAL field out of range")
		}
		return NewInterval(IntervalValue{Months: int32(mo), Days: int32(dd), Micros: us}), b, nil
	}
	return Null, nil, fmt.Errorf("row codec: unsupported type %s: %w", t, base.ErrInvalidArgument)
}
