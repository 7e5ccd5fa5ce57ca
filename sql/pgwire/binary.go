package pgwire

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Postgres's binary formats count dates and timestamps from 2000-01-01;
// Strata counts from 1970-01-01.
const (
	pgEpochDays   = 10957
	pgEpochMicros = pgEpochDays * 86_400_000_000
	// Postgres's binary infinity markers.
	pgDateInfinity    = math.MaxInt32
	pgDateNegInfinity = math.MinInt32
	pgTSInfinity      = math.MaxInt64
	pgTSNegInfinity   = math.MinInt64
)

// appendBinary appends the binary send format of a non-NULL d of type t.
func appendBinary(dst []byte, d types.Datum, t types.Type) ([]byte, error) {
	switch t.Kind {
	case types.KindBool:
		if d.Bool() {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case types.KindInt16:
		return binary.BigEndian.AppendUint16(dst, uint16(d.Int64())), nil
	case types.KindInt32:
		return binary.BigEndian.AppendUint32(dst, uint32(d.Int64())), nil
	case types.KindInt64:
		return binary.BigEndian.AppendUint64(dst, uint64(d.Int64())), nil
	case types.KindFloat32:
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(d.Float64()))), nil
	case types.KindFloat64:
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(d.Float64())), nil
	case types.KindChar, types.KindVarchar, types.KindText, types.KindBytea:
		return append(dst, d.Str()...), nil
	case types.KindUUID:
		u := d.UUID()
		return append(dst, u[:]...), nil
	case types.KindJSONB:
		return append(append(dst, 1), d.JSONB()...), nil
	case types.KindDate:
		v := int64(d.Date())
		switch d.Date() {
		case types.DateInfinity:
			v = pgDateInfinity
		case types.DateNegInfinity:
			v = pgDateNegInfinity
		default:
			v -= pgEpochDays
		}
		return binary.BigEndian.AppendUint32(dst, uint32(int32(v))), nil
	case types.KindTime:
		return binary.BigEndian.AppendUint64(dst, uint64(d.Micros())), nil
	case types.KindTimestamp, types.KindTimestampTZ:
		v := d.Micros()
		switch v {
		case types.TimestampInfinity:
			v = pgTSInfinity
		case types.TimestampNegInfinity:
			v = pgTSNegInfinity
		default:
			v -= pgEpochMicros
		}
		return binary.BigEndian.AppendUint64(dst, uint64(v)), nil
	case types.KindInterval:
		iv := d.Interval()
		dst = binary.BigEndian.AppendUint64(dst, uint64(iv.Micros))
		dst = binary.BigEndian.AppendUint32(dst, uint32(iv.Days))
		return binary.BigEndian.AppendUint32(dst, uint32(iv.Months)), nil
	case types.KindNumeric:
		return appendNumericBinary(dst, d.Decimal()), nil
	}
	return nil, fmt.Errorf("no binary format for type %s: %w", t, base.ErrInvalidArgument)
}

// Postgres numeric sign words.
const (
	numericPos    = 0x0000
	numericNeg    = 0x4000
	numericNaN    = 0xC000
	numericPInf   = 0xD000
	numericNInf   = 0xF000
	numericDigits = 4 // decimal digits per base-10000 digit
)

// appendNumericBinary writes Postgres's numeric_send layout: ndigits,
// weight, sign, dscale (int16 each) and base-10000 digits.
func appendNumericBinary(dst []byte, d *apd.Decimal) []byte {
	put := func(v uint16) { dst = binary.BigEndian.AppendUint16(dst, v) }
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		for _, v := range []uint16{0, 0, numericNaN, 0} {
			put(v)
		}
		return dst
	case apd.Infinite:
		sign := uint16(numericPInf)
		if d.Negative {
			sign = numericNInf
		}
		for _, v := range []uint16{0, 0, sign, 0} {
			put(v)
		}
		return dst
	}
	digits := d.Coeff.String()
	if digits[0] == '-' {
		digits = digits[1:]
	}
	exp := int(d.Exponent)
	if exp > 0 {
		digits += strings.Repeat("0", exp)
		exp = 0
	}
	dscale := -exp
	for len(digits) < dscale+1 {
		digits = "0" + digits
	}
	intPart, frac := digits[:len(digits)-dscale], digits[len(digits)-dscale:]
	if pad := (numericDigits - len(intPart)%numericDigits) % numericDigits; pad > 0 {
		intPart = strings.Repeat("0", pad) + intPart
	}
	if pad := (numericDigits - len(frac)%numericDigits) % numericDigits; pad > 0 {
		frac += strings.Repeat("0", pad)
	}
	all := intPart + frac
	groups := make([]uint16, 0, len(all)/numericDigits)
	for i := 0; i < len(all); i += numericDigits {
		var g uint16
		for _, c := range all[i : i+numericDigits] {
			g = g*10 + uint16(c-'0')
		}
		groups = append(groups, g)
	}
	weight := len(intPart)/numericDigits - 1
	for len(groups) > 0 && groups[0] == 0 {
		groups = groups[1:]
		weight--
	}
	for len(groups) > 0 && groups[len(groups)-1] == 0 {
		groups = groups[:len(groups)-1]
	}
	sign := uint16(numericPos)
	if d.Negative && len(groups) > 0 {
		sign = numericNeg
	}
	if len(groups) == 0 {
		weight = 0
	}
	put(uint16(len(groups)))
	put(uint16(int16(weight)))
	put(sign)
	put(uint16(dscale))
	for _, g := range groups {
		put(g)
	}
	return dst
}

// decodeBinary reads a parameter in binary format as type t.
func decodeBinary(b []byte, t types.Type) (types.Datum, error) {
	need := func(n int) error {
		if len(b) != n {
			return fmt.Errorf("binary %s parameter of %d bytes, want %d: %w", t, len(b), n, base.ErrInvalidArgument)
		}
		return nil
	}
	switch t.Kind {
	case types.KindBool:
		if err := need(1); err != nil {
			return types.Null, err
		}
		return types.NewBool(b[0] != 0), nil
	case types.KindInt16:
		if err := need(2); err != nil {
			return types.Null, err
		}
		return types.NewInt16(int16(binary.BigEndian.Uint16(b))), nil
	case types.KindInt32:
		if err := need(4); err != nil {
			return types.Null, err
		}
		return types.NewInt32(int32(binary.BigEndian.Uint32(b))), nil
	case types.KindInt64:
		if err := need(8); err != nil {
			return types.Null, err
		}
		return types.NewInt64(int64(binary.BigEndian.Uint64(b))), nil
	case types.KindFloat32:
		if err := need(4); err != nil {
			return types.Null, err
		}
		return types.NewFloat32(math.Float32frombits(binary.BigEndian.Uint32(b))), nil
	case types.KindFloat64:
		if err := need(8); err != nil {
			return types.Null, err
		}
		return types.NewFloat64(math.Float64frombits(binary.BigEndian.Uint64(b))), nil
	case types.KindText, types.KindVarchar, types.KindChar:
		return types.ParseText(t, string(b), time.UTC)
	case types.KindBytea:
		return types.NewBytea(b), nil
	case types.KindUUID:
		if err := need(16); err != nil {
			return types.Null, err
		}
		var u [16]byte
		copy(u[:], b)
		return types.NewUUID(u), nil
	case types.KindJSONB:
		if len(b) < 1 || b[0] != 1 {
			return types.Null, fmt.Errorf("binary jsonb parameter without version 1: %w", base.ErrInvalidArgument)
		}
		return types.NewJSONB(string(b[1:]))
	case types.KindDate:
		if err := need(4); err != nil {
			return types.Null, err
		}
		v := int32(binary.BigEndian.Uint32(b))
		switch v {
		case pgDateInfinity:
			return types.NewDate(types.DateInfinity), nil
		case pgDateNegInfinity:
			return types.NewDate(types.DateNegInfinity), nil
		}
		return types.NewDate(int32(int64(v) + pgEpochDays)), nil
	case types.KindTime:
		if err := need(8); err != nil {
			return types.Null, err
		}
		v := int64(binary.BigEndian.Uint64(b))
		if v < 0 || v > 86_400_000_000 {
			return types.Null, fmt.Errorf("binary time parameter out of range: %w", base.ErrOutOfRange)
		}
		return types.NewTime(v), nil
	case types.KindTimestamp, types.KindTimestampTZ:
		if err := need(8); err != nil {
			return types.Null, err
		}
		v := int64(binary.BigEndian.Uint64(b))
		switch v {
		case pgTSInfinity:
			v = types.TimestampInfinity
		case pgTSNegInfinity:
			v = types.TimestampNegInfinity
		default:
			if v > types.MaxTimestamp-pgEpochMicros {
				return types.Null, fmt.Errorf("timestamp out of range: %w", base.ErrOutOfRange)
			}
			v += pgEpochMicros
		}
		if t.Kind == types.KindTimestamp {
			return types.NewTimestamp(v), nil
		}
		return types.NewTimestampTZ(v), nil
	case types.KindInterval:
		if err := need(16); err != nil {
			return types.Null, err
		}
		return types.NewInterval(types.IntervalValue{
			Micros: int64(binary.BigEndian.Uint64(b)),
			Days:   int32(binary.BigEndian.Uint32(b[8:])),
			Months: int32(binary.BigEndian.Uint32(b[12:])),
		}), nil
	case types.KindNumeric:
		return decodeNumericBinary(b)
	}
	return types.Null, fmt.Errorf("no binary format for parameter type %s: %w", t, base.ErrInvalidArgument)
}

func decodeNumericBinary(b []byte) (types.Datum, error) {
	bad := fmt.Errorf("malformed binary numeric parameter: %w", base.ErrInvalidArgument)
	if len(b) < 8 {
		return types.Null, bad
	}
	n := int(binary.BigEndian.Uint16(b))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	dscale := int(binary.BigEndian.Uint16(b[6:]))
	if len(b) != 8+2*n {
		return types.Null, bad
	}
	switch sign {
	case numericNaN:
		return types.NewNumeric(&apd.Decimal{Form: apd.NaN}), nil
	case numericPInf:
		return types.NewNumeric(&apd.Decimal{Form: apd.Infinite}), nil
	case numericNInf:
		return types.NewNumeric(&apd.Decimal{Form: apd.Infinite, Negative: true}), nil
	case numericPos, numericNeg:
	default:
		return types.Null, bad
	}
	var sb strings.Builder
	for i := range n {
		g := binary.BigEndian.Uint16(b[8+2*i:])
		if g > 9999 {
			return types.Null, bad
		}
		fmt.Fprintf(&sb, "%04d", g)
	}
	digits := sb.String()
	if digits == "" {
		digits = "0"
		weight = 0
		n = 1
	}
	// The digits stand for value = 0.digits × 10000^(weight+1).
	exp := (weight + 1 - n) * numericDigits
	d, _, err := apd.NewFromString(digits + "E" + fmt.Sprint(exp))
	if err != nil {
		return types.Null, bad
	}
	d.Negative = sign == numericNeg
	// Show dscale digits after the point, as the client sent them.
	var q apd.Decimal
	// The precision holds every digit left of the point (up to
	// 4 × (weight+1) of them: 1e20 is one group of weight 5) and dscale
	// digits right of it.
	ctx := apd.BaseContext.WithPrecision(uint32(max(len(digits), (weight+1)*numericDigits) + dscale + 8))
	if _, err := ctx.Quantize(&q, d, int32(-dscale)); err != nil {
		return types.Null, bad
	}
	return types.NewNumeric(&q), nil
}
