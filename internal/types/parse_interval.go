package types

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Interval input follows Postgres 15's interval_in: the text is split into
// fields (numbers, times, unit words, signed numbers) and read from right to
// left, each unit word naming the unit of the number before it; a number
// with no unit after it is seconds, and the field before a time or an hour
// count defaults to days ('1 02:03' is a day and two hours). Each unit may
// appear once. 'ago' negates the whole value. If that reading fails the
// ISO 8601 forms are tried: designators 'P1Y2M3DT4H5M6S' (also 'P1W',
// fractions and signs on each number) and the alternative forms
// 'P0001-02-03T04:05:06' and 'P00010203T040506'.
//
// Fractions spill downward as Postgres computes them, in double precision:
// a fractional year becomes whole months (rounded), a fractional month 30
// days, a fractional week 7 days, and what is left of a day becomes
// microseconds (24 hours a day), rounded half to even at the microsecond.
// So '1.5 years' = '1 year 6 mons', '1.5 mons' = '1 mon 15 days' and
// '1.5 days' = '1 day 12:00:00'.
//
// One difference from Postgres: a time field whose magnitude is exactly
// 2^63 microseconds ('-2562047788:00:54.775808', the output of the most
// negative interval time) is read, so that every interval's output reads
// back; Postgres refuses it.

// intervalFields accumulates an interval as Postgres's pg_itm_in does.
type intervalFields struct {
	years, months, days int32
	micros              int64
}

// Field masks: each unit may be given once (DTK_M in Postgres).
const (
	imYear = 1 << iota
	imMonth
	imDay
	imWeek
	imHour
	imMinute
	imSecond
	imMillisecond
	imMicrosecond
	imDecade
	imCentury
	imMillennium
	imAllSeconds = imSecond | imMillisecond | imMicrosecond
	imTime       = imHour | imMinute | imAllSeconds
)

// intervalUnit is the unit a number field is in.
type intervalUnit uint8

const (
	unitNone intervalUnit = iota
	unitMicrosecond
	unitMillisecond
	unitSecond
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitYear
	unitDecade
	unitCentury
	unitMillennium
	unitAgo
)

// intervalUnits is Postgres's deltatktbl; words are compared on their
// first 10 letters, as Postgres does (so "microseconds" matches).
var intervalUnits = map[string]intervalUnit{
	"ago": unitAgo,
	"c":   unitCentury, "cent": unitCentury, "centuries": unitCentury, "century": unitCentury,
	"d": unitDay, "day": unitDay, "days": unitDay,
	"dec": unitDecade, "decade": unitDecade, "decades": unitDecade, "decs": unitDecade,
	"h": unitHour, "hour": unitHour, "hours": unitHour, "hr": unitHour, "hrs": unitHour,
	"m": unitMinute, "min": unitMinute, "mins": unitMinute, "minute": unitMinute, "minutes": unitMinute,
	"microsecon": unitMicrosecond, "us": unitMicrosecond, "usec": unitMicrosecond,
	"microsecond": unitMicrosecond, "useconds": unitMicrosecond, "usecs": unitMicrosecond,
	"mil": unitMillennium, "millennia": unitMillennium, "millennium": unitMillennium, "mils": unitMillennium,
	"millisecon": unitMillisecond, "ms": unitMillisecond, "msec": unitMillisecond,
	"millisecond": unitMillisecond, "mseconds": unitMillisecond, "msecs": unitMillisecond,
	"mon": unitMonth, "mons": unitMonth, "month": unitMonth, "months": unitMonth,
	"s": unitSecond, "sec": unitSecond, "second": unitSecond, "seconds": unitSecond, "secs": unitSecond,
	"w": unitWeek, "week": unitWeek, "weeks": unitWeek,
	"y": unitYear, "year": unitYear, "years": unitYear, "yr": unitYear, "yrs": unitYear,
}

// ivFieldKind is the class Postgres's ParseDateTime gives a field.
type ivFieldKind uint8

const (
	ivNumber ivFieldKind = iota // 12, 1.5, .5, 1-2 (years-months)
	ivTime                      // 04:05:06.5
	ivSigned                    // +02:00:00, -1.5, -1-2
	ivWord                      // day, ago
)

// ivField is one field of interval text.
type ivField struct {
	kind ivFieldKind
	text string
}

// ivError is a decoder's outcome: Postgres's DTERR_BAD_FORMAT and
// DTERR_FIELD_OVERFLOW, turned into messages by parseInterval.
type ivError uint8

const (
	ivOK ivError = iota
	ivBadFormat
	ivFieldOverflow
)

// parseInterval is interval_in.
func parseInterval(s string) (Datum, error) {
	var f intervalFields
	res := ivBadFormat
	if fields, ok := splitIntervalFields(s); ok {
		res = decodeInterval(fields, &f)
	}
	if res == ivBadFormat {
		f = intervalFields{}
		res = decodeISO8601Interval(s, &f)
	}
	switch res {
	case ivBadFormat:
		return Null, valueErr(codeDatetimeFormat, fmt.Sprintf("invalid input syntax for type interval: \"%s\"", s))
	case ivFieldOverflow:
		return Null, valueErr(codeIntervalRange, fmt.Sprintf("interval field value out of range: \"%s\"", s))
	}
	months := int64(f.years)*12 + int64(f.months)
	if months > math.MaxInt32 || months < math.MinInt32 {
		return Null, valueErr(codeDatetimeRange, "interval out of range")
	}
	return NewInterval(IntervalValue{Months: int32(months), Days: f.days, Micros: f.micros}), nil
}

// splitIntervalFields is the part of Postgres's ParseDateTime that interval
// input uses: numbers, times, words and signed numbers; white space and
// other punctuation ('@', ',') separate fields.
func splitIntervalFields(s string) ([]ivField, bool) {
	var out []ivField
	i := 0
	for i < len(s) {
		c := s[i]
		start := i
		switch {
		case isSpace(c):
			i++
			continue
		case isDigit(c):
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			kind := ivNumber
			if i < len(s) && s[i] == ':' {
				kind = ivTime
				for i < len(s) && (isDigit(s[i]) || s[i] == ':' || s[i] == '.') {
					i++
				}
			} else if i < len(s) && (s[i] == '-' || s[i] == '/' || s[i] == '.') {
				delim := s[i]
				i++
				if i < len(s) && isDigit(s[i]) {
					for i < len(s) && isDigit(s[i]) {
						i++
					}
					if i < len(s) && s[i] == delim {
						for i < len(s) && (isDigit(s[i]) || s[i] == delim) {
							i++
						}
					}
				} else {
					for i < len(s) && (isDigit(s[i]) || isLetter(s[i]) || s[i] == delim) {
						i++
					}
				}
			}
			out = append(out, ivField{kind, s[start:i]})
		case c == '.':
			i++
			for i < len(s) && isDigit(s[i]) {
				i++
			}
			out = append(out, ivField{ivNumber, s[start:i]})
		case isLetter(c):
			for i < len(s) && isLetter(s[i]) {
				i++
			}
			out = append(out, ivField{ivWord, strings.ToLower(s[start:i])})
		case c == '+' || c == '-':
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			switch {
			case i < len(s) && isDigit(s[i]):
				j := i
				for i < len(s) && (isDigit(s[i]) || s[i] == ':' || s[i] == '.' || s[i] == '-') {
					i++
				}
				out = append(out, ivField{ivSigned, string(c) + s[j:i]})
			case i < len(s) && isLetter(s[i]):
				j := i
				for i < len(s) && isLetter(s[i]) {
					i++
				}
				out = append(out, ivField{ivWord, string(c) + strings.ToLower(s[j:i])})
			default:
				return nil, false
			}
		case c < 0x80 && c > ' ' && !isLetter(c):
			i++ // punctuation separates fields
		default:
			return nil, false
		}
	}
	return out, true
}

// decodeInterval is Postgres's DecodeInterval for IntervalStyle postgres.
func decodeInterval(fields []ivField, f *intervalFields) ivError {
	unit := unitNone
	mask := 0
	ago := false
	for i := len(fields) - 1; i >= 0; i-- {
		fld := fields[i]
		var m int
		switch fld.kind {
		case ivTime:
			micros, res := decodeIntervalClock(fld.text, false)
			if res != ivOK {
				return res
			}
			f.micros = micros
			m = imTime
			unit = unitDay
		case ivWord:
			word := fld.text
			if len(word) > 10 {
				word = word[:10]
			}
			u, ok := intervalUnits[word]
			if !ok {
				return ivBadFormat
			}
			if u == unitAgo {
				ago = true
				u = unitNone
			}
			unit = u
		case ivSigned:
			if strings.Contains(fld.text[1:], ":") {
				if micros, res := decodeIntervalClock(fld.text[1:], fld.text[0] == '-'); res == ivOK {
					f.micros = micros
					m = imTime
					unit = unitDay
					break
				}
			}
			fallthrough
		case ivNumber:
			if unit == unitNone && i == len(fields)-1 {
				unit = unitSecond
			}
			var res ivError
			m, res = applyIntervalNumber(fld.text, &unit, f)
			if res != ivOK {
				return res
			}
		}
		if mask&m != 0 {
			return ivBadFormat
		}
		mask |= m
	}
	if mask == 0 {
		return ivBadFormat
	}
	if ago {
		if f.micros == math.MinInt64 || f.days == math.MinInt32 || f.months == math.MinInt32 || f.years == math.MinInt32 {
			return ivFieldOverflow
		}
		f.micros, f.days, f.months, f.years = -f.micros, -f.days, -f.months, -f.years
	}
	return ivOK
}

// applyIntervalNumber adds one number field in *unit to f and returns its
// field mask. The unit after an hour count becomes days.
func applyIntervalNumber(text string, unit *intervalUnit, f *intervalFields) (int, ivError) {
	neg := text[0] == '-'
	j := 0
	if text[0] == '+' || text[0] == '-' {
		j = 1
	}
	for j < len(text) && isDigit(text[j]) {
		j++
	}
	var val int64
	if digits := text[:j]; digits != "" && digits != "+" && digits != "-" {
		v, err := strconv.ParseInt(digits, 10, 64)
		if err != nil {
			return 0, ivFieldOverflow
		}
		val = v
	}
	var frac float64
	rest := text[j:]
	switch {
	case rest == "":
	case rest[0] == '-':
		// SQL "years-months": 1-2 is a year and two months.
		if !allDigits(rest[1:]) {
			return 0, ivBadFormat
		}
		m, err := strconv.ParseInt(rest[1:], 10, 32)
		if err != nil || m >= 12 {
			return 0, ivFieldOverflow
		}
		if neg {
			m = -m
		}
		if val > math.MaxInt64/12 || val < math.MinInt64/12 {
			return 0, ivFieldOverflow
		}
		val = val*12 + m
		*unit = unitMonth
	case rest[0] == '.':
		if len(rest) > 1 {
			if !allDigits(rest[1:]) {
				return 0, ivBadFormat
			}
			frac, _ = strconv.ParseFloat("0"+rest, 64)
			if neg {
				frac = -frac
			}
		}
	default:
		return 0, ivBadFormat
	}
	var ok bool
	var m int
	switch *unit {
	case unitMicrosecond:
		ok, m = f.addMicros(val, frac, 1), imMicrosecond
	case unitMillisecond:
		ok, m = f.addMicros(val, frac, 1000), imMillisecond
	case unitSecond:
		ok, m = f.addMicros(val, frac, microsPerSecond), imSecond
		if frac != 0 {
			m = imAllSeconds
		}
	case unitMinute:
		ok, m = f.addMicros(val, frac, microsPerMinute), imMinute
	case unitHour:
		ok, m = f.addMicros(val, frac, microsPerHour), imHour
		*unit = unitDay
	case unitDay:
		ok, m = f.addDays(val, 1) && f.addFracMicros(frac, microsPerDay), imDay
	case unitWeek:
		ok, m = f.addDays(val, 7) && f.addFracDays(frac, 7), imWeek
	case unitMonth:
		ok, m = f.addMonths(val) && f.addFracDays(frac, 30), imMonth
	case unitYear:
		ok, m = f.addYears(val, 1) && f.addFracYears(frac, 1), imYear
	case unitDecade:
		ok, m = f.addYears(val, 10) && f.addFracYears(frac, 10), imDecade
	case unitCentury:
		ok, m = f.addYears(val, 100) && f.addFracYears(frac, 100), imCentury
	case unitMillennium:
		ok, m = f.addYears(val, 1000) && f.addFracYears(frac, 1000), imMillennium
	default:
		return 0, ivBadFormat
	}
	if !ok {
		return 0, ivFieldOverflow
	}
	return m, ivOK
}

// decodeIntervalClock reads H:MM, H:MM:SS[.f] or MM:SS.f (a fraction on the
// second field means minutes and seconds) as microseconds, negated when
// neg. Hours may be any size that fits.
func decodeIntervalClock(text string, neg bool) (int64, ivError) {
	parts := strings.Split(text, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, ivBadFormat
	}
	var h, m, sec uint64
	var frac int64
	num := func(p string) (uint64, ivError) {
		if !allDigits(p) {
			return 0, ivBadFormat
		}
		v, err := strconv.ParseUint(p, 10, 63)
		if err != nil {
			return 0, ivFieldOverflow
		}
		return v, ivOK
	}
	// splitFrac cuts "SS.fff" into "SS" and the fraction in microseconds;
	// a bad fraction leaves a '.' in the first part, which num refuses.
	splitFrac := func(p string) (string, int64) {
		if k := strings.IndexByte(p, '.'); k >= 0 && (k == len(p)-1 || allDigits(p[k+1:])) {
			return p[:k], fractionMicros(p[k:])
		}
		return p, 0
	}
	var res ivError
	if h, res = num(parts[0]); res != ivOK {
		return 0, res
	}
	if len(parts) == 2 {
		mp, fr := splitFrac(parts[1])
		if m, res = num(mp); res != ivOK {
			return 0, res
		}
		if strings.Contains(parts[1], ".") {
			// mm:ss.fff
			h, m, sec, frac = 0, h, m, fr
		}
	} else {
		if m, res = num(parts[1]); res != ivOK {
			return 0, res
		}
		sp, fr := splitFrac(parts[2])
		if sp != "" { // "10:00:" has zero seconds, as in Postgres
			if sec, res = num(sp); res != ivOK {
				return 0, res
			}
		}
		frac = fr
	}
	if m > 59 || sec > 60 || frac > microsPerSecond {
		return 0, ivFieldOverflow
	}
	// |value| may be up to 2^63 when negative: compute the magnitude in
	// unsigned arithmetic.
	const limit = uint64(1) << 63
	if h > limit/uint64(microsPerHour) {
		return 0, ivFieldOverflow
	}
	mag := h*uint64(microsPerHour) + m*uint64(microsPerMinute) + sec*uint64(microsPerSecond) + uint64(frac)
	if mag > limit || (mag == limit && !neg) {
		return 0, ivFieldOverflow
	}
	if neg {
		return int64(-mag), ivOK // -2^63 wraps to itself, which is the value wanted
	}
	return int64(mag), ivOK
}

// The Adjust* helpers of Postgres's datetime.c, each false on overflow.

func (f *intervalFields) addYears(val int64, scale int64) bool {
	if val > math.MaxInt32/scale || val < math.MinInt32/scale {
		return false
	}
	return addInt32(&f.years, val*scale)
}

func (f *intervalFields) addFracYears(frac float64, scale int64) bool {
	if frac == 0 {
		return true
	}
	extra := math.RoundToEven(float64(frac * float64(scale) * 12))
	if extra > math.MaxInt32 || extra < math.MinInt32 {
		return false
	}
	return addInt32(&f.months, int64(extra))
}

func (f *intervalFields) addMonths(val int64) bool {
	if val > math.MaxInt32 || val < math.MinInt32 {
		return false
	}
	return addInt32(&f.months, val)
}

func (f *intervalFields) addDays(val int64, scale int64) bool {
	if val > math.MaxInt32/scale || val < math.MinInt32/scale {
		return false
	}
	return addInt32(&f.days, val*scale)
}

// addFracDays spills frac of a unit of scale days: whole days, then the
// rest as microseconds.
func (f *intervalFields) addFracDays(frac float64, scale int64) bool {
	if frac == 0 {
		return true
	}
	frac = float64(frac * float64(scale))
	extra := int64(frac) // truncates toward zero, as C's (int) cast
	if !addInt32(&f.days, extra) {
		return false
	}
	return f.addFracMicros(float64(frac-float64(extra)), microsPerDay)
}

// addFracMicros adds frac of a unit of scale microseconds, rounding the
// fractional microsecond half to even.
func (f *intervalFields) addFracMicros(frac float64, scale int64) bool {
	if frac == 0 {
		return true
	}
	frac = float64(frac * float64(scale))
	us := int64(frac)
	us += int64(math.RoundToEven(float64(frac - float64(us))))
	return addInt64(&f.micros, us)
}

// addMicros adds val units of scale microseconds plus the fraction frac of
// a unit.
func (f *intervalFields) addMicros(val int64, frac float64, scale int64) bool {
	if val > math.MaxInt64/scale || val < math.MinInt64/scale {
		return false
	}
	if !addInt64(&f.micros, val*scale) {
		return false
	}
	return f.addFracMicros(frac, scale)
}

func addInt32(dst *int32, v int64) bool {
	r := int64(*dst) + v
	if r > math.MaxInt32 || r < math.MinInt32 {
		return false
	}
	*dst = int32(r)
	return true
}

func addInt64(dst *int64, v int64) bool {
	r := *dst + v
	if (v > 0 && r < *dst) || (v < 0 && r > *dst) {
		return false
	}
	*dst = r
	return true
}

// decodeISO8601Interval is Postgres's DecodeISO8601Interval.
func decodeISO8601Interval(s string, f *intervalFields) ivError {
	if len(s) < 2 || s[0] != 'P' {
		return ivBadFormat
	}
	str := s[1:]
	datePart, haveField := true, false
	for str != "" {
		if str[0] == 'T' {
			datePart, haveField = false, false
			str = str[1:]
			continue
		}
		fieldStart := str
		val, frac, rest, res := parseISO8601Number(str)
		if res != ivOK {
			return res
		}
		str = rest
		var unit byte
		if str != "" {
			unit, str = str[0], str[1:]
		}
		ok := true
		if datePart {
			switch unit {
			case 'Y':
				ok = f.addYears(val, 1) && f.addFracYears(frac, 1)
			case 'M':
				ok = f.addMonths(val) && f.addFracDays(frac, 30)
			case 'W':
				ok = f.addDays(val, 7) && f.addFracDays(frac, 7)
			case 'D':
				ok = f.addDays(val, 1) && f.addFracMicros(frac, microsPerDay)
			case 'T', 0, '-':
				if unit != '-' && iso8601IntegerWidth(fieldStart) == 8 && !haveField {
					// YYYYMMDD
					if !(f.addYears(val/10000, 1) && f.addMonths(val/100%100) && f.addDays(val%100, 1) && f.addFracMicros(frac, microsPerDay)) {
						return ivFieldOverflow
					}
					if unit == 0 {
						return ivOK
					}
					datePart, haveField = false, false
					continue
				}
				// YYYY-MM-DD
				if haveField {
					return ivBadFormat
				}
				if !(f.addYears(val, 1) && f.addFracYears(frac, 1)) {
					return ivFieldOverflow
				}
				if unit == 0 {
					return ivOK
				}
				if unit == 'T' {
					datePart, haveField = false, false
					continue
				}
				if val, frac, str, res = parseISO8601Number(str); res != ivOK {
					return res
				}
				if !(f.addMonths(val) && f.addFracDays(frac, 30)) {
					return ivFieldOverflow
				}
				if str == "" {
					return ivOK
				}
				if str[0] == 'T' {
					datePart, haveField = false, false
					continue
				}
				if str[0] != '-' {
					return ivBadFormat
				}
				if val, frac, str, res = parseISO8601Number(str[1:]); res != ivOK {
					return res
				}
				if !(f.addDays(val, 1) && f.addFracMicros(frac, microsPerDay)) {
					return ivFieldOverflow
				}
				if str == "" {
					return ivOK
				}
				if str[0] == 'T' {
					datePart, haveField = false, false
					continue
				}
				return ivBadFormat
			default:
				return ivBadFormat
			}
		} else {
			switch unit {
			case 'H':
				ok = f.addMicros(val, frac, microsPerHour)
			case 'M':
				ok = f.addMicros(val, frac, microsPerMinute)
			case 'S':
				ok = f.addMicros(val, frac, microsPerSecond)
			case 0, ':':
				if unit == 0 && iso8601IntegerWidth(fieldStart) == 6 && !haveField {
					// HHMMSS
					if !(f.addMicros(val/10000, 0, microsPerHour) && f.addMicros(val/100%100, 0, microsPerMinute) &&
						f.addMicros(val%100, 0, microsPerSecond) && f.addFracMicros(frac, 1)) {
						return ivFieldOverflow
					}
					return ivOK
				}
				// HH:MM:SS
				if haveField {
					return ivBadFormat
				}
				if !f.addMicros(val, frac, microsPerHour) {
					return ivFieldOverflow
				}
				if unit == 0 {
					return ivOK
				}
				if val, frac, str, res = parseISO8601Number(str); res != ivOK {
					return res
				}
				if !f.addMicros(val, frac, microsPerMinute) {
					return ivFieldOverflow
				}
				if str == "" {
					return ivOK
				}
				if str[0] != ':' {
					return ivBadFormat
				}
				if val, frac, str, res = parseISO8601Number(str[1:]); res != ivOK {
					return res
				}
				if !f.addMicros(val, frac, microsPerSecond) {
					return ivFieldOverflow
				}
				if str == "" {
					return ivOK
				}
				return ivBadFormat
			default:
				return ivBadFormat
			}
		}
		if !ok {
			return ivFieldOverflow
		}
		haveField = true
	}
	return ivOK
}

// parseISO8601Number reads a number as strtod does at the start of s (it
// must start with a digit, '-' or '.') and splits it into its integer part,
// truncated toward zero, and the fraction; beyond ±1e15 is an overflow.
func parseISO8601Number(s string) (int64, float64, string, ivError) {
	if s == "" || !(isDigit(s[0]) || s[0] == '-' || s[0] == '.') {
		return 0, 0, "", ivBadFormat
	}
	n, _ := scanDecimal(s)
	if n == 0 {
		return 0, 0, "", ivBadFormat
	}
	v, err := strconv.ParseFloat(s[:n], 64)
	if err != nil || v < -1e15 || v > 1e15 {
		return 0, 0, "", ivFieldOverflow
	}
	ip := math.Trunc(v)
	return int64(ip), v - ip, s[n:], ivOK
}

func iso8601IntegerWidth(s string) int {
	s = strings.TrimPrefix(s, "-")
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}
