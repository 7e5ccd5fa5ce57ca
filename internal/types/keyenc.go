package types

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
)

// Memcomparable key encoding (spec: keyenc.md beside this file).
//
// AppendKey(dst, d, t) appends bytes such that for datums a, b of one type
// family, bytes.Compare(key(a), key(b)) == Compare(a, b), NULL first. Each
// column's encoding is self-delimiting (no encoding is a proper prefix of
// another), so concatenating columns gives a composite key that sorts
// column by column, and a descending column is the bitwise complement of
// its ascending encoding.
//
// Values that Compare calls equal encode to the same bytes: 1.0 and 1.00,
// -0 and 0, every NaN, '1 mon' and '30 days', 'a' and 'a  ' as CHAR. So
// DecodeKey returns a value equal to the original under Compare, not always
// the same representation (NUMERIC scale, INTERVAL fields and CHAR padding
// are canonicalised); the row codec (codec.go) is the exact round trip.

// Column markers.
const (
	keyNull    = 0x00
	keyNotNull = 0x01
)

// Decimal classes, in order.
const (
	decNegInf = 0x01
	decNeg    = 0x02
	decZero   = 0x03
	decPos    = 0x04
	decPosInf = 0x05
	decNaN    = 0x06
)

// KeyOrder is a column's sort direction in a composite key.
type KeyOrder uint8

// Ascending and Descending key orders. Descending complements the bytes,
// so NULLs come last in a descending column.
const (
	Ascending  KeyOrder = 0
	Descending KeyOrder = 1
)

// AppendKey appends the memcomparable encoding of d, of type t, to dst. A
// non-NULL datum whose kind does not belong to t's family panics: that is
// a bug in the caller.
func AppendKey(dst []byte, d Datum, t Type) []byte {
	if d.IsNull() {
		return append(dst, keyNull)
	}
	if family(d.kind) != family(t.Kind) {
		panic("types: AppendKey of a " + d.kind.String() + " as " + t.String())
	}
	dst = append(dst, keyNotNull)
	switch t.Kind {
	case KindBool:
		return append(dst, byte(d.i))
	case KindInt16:
		return binary.BigEndian.AppendUint16(dst, uint16(d.i)^(1<<15))
	case KindInt32, KindDate:
		return binary.BigEndian.AppendUint32(dst, uint32(d.i)^(1<<31))
	case KindInt64, KindTime, KindTimestamp, KindTimestampTZ:
		return binary.BigEndian.AppendUint64(dst, uint64(d.i)^(1<<63))
	case KindFloat32:
		return binary.BigEndian.AppendUint32(dst, floatKey32(float32(d.f)))
	case KindFloat64:
		return binary.BigEndian.AppendUint64(dst, floatKey64(d.f))
	case KindNumeric:
		return appendDecimalKey(dst, d.dec)
	case KindChar, KindVarchar, KindText, KindBytea:
		if d.kind == KindChar {
			return appendEscapedKey(dst, strings.TrimRight(d.s, " "))
		}
		return appendEscapedKey(dst, d.s)
	case KindUUID:
		return append(dst, d.s...)
	case KindInterval:
		hi, lo := d.Interval().Span()
		dst = binary.BigEndian.AppendUint64(dst, uint64(hi)^(1<<63))
		return binary.BigEndian.AppendUint64(dst, lo)
	case KindJSONB:
		return appendJSONKey(dst, d.s)
	}
	panic("types: AppendKey: unsupported type " + t.String())
}

// AppendKeyOrdered is AppendKey followed, for Descending, by complementing
// the bytes it appended.
func AppendKeyOrdered(dst []byte, d Datum, t Type, o KeyOrder) []byte {
	start := len(dst)
	dst = AppendKey(dst, d, t)
	if o == Descending {
		for i := start; i < len(dst); i++ {
			dst[i] = ^dst[i]
		}
	}
	return dst
}

// EncodeKey returns the composite ascending key of row's columns cols with
// types ts (ts[i] is the type of row[cols[i]]), appended to dst.
func EncodeKey(dst []byte, row Row, cols []int, ts []Type) []byte {
	for i, c := range cols {
		dst = AppendKey(dst, row[c], ts[i])
	}
	return dst
}

// DecodeKey reads one ascending column encoding of type t from b and returns
// the datum (equal under Compare to the one encoded; see the package note
// on canonical forms) and the rest of b. A malformed key gives an error
// wrapping base.ErrCorruption.
func DecodeKey(b []byte, t Type) (Datum, []byte, error) {
	if len(b) == 0 {
		return Null, nil, errShortKey(t.String())
	}
	switch b[0] {
	case keyNull:
		return Null, b[1:], nil
	case keyNotNull:
	default:
		return Null, nil, fmt.Errorf("key of %s: bad NULL marker 0x%02x: %w", t, b[0], base.ErrCorruption)
	}
	b = b[1:]
	need := func(n int) error {
		if len(b) < n {
			return errShortKey(t.String())
		}
		return nil
	}
	switch t.Kind {
	case KindBool:
		if err := need(1); err != nil {
			return Null, nil, err
		}
		if b[0] > 1 {
			return Null, nil, fmt.Errorf("key of BOOLEAN: byte 0x%02x: %w", b[0], base.ErrCorruption)
		}
		return NewBool(b[0] == 1), b[1:], nil
	case KindInt16:
		if err := need(2); err != nil {
			return Null, nil, err
		}
		return NewInt16(int16(binary.BigEndian.Uint16(b) ^ (1 << 15))), b[2:], nil
	case KindInt32, KindDate:
		if err := need(4); err != nil {
			return Null, nil, err
		}
		v := int32(binary.BigEndian.Uint32(b) ^ (1 << 31))
		if t.Kind == KindDate {
			return NewDate(v), b[4:], nil
		}
		return NewInt32(v), b[4:], nil
	case KindInt64, KindTime, KindTimestamp, KindTimestampTZ:
		if err := need(8); err != nil {
			return Null, nil, err
		}
		v := int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
		switch t.Kind {
		case KindTime:
			if v < 0 || v > microsPerDay {
				return Null, nil, fmt.Errorf("key of TIME: %d µs: %w", v, base.ErrCorruption)
			}
			return NewTime(v), b[8:], nil
		case KindTimestamp:
			return NewTimestamp(v), b[8:], nil
		case KindTimestampTZ:
			return NewTimestampTZ(v), b[8:], nil
		}
		return NewInt64(v), b[8:], nil
	case KindFloat32:
		if err := need(4); err != nil {
			return Null, nil, err
		}
		return NewFloat32(floatFromKey32(binary.BigEndian.Uint32(b))), b[4:], nil
	case KindFloat64:
		if err := need(8); err != nil {
			return Null, nil, err
		}
		return NewFloat64(floatFromKey64(binary.BigEndian.Uint64(b))), b[8:], nil
	case KindNumeric:
		v, rest, err := decodeDecimalKey(b)
		if err != nil {
			return Null, nil, err
		}
		return newNumericOwned(v), rest, nil
	case KindChar, KindVarchar, KindText, KindBytea:
		s, rest, err := decodeEscapedKey(b, nil)
		if err != nil {
			return Null, nil, err
		}
		return Datum{kind: t.Kind, s: string(s)}, rest, nil
	case KindUUID:
		if err := need(16); err != nil {
			return Null, nil, err
		}
		return Datum{kind: KindUUID, s: string(b[:16])}, b[16:], nil
	case KindInterval:
		if err := need(16); err != nil {
			return Null, nil, err
		}
		hi := int64(binary.BigEndian.Uint64(b) ^ (1 << 63))
		lo := binary.BigEndian.Uint64(b[8:])
		iv, err := intervalFromSpan(hi, lo)
		if err != nil {
			return Null, nil, err
		}
		return NewInterval(iv), b[16:], nil
	case KindJSONB:
		s, rest, err := decodeJSONKey(b)
		if err != nil {
			return Null, nil, err
		}
		return Datum{kind: KindJSONB, s: s}, rest, nil
	}
	return Null, nil, fmt.Errorf("key of unsupported type %s: %w", t, base.ErrInvalidArgument)
}

// DecodeKeyOrdered reads one column encoded by AppendKeyOrdered.
func DecodeKeyOrdered(b []byte, t Type, o KeyOrder) (Datum, []byte, error) {
	if o == Ascending {
		return DecodeKey(b, t)
	}
	// Complement a copy: the length of the column is not known up front, so
	// complement everything; the rest is returned from the original.
	c := make([]byte, len(b))
	for i := range b {
		c[i] = ^b[i]
	}
	d, rest, err := DecodeKey(c, t)
	if err != nil {
		return Null, nil, err
	}
	return d, b[len(b)-len(rest):], nil
}

func errShortKey(what string) error {
	return fmt.Errorf("key of %s: truncated: %w", what, base.ErrCorruption)
}

// floatKey64 maps a float64 to a uint64 whose unsigned order is the float's
// Compare order: -0 becomes +0 and every NaN the same value above +Inf.
func floatKey64(f float64) uint64 {
	if math.IsNaN(f) {
		return math.MaxUint64
	}
	if f == 0 {
		f = 0
	}
	u := math.Float64bits(f)
	if u&(1<<63) != 0 {
		return ^u
	}
	return u | 1<<63
}

func floatFromKey64(u uint64) float64 {
	if u == math.MaxUint64 {
		return math.NaN()
	}
	if u&(1<<63) != 0 {
		return math.Float64frombits(u &^ (1 << 63))
	}
	return math.Float64frombits(^u)
}

func floatKey32(f float32) uint32 {
	if f != f {
		return math.MaxUint32
	}
	if f == 0 {
		f = 0
	}
	u := math.Float32bits(f)
	if u&(1<<31) != 0 {
		return ^u
	}
	return u | 1<<31
}

func floatFromKey32(u uint32) float32 {
	if u == math.MaxUint32 {
		return float32(math.NaN())
	}
	if u&(1<<31) != 0 {
		return math.Float32frombits(u &^ (1 << 31))
	}
	return math.Float32frombits(^u)
}

// appendEscapedKey writes s with 0x00 escaped as 0x00 0xFF and terminated by
// 0x00 0x01, which keeps bytewise order and makes the encoding prefix-free.
func appendEscapedKey(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, 0)
		if i < 0 {
			break
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, 0x00, 0xFF)
		s = s[i+1:]
	}
	dst = append(dst, s...)
	return append(dst, 0x00, 0x01)
}

// decodeEscapedKey reverses appendEscapedKey, appending the bytes to buf.
func decodeEscapedKey(b []byte, buf []byte) ([]byte, []byte, error) {
	for i := 0; i < len(b); i++ {
		if b[i] != 0 {
			continue
		}
		if i+1 >= len(b) {
			break
		}
		switch b[i+1] {
		case 0x01:
			return append(buf, b[:i]...), b[i+2:], nil
		case 0xFF:
			buf = append(buf, b[:i]...)
			buf = append(buf, 0)
			b = b[i+2:]
			i = -1
		default:
			return nil, nil, fmt.Errorf("key string: bad escape 0x00 0x%02x: %w", b[i+1], base.ErrCorruption)
		}
	}
	return nil, nil, errShortKey("string")
}

// appendDecimalKey writes a NUMERIC as [class], and for nonzero finite
// values [exponent:8][digit pairs...][terminator], where the value is
// 0.d1d2d3... × 10^exponent with d1 != 0 and trailing zeros dropped, each
// pair of digits is one byte 1+10*dA+dB (a lone last digit pairs with 0)
// and the terminator is 0x00. Negative values complement everything after
// the class byte, so a larger magnitude sorts first.
func appendDecimalKey(dst []byte, d *apd.Decimal) []byte {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(dst, decNaN)
	case apd.Infinite:
		if d.Negative {
			return append(dst, decNegInf)
		}
		return append(dst, decPosInf)
	}
	if d.Coeff.Sign() == 0 {
		return append(dst, decZero)
	}
	digits := d.Coeff.String()
	if digits[0] == '-' {
		digits = digits[1:]
	}
	exp := int64(d.Exponent) + int64(len(digits))
	digits = strings.TrimRight(digits, "0")
	class := byte(decPos)
	if d.Negative {
		class = decNeg
	}
	dst = append(dst, class)
	start := len(dst)
	dst = binary.BigEndian.AppendUint64(dst, uint64(exp)^(1<<63))
	for i := 0; i < len(digits); i += 2 {
		v := (digits[i] - '0') * 10
		if i+1 < len(digits) {
			v += digits[i+1] - '0'
		}
		dst = append(dst, 1+v)
	}
	dst = append(dst, 0x00)
	if d.Negative {
		for i := start; i < len(dst); i++ {
			dst[i] = ^dst[i]
		}
	}
	return dst
}

func decodeDecimalKey(b []byte) (*apd.Decimal, []byte, error) {
	if len(b) == 0 {
		return nil, nil, errShortKey("NUMERIC")
	}
	class := b[0]
	b = b[1:]
	switch class {
	case decNaN:
		return &apd.Decimal{Form: apd.NaN}, b, nil
	case decPosInf:
		return &apd.Decimal{Form: apd.Infinite}, b, nil
	case decNegInf:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, b, nil
	case decZero:
		return new(apd.Decimal), b, nil
	case decPos, decNeg:
	default:
		return nil, nil, fmt.Errorf("key of NUMERIC: bad class 0x%02x: %w", class, base.ErrCorruption)
	}
	neg := class == decNeg
	get := func(i int) byte {
		if neg {
			return ^b[i]
		}
		return b[i]
	}
	if len(b) < 9 {
		return nil, nil, errShortKey("NUMERIC")
	}
	var eb [8]byte
	for i := range eb {
		eb[i] = get(i)
	}
	exp := int64(binary.BigEndian.Uint64(eb[:]) ^ (1 << 63))
	var digits []byte
	i := 8
	for ; ; i++ {
		if i >= len(b) {
			return nil, nil, errShortKey("NUMERIC")
		}
		v := get(i)
		if v == 0 {
			break
		}
		if v > 100 {
			return nil, nil, fmt.Errorf("key of NUMERIC: bad digit pair byte 0x%02x: %w", v, base.ErrCorruption)
		}
		v--
		digits = append(digits, '0'+v/10, '0'+v%10)
	}
	// Drop the padding zero of an odd count (and any trailing zero).
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	if len(digits) == 0 {
		return nil, nil, fmt.Errorf("key of NUMERIC: nonzero class without digits: %w", base.ErrCorruption)
	}
	e := exp - int64(len(digits))
	if !decodableNumeric(int64(len(digits)), e) {
		return nil, nil, fmt.Errorf("key of NUMERIC: exponent %d out of range: %w", e, base.ErrCorruption)
	}
	var coeff apd.BigInt
	if _, ok := coeff.SetString(string(digits), 10); !ok {
		return nil, nil, fmt.Errorf("key of NUMERIC: bad digits: %w", base.ErrCorruption)
	}
	d := apd.NewWithBigInt(&coeff, int32(e))
	d.Negative = neg
	return d, b[i+1:], nil
}

// intervalFromSpan is the inverse of Span in canonical form: whole 30-day
// months, then days, then microseconds below one day, all with the sign of
// the span.
func intervalFromSpan(hi int64, lo uint64) (IntervalValue, error) {
	neg := hi < 0
	uh, ul := uint64(hi), lo
	if neg {
		ul = ^ul + 1
		uh = ^uh
		if ul == 0 {
			uh++
		}
	}
	if uh >= uint64(microsPerDay) {
		return IntervalValue{}, fmt.Errorf("key of INTERVAL: span out of range: %w", base.ErrCorruption)
	}
	days, micros := bits.Div64(uh, ul, uint64(microsPerDay))
	// Greedy with clamping: whole months first, then days, then the rest in
	// microseconds, each at most what its field holds for the span's sign
	// (a negative field reaches one further: -2^31, -2^63).
	limM, limD, limU := uint64(math.MaxInt32), uint64(math.MaxInt32), uint64(math.MaxInt64)
	if neg {
		limM, limD, limU = limM+1, limD+1, limU+1
	}
	months := min(days/30, limM)
	days -= months * 30
	d := min(days, limD)
	days -= d
	extraHi, extraLo := bits.Mul64(days, uint64(microsPerDay))
	m, carry := bits.Add64(micros, extraLo, 0)
	if extraHi != 0 || carry != 0 || m > limU {
		return IntervalValue{}, fmt.Errorf("key of INTERVAL: span out of range: %w", base.ErrCorruption)
	}
	iv := IntervalValue{Months: int32(months), Days: int32(d), Micros: int64(m)}
	if neg {
		// Two's complement negation; -(2^31) and -(2^63) wrap to themselves.
		iv = IntervalValue{Months: int32(-int64(months)), Days: int32(-int64(d)), Micros: int64(-m)}
	}
	return iv, nil
}
