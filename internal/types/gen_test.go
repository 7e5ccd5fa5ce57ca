package types

import (
	"math"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"pgregory.net/rapid"
)

// Generators for property tests. They favour edge cases: NULL, zero,
// negative numbers, extreme values, NaN and infinities, empty strings,
// strings holding 0x00 and 0xFF bytes, and decimals of the maximum
// precision.

var allKinds = []Kind{
	KindBool, KindInt16, KindInt32, KindInt64, KindFloat32, KindFloat64,
	KindNumeric, KindChar, KindVarchar, KindText, KindUUID, KindBytea,
	KindDate, KindTime, KindTimestamp, KindTimestampTZ, KindInterval, KindJSONB,
}

func genType() *rapid.Generator[Type] {
	return rapid.Custom(func(t *rapid.T) Type {
		k := rapid.SampledFrom(allKinds).Draw(t, "kind")
		switch k {
		case KindNumeric:
			if rapid.Bool().Draw(t, "unconstrained") {
				return Numeric
			}
			p := rapid.OneOf(rapid.IntRange(1, 38), rapid.Just(MaxNumericPrecision)).Draw(t, "p")
			s := rapid.IntRange(0, p).Draw(t, "s")
			ty, _ := NumericType(p, s)
			return ty
		case KindChar:
			ty, _ := CharType(rapid.IntRange(1, 12).Draw(t, "n"))
			return ty
		case KindVarchar:
			if rapid.Bool().Draw(t, "unlimited") {
				return Varchar
			}
			ty, _ := VarcharType(rapid.IntRange(1, 40).Draw(t, "n"))
			return ty
		case KindTime, KindTimestamp, KindTimestampTZ:
			ty, _ := TimeLikeType(k, rapid.SampledFrom([]int{0, 3, 6}).Draw(t, "p"))
			return ty
		}
		return Type{Kind: k}
	})
}

// genDatum draws a value of type ty, NULL one time in eight.
func genDatum(ty Type) *rapid.Generator[Datum] {
	return rapid.Custom(func(t *rapid.T) Datum {
		if rapid.IntRange(0, 7).Draw(t, "null") == 0 {
			return Null
		}
		return genValue(ty).Draw(t, "value")
	})
}

var (
	edgeInt64   = []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32, 255, 256, -256}
	edgeFloat64 = []float64{0, math.Copysign(0, -1), 1, -1, math.NaN(), math.Inf(1), math.Inf(-1),
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0.1, -0.1}
)

func genString(maxLen int) *rapid.Generator[string] {
	return rapid.OneOf(
		rapid.Just(""),
		rapid.StringN(0, maxLen, -1),
		rapid.Custom(func(t *rapid.T) string {
			// Raw bytes, including 0x00, 0x01 and 0xFF, which stress the
			// escaping of the key encoding.
			b := rapid.SliceOfN(rapid.SampledFrom([]byte{0x00, 0x01, 0x02, 'a', 'b', 0xFE, 0xFF}), 0, maxLen).Draw(t, "bytes")
			return string(b)
		}),
	)
}

// genDecimal draws a NUMERIC that fits ty's precision and scale.
func genDecimal(ty Type) *rapid.Generator[*apd.Decimal] {
	return rapid.Custom(func(t *rapid.T) *apd.Decimal {
		if ty.Precision == 0 {
			switch rapid.IntRange(0, 9).Draw(t, "special") {
			case 0:
				return &apd.Decimal{Form: apd.NaN}
			case 1:
				return &apd.Decimal{Form: apd.Infinite}
			case 2:
				return &apd.Decimal{Form: apd.Infinite, Negative: true}
			}
		}
		p, s := int(ty.Precision), int(ty.Scale)
		if p == 0 {
			p = rapid.SampledFrom([]int{1, 5, 20, MaxNumericPrecision}).Draw(t, "digits")
			s = rapid.IntRange(0, p).Draw(t, "scale")
			if rapid.Bool().Draw(t, "negscale") {
				s = -rapid.IntRange(0, 30).Draw(t, "exp")
			}
		}
		n := rapid.IntRange(1, p).Draw(t, "ndigits")
		var digits strings.Builder
		for i := range n {
			lo := 0
			if i == 0 && n > 1 {
				lo = rapid.IntRange(0, 1).Draw(t, "lead") // sometimes a leading zero
			}
			d := rapid.IntRange(lo, 9).Draw(t, "d")
			if rapid.IntRange(0, 3).Draw(t, "zero") == 0 {
				d = 0 // runs of zeros, trailing zeros
			}
			digits.WriteByte(byte('0' + d))
		}
		var coeff apd.BigInt
		coeff.SetString(digits.String(), 10)
		d := apd.NewWithBigInt(&coeff, int32(-s))
		d.Negative = rapid.Bool().Draw(t, "neg")
		return d
	})
}

func genJSONText(depth int) *rapid.Generator[string] {
	return rapid.Custom(func(t *rapid.T) string {
		choices := 5
		if depth > 0 {
			choices = 7
		}
		switch rapid.IntRange(0, choices-1).Draw(t, "jkind") {
		case 0:
			return "null"
		case 1:
			return rapid.SampledFrom([]string{"true", "false"}).Draw(t, "jbool")
		case 2:
			return rapid.SampledFrom([]string{"0", "-1", "1.50", "1e2", "-0.001", "123456789012345678901234567890", "3.0"}).Draw(t, "jnum")
		case 3:
			s := rapid.SampledFrom([]string{"", "a", "b", "ab", "é", "x\ny", `q"uote`, "\u00ff"}).Draw(t, "jstr")
			return appendQuoted(s)
		case 4:
			return appendQuoted(strings.ReplaceAll(rapid.StringN(0, 6, -1).Draw(t, "jstr2"), "\x00", "0"))
		case 5:
			n := rapid.IntRange(0, 3).Draw(t, "alen")
			parts := make([]string, n)
			for i := range parts {
				parts[i] = genJSONText(depth-1).Draw(t, "elem")
			}
			return "[" + strings.Join(parts, ",") + "]"
		default:
			n := rapid.IntRange(0, 3).Draw(t, "olen")
			parts := make([]string, n)
			for i := range parts {
				k := rapid.SampledFrom([]string{"a", "b", "aa", "", "zz", "k"}).Draw(t, "key")
				parts[i] = appendQuoted(k) + ":" + genJSONText(depth-1).Draw(t, "val")
			}
			return "{" + strings.Join(parts, ",") + "}"
		}
	})
}

func appendQuoted(s string) string { return string(appendJSONString(nil, s)) }

func genValue(ty Type) *rapid.Generator[Datum] {
	return rapid.Custom(func(t *rapid.T) Datum {
		switch ty.Kind {
		case KindBool:
			return NewBool(rapid.Bool().Draw(t, "b"))
		case KindInt16:
			return NewInt16(rapid.Int16().Draw(t, "i"))
		case KindInt32:
			return NewInt32(rapid.Int32().Draw(t, "i"))
		case KindInt64:
			return NewInt64(rapid.OneOf(rapid.Int64(), rapid.SampledFrom(edgeInt64)).Draw(t, "i"))
		case KindFloat32:
			f := rapid.OneOf(rapid.Float64(), rapid.SampledFrom(edgeFloat64)).Draw(t, "f")
			return NewFloat32(float32(f))
		case KindFloat64:
			return NewFloat64(rapid.OneOf(rapid.Float64(), rapid.SampledFrom(edgeFloat64),
				rapid.Custom(func(t *rapid.T) float64 {
					// Any bit pattern, NaN payloads included.
					return math.Float64frombits(rapid.Uint64().Draw(t, "bits"))
				})).Draw(t, "f"))
		case KindNumeric:
			return NewNumeric(genDecimal(ty).Draw(t, "dec"))
		case KindChar:
			s := rapid.StringN(0, int(ty.Length), -1).Draw(t, "s")
			return NewChar(s + strings.Repeat(" ", max(0, int(ty.Length)-len([]rune(s)))))
		case KindVarchar:
			n := 20
			if ty.Length > 0 {
				n = int(ty.Length)
			}
			return NewVarchar(genString(n).Draw(t, "s"))
		case KindText:
			return NewText(genString(30).Draw(t, "s"))
		case KindBytea:
			return NewBytea([]byte(genString(30).Draw(t, "s")))
		case KindUUID:
			var u [16]byte
			copy(u[:], rapid.SliceOfN(rapid.Byte(), 16, 16).Draw(t, "u"))
			return NewUUID(u)
		case KindDate:
			return NewDate(rapid.OneOf(
				rapid.Int32Range(MinDate, MaxDate),
				rapid.SampledFrom([]int32{0, -1, DateInfinity, DateNegInfinity}),
			).Draw(t, "days"))
		case KindTime:
			return NewTime(rapid.OneOf(rapid.Int64Range(0, microsPerDay), rapid.SampledFrom([]int64{0, microsPerDay, microsPerDay - 1})).Draw(t, "us"))
		case KindTimestamp, KindTimestampTZ:
			us := rapid.OneOf(
				rapid.Int64Range(MinTimestamp, MaxTimestamp),
				rapid.SampledFrom([]int64{0, -1, 1, TimestampInfinity, TimestampNegInfinity}),
			).Draw(t, "us")
			if ty.Kind == KindTimestamp {
				return NewTimestamp(us)
			}
			return NewTimestampTZ(us)
		case KindInterval:
			return NewInterval(IntervalValue{
				Months: rapid.OneOf(rapid.Int32Range(-12*100000, 12*100000), rapid.SampledFrom([]int32{math.MinInt32, math.MaxInt32})).Draw(t, "months"),
				Days:   rapid.OneOf(rapid.Int32Range(-100000, 100000), rapid.SampledFrom([]int32{0, 30, -30, 31, math.MinInt32, math.MaxInt32})).Draw(t, "days"),
				Micros: rapid.OneOf(rapid.Int64Range(-1e15, 1e15), rapid.SampledFrom([]int64{0, microsPerDay, -microsPerDay, 1, -1, math.MinInt64, math.MaxInt64})).Draw(t, "us"),
			})
		case KindJSONB:
			d, err := NewJSONB(genJSONText(2).Draw(t, "json"))
			if err != nil {
				t.Fatalf("generator made bad JSON: %v", err)
			}
			return d
		}
		t.Fatalf("genValue: unsupported %s", ty)
		return Null
	})
}

// genEqualVariant draws a datum that Compare calls equal to d but that may
// be represented differently: 1.0 vs 1.00, -0 vs 0, NaN payloads, '1 mon'
// vs '30 days', CHAR padding. Key encoding must not tell them apart.
func genEqualVariant(d Datum) *rapid.Generator[Datum] {
	return rapid.Custom(func(t *rapid.T) Datum {
		if !rapid.Bool().Draw(t, "vary") || d.IsNull() {
			return d
		}
		switch d.kind {
		case KindFloat64, KindFloat32:
			if d.f == 0 {
				return Datum{kind: d.kind, f: math.Copysign(0, -1)}
			}
			if math.IsNaN(d.f) {
				return Datum{kind: d.kind, f: math.Float64frombits(0x7FF0000000000001 | rapid.Uint64Range(0, 1<<51).Draw(t, "payload"))}
			}
		case KindNumeric:
			if d.dec.Form == apd.Finite {
				z := rapid.IntRange(1, 5).Draw(t, "zeros")
				var c apd.BigInt
				c.Mul(&d.dec.Coeff, apd.NewBigInt(int64(math.Pow10(z))))
				v := apd.NewWithBigInt(&c, d.dec.Exponent-int32(z))
				v.Negative = d.dec.Negative
				if c.Sign() == 0 {
					v.Negative = rapid.Bool().Draw(t, "negzero")
				}
				return newNumericOwned(v)
			}
		case KindInterval:
			iv := d.Interval()
			if iv.Months > -1000 && iv.Months < 1000 {
				return NewInterval(IntervalValue{Days: iv.Days + 30*iv.Months, Micros: iv.Micros})
			}
			if iv.Days > math.MinInt32 && iv.Micros <= math.MaxInt64-microsPerDay {
				return NewInterval(IntervalValue{Months: iv.Months, Days: iv.Days - 1, Micros: iv.Micros + microsPerDay})
			}
			return d
		case KindChar:
			return NewChar(strings.TrimRight(d.s, " ") + strings.Repeat(" ", rapid.IntRange(0, 3).Draw(t, "pad")))
		case KindJSONB:
			// Re-parse with white space and duplicate keys; same value.
			v, err := NewJSONB(" " + d.s + " ")
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		return d
	})
}
