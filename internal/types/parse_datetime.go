package types

import (
	// Named zones (SET TIME ZONE, 'Europe/Paris' in literals) must not
	// depend on the machine's zoneinfo files: the binary carries the
	// database (about 450 KB).
	_ "time/tzdata"

	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Date and time input reads the ISO forms that DateStyle ISO prints, with
// Postgres's rules for each field:
//
//	date       Y-MM-DD (the year has at least 3 digits) or YYYYMMDD
//	time       H:MM, H:MM:SS, H:MM:SS.fraction (24:00:00 and a 60th second
//	           are allowed, as in Postgres)
//	timestamp  date then time, separated by spaces or 'T'
//	zone       +HH, +HHMM, +H:MM, +HH:MM:SS (up to ±15:59:59), 'Z', an
//	           abbreviation of zoneAbbrevs (UTC, GMT, EST, CET, ...), or a
//	           time zone database name ('Europe/Paris')
//	meridian   ' AM' or ' PM' after a time of 12 hours or less
//	era        ' BC' or ' AD' after the date
//	special    'infinity', '-infinity', 'epoch'; 'allballs' for TIME
//
// A fraction of a second beyond microseconds is rounded half to even, as
// Postgres's rint does; TIME(p) and TIMESTAMP(p) then round to p digits
// (see roundMicros). A TIMESTAMP ignores a zone; a TIMESTAMPTZ without one
// is local time in the session zone. Local times in a daylight-saving gap
// take the offset in force before the gap and ambiguous ones the offset
// after the change, as Postgres's DetermineTimeZoneOffset does.
//
// Left out, unlike Postgres: the clock-dependent words 'now', 'today',
// 'tomorrow', 'yesterday' (refused with a message saying so: the binder
// must supply them), month names ('January 8, 1999'), the MDY/DMY orders of
// two-digit first fields ('1/8/1999', '01-02-03'), Julian dates
// ('J2451187') and POSIX zone specs ('EST5EDT' works only as a zone file).

// Date and timestamp limits, as days and microseconds since 1970-01-01.
// Dates and the first timestamp are Postgres's (4714-11-24 BC, Julian day
// 0). Timestamps end earlier than Postgres's (294277-01-01): Strata counts
// microseconds from 1970 rather than 2000 in an int64 whose largest value
// marks infinity, so its last whole year is 294246.
const (
	pgEpochMicros = 946684800 * microsPerSecond // 2000-01-01, Postgres's origin
	minDateDays   = -2440588                    // 4714-11-24 BC
	maxDateDays   = 2145042905                  // 5874897-12-31
	minTimestamp  = minDateDays * microsPerDay  // 4714-11-24 00:00:00 BC
	endTimestamp  = int64(9223371244800000000)  // 294247-01-01 00:00:00, exclusive
)

// dateTimeFields is what scanDateTime read from a date/time literal.
type dateTimeFields struct {
	special    string // "", "infinity", "-infinity", "epoch", "allballs"
	hasDate    bool
	year       int64 // astronomical: 1 BC is year 0
	month, day int
	hasTime    bool
	clock      int64 // microseconds since midnight; up to 24:00:00 plus a leap second
	hasZone    bool
	zoneOffset int64          // seconds east of UTC, when zoneLoc is nil
	zoneLoc    *time.Location // a named zone, resolved at the local time
}

// zoneAbbrevs are the time zone abbreviations read as fixed offsets
// (seconds east of UTC), a subset of Postgres's "Default" set.
var zoneAbbrevs = map[string]int64{
	"utc": 0, "ut": 0, "gmt": 0, "z": 0, "zulu": 0,
	"est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
	"mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
	"cet": 3600, "cest": 2 * 3600, "eet": 2 * 3600, "eest": 3 * 3600,
	"wet": 0, "west": 3600, "bst": 3600, "jst": 9 * 3600,
}

// dtErrors builds the errors of one literal as Postgres's
// DateTimeParseError does.
type dtErrors struct {
	typeName string // "date", "time", "timestamp", "timestamp with time zone"
	input    string
}

func (e dtErrors) format() error {
	return valueErr(codeDatetimeFormat, fmt.Sprintf("invalid input syntax for type %s: \"%s\"", e.typeName, e.input))
}

func (e dtErrors) fieldRange() error {
	return valueErr(codeDatetimeRange, fmt.Sprintf("date/time field value out of range: \"%s\"", e.input))
}

func (e dtErrors) zoneRange() error {
	return valueErr(codeTZDisplacement, fmt.Sprintf("time zone displacement out of range: \"%s\"", e.input))
}

// scanDateTime splits a date/time literal into its fields and checks each
// field's range; it does not check the range of the whole value.
func scanDateTime(s string, e dtErrors) (dateTimeFields, error) {
	var f dateTimeFields
	v := trimSpace(s)
	switch lower := strings.ToLower(v); lower {
	case "infinity", "-infinity", "epoch", "allballs":
		f.special = lower
		return f, nil
	case "now", "today", "tomorrow", "yesterday":
		return f, valueErr(codeInvalidParam, fmt.Sprintf("date/time value \"%s\" needs the current time, which text input does not read: the caller must supply it", v))
	}
	tokens := strings.Fields(v)
	if len(tokens) == 0 {
		return f, e.format()
	}
	// "2020-01-01T10:00:00": split at the T.
	if i := strings.IndexAny(tokens[0], "tT"); i > 0 && strings.Contains(tokens[0][:i], "-") {
		if i == len(tokens[0])-1 {
			return f, e.format() // a 'T' with no time after it
		}
		tokens = append([]string{tokens[0][:i], tokens[0][i+1:]}, tokens[1:]...)
	}
	bc, era := false, false
	meridian := "" // "am" or "pm" after a 12-hour time
	for n, tok := range tokens {
		lower := strings.ToLower(tok)
		switch {
		case n == 0 && isDateToken(tok):
			if err := scanDate(tok, &f, e); err != nil {
				return f, err
			}
		case lower == "bc" || lower == "ad":
			if era || !f.hasDate {
				return f, e.format()
			}
			era, bc = true, lower == "bc"
		case lower == "am" || lower == "pm":
			if !f.hasTime || meridian != "" {
				return f, e.format()
			}
			meridian = lower
		case (isDigit(tok[0]) || (len(tok) > 1 && tok[0]|0x20 == 't' && isDigit(tok[1]))) && strings.Contains(tok, ":"):
			if f.hasTime || f.hasZone {
				return f, e.format()
			}
			if !isDigit(tok[0]) {
				tok = tok[1:] // "2020-01-01 T10:00"
			}
			rest, err := scanClock(tok, &f, e)
			if err != nil {
				return f, err
			}
			if r := strings.ToLower(rest); r == "am" || r == "pm" {
				meridian, rest = r, "" // "10:30pm"
			}
			if rest != "" {
				if c := rest[0]; c != '+' && c != '-' && !isLetter(c) {
					return f, e.format() // not a zone: "1:2:3:4"
				}
				if err := scanZone(rest, &f, e); err != nil {
					return f, err
				}
			}
		default:
			if f.hasZone || (!f.hasDate && !f.hasTime) || isDigit(tok[0]) {
				return f, e.format()
			}
			if err := scanZone(tok, &f, e); err != nil {
				return f, err
			}
		}
	}
	if meridian != "" {
		switch h := f.clock / microsPerHour; {
		case h > 12:
			return f, e.fieldRange()
		case meridian == "am" && h == 12:
			f.clock -= 12 * microsPerHour
		case meridian == "pm" && h != 12:
			f.clock += 12 * microsPerHour
		}
	}
	if f.hasDate {
		if f.year == 0 || f.month < 1 || f.month > 12 || f.day < 1 || f.day > daysInMonth(f.year, f.month, bc) {
			return f, e.fieldRange()
		}
		if bc {
			f.year = 1 - f.year
		}
	}
	return f, nil
}

// isDateToken reports whether tok starts as a date: digits then '-', or
// exactly eight digits.
func isDateToken(tok string) bool {
	i := 0
	for i < len(tok) && isDigit(tok[i]) {
		i++
	}
	return i > 0 && ((i < len(tok) && tok[i] == '-') || (i == 8 && len(tok) == 8))
}

// scanDate reads Y-MM-DD or YYYYMMDD into f.
func scanDate(tok string, f *dateTimeFields, e dtErrors) error {
	var ys, ms, ds string
	if parts := strings.Split(tok, "-"); len(parts) == 3 {
		ys, ms, ds = parts[0], parts[1], parts[2]
	} else if len(parts) == 1 && len(tok) == 8 {
		ys, ms, ds = tok[:4], tok[4:6], tok[6:]
	} else {
		return e.format()
	}
	if len(ys) < 3 || !allDigits(ys) || !allDigits(ms) || !allDigits(ds) {
		return e.format()
	}
	y, err1 := strconv.ParseInt(ys, 10, 32)
	m, err2 := strconv.ParseInt(ms, 10, 32)
	d, err3 := strconv.ParseInt(ds, 10, 32)
	if err1 != nil || err2 != nil || err3 != nil {
		return e.fieldRange()
	}
	f.hasDate, f.year, f.month, f.day = true, y, int(m), int(d)
	return nil
}

// scanClock reads H:MM[:SS[.fraction]] at the start of tok into f and
// returns the rest of tok (a zone written without a space).
func scanClock(tok string, f *dateTimeFields, e dtErrors) (string, error) {
	i := 0
	// num reads the digits at i: their value, and their count (0: none).
	// More than 9 digits are out of range for any field.
	num := func() (int64, int) {
		j := i
		for i < len(tok) && isDigit(tok[i]) {
			i++
		}
		if i-j > 9 {
			return math.MaxInt32, i - j
		}
		n, _ := strconv.ParseInt(tok[j:i], 10, 64)
		return n, i - j
	}
	h, nh := num()
	if nh == 0 || i >= len(tok) || tok[i] != ':' {
		return "", e.format()
	}
	i++
	m, nm := num()
	if nm == 0 {
		return "", e.format()
	}
	var sec, frac int64
	if i < len(tok) && tok[i] == ':' {
		i++
		sec, _ = num() // "10:00:" is 10:00:00, as in Postgres
		if i < len(tok) && tok[i] == '.' {
			j := i
			i++
			for i < len(tok) && isDigit(tok[i]) {
				i++
			}
			frac = fractionMicros(tok[j:i])
		}
	}
	if m > 59 || sec > 60 || h > 24 || (h == 24 && (m > 0 || sec > 0 || frac > 0)) {
		return "", e.fieldRange()
	}
	f.hasTime = true
	f.clock = h*microsPerHour + m*microsPerMinute + sec*microsPerSecond + frac
	return tok[i:], nil
}

// fractionMicros is Postgres's ParseFractionalSecond: the fraction ".ddd"
// read as a double and rounded to microseconds half to even.
func fractionMicros(frac string) int64 {
	if len(frac) <= 1 {
		return 0
	}
	v, _ := strconv.ParseFloat("0"+frac, 64)
	return int64(math.RoundToEven(float64(v * 1e6)))
}

// scanZone reads a zone: a numeric offset, an abbreviation or a zone name.
func scanZone(tok string, f *dateTimeFields, e dtErrors) error {
	f.hasZone = true
	if tok[0] == '+' || tok[0] == '-' {
		return scanOffset(tok, f, e)
	}
	if off, ok := zoneAbbrevs[strings.ToLower(tok)]; ok {
		f.zoneOffset = off
		return nil
	}
	loc := loadZone(tok)
	if loc == nil {
		allAlpha := true
		for i := 0; i < len(tok); i++ {
			allAlpha = allAlpha && isLetter(tok[i])
		}
		if allAlpha {
			// Postgres reads an unknown word as bad syntax, and only a
			// token with '/', '_', '-', '+' or digits as a zone name.
			return e.format()
		}
		return valueErr(codeInvalidParam, fmt.Sprintf("time zone \"%s\" not recognized", strings.ToLower(tok)))
	}
	f.zoneLoc = loc
	return nil
}

// loadZone finds a zone of the time zone database by name. Postgres
// matches names case-insensitively; the database's files are spelled in
// mixed case, so after the exact name loadZone tries each part
// capitalized ("america/new_york" finds America/New_York) and the name in
// upper case ("est5edt"). A name that needs other capitals
// ("america/port-au-prince") must be written as in the database. "Local"
// (the process's zone) is no zone name. POSIX zone specs ("UTC+5") are
// not read.
//
// Found zones are cached: time.LoadLocation reads and parses a file on
// every call. The cache holds only names that exist, so it stays as small
// as the time zone database whatever the input.
func loadZone(name string) *time.Location {
	if name == "" || strings.EqualFold(name, "local") {
		return nil
	}
	if loc, ok := zoneCache.Load(name); ok {
		return loc.(*time.Location)
	}
	candidates := []string{name, capitalizeZone(name), strings.ToUpper(name)}
	for _, c := range candidates {
		if loc, err := time.LoadLocation(c); err == nil {
			zoneCache.Store(name, loc)
			return loc
		}
	}
	return nil
}

// zoneCache maps zone names as written to their *time.Location.
var zoneCache sync.Map

// capitalizeZone upper-cases the first letter of each word of a zone name
// and lower-cases the rest; words are separated by '/', '_' and '-'.
func capitalizeZone(name string) string {
	b := []byte(strings.ToLower(name))
	start := true
	for i, c := range b {
		if start && c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
		start = c == '/' || c == '_' || c == '-'
	}
	return string(b)
}

// scanOffset is Postgres's DecodeTimezone: +H, +HH, +HHMM (more than two
// digits run together), +H:MM or +H:MM:SS.
func scanOffset(tok string, f *dateTimeFields, e dtErrors) error {
	body := tok[1:]
	parts := strings.Split(body, ":")
	if len(parts) > 3 {
		return e.format()
	}
	var hms [3]int64
	for i, p := range parts {
		if !allDigits(p) || len(p) > 9 {
			return e.format()
		}
		hms[i], _ = strconv.ParseInt(p, 10, 64)
	}
	if len(parts) == 1 && len(tok) > 3 {
		hms[0], hms[1] = hms[0]/100, hms[0]%100
	}
	if hms[0] > 15 || hms[1] > 59 || hms[2] > 59 {
		return e.zoneRange()
	}
	off := hms[0]*3600 + hms[1]*60 + hms[2]
	if tok[0] == '-' {
		off = -off
	}
	f.zoneOffset = off
	return nil
}

func isLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// daysInMonth of month m of year y as written (bc: y BC, astronomical 1-y).
func daysInMonth(y int64, m int, bc bool) int {
	if bc {
		y = 1 - y
	}
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// dateDays returns f's date as days since 1970-01-01, or ok false when it
// lies outside Postgres's DATE range.
func (f dateTimeFields) dateDays() (int64, bool) {
	if f.year < -4713 || f.year > 5874898 {
		return 0, false
	}
	d := daysFromCivil(f.year, f.month, f.day)
	return d, d >= minDateDays && d <= maxDateDays
}

// parseDate is date_in: a date, optionally followed by a time, zone and era
// that are checked and then ignored; 'epoch', 'infinity', '-infinity'.
func parseDate(s string) (Datum, error) {
	e := dtErrors{"date", s}
	f, err := scanDateTime(s, e)
	if err != nil {
		return Null, err
	}
	switch f.special {
	case "infinity":
		return NewDate(DateInfinity), nil
	case "-infinity":
		return NewDate(DateNegInfinity), nil
	case "epoch":
		return NewDate(0), nil
	case "allballs":
		return Null, e.format()
	}
	if !f.hasDate {
		return Null, e.format()
	}
	days, ok := f.dateDays()
	if !ok {
		return Null, valueErr(codeDatetimeRange, fmt.Sprintf("date out of range: \"%s\"", s))
	}
	return NewDate(int32(days)), nil
}

// parseTime is time_in: a time of day, optionally preceded by a date and
// followed by a zone, both ignored; 'allballs' is midnight. The result is
// rounded to t's precision; beyond 24:00:00 is out of range.
func parseTime(t Type, s string) (Datum, error) {
	e := dtErrors{"time", s}
	f, err := scanDateTime(s, e)
	if err != nil {
		return Null, err
	}
	switch {
	case f.special == "allballs":
		return NewTime(0), nil
	case f.special != "" || !f.hasTime:
		return Null, e.format()
	}
	c := roundMicros(f.clock, t.Precision, 0)
	if c > microsPerDay {
		return Null, e.fieldRange()
	}
	return NewTime(c), nil
}

// parseTimestamp is timestamp_in and timestamptz_in. A date without a
// time is midnight. TIMESTAMP ignores a zone; TIMESTAMPTZ converts from
// the written zone, else from loc (nil: UTC). The value is rounded to t's
// precision and must lie in Postgres's range, 4714-11-24 00:00:00 BC to
// before 294277-01-01 (for TIMESTAMPTZ, in UTC).
func parseTimestamp(t Type, s string, loc *time.Location) (Datum, error) {
	name := "timestamp"
	if t.Kind == KindTimestampTZ {
		name = "timestamp with time zone"
	}
	e := dtErrors{name, s}
	f, err := scanDateTime(s, e)
	if err != nil {
		return Null, err
	}
	mk := func(v int64) Datum {
		if t.Kind == KindTimestampTZ {
			return NewTimestampTZ(v)
		}
		return NewTimestamp(v)
	}
	switch f.special {
	case "infinity":
		return mk(TimestampInfinity), nil
	case "-infinity":
		return mk(TimestampNegInfinity), nil
	case "epoch":
		return mk(0), nil
	case "allballs":
		return Null, e.format()
	}
	if !f.hasDate {
		return Null, e.format()
	}
	outOfRange := valueErr(codeDatetimeRange, fmt.Sprintf("timestamp out of range: \"%s\"", s))
	days := daysFromCivil(f.year, f.month, f.day)
	if f.year < -4713 || f.year > 294277 {
		return Null, outOfRange
	}
	v := days*microsPerDay + f.clock
	if t.Kind == KindTimestampTZ {
		switch {
		case f.zoneLoc != nil:
			v = utcFromLocal(v, f.zoneLoc)
		case f.hasZone:
			v -= f.zoneOffset * microsPerSecond
		default:
			v = utcFromLocal(v, loc)
		}
	}
	if v < minTimestamp || v >= endTimestamp {
		return Null, outOfRange
	}
	v = roundMicros(v, t.Precision, pgEpochMicros)
	if v < minTimestamp || v >= endTimestamp {
		return Null, outOfRange
	}
	return mk(v), nil
}

var pow10 = [...]int64{1, 10, 100, 1000, 10000, 100000, 1000000}

// roundMicros rounds v to p digits of fractional seconds, half away from
// zero counted from origin, as Postgres's AdjustTimestampForTypmod (origin
// 2000-01-01 for timestamps) and AdjustTimeForTypmod (origin midnight) do.
// Infinite timestamps pass through. p outside 0..5 leaves v as it is.
func roundMicros(v int64, p int32, origin int64) int64 {
	if p < 0 || p >= MaxTimestampPrecision || v == TimestampInfinity || v == TimestampNegInfinity {
		return v
	}
	scale := pow10[MaxTimestampPrecision-p]
	r := v - origin
	if r >= 0 {
		r = (r + scale/2) / scale * scale
	} else {
		r = -((-r + scale/2) / scale * scale)
	}
	return r + origin
}

// zoneOffsetAt returns loc's offset from UTC in seconds at unix second u.
func zoneOffsetAt(u int64, loc *time.Location) int64 {
	_, off := time.Unix(u, 0).In(loc).Zone()
	return int64(off)
}

// utcFromLocal converts local wall-clock microseconds in loc (nil: UTC) to
// UTC microseconds. A local time that a daylight-saving change skips takes
// the offset before the change; one that occurs twice takes the offset
// after it (Postgres's DetermineTimeZoneOffset, which it documents as "in a
// spring-forward transition, prefer the before interpretation; in a
// fall-back transition, prefer after").
//
// time.Date was tried for this and dropped: it leaves the choice in gaps
// and overlaps unspecified.
func utcFromLocal(local int64, loc *time.Location) int64 {
	if loc == nil || loc == time.UTC {
		return local
	}
	secs, _ := floorDiv(local, microsPerSecond)
	before := zoneOffsetAt(secs-86400, loc)
	after := zoneOffsetAt(secs+86400, loc)
	if before == after {
		return local - before*microsPerSecond
	}
	// The first instant of the new offset: the end of the zone period in
	// force a day before.
	_, end := time.Unix(secs-86400, 0).In(loc).ZoneBounds()
	boundary := end.Unix() * microsPerSecond
	ub := local - before*microsPerSecond
	ua := local - after*microsPerSecond
	validBefore, validAfter := ub < boundary, ua >= boundary
	switch {
	case validBefore && !validAfter:
		return ub
	case validAfter && !validBefore:
		return ua
	case ub > ua: // a gap: neither valid
		return ub
	}
	return ua
}
