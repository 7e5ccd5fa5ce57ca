package types

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
)

// Casts follow Postgres's pg_cast: which casts exist, in which contexts
// they apply without a CAST (implicit, assignment, explicit only), and what
// each one computes, with Postgres's errors. The binder asks CanCast and
// ImplicitCastTarget to type an expression and calls Cast to convert
// values; Cast itself performs any cast that exists, whatever the context.

// CastContext is how a cast is applied.
type CastContext struct {
	// Loc is the session time zone: the zone of casts between TIMESTAMPTZ
	// and the zone-less kinds (DATE, TIME, TIMESTAMP) and of TIMESTAMPTZ
	// text. nil means UTC.
	Loc *time.Location
	// Explicit is a CAST(x AS t) or x::t: a string longer than a
	// VARCHAR(n) or CHAR(n) target is cut to n characters silently.
	// Otherwise the cast is an assignment (INSERT, UPDATE SET), where text
	// longer than n is an error unless the excess is spaces.
	Explicit bool
}

// castLevel is the least context in which a cast applies (pg_cast's
// castcontext).
type castLevel uint8

const (
	castNone       castLevel = iota // no such cast
	castExplicit                    // only CAST(...) and ::
	castAssignment                  // also INSERT/UPDATE into a column
	castImplicit                    // also in expressions
)

// numericRank orders the number kinds by implicit widening, as Postgres's
// implicit casts do: int2 < int4 < int8 < numeric < float4 < float8.
func numericRank(k Kind) int {
	switch k {
	case KindInt16:
		return 1
	case KindInt32:
		return 2
	case KindInt64:
		return 3
	case KindNumeric:
		return 4
	case KindFloat32:
		return 5
	case KindFloat64:
		return 6
	}
	return 0
}

// datetimeRank orders date < timestamp < timestamptz.
func datetimeRank(k Kind) int {
	switch k {
	case KindDate:
		return 1
	case KindTimestamp:
		return 2
	case KindTimestampTZ:
		return 3
	}
	return 0
}

func isStringKind(k Kind) bool { return k == KindChar || k == KindVarchar || k == KindText }

// castLevelOf is pg_cast for Strata's kinds, plus Postgres's automatic I/O
// conversion casts: to a string kind in assignment, from one explicitly.
func castLevelOf(from, to Kind) castLevel {
	switch {
	case from == to || from == KindUnknown:
		return castImplicit
	case isStringKind(from) && isStringKind(to):
		return castImplicit
	case isStringKind(to):
		return castAssignment
	case isStringKind(from):
		return castExplicit
	}
	if rf, rt := numericRank(from), numericRank(to); rf > 0 && rt > 0 {
		switch {
		case from == KindNumeric && (to == KindFloat32 || to == KindFloat64):
			return castImplicit // numeric -> float is implicit though it ranks lower
		case rt > rf:
			if from == KindFloat32 && to == KindFloat64 || rf <= 3 {
				return castImplicit
			}
		}
		return castAssignment
	}
	if rf, rt := datetimeRank(from), datetimeRank(to); rf > 0 && rt > 0 {
		if rt > rf {
			return castImplicit
		}
		return castAssignment
	}
	switch {
	case from == KindBool && to == KindInt32, from == KindInt32 && to == KindBool:
		return castExplicit
	case from == KindJSONB:
		switch to {
		case KindBool, KindInt16, KindInt32, KindInt64, KindFloat32, KindFloat64, KindNumeric:
			return castExplicit
		}
	case from == KindTimestamp && to == KindTime, from == KindTimestampTZ && to == KindTime:
		return castAssignment
	case from == KindTime && to == KindInterval:
		return castImplicit
	case from == KindInterval && to == KindTime:
		return castAssignment
	}
	return castNone
}

// CanCast reports whether a value of type from can be cast to type to: in
// any context when explicit (a CAST or ::), else in assignment context
// (storing into a column of type to), which includes the implicit casts.
// For example INTEGER -> SMALLINT is an assignment cast, TEXT -> INTEGER is
// explicit only, and BOOLEAN -> DATE does not exist.
func CanCast(from, to Type, explicit bool) bool {
	l := castLevelOf(from.Kind, to.Kind)
	if explicit {
		return l != castNone
	}
	return l >= castAssignment
}

// ImplicitCastTarget returns the type that two operands of types a and b
// are both implicitly cast to before they are compared or combined (UNION,
// CASE, =), as Postgres resolves them: the wider of two numbers (int2 <
// int4 < int8 < numeric < float4 < float8), TEXT for two string kinds, the
// later of DATE < TIMESTAMP < TIMESTAMPTZ, INTERVAL for TIME with INTERVAL,
// and for an untyped literal (KindUnknown) the other side's type (TEXT
// when both are unknown). Two types of one kind with different modifiers
// give the kind without modifiers (NUMERIC(10,2) with NUMERIC(5,0) is
// NUMERIC), except CHAR(n) with CHAR(m), which gives TEXT. ok is false when no implicit cast joins them (BOOLEAN with
// INTEGER, TEXT with INTEGER).
func ImplicitCastTarget(a, b Type) (Type, bool) {
	switch {
	case a.Kind == KindUnknown && b.Kind == KindUnknown:
		return Text, true
	case a.Kind == KindUnknown:
		return b, true
	case b.Kind == KindUnknown:
		return a, true
	case a == b:
		return a, true
	case a.Kind == b.Kind && a.Kind != KindChar:
		return unmodified(a.Kind), true
	case isStringKind(a.Kind) && isStringKind(b.Kind):
		// Also CHAR(n) with CHAR(m): Postgres gives bpchar without a
		// length, which Type cannot spell (CHAR means CHAR(1)); TEXT
		// compares the same, as the cast to TEXT drops the padding.
		return Text, true
	}
	if ra, rb := numericRank(a.Kind), numericRank(b.Kind); ra > 0 && rb > 0 {
		if ra > rb {
			return unmodified(a.Kind), true
		}
		return unmodified(b.Kind), true
	}
	if ra, rb := datetimeRank(a.Kind), datetimeRank(b.Kind); ra > 0 && rb > 0 {
		if ra > rb {
			return unmodified(a.Kind), true
		}
		return unmodified(b.Kind), true
	}
	if (a.Kind == KindTime && b.Kind == KindInterval) || (a.Kind == KindInterval && b.Kind == KindTime) {
		return Interval, true
	}
	return Unknown, false
}

// unmodified is kind k without modifiers (times at full precision, CHAR
// without a length).
func unmodified(k Kind) Type {
	switch k {
	case KindTime, KindTimestamp, KindTimestampTZ:
		return Type{Kind: k, Precision: MaxTimestampPrecision}
	}
	return Type{Kind: k}
}

func cannotCast(from, to Kind) error {
	return valueErr(codeCannotCoerce, fmt.Sprintf("cannot cast type %s to %s", pgTypeName(from), pgTypeName(to)))
}

func intOutOfRange(k Kind) error {
	return valueErr(codeOutOfRange, pgTypeName(k)+" out of range")
}

// Cast converts d to type to with Postgres's semantics. NULL casts to NULL.
// A cast to the same kind applies the target's modifiers (NUMERIC(p,s)
// rounding, CHAR(n) padding, VARCHAR(n) length, TIME(p)/TIMESTAMP(p)
// rounding). By pair of kinds:
//
//   - integers: widening is exact; narrowing fails with "smallint out of
//     range" / "integer out of range".
//   - float -> integer rounds half to even (rint) and fails on NaN, ±Inf
//     and values out of range; DOUBLE -> REAL fails with "value out of
//     range: overflow" or "... underflow".
//   - NUMERIC -> integer rounds half away from zero; NaN and ±Infinity
//     fail ("cannot convert NaN to integer").
//   - float -> NUMERIC goes through the float's text with 15 (REAL: 6)
//     significant digits, as Postgres's float8_numeric does, so
//     0.1::float8::numeric is 0.1 and (0.1+0.2)::numeric is 0.3; NaN and
//     ±Infinity carry over. (The shortest text that reads back as the
//     same float, which FormatText prints, was the first design; it gives
//     0.30000000000000004 where Postgres gives 0.3, so it was dropped.)
//     NUMERIC -> float is the nearest float.
//   - BOOLEAN <-> INTEGER: true is 1; any non-zero integer is true.
//   - to CHAR/VARCHAR/TEXT: the value's text output (BOOLEAN gives "true"
//     or "false", a CHAR loses its trailing spaces), then the length rules
//     of ctx.Explicit; from a string kind: the target's text input.
//   - DATE, TIMESTAMP, TIMESTAMPTZ, TIME: through the zone ctx.Loc where a
//     TIMESTAMPTZ is involved; an infinite timestamp cast to TIME is NULL,
//     as in Postgres. TIME -> INTERVAL is exact; INTERVAL -> TIME takes
//     the time part modulo 24 hours.
//   - JSONB -> BOOLEAN or a number kind needs a JSON scalar of that kind
//     ("cannot cast jsonb string to type integer").
//
// A cast that does not exist fails with "cannot cast type boolean to
// date". Errors are *ValueError wrapping base.ErrInvalidArgument, or
// base.ErrOutOfRange for values that do not fit.
func Cast(d Datum, to Type, ctx CastContext) (Datum, error) {
	if d.IsNull() {
		return Null, nil
	}
	from := d.kind
	if castLevelOf(from, to.Kind) == castNone {
		return Null, cannotCast(from, to.Kind)
	}
	switch {
	case from == KindChar && to.Kind == KindChar:
		return parseString(to, d.s, ctx.Explicit) // keeps the padding
	case isStringKind(to.Kind):
		return parseString(to, castText(d, ctx.Loc), ctx.Explicit)
	case isStringKind(from):
		return ParseText(to, d.s, ctx.Loc)
	case from == KindJSONB && to.Kind != KindJSONB:
		return castFromJSONB(d, to)
	}
	switch to.Kind {
	case KindBool:
		if from == KindInt32 {
			return NewBool(d.i != 0), nil
		}
		return d, nil
	case KindInt16, KindInt32, KindInt64:
		return castToInt(d, to.Kind)
	case KindFloat32, KindFloat64:
		return castToFloat(d, to.Kind)
	case KindNumeric:
		return castToNumeric(d, to)
	case KindDate:
		return castToDate(d, ctx.Loc)
	case KindTime:
		return castToTime(d, to, ctx.Loc)
	case KindTimestamp, KindTimestampTZ:
		return castToTimestamp(d, to, ctx.Loc)
	case KindInterval:
		if from == KindTime {
			return NewInterval(IntervalValue{Micros: d.i}), nil
		}
		return d, nil
	}
	// Same kind, no modifiers: UUID, BYTEA, JSONB.
	return d, nil
}

// castText is the text a value casts to: its output, except that BOOLEAN
// gives "true"/"false" (Postgres's booltext) and CHAR drops its padding.
func castText(d Datum, loc *time.Location) string {
	switch d.kind {
	case KindBool:
		if d.i != 0 {
			return "true"
		}
		return "false"
	case KindChar:
		return strings.TrimRight(d.s, " ")
	}
	return FormatText(d, loc)
}

func intRange(k Kind) (lo, hi int64) {
	switch k {
	case KindInt16:
		return math.MinInt16, math.MaxInt16
	case KindInt32:
		return math.MinInt32, math.MaxInt32
	}
	return math.MinInt64, math.MaxInt64
}

func newInt(k Kind, v int64) Datum { return Datum{kind: k, i: v} }

func castToInt(d Datum, to Kind) (Datum, error) {
	lo, hi := intRange(to)
	switch d.kind {
	case KindBool:
		return newInt(to, d.i), nil
	case KindInt16, KindInt32, KindInt64:
		if d.i < lo || d.i > hi {
			return Null, intOutOfRange(to)
		}
		return newInt(to, d.i), nil
	case KindFloat32, KindFloat64:
		f := math.RoundToEven(d.f)
		// float64(hi)+1 is exact for every integer kind: 2^15, 2^31, 2^63.
		if math.IsNaN(f) || f < float64(lo) || f >= float64(hi)+1 {
			return Null, intOutOfRange(to)
		}
		return newInt(to, int64(f)), nil
	case KindNumeric:
		return numericToInt(d.dec, to)
	}
	panic("types: castToInt from " + d.kind.String())
}

// numericToInt rounds v half away from zero to an integer of kind to.
func numericToInt(v *apd.Decimal, to Kind) (Datum, error) {
	switch v.Form {
	case apd.NaN, apd.NaNSignaling:
		return Null, valueErr(codeNotSupported, "cannot convert NaN to "+pgTypeName(to))
	case apd.Infinite:
		return Null, valueErr(codeNotSupported, "cannot convert infinity to "+pgTypeName(to))
	}
	r, err := applyNumericTypmod(v, Type{Kind: KindNumeric, Precision: MaxNumericPrecision})
	if err != nil {
		return Null, intOutOfRange(to)
	}
	n, err := r.Int64()
	lo, hi := intRange(to)
	if err != nil || n < lo || n > hi {
		return Null, intOutOfRange(to)
	}
	return newInt(to, n), nil
}

func castToFloat(d Datum, to Kind) (Datum, error) {
	var f float64
	switch d.kind {
	case KindInt16, KindInt32, KindInt64:
		if to == KindFloat32 {
			return NewFloat32(float32(d.i)), nil // one rounding, from the integer
		}
		return NewFloat64(float64(d.i)), nil
	case KindFloat32, KindFloat64:
		f = d.f
	case KindNumeric:
		v, err := float64FromDecimal(d.dec, to)
		if err != nil {
			return Null, err
		}
		f = v
	default:
		panic("types: castToFloat from " + d.kind.String())
	}
	if to == KindFloat64 {
		return NewFloat64(f), nil
	}
	r := float32(f)
	if math.IsInf(float64(r), 0) && !math.IsInf(f, 0) {
		return Null, valueErr(codeOutOfRange, "value out of range: overflow")
	}
	if r == 0 && f != 0 {
		return Null, valueErr(codeOutOfRange, "value out of range: underflow")
	}
	return NewFloat32(r), nil
}

func castToNumeric(d Datum, to Type) (Datum, error) {
	var v *apd.Decimal
	switch d.kind {
	case KindInt16, KindInt32, KindInt64:
		v = apd.New(d.i, 0)
	case KindFloat32, KindFloat64:
		switch {
		case math.IsNaN(d.f):
			v = &apd.Decimal{Form: apd.NaN}
		case math.IsInf(d.f, 0):
			v = &apd.Decimal{Form: apd.Infinite, Negative: d.f < 0}
		default:
			digits := 15 // DBL_DIG
			if d.kind == KindFloat32 {
				digits = 6 // FLT_DIG
			}
			var err error
			if v, err = parseDecimal(strconv.FormatFloat(d.f, 'g', digits, 64)); err != nil {
				panic(fmt.Sprintf("types: float %v text does not read as numeric: %v", d.f, err))
			}
		}
	case KindNumeric:
		v = d.dec
	default:
		panic("types: castToNumeric from " + d.kind.String())
	}
	r, err := applyNumericTypmod(v, to)
	if err != nil {
		return Null, err
	}
	if r == d.dec {
		return d, nil
	}
	return newNumericOwned(r), nil
}

// float64FromDecimal converts a finite NUMERIC to the nearest float64, as
// numeric_float8 does (through the decimal text), or reports overflow.
func float64FromDecimal(d *apd.Decimal, k Kind) (float64, error) {
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return math.NaN(), nil
	case apd.Infinite:
		if d.Negative {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	text := FormatText(newNumericOwned(d), nil)
	v, err := parseFloat(k, text)
	if err != nil {
		return 0, err
	}
	return v.f, nil
}

// localMicros returns a TIMESTAMPTZ's wall-clock time in loc. At the
// first instants of the range a zone west of Greenwich gives a local time
// before the first timestamp, which Postgres refuses ("timestamp out of
// range") in casts to DATE, TIME and TIMESTAMP.
func localMicros(utc int64, loc *time.Location) int64 {
	if loc == nil || loc == time.UTC {
		return utc
	}
	secs, _ := floorDiv(utc, microsPerSecond)
	return utc + zoneOffsetAt(secs, loc)*microsPerSecond
}

func castToDate(d Datum, loc *time.Location) (Datum, error) {
	v := d.i
	switch d.kind {
	case KindDate:
		return d, nil
	case KindTimestamp, KindTimestampTZ:
		switch v {
		case TimestampInfinity:
			return NewDate(DateInfinity), nil
		case TimestampNegInfinity:
			return NewDate(DateNegInfinity), nil
		}
		if d.kind == KindTimestampTZ {
			if v = localMicros(v, loc); v < minTimestamp {
				return Null, valueErr(codeDatetimeRange, "timestamp out of range")
			}
		}
		days, _ := floorDiv(v, microsPerDay)
		return NewDate(int32(days)), nil
	}
	panic("types: castToDate from " + d.kind.String())
}

func castToTime(d Datum, to Type, loc *time.Location) (Datum, error) {
	var c int64
	switch d.kind {
	case KindTime:
		c = d.i
	case KindTimestamp, KindTimestampTZ:
		if d.i == TimestampInfinity || d.i == TimestampNegInfinity {
			return Null, nil // Postgres's timestamp_time returns NULL
		}
		v := d.i
		if d.kind == KindTimestampTZ {
			if v = localMicros(v, loc); v < minTimestamp {
				return Null, valueErr(codeDatetimeRange, "timestamp out of range")
			}
		}
		_, c = floorDiv(v, microsPerDay)
	case KindInterval:
		_, c = floorDiv(d.i, microsPerDay)
	default:
		panic("types: castToTime from " + d.kind.String())
	}
	return NewTime(roundMicros(c, to.Precision, 0)), nil
}

func castToTimestamp(d Datum, to Type, loc *time.Location) (Datum, error) {
	mk := func(v int64) Datum {
		if to.Kind == KindTimestampTZ {
			return NewTimestampTZ(v)
		}
		return NewTimestamp(v)
	}
	var v int64
	switch d.kind {
	case KindDate:
		switch d.Date() {
		case DateInfinity:
			return mk(TimestampInfinity), nil
		case DateNegInfinity:
			return mk(TimestampNegInfinity), nil
		}
		if int64(d.Date()) >= endTimestamp/microsPerDay {
			return Null, valueErr(codeDatetimeRange, "date out of range for timestamp")
		}
		v = int64(d.Date()) * microsPerDay
		if to.Kind == KindTimestampTZ {
			v = utcFromLocal(v, loc)
			if v < minTimestamp || v >= endTimestamp {
				return Null, valueErr(codeDatetimeRange, "date out of range for timestamp")
			}
		}
		return mk(v), nil
	case KindTimestamp, KindTimestampTZ:
		v = d.i
		if v == TimestampInfinity || v == TimestampNegInfinity {
			return mk(v), nil
		}
		switch {
		case d.kind == KindTimestamp && to.Kind == KindTimestampTZ:
			v = utcFromLocal(v, loc)
		case d.kind == KindTimestampTZ && to.Kind == KindTimestamp:
			v = localMicros(v, loc)
		}
	default:
		panic("types: castToTimestamp from " + d.kind.String())
	}
	v = roundMicros(v, to.Precision, pgEpochMicros)
	if v < minTimestamp || v >= endTimestamp {
		return Null, valueErr(codeDatetimeRange, "timestamp out of range")
	}
	return mk(v), nil
}

// jsonTypeName is the name Postgres's cannotCastJsonbValue gives a JSON
// value's type.
var jsonTypeName = map[jsonKind]string{
	jsonNull: "null", jsonString: "string", jsonNumber: "numeric",
	jsonBool: "boolean", jsonArray: "array", jsonObject: "object",
}

// castFromJSONB casts a JSONB scalar to BOOLEAN or a number kind, as
// Postgres's jsonb_bool, jsonb_numeric, jsonb_int4, ... do.
func castFromJSONB(d Datum, to Type) (Datum, error) {
	v, err := parseJSON(d.s)
	if err != nil {
		panic("types: JSONB datum holds invalid JSON: " + err.Error())
	}
	want := jsonNumber
	if to.Kind == KindBool {
		want = jsonBool
	}
	if v.kind != want {
		return Null, valueErr(codeInvalidParam, fmt.Sprintf("cannot cast jsonb %s to type %s", jsonTypeName[v.kind], pgTypeName(to.Kind)))
	}
	if want == jsonBool {
		return NewBool(v.b), nil
	}
	return Cast(newNumericOwned(v.num), to, CastContext{})
}
