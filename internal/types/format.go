package types

import (
	"encoding/hex"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
)

// FormatText returns d in Postgres's text output format (DateStyle ISO,
// IntervalStyle postgres, extra_float_digits 1, bytea_output hex), with
// TIMESTAMPTZ shown in loc (UTC when loc is nil). NULL gives "" — callers
// that need to tell NULL apart check IsNull first, as the wire protocol does.
func FormatText(d Datum, loc *time.Location) string {
	return string(AppendText(nil, d, loc))
}

// AppendText appends FormatText(d, loc) to dst.
func AppendText(dst []byte, d Datum, loc *time.Location) []byte {
	switch d.kind {
	case KindUnknown:
		return dst
	case KindBool:
		if d.i != 0 {
			return append(dst, 't')
		}
		return append(dst, 'f')
	case KindInt16, KindInt32, KindInt64:
		return strconv.AppendInt(dst, d.i, 10)
	case KindFloat32:
		return appendFloat(dst, d.f, 32)
	case KindFloat64:
		return appendFloat(dst, d.f, 64)
	case KindNumeric:
		return appendNumeric(dst, d)
	case KindChar, KindVarchar, KindText, KindJSONB:
		return append(dst, d.s...)
	case KindBytea:
		dst = append(dst, '\\', 'x')
		return hex.AppendEncode(dst, []byte(d.s))
	case KindUUID:
		var buf [36]byte
		hex.Encode(buf[0:8], []byte(d.s[0:4]))
		buf[8] = '-'
		hex.Encode(buf[9:13], []byte(d.s[4:6]))
		buf[13] = '-'
		hex.Encode(buf[14:18], []byte(d.s[6:8]))
		buf[18] = '-'
		hex.Encode(buf[19:23], []byte(d.s[8:10]))
		buf[23] = '-'
		hex.Encode(buf[24:36], []byte(d.s[10:16]))
		return append(dst, buf[:]...)
	case KindDate:
		return appendDate(dst, int32(d.i))
	case KindTime:
		return appendClock(dst, d.i)
	case KindTimestamp:
		return appendTimestamp(dst, d.i, nil)
	case KindTimestampTZ:
		if loc == nil {
			loc = time.UTC
		}
		return appendTimestamp(dst, d.i, loc)
	case KindInterval:
		return appendInterval(dst, d.Interval())
	}
	panic("types: AppendText: unknown kind " + d.kind.String())
}

// appendFloat writes the shortest text that reads back as the same float,
// switching to exponent form where Postgres's float4out/float8out do (an
// exponent below -4 or at least FLT_DIG=6 / DBL_DIG=15).
func appendFloat(dst []byte, f float64, bitSize int) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NaN"...)
	case math.IsInf(f, 1):
		return append(dst, "Infinity"...)
	case math.IsInf(f, -1):
		return append(dst, "-Infinity"...)
	case f == 0:
		if math.Signbit(f) {
			return append(dst, "-0"...)
		}
		return append(dst, '0')
	}
	maxExp := 15
	if bitSize == 32 {
		maxExp = 6
	}
	e := strconv.FormatFloat(f, 'e', -1, bitSize)
	i := strings.LastIndexByte(e, 'e')
	exp, _ := strconv.Atoi(e[i+1:])
	if exp < -4 || exp >= maxExp {
		mant := e[:i]
		dst = append(dst, mant...)
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, bitSize)
}

func appendNumeric(dst []byte, d Datum) []byte {
	v := d.dec
	switch v.Form {
	case apd.NaN, apd.NaNSignaling:
		return append(dst, "NaN"...)
	case apd.Infinite:
		if v.Negative {
			return append(dst, "-Infinity"...)
		}
		return append(dst, "Infinity"...)
	}
	// Finite: plain notation with exactly -Exponent digits after the point
	// (the value's scale), as Postgres prints NUMERIC.
	digits := v.Coeff.String()
	if v.Negative && !(digits == "0") {
		dst = append(dst, '-')
	}
	exp := int(v.Exponent)
	if exp >= 0 {
		if digits == "0" {
			return append(dst, '0') // 0E+5 is plain 0, as Postgres stores it
		}
		dst = append(dst, digits...)
		for range exp {
			dst = append(dst, '0')
		}
		return dst
	}
	scale := -exp
	if len(digits) > scale {
		dst = append(dst, digits[:len(digits)-scale]...)
		dst = append(dst, '.')
		return append(dst, digits[len(digits)-scale:]...)
	}
	dst = append(dst, '0', '.')
	for range scale - len(digits) {
		dst = append(dst, '0')
	}
	return append(dst, digits...)
}

// civil returns the proleptic Gregorian year, month and day of days since
// 1970-01-01 (Howard Hinnant's days_from_civil inverse), valid for the
// whole int32 range.
func civil(days int64) (year int64, month, day int) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y := yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3
	if mp >= 10 {
		m = mp - 9
	}
	if m <= 2 {
		y++
	}
	return y, int(m), int(d)
}

// daysFromCivil is civil's inverse: days since 1970-01-01 of a proleptic
// Gregorian date (year 0 is 1 BC).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 && y%400 != 0 {
		era--
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := int64((153*mp+2)/5 + d - 1)
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

func appendPad(dst []byte, v int64, width int) []byte {
	s := strconv.FormatInt(v, 10)
	for i := len(s); i < width; i++ {
		dst = append(dst, '0')
	}
	return append(dst, s...)
}

// appendYMD writes YYYY-MM-DD and reports whether the year is BC (year <= 0
// in astronomical numbering becomes 1-year BC, as Postgres prints it).
func appendYMD(dst []byte, days int64) ([]byte, bool) {
	y, m, d := civil(days)
	bc := false
	if y <= 0 {
		y = 1 - y
		bc = true
	}
	dst = appendPad(dst, y, 4)
	dst = append(dst, '-')
	dst = appendPad(dst, int64(m), 2)
	dst = append(dst, '-')
	dst = appendPad(dst, int64(d), 2)
	return dst, bc
}

func appendDate(dst []byte, days int32) []byte {
	switch days {
	case DateInfinity:
		return append(dst, "infinity"...)
	case DateNegInfinity:
		return append(dst, "-infinity"...)
	}
	dst, bc := appendYMD(dst, int64(days))
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendClock writes HH:MM:SS[.ffffff] with trailing fractional zeros cut.
func appendClock(dst []byte, micros int64) []byte {
	h := micros / microsPerHour
	micros -= h * microsPerHour
	m := micros / microsPerMinute
	micros -= m * microsPerMinute
	s := micros / microsPerSecond
	frac := micros - s*microsPerSecond
	dst = appendPad(dst, h, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, m, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, s, 2)
	return appendFrac(dst, frac)
}

func appendFrac(dst []byte, frac int64) []byte {
	if frac == 0 {
		return dst
	}
	f := []byte(strconv.FormatInt(frac+microsPerSecond, 10)[1:]) // 6 digits
	for len(f) > 0 && f[len(f)-1] == '0' {
		f = f[:len(f)-1]
	}
	dst = append(dst, '.')
	return append(dst, f...)
}

func floorDiv(a, b int64) (q, r int64) {
	q, r = a/b, a%b
	if r < 0 {
		q--
		r += b
	}
	return q, r
}

// appendTimestamp writes YYYY-MM-DD HH:MM:SS[.ffffff][+zone][ BC]. With loc
// nil the value has no zone (TIMESTAMP); otherwise it is shown in loc with
// its UTC offset as Postgres does ("+00", "+05:30").
func appendTimestamp(dst []byte, micros int64, loc *time.Location) []byte {
	switch micros {
	case TimestampInfinity:
		return append(dst, "infinity"...)
	case TimestampNegInfinity:
		return append(dst, "-infinity"...)
	}
	offset := int64(0)
	if loc != nil && loc != time.UTC {
		secs, _ := floorDiv(micros, microsPerSecond)
		_, off := time.Unix(secs, 0).In(loc).Zone()
		offset = int64(off)
		micros += offset * microsPerSecond
	}
	days, rem := floorDiv(micros, microsPerDay)
	dst, bc := appendYMD(dst, days)
	dst = append(dst, ' ')
	dst = appendClock(dst, rem)
	if loc != nil {
		sign := byte('+')
		if offset < 0 {
			sign = '-'
			offset = -offset
		}
		dst = append(dst, sign)
		dst = appendPad(dst, offset/3600, 2)
		if mm := offset % 3600 / 60; mm != 0 || offset%60 != 0 {
			dst = append(dst, ':')
			dst = appendPad(dst, mm, 2)
			if ss := offset % 60; ss != 0 {
				dst = append(dst, ':')
				dst = appendPad(dst, ss, 2)
			}
		}
	}
	if bc {
		dst = append(dst, " BC"...)
	}
	return dst
}

// appendInterval writes the Postgres IntervalStyle "postgres" form:
// "1 year 2 mons 3 days 04:05:06.5", "-1 days +02:00:00", "00:00:00".
func appendInterval(dst []byte, iv IntervalValue) []byte {
	years := iv.Months / 12
	mons := iv.Months % 12
	start := len(dst)
	// Postgres (AddPostgresIntPart) writes '+' before a positive field only
	// when the nonzero field just before it was negative.
	prevNeg := false
	unit := func(v int64, one, many string) {
		if v == 0 {
			return
		}
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		if prevNeg && v > 0 {
			dst = append(dst, '+')
		}
		dst = strconv.AppendInt(dst, v, 10)
		dst = append(dst, ' ')
		if v == 1 {
			dst = append(dst, one...)
		} else {
			dst = append(dst, many...)
		}
		prevNeg = v < 0
	}
	unit(int64(years), "year", "years")
	unit(int64(mons), "mon", "mons")
	unit(int64(iv.Days), "day", "days")
	if iv.Micros != 0 || len(dst) == start {
		if len(dst) > start {
			dst = append(dst, ' ')
		}
		m := iv.Micros
		if m < 0 {
			dst = append(dst, '-')
			if m == math.MinInt64 {
				// |MinInt64| µs does not fit; print via unsigned arithmetic.
				u := uint64(1) << 63
				h := u / uint64(microsPerHour)
				rest := int64(u - h*uint64(microsPerHour))
				dst = strconv.AppendUint(dst, h, 10)
				dst = append(dst, ':')
				return appendMinSec(dst, rest)
			}
			m = -m
		} else if prevNeg {
			dst = append(dst, '+')
		}
		h := m / microsPerHour
		if h < 10 {
			dst = append(dst, '0')
		}
		dst = strconv.AppendInt(dst, h, 10)
		dst = append(dst, ':')
		dst = appendMinSec(dst, m-h*microsPerHour)
	}
	return dst
}

func appendMinSec(dst []byte, m int64) []byte {
	mi := m / microsPerMinute
	m -= mi * microsPerMinute
	s := m / microsPerSecond
	dst = appendPad(dst, mi, 2)
	dst = append(dst, ':')
	dst = appendPad(dst, s, 2)
	return appendFrac(dst, m-s*microsPerSecond)
}
