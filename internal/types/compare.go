package types

import (
	"math"
	"strings"

	"github.com/cockroachdb/apd/v3"
)

// Compare orders two datums of the same type family with Postgres semantics
// and returns -1, 0 or +1. NULL sorts before every value and equals NULL
// (this is the order of keys and of ORDER BY ... NULLS FIRST; SQL's
// three-valued comparison is CompareSQL).
//
// Per family:
//   - integers of any width compare by value; REAL and DOUBLE PRECISION by
//     value, with NaN equal to NaN and greater than every number, and -0 = 0;
//   - NUMERIC: -Infinity < numbers < Infinity < NaN; 1.0 = 1.00;
//   - CHAR, VARCHAR and TEXT compare bytewise (the C collation); a CHAR
//     ignores its trailing spaces, as bpchar does;
//   - INTERVAL by Span (a month is 30 days, a day 24 hours);
//   - JSONB as Postgres's jsonb ordering (jsonb.go).
//
// Datums of different families are a caller bug (the binder casts first):
// Compare panics, naming both kinds.
func Compare(a, b Datum) int {
	if a.kind == KindUnknown || b.kind == KindUnknown {
		switch {
		case a.kind == b.kind:
			return 0
		case a.kind == KindUnknown:
			return -1
		default:
			return 1
		}
	}
	fa, fb := family(a.kind), family(b.kind)
	if fa != fb {
		panic("types: Compare of " + a.kind.String() + " with " + b.kind.String())
	}
	switch fa {
	case famBool, famInt, famDate, famTime, famTimestamp, famTimestampTZ:
		return cmpInt(a.i, b.i)
	case famFloat:
		return compareFloat(a.f, b.f)
	case famNumeric:
		return compareDecimal(a.dec, b.dec)
	case famString:
		as, bs := a.s, b.s
		if a.kind == KindChar {
			as = strings.TrimRight(as, " ")
		}
		if b.kind == KindChar {
			bs = strings.TrimRight(bs, " ")
		}
		return strings.Compare(as, bs)
	case famBytes, famUUID:
		return strings.Compare(a.s, b.s)
	case famInterval:
		ah, al := a.Interval().Span()
		bh, bl := b.Interval().Span()
		if ah != bh {
			return cmpInt(ah, bh)
		}
		switch {
		case al < bl:
			return -1
		case al > bl:
			return 1
		}
		return 0
	case famJSONB:
		return compareJSONB(a.s, b.s)
	}
	panic("types: Compare: unknown family")
}

// CompareSQL is SQL's comparison: ok is false when either side is NULL (the
// result is then unknown), otherwise c is Compare(a, b).
func CompareSQL(a, b Datum) (c int, ok bool) {
	if a.IsNull() || b.IsNull() {
		return 0, false
	}
	return Compare(a, b), true
}

// Equal reports whether Compare(a, b) == 0: NULL equals NULL here, as in
// GROUP BY, DISTINCT and keys (IS NOT DISTINCT FROM).
func Equal(a, b Datum) bool { return Compare(a, b) == 0 }

// CompareRows compares a and b column by column on cols (all columns when
// cols is nil) and returns the first non-zero Compare.
func CompareRows(a, b Row, cols []int) int {
	if cols == nil {
		for i := range a {
			if c := Compare(a[i], b[i]); c != 0 {
				return c
			}
		}
		return 0
	}
	for _, i := range cols {
		if c := Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

type typeFamily uint8

const (
	famNone typeFamily = iota
	famBool
	famInt
	famFloat
	famNumeric
	famString
	famBytes
	famUUID
	famDate
	famTime
	famTimestamp
	famTimestampTZ
	famInterval
	famJSONB
)

// SameFamily reports whether values of t and u are stored alike in a
// Vector (the same kind, or kinds of one family such as the integers or
// the character strings), so that Vector.AppendRange may copy a column of
// one into a column of the other.
func (t Type) SameFamily(u Type) bool { return family(t.Kind) == family(u.Kind) }

func family(k Kind) typeFamily {
	switch k {
	case KindBool:
		return famBool
	case KindInt16, KindInt32, KindInt64:
		return famInt
	case KindFloat32, KindFloat64:
		return famFloat
	case KindNumeric:
		return famNumeric
	case KindChar, KindVarchar, KindText:
		return famString
	case KindBytea:
		return famBytes
	case KindUUID:
		return famUUID
	case KindDate:
		return famDate
	case KindTime:
		return famTime
	case KindTimestamp:
		return famTimestamp
	case KindTimestampTZ:
		return famTimestampTZ
	case KindInterval:
		return famInterval
	case KindJSONB:
		return famJSONB
	}
	return famNone
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// compareFloat is Postgres's float8_cmp_internal: NaN = NaN, NaN > all.
func compareFloat(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0 // includes -0 == +0
}

// decimalClass ranks the forms of a NUMERIC: -Infinity, finite, Infinity,
// NaN (Postgres: NaN is greater than every value).
func decimalClass(d *apd.Decimal) int {
	switch d.Form {
	case apd.Infinite:
		if d.Negative {
			return 0
		}
		return 2
	case apd.NaN, apd.NaNSignaling:
		return 3
	}
	return 1
}

func compareDecimal(a, b *apd.Decimal) int {
	ca, cb := decimalClass(a), decimalClass(b)
	if ca != cb {
		return cmpInt(int64(ca), int64(cb))
	}
	if ca != 1 {
		return 0
	}
	return a.Cmp(b)
}
