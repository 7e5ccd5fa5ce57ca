package types

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/cockroachdb/apd/v3"
)

// IntervalValue is a Postgres INTERVAL value: months, days and microseconds kept apart,
// because a month has no fixed number of days and a day (across a daylight
// saving change) no fixed number of microseconds. Comparison treats a month
// as 30 days and a day as 24 hours, as Postgres does, so '1 mon' = '30 days'.
type IntervalValue struct {
	Months int32
	Days   int32
	Micros int64
}

// Span returns the interval as microseconds with a month of 30 days and a
// day of 24 hours, as a 128-bit value (hi, lo): the value Postgres orders
// intervals by (interval_cmp_value). hi is signed, lo unsigned.
func (iv IntervalValue) Span() (hi int64, lo uint64) {
	days := int64(iv.Months)*30 + int64(iv.Days) // fits: |months*30| < 2^36
	// days*86400e6 may overflow int64: multiply in 128 bits.
	h, l := mul64x64(days, microsPerDay)
	return add128(h, l, iv.Micros)
}

func mul64x64(a, b int64) (hi int64, lo uint64) {
	neg := (a < 0) != (b < 0)
	ua, ub := uabs(a), uabs(b)
	uh, ul := mulU(ua, ub)
	if neg {
		// two's complement negate of (uh, ul)
		ul = ^ul + 1
		uh = ^uh
		if ul == 0 {
			uh++
		}
	}
	return int64(uh), ul
}

func uabs(a int64) uint64 {
	if a < 0 {
		return uint64(-a)
	}
	return uint64(a)
}

func mulU(a, b uint64) (hi, lo uint64) { return bits.Mul64(a, b) }

func add128(hi int64, lo uint64, v int64) (int64, uint64) {
	nlo := lo + uint64(v)
	carry := int64(0)
	if nlo < lo {
		carry = 1
	}
	ext := int64(0)
	if v < 0 {
		ext = -1
	}
	return hi + ext + carry, nlo
}

// Time constants in microseconds.
const (
	microsPerSecond = int64(1_000_000)
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
	microsPerDay    = 24 * microsPerHour
)

// Infinite dates and timestamps, as Postgres has them: 'infinity' sorts
// after and '-infinity' before every finite value.
const (
	DateInfinity         = int32(math.MaxInt32)
	DateNegInfinity      = int32(math.MinInt32)
	TimestampInfinity    = int64(math.MaxInt64)
	TimestampNegInfinity = int64(math.MinInt64)
)

// Range of finite DATE and TIMESTAMP values. The low end is Postgres's:
// 4714-11-24 BC, Julian day 0. DATE ends where Postgres's does, 5874897-12-31.
// TIMESTAMP ends at 294246-12-31 23:59:59.999999, thirty years before
// Postgres's 294276 AD: Strata counts microseconds from 1970 (Parquet's and
// Arrow's epoch, where Postgres counts from 2000) in an int64, which ends
// there.
const (
	MinDate      = int32(-2440588)            // 4714-11-24 BC
	MaxDate      = int32(2145042905)          // 5874897-12-31
	MinTimestamp = int64(-210866803200000000) // 4714-11-24 00:00:00 BC
	MaxTimestamp = int64(9223371244799999999) // 294246-12-31 23:59:59.999999
)

// Datum is one SQL value, or NULL. The zero Datum is NULL.
//
// Representation by kind (unexported; use the constructors and accessors):
//   - BOOLEAN: i = 0 or 1
//   - SMALLINT, INTEGER, BIGINT: i
//   - REAL, DOUBLE PRECISION: f (a REAL is held as the float64 of its
//     float32, so it round-trips exactly)
//   - NUMERIC: dec, shared and never mutated
//   - CHAR, VARCHAR, TEXT: s (UTF-8); CHAR keeps the padding it was given
//   - BYTEA: s holds the raw bytes
//   - UUID: s holds the 16 raw bytes
//   - DATE: i = days since 1970-01-01, DateInfinity/DateNegInfinity
//   - TIME: i = microseconds since midnight, 0..86400000000 (24:00:00 is
//     allowed, as in Postgres)
//   - TIMESTAMP: i = microseconds since 1970-01-01 00:00:00 (no zone)
//   - TIMESTAMPTZ: i = microseconds since 1970-01-01 00:00:00 UTC
//   - INTERVAL: i = microseconds, aux = months<<32 | uint32(days)
//   - JSONB: s holds the normalized text (see NewJSONB)
//
// Datums are values: copy them freely; none of their fields alias mutable
// memory.
type Datum struct {
	kind Kind // KindUnknown: NULL
	i    int64
	aux  int64
	f    float64
	s    string
	dec  *apd.Decimal
}

// Null is the NULL datum (the zero Datum).
var Null = Datum{}

// IsNull reports whether d is NULL.
func (d Datum) IsNull() bool { return d.kind == KindUnknown }

// Kind returns d's kind; KindUnknown for NULL.
func (d Datum) Kind() Kind { return d.kind }

// NewBool returns a BOOLEAN.
func NewBool(v bool) Datum {
	if v {
		return Datum{kind: KindBool, i: 1}
	}
	return Datum{kind: KindBool}
}

// NewInt16 returns a SMALLINT.
func NewInt16(v int16) Datum { return Datum{kind: KindInt16, i: int64(v)} }

// NewInt32 returns an INTEGER.
func NewInt32(v int32) Datum { return Datum{kind: KindInt32, i: int64(v)} }

// NewInt64 returns a BIGINT.
func NewInt64(v int64) Datum { return Datum{kind: KindInt64, i: v} }

// NewFloat32 returns a REAL.
func NewFloat32(v float32) Datum { return Datum{kind: KindFloat32, f: float64(v)} }

// NewFloat64 returns a DOUBLE PRECISION.
func NewFloat64(v float64) Datum { return Datum{kind: KindFloat64, f: v} }

// NewNumeric returns a NUMERIC holding a copy of v (NaN and ±Infinity
// included, as in Postgres 14+). A nil v gives NULL.
func NewNumeric(v *apd.Decimal) Datum {
	if v == nil {
		return Null
	}
	c := new(apd.Decimal).Set(v)
	return Datum{kind: KindNumeric, dec: c}
}

// newNumericOwned wraps v without copying; the caller gives up v.
func newNumericOwned(v *apd.Decimal) Datum { return Datum{kind: KindNumeric, dec: v} }

// NewChar returns a CHAR value holding s as given (a cast to CHAR(n) pads).
func NewChar(s string) Datum { return Datum{kind: KindChar, s: s} }

// NewVarchar returns a VARCHAR.
func NewVarchar(s string) Datum { return Datum{kind: KindVarchar, s: s} }

// NewText returns a TEXT.
func NewText(s string) Datum { return Datum{kind: KindText, s: s} }

// NewBytea returns a BYTEA holding a copy of b.
func NewBytea(b []byte) Datum { return Datum{kind: KindBytea, s: string(b)} }

// NewUUID returns a UUID.
func NewUUID(u [16]byte) Datum { return Datum{kind: KindUUID, s: string(u[:])} }

// NewDate returns a DATE of days since 1970-01-01 (DateInfinity and
// DateNegInfinity for ±infinity).
func NewDate(days int32) Datum { return Datum{kind: KindDate, i: int64(days)} }

// NewTime returns a TIME of microseconds since midnight. It panics unless
// 0 <= micros <= 24h, a bug in the caller (parsing and casting check it).
func NewTime(micros int64) Datum {
	if micros < 0 || micros > microsPerDay {
		panic(fmt.Sprintf("types: TIME out of range: %d µs", micros))
	}
	return Datum{kind: KindTime, i: micros}
}

// NewTimestamp returns a TIMESTAMP of microseconds since 1970-01-01 00:00:00
// (TimestampInfinity and TimestampNegInfinity for ±infinity).
func NewTimestamp(micros int64) Datum { return Datum{kind: KindTimestamp, i: micros} }

// NewTimestampTZ returns a TIMESTAMPTZ of microseconds since the Unix epoch,
// UTC.
func NewTimestampTZ(micros int64) Datum { return Datum{kind: KindTimestampTZ, i: micros} }

// NewInterval returns an INTERVAL.
func NewInterval(iv IntervalValue) Datum {
	return Datum{kind: KindInterval, i: iv.Micros, aux: int64(iv.Months)<<32 | int64(uint32(iv.Days))}
}

// Bool returns a BOOLEAN's value. Accessors panic when called on a datum of
// another kind or on NULL: that is a bug in the caller, which knows the type.
func (d Datum) Bool() bool { d.must(KindBool); return d.i != 0 }

// Int64 returns the value of a SMALLINT, INTEGER or BIGINT.
func (d Datum) Int64() int64 {
	switch d.kind {
	case KindInt16, KindInt32, KindInt64:
		return d.i
	}
	panic(d.wrongKind("an integer"))
}

// Float64 returns the value of a REAL or DOUBLE PRECISION.
func (d Datum) Float64() float64 {
	switch d.kind {
	case KindFloat32, KindFloat64:
		return d.f
	}
	panic(d.wrongKind("a float"))
}

// Decimal returns a NUMERIC's value. The result is shared: do not modify it.
func (d Datum) Decimal() *apd.Decimal { d.must(KindNumeric); return d.dec }

// Str returns the text of a CHAR, VARCHAR, TEXT or JSONB, or the raw bytes
// of a BYTEA or UUID as a string.
func (d Datum) Str() string {
	switch d.kind {
	case KindChar, KindVarchar, KindText, KindJSONB, KindBytea, KindUUID:
		return d.s
	}
	panic(d.wrongKind("a string"))
}

// Bytes returns a copy of a BYTEA's bytes.
func (d Datum) Bytes() []byte { d.must(KindBytea); return []byte(d.s) }

// UUID returns a UUID's 16 bytes.
func (d Datum) UUID() (u [16]byte) { d.must(KindUUID); copy(u[:], d.s); return u }

// Date returns a DATE's days since 1970-01-01.
func (d Datum) Date() int32 { d.must(KindDate); return int32(d.i) }

// Micros returns the microseconds of a TIME, TIMESTAMP or TIMESTAMPTZ.
func (d Datum) Micros() int64 {
	switch d.kind {
	case KindTime, KindTimestamp, KindTimestampTZ:
		return d.i
	}
	panic(d.wrongKind("a time or timestamp"))
}

// Interval returns an INTERVAL's value.
func (d Datum) Interval() IntervalValue {
	d.must(KindInterval)
	return IntervalValue{Months: int32(d.aux >> 32), Days: int32(uint32(d.aux)), Micros: d.i}
}

// JSONB returns a JSONB's normalized text.
func (d Datum) JSONB() string { d.must(KindJSONB); return d.s }

func (d Datum) must(k Kind) {
	if d.kind != k {
		panic(d.wrongKind(k.String()))
	}
}

func (d Datum) wrongKind(want string) string {
	if d.IsNull() {
		return "types: accessor for " + want + " called on NULL"
	}
	return "types: accessor for " + want + " called on " + d.kind.String()
}

// String returns d in Postgres text output format with TIMESTAMPTZ shown in
// UTC, and "NULL" for NULL. It is meant for messages and tests; FormatText
// is the wire format.
func (d Datum) String() string {
	if d.IsNull() {
		return "NULL"
	}
	return FormatText(d, nil)
}
