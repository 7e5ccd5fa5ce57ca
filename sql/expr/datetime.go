package expr

import (
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Date and time functions: extract and date_part, date_trunc, date_bin,
// make_date, make_time, make_timestamp, make_interval, to_timestamp, age
// and the justify functions, with Postgres 15's fields, result types
// (extract gives NUMERIC with Postgres's scales, date_part DOUBLE
// PRECISION) and errors.
//
// TIMESTAMPTZ values are broken into fields in the session time zone
// (Context.Loc); truncating one to a day or more re-reads the truncated
// wall-clock time in that zone, so a day that starts after a
// daylight-saving change gets its own offset (localToUTC).

// Field units, after Postgres's DecodeUnits/DecodeSpecial.
type dtUnit uint8

const (
	unitNone dtUnit = iota
	unitMicrosecond
	unitMillisecond
	unitSecond
	unitMinute
	unitHour
	unitDay
	unitWeek
	unitMonth
	unitQuarter
	unitYear
	unitDecade
	unitCentury
	unitMillennium
	unitDow
	unitIsodow
	unitDoy
	unitEpoch
	unitJulian
	unitIsoyear
	unitTimezone
	unitTimezoneHour
	unitTimezoneMinute
)

var unitNames = map[string]dtUnit{
	"microsecon": unitMicrosecond, "us": unitMicrosecond, "usec": unitMicrosecond, "usecs": unitMicrosecond,
	"usecond": unitMicrosecond, "useconds": unitMicrosecond,
	"millisecon": unitMillisecond, "ms": unitMillisecond, "msec": unitMillisecond, "msecs": unitMillisecond,
	"msecond": unitMillisecond, "mseconds": unitMillisecond,
	"second": unitSecond, "s": unitSecond, "sec": unitSecond, "secs": unitSecond, "seconds": unitSecond,
	"minute": unitMinute, "m": unitMinute, "min": unitMinute, "mins": unitMinute, "minutes": unitMinute,
	"hour": unitHour, "h": unitHour, "hr": unitHour, "hrs": unitHour, "hours": unitHour,
	"day": unitDay, "d": unitDay, "days": unitDay,
	"week": unitWeek, "w": unitWeek, "weeks": unitWeek,
	"month": unitMonth, "mon": unitMonth, "mons": unitMonth, "months": unitMonth,
	"quarter": unitQuarter, "qtr": unitQuarter,
	"year": unitYear, "y": unitYear, "yr": unitYear, "yrs": unitYear, "years": unitYear,
	"decade": unitDecade, "dec": unitDecade, "decs": unitDecade, "decades": unitDecade,
	"century": unitCentury, "c": unitCentury, "cent": unitCentury, "centuries": unitCentury,
	"millennium": unitMillennium, "mil": unitMillennium, "mils": unitMillennium, "millennia": unitMillennium,
	"dow": unitDow, "isodow": unitIsodow, "doy": unitDoy, "epoch": unitEpoch,
	"julian": unitJulian, "j": unitJulian, "isoyear": unitIsoyear,
	"timezone": unitTimezone, "timezone_h": unitTimezoneHour, "timezone_m": unitTimezoneMinute,
}

// parseUnit looks a unit name up as Postgres does (lower case, first 10
// characters significant); typ names the argument type for the error.
func parseUnit(name, typ string) (dtUnit, string, error) {
	low := strings.ToLower(name)
	key := low
	if len(key) > 10 {
		key = key[:10]
	}
	if u, ok := unitNames[key]; ok {
		return u, low, nil
	}
	return unitNone, low, errorf(sqlerr.InvalidParameterValue, "unit \"%s\" not recognized for type %s", low, typ)
}

func unitNotSupported(low, typ string) error {
	return errorf(sqlerr.FeatureNotSupported, "unit \"%s\" not supported for type %s", low, typ)
}

const (
	typNameDate        = "date"
	typNameTime        = "time without time zone"
	typNameTimestamp   = "timestamp without time zone"
	typNameTimestampTZ = "timestamp with time zone"
	typNameInterval    = "interval"
)

// unixEpochJulian is the Julian day of 1970-01-01.
const unixEpochJulian = 2440588

// civilTime is a timestamp broken into fields: year is astronomical (0 is
// 1 BC), usec the microseconds within the second.
type civilTime struct {
	year                  int64
	month, day            int
	hour, minute, second  int
	usec                  int64
	days                  int64 // days since 1970-01-01
	isoYear, isoWeek, dow int   // dow: 0 = Sunday
	yday                  int
}

// civilOf breaks wall-clock µs (as if UTC) into fields.
func civilOf(wall int64) civilTime {
	t := time.UnixMicro(wall).UTC()
	y, w := t.ISOWeek()
	return civilTime{
		year: int64(t.Year()), month: int(t.Month()), day: t.Day(),
		hour: t.Hour(), minute: t.Minute(), second: t.Second(), usec: int64(t.Nanosecond() / 1000),
		days: floorDiv(wall, microsPerDay), isoYear: y, isoWeek: w, dow: int(t.Weekday()), yday: t.YearDay(),
	}
}

// fromCivil returns the wall-clock µs of a date and time of day.
func fromCivil(year int64, month, day int, timeOfDay int64) int64 {
	t := time.Date(int(year), time.Month(month), day, 0, 0, 0, 0, time.UTC)
	return t.UnixMicro() + timeOfDay
}

// yearField is extract(year): astronomical 0 is 1 BC, printed as -1.
func yearField(y int64) int64 {
	if y > 0 {
		return y
	}
	return y - 1
}

func decadeField(y int64) int64 {
	if y >= 0 {
		return y / 10
	}
	return -((8 - (y - 1)) / 10)
}

func centuryField(y int64) int64 {
	if y > 0 {
		return (y + 99) / 100
	}
	return -((99 - (y - 1)) / 100)
}

func millenniumField(y int64) int64 {
	if y > 0 {
		return (y + 999) / 1000
	}
	return -((999 - (y - 1)) / 1000)
}

// fieldValue is an extracted field: an integer, or an exact decimal for
// the fractional fields (a float for date_part).
type fieldValue struct {
	dec *apd.Decimal
	f   float64
}

func intField(v int64) fieldValue {
	if v >= 0 && v < int64(len(smallFieldDecimals)) {
		return fieldValue{dec: &smallFieldDecimals[v], f: float64(v)}
	}
	return fieldValue{dec: apd.New(v, 0), f: float64(v)}
}

// smallFieldDecimals[v] is apd.New(v, 0), shared (read only) by the
// fields that most extracts give (hours, minutes, days, months, weeks):
// extract copies the value into its result, so sharing saves an
// allocation per row.
var smallFieldDecimals = func() (t [60]apd.Decimal) {
	for v := range t {
		t[v].SetInt64(int64(v))
	}
	return t
}()

// scaledField is v / 10^scale with exactly scale digits, as Postgres's
// int64_div_fast_to_numeric.
func scaledField(v int64, scale int32) fieldValue {
	return fieldValue{dec: apd.New(v, -scale), f: float64(v) / math.Pow10(int(scale))}
}

// timestampField extracts unit from wall-clock µs; tzOff is the session
// offset (seconds east) for the time zone fields, hasTZ whether they are
// allowed.
func timestampField(u dtUnit, low string, wall, instant int64, tzOff int64, hasTZ bool, typ string) (fieldValue, error) {
	c := civilOf(wall)
	secUs := int64(c.second)*microsPerSecond + c.usec
	switch u {
	case unitMicrosecond:
		return intField(secUs), nil
	case unitMillisecond:
		f := scaledField(secUs, 3)
		f.f = float64(c.second)*1000 + float64(c.usec)/1000
		return f, nil
	case unitSecond:
		f := scaledField(secUs, 6)
		f.f = float64(c.second) + float64(c.usec)/1e6
		return f, nil
	case unitMinute:
		return intField(int64(c.minute)), nil
	case unitHour:
		return intField(int64(c.hour)), nil
	case unitDay:
		return intField(int64(c.day)), nil
	case unitMonth:
		return intField(int64(c.month)), nil
	case unitQuarter:
		return intField(int64((c.month-1)/3 + 1)), nil
	case unitWeek:
		return intField(int64(c.isoWeek)), nil
	case unitYear:
		return intField(yearField(c.year)), nil
	case unitDecade:
		return intField(decadeField(c.year)), nil
	case unitCentury:
		return intField(centuryField(c.year)), nil
	case unitMillennium:
		return intField(millenniumField(c.year)), nil
	case unitJulian:
		dayUs := wall - c.days*microsPerDay
		frac, err := numericDiv(apd.New(dayUs, 0), apd.New(microsPerDay, 0))
		if err != nil {
			return fieldValue{}, err
		}
		d := new(apd.Decimal)
		_, _ = exact.Add(d, apd.New(c.days+unixEpochJulian, 0), frac.Decimal())
		secs := float64((c.hour*60+c.minute)*60+c.second) + float64(c.usec)/1e6
		return fieldValue{dec: d, f: float64(c.days+unixEpochJulian) + secs/86400}, nil
	case unitIsoyear:
		y := int64(c.isoYear)
		if y <= 0 {
			y--
		}
		return intField(y), nil
	case unitDow:
		return intField(int64(c.dow)), nil
	case unitIsodow:
		d := c.dow
		if d == 0 {
			d = 7
		}
		return intField(int64(d)), nil
	case unitDoy:
		return intField(int64(c.yday)), nil
	case unitEpoch:
		f := scaledField(instant, 6)
		f.f = float64(instant) / 1e6
		return f, nil
	case unitTimezone, unitTimezoneHour, unitTimezoneMinute:
		if !hasTZ {
			return fieldValue{}, unitNotSupported(low, typ)
		}
		switch u {
		case unitTimezoneHour:
			return intField(tzOff / 3600), nil
		case unitTimezoneMinute:
			return intField(tzOff / 60 % 60), nil
		}
		return intField(tzOff), nil
	}
	return fieldValue{}, unitNotSupported(low, typ)
}

// infiniteField is what extract gives on ±infinity: ±Infinity for the
// fields that grow with time, NULL for the others (Postgres 14+).
func infiniteField(u dtUnit, neg bool) (fieldValue, bool) {
	switch u {
	case unitYear, unitDecade, unitCentury, unitMillennium, unitJulian, unitIsoyear, unitEpoch:
		return fieldValue{dec: &apd.Decimal{Form: apd.Infinite, Negative: neg}, f: math.Inf(map[bool]int{false: 1, true: -1}[neg])}, true
	}
	return fieldValue{}, false
}

// extractField computes extract(unit from v) for v of any date/time kind;
// ok false means NULL.
func extractField(ctx *Context, unit string, v types.Datum) (fv fieldValue, ok bool, err error) {
	switch v.Kind() {
	case types.KindTimestamp, types.KindTimestampTZ:
		typ := typNameTimestamp
		if v.Kind() == types.KindTimestampTZ {
			typ = typNameTimestampTZ
		}
		u, low, err := parseUnit(unit, typ)
		if err != nil {
			return fv, false, err
		}
		us := v.Micros()
		if isInfTimestamp(us) {
			if u == unitTimezone || u == unitTimezoneHour || u == unitTimezoneMinute {
				if v.Kind() == types.KindTimestamp {
					return fv, false, unitNotSupported(low, typ)
				}
				return fv, false, nil
			}
			fv, ok := infiniteField(u, us < 0)
			return fv, ok, nil
		}
		if v.Kind() == types.KindTimestamp {
			fv, err := timestampField(u, low, us, us, 0, false, typ)
			return fv, err == nil, err
		}
		off := zoneOffset(us, ctx.Location())
		fv, err := timestampField(u, low, us+off*microsPerSecond, us, off, true, typ)
		return fv, err == nil, err
	case types.KindDate:
		return extractDate(unit, v.Date())
	case types.KindTime:
		return extractTime(unit, v.Micros())
	case types.KindInterval:
		return extractInterval(unit, v.Interval())
	}
	panic("expr: extract of " + v.Kind().String())
}

func extractDate(unit string, d int32) (fieldValue, bool, error) {
	u, low, err := parseUnit(unit, typNameDate)
	if err != nil {
		return fieldValue{}, false, err
	}
	switch u {
	case unitDay, unitMonth, unitQuarter, unitWeek, unitDow, unitIsodow, unitDoy,
		unitYear, unitDecade, unitCentury, unitMillennium, unitJulian, unitIsoyear, unitEpoch:
	default:
		return fieldValue{}, false, unitNotSupported(low, typNameDate)
	}
	if d == types.DateInfinity || d == types.DateNegInfinity {
		fv, ok := infiniteField(u, d < 0)
		return fv, ok, nil
	}
	days := int64(d)
	switch u {
	case unitJulian:
		return intField(days + unixEpochJulian), true, nil
	case unitEpoch:
		return intField(days * 86400), true, nil
	}
	fv, err := timestampField(u, low, days*microsPerDay, days*microsPerDay, 0, false, typNameDate)
	return fv, err == nil, err
}

func extractTime(unit string, us int64) (fieldValue, bool, error) {
	u, low, err := parseUnit(unit, typNameTime)
	if err != nil {
		return fieldValue{}, false, err
	}
	h, m := us/3600_000_000, us/60_000_000%60
	secUs := us % 60_000_000
	switch u {
	case unitMicrosecond:
		return intField(secUs), true, nil
	case unitMillisecond:
		fv := scaledField(secUs, 3)
		fv.f = float64(secUs/1e6)*1000 + float64(secUs%1e6)/1000
		return fv, true, nil
	case unitSecond:
		fv := scaledField(secUs, 6)
		fv.f = float64(secUs/1e6) + float64(secUs%1e6)/1e6
		return fv, true, nil
	case unitMinute:
		return intField(m), true, nil
	case unitHour:
		return intField(h), true, nil
	case unitEpoch:
		return scaledField(us, 6), true, nil
	}
	return fieldValue{}, false, unitNotSupported(low, typNameTime)
}

func extractInterval(unit string, iv types.IntervalValue) (fieldValue, bool, error) {
	u, low, err := parseUnit(unit, typNameInterval)
	if err != nil {
		return fieldValue{}, false, err
	}
	years := int64(iv.Months / 12)
	mons := int64(iv.Months % 12)
	hours := iv.Micros / 3600_000_000
	mins := iv.Micros / 60_000_000 % 60
	secUs := iv.Micros % 60_000_000
	switch u {
	case unitMicrosecond:
		return intField(secUs), true, nil
	case unitMillisecond:
		fv := scaledField(secUs, 3)
		fv.f = float64(secUs/1e6)*1000 + float64(secUs%1e6)/1000
		return fv, true, nil
	case unitSecond:
		fv := scaledField(secUs, 6)
		fv.f = float64(secUs/1e6) + float64(secUs%1e6)/1e6
		return fv, true, nil
	case unitMinute:
		return intField(mins), true, nil
	case unitHour:
		return intField(hours), true, nil
	case unitDay:
		return intField(int64(iv.Days)), true, nil
	case unitMonth:
		return intField(mons), true, nil
	case unitQuarter:
		return intField(mons/3 + 1), true, nil
	case unitYear:
		return intField(years), true, nil
	case unitDecade:
		return intField(years / 10), true, nil
	case unitCentury:
		return intField(years / 100), true, nil
	case unitMillennium:
		return intField(years / 1000), true, nil
	case unitEpoch:
		// Postgres counts a year as 365.25 days and a month as 30.
		secs := (int64(4*365.25)*years + 4*30*mons + 4*int64(iv.Days)) * (86400 / 4)
		d := new(apd.Decimal)
		_, _ = exact.Add(d, apd.New(secs, 0), apd.New(iv.Micros, -6))
		f := float64(iv.Micros) / 1e6
		f += 365.25 * 86400 * float64(years)
		f += 30 * 86400 * float64(mons)
		f += 86400 * float64(iv.Days)
		return fieldValue{dec: d, f: f}, true, nil
	}
	return fieldValue{}, false, unitNotSupported(low, typNameInterval)
}

// truncWall truncates wall-clock µs to unit, as timestamp_trunc.
func truncWall(u dtUnit, wall int64) (int64, bool) {
	c := civilOf(wall)
	y, mon, day := c.year, c.month, c.day
	switch u {
	case unitWeek:
		// The Monday of the ISO week.
		back := int64((c.dow + 6) % 7)
		return (c.days - back) * microsPerDay, true
	case unitMillennium:
		if y > 0 {
			y = ((y+999)/1000)*1000 - 999
		} else {
			y = -((999-(y-1))/1000)*1000 + 1
		}
		mon, day = 1, 1
	case unitCentury:
		if y > 0 {
			y = ((y+99)/100)*100 - 99
		} else {
			y = -((99-(y-1))/100)*100 + 1
		}
		mon, day = 1, 1
	case unitDecade:
		if y > 0 {
			y = (y / 10) * 10
		} else {
			y = -((8 - (y - 1)) / 10) * 10
		}
		mon, day = 1, 1
	case unitYear:
		mon, day = 1, 1
	case unitQuarter:
		mon, day = 3*((mon-1)/3)+1, 1
	case unitMonth:
		day = 1
	case unitDay:
	case unitHour:
		return wall - floorMod(wall, 3600*microsPerSecond), true
	case unitMinute:
		return wall - floorMod(wall, 60*microsPerSecond), true
	case unitSecond:
		return wall - floorMod(wall, microsPerSecond), true
	case unitMillisecond:
		return wall - floorMod(wall, 1000), true
	case unitMicrosecond:
		return wall, true
	default:
		return 0, false
	}
	return fromCivil(y, mon, day, 0), true
}

func floorMod(a, b int64) int64 { return a - floorDiv(a, b)*b }

// parseTruncUnit is parseUnit for date_trunc, which, unlike extract, does
// not know the special field names (dow, doy, isodow, isoyear, epoch,
// julian).
func parseTruncUnit(unit, typ string) (dtUnit, string, error) {
	u, low, err := parseUnit(unit, typ)
	switch u {
	case unitDow, unitIsodow, unitDoy, unitIsoyear, unitEpoch, unitJulian:
		return unitNone, low, errorf(sqlerr.InvalidParameterValue, "unit \"%s\" not recognized for type %s", low, typ)
	}
	return u, low, err
}

// intervalTrunc is date_trunc(unit, interval): fields below unit zeroed,
// each field keeping the interval's sign as Postgres's interval2tm splits
// it.
func intervalTrunc(unit string, iv types.IntervalValue) (types.IntervalValue, error) {
	u, low, err := parseTruncUnit(unit, typNameInterval)
	if err != nil {
		return iv, err
	}
	years, mons := int64(iv.Months/12), int64(iv.Months%12)
	days := int64(iv.Days)
	hours := iv.Micros / (3600 * microsPerSecond)
	mins := iv.Micros / (60 * microsPerSecond) % 60
	secs := iv.Micros / microsPerSecond % 60
	frac := iv.Micros % microsPerSecond
	switch u {
	case unitMillennium:
		years = years / 1000 * 1000
		mons, days, hours, mins, secs, frac = 0, 0, 0, 0, 0, 0
	case unitCentury:
		years = years / 100 * 100
		mons, days, hours, mins, secs, frac = 0, 0, 0, 0, 0, 0
	case unitDecade:
		years = years / 10 * 10
		mons, days, hours, mins, secs, frac = 0, 0, 0, 0, 0, 0
	case unitYear:
		mons, days, hours, mins, secs, frac = 0, 0, 0, 0, 0, 0
	case unitQuarter:
		mons = 3 * (mons / 3)
		days, hours, mins, secs, frac = 0, 0, 0, 0, 0
	case unitMonth:
		days, hours, mins, secs, frac = 0, 0, 0, 0, 0
	case unitDay:
		hours, mins, secs, frac = 0, 0, 0, 0
	case unitHour:
		mins, secs, frac = 0, 0, 0
	case unitMinute:
		secs, frac = 0, 0
	case unitSecond:
		frac = 0
	case unitMillisecond:
		frac = frac / 1000 * 1000
	case unitMicrosecond:
	case unitWeek:
		return iv, &sqlerr.Error{Code: sqlerr.FeatureNotSupported,
			Message: "unit \"" + low + "\" not supported for type interval", Detail: "Months usually have fractional weeks."}
	default:
		return iv, unitNotSupported(low, typNameInterval)
	}
	return types.IntervalValue{Months: int32(years*12 + mons), Days: int32(days),
		Micros: ((hours*60+mins)*60+secs)*microsPerSecond + frac}, nil
}

// dateTrunc truncates a TIMESTAMP (loc nil) or TIMESTAMPTZ in loc.
func dateTrunc(unit string, us int64, loc *time.Location) (int64, error) {
	typ := typNameTimestamp
	if loc != nil {
		typ = typNameTimestampTZ
	}
	u, low, err := parseTruncUnit(unit, typ)
	if err != nil {
		return 0, err
	}
	if isInfTimestamp(us) {
		if _, ok := truncWall(u, 0); !ok {
			return 0, unitNotSupported(low, typ)
		}
		return us, nil
	}
	if loc == nil {
		r, ok := truncWall(u, us)
		if !ok {
			return 0, unitNotSupported(low, typ)
		}
		return r, checkTimestamp(r)
	}
	off := zoneOffset(us, loc) * microsPerSecond
	r, ok := truncWall(u, us+off)
	if !ok {
		return 0, unitNotSupported(low, typ)
	}
	if u >= unitDay && u <= unitMillennium {
		r = localToUTC(r, loc) // a new day may have another offset
	} else {
		r -= off
	}
	return r, checkTimestamp(r)
}

// dateBin is date_bin(stride, source, origin): the start of the
// stride-wide bin, counted from origin, that holds source.
func dateBin(stride types.IntervalValue, source, origin int64) (int64, error) {
	if isInfTimestamp(source) {
		return source, nil
	}
	if isInfTimestamp(origin) {
		return 0, errorf(sqlerr.DatetimeFieldOverflow, "origin out of range")
	}
	if stride.Months != 0 {
		return 0, errorf(sqlerr.FeatureNotSupported, "timestamps cannot be binned into intervals containing months or years")
	}
	if d := int64(stride.Days); d > math.MaxInt64/microsPerDay || d < math.MinInt64/microsPerDay {
		return 0, errIntervalRange
	}
	strideUs := int64(stride.Days)*microsPerDay + stride.Micros
	if (stride.Micros > 0 && strideUs < int64(stride.Days)*microsPerDay) ||
		(stride.Micros < 0 && strideUs > int64(stride.Days)*microsPerDay) {
		return 0, errIntervalRange
	}
	if strideUs <= 0 {
		return 0, errorf(sqlerr.DatetimeFieldOverflow, "stride must be greater than zero")
	}
	diff := source - origin
	if (origin < 0 && diff < source) || (origin > 0 && diff > source) {
		return 0, errorf(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	mod := diff % strideUs
	r := origin + (diff - mod)
	if mod < 0 {
		r -= strideUs
	}
	return r, checkTimestamp(r)
}

// validDate reports whether year (astronomical), month and day form a
// real date.
func validDate(year int64, month, day int64) bool {
	if month < 1 || month > 12 || day < 1 {
		return false
	}
	return day <= int64(daysIn(int(year), time.Month(month)))
}

// makeDate is make_date and the date part of make_timestamp: a negative
// year is BC.
func makeDate(year, month, day int64) (int64, error) {
	astro := year
	if year < 0 {
		astro = year + 1
	}
	if year == 0 || !validDate(astro, month, day) {
		return 0, errorf(sqlerr.DatetimeFieldOverflow, "date field value out of range: %d-%02d-%02d", absInt(year), month, day)
	}
	days := floorDiv(fromCivil(astro, int(month), int(day), 0), microsPerDay)
	if days < int64(types.MinDate) || days > int64(types.MaxDate) {
		return 0, errorf(sqlerr.DatetimeFieldOverflow, "date out of range: %d-%02d-%02d", absInt(year), month, day)
	}
	return days, nil
}

func absInt(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

// pgG formats like C's %g (six significant digits).
func pgG(f float64) string { return strconv.FormatFloat(f, 'g', 6, 64) }

// makeTimeOfDay is the time part of make_time and make_timestamp.
func makeTimeOfDay(h, m int64, sec float64) (int64, error) {
	bad := func() (int64, error) {
		s := pgG(sec)
		if len(s) < 2 {
			s = "0" + s
		}
		return 0, errorf(sqlerr.DatetimeFieldOverflow, "time field value out of range: %d:%02d:%s", h, m, s)
	}
	if h < 0 || h > 24 || m < 0 || m >= 60 || !(sec >= 0) || sec > 60 {
		return bad()
	}
	us := (h*60+m)*60*microsPerSecond + int64(math.RoundToEven(sec*1e6))
	if us > microsPerDay {
		return bad()
	}
	return us, nil
}

// age is Postgres's timestamp_age: the symbolic difference a - b in
// years, months, days and time, borrowing days from the month of the
// earlier argument.
func age(a, b int64) (types.Datum, error) {
	if isInfTimestamp(a) || isInfTimestamp(b) {
		return types.Null, errTimestampRange
	}
	t1, t2 := civilOf(a), civilOf(b)
	fsec := t1.usec - t2.usec
	sec := t1.second - t2.second
	mi := t1.minute - t2.minute
	hour := t1.hour - t2.hour
	day := t1.day - t2.day
	mon := t1.month - t2.month
	year := t1.year - t2.year
	neg := a < b
	if neg {
		fsec, sec, mi, hour, day, mon, year = -fsec, -sec, -mi, -hour, -day, -mon, -year
	}
	for fsec < 0 {
		fsec += microsPerSecond
		sec--
	}
	for sec < 0 {
		sec += 60
		mi--
	}
	for mi < 0 {
		mi += 60
		hour--
	}
	for hour < 0 {
		hour += 24
		day--
	}
	for day < 0 {
		if neg {
			day += daysIn(int(t1.year), time.Month(t1.month))
		} else {
			day += daysIn(int(t2.year), time.Month(t2.month))
		}
		mon--
	}
	for mon < 0 {
		mon += 12
		year--
	}
	if neg {
		fsec, sec, mi, hour, day, mon, year = -fsec, -sec, -mi, -hour, -day, -mon, -year
	}
	months := year*12 + int64(mon)
	if months > math.MaxInt32 || months < math.MinInt32 {
		return types.Null, errorf(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	micros := ((int64(hour)*60+int64(mi))*60+int64(sec))*microsPerSecond + fsec
	return types.NewInterval(types.IntervalValue{Months: int32(months), Days: int32(day), Micros: micros}), nil
}

var errIntervalRange = sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")

func addInt32(a int32, b int64) (int32, error) {
	r := int64(a) + b
	if r > math.MaxInt32 || r < math.MinInt32 {
		return 0, errIntervalRange
	}
	return int32(r), nil
}

// justifyHours moves whole 24-hour spans of the time part into days.
func justifyHours(iv types.IntervalValue) (types.IntervalValue, error) {
	whole := iv.Micros / microsPerDay
	iv.Micros -= whole * microsPerDay
	var err error
	if iv.Days, err = addInt32(iv.Days, whole); err != nil {
		return iv, err
	}
	if iv.Days > 0 && iv.Micros < 0 {
		iv.Micros += microsPerDay
		iv.Days--
	} else if iv.Days < 0 && iv.Micros > 0 {
		iv.Micros -= microsPerDay
		iv.Days++
	}
	return iv, nil
}

// justifyDays moves whole 30-day spans into months.
func justifyDays(iv types.IntervalValue) (types.IntervalValue, error) {
	whole := iv.Days / 30
	iv.Days -= whole * 30
	var err error
	if iv.Months, err = addInt32(iv.Months, int64(whole)); err != nil {
		return iv, err
	}
	if iv.Months > 0 && iv.Days < 0 {
		iv.Days += 30
		iv.Months--
	} else if iv.Months < 0 && iv.Days > 0 {
		iv.Days -= 30
		iv.Months++
	}
	return iv, nil
}

// justifyInterval does both, so that every part has one sign.
func justifyInterval(iv types.IntervalValue) (types.IntervalValue, error) {
	wholeDay := iv.Micros / microsPerDay
	iv.Micros -= wholeDay * microsPerDay
	var err error
	if iv.Days, err = addInt32(iv.Days, wholeDay); err != nil {
		return iv, err
	}
	wholeMonth := iv.Days / 30
	iv.Days -= wholeMonth * 30
	if iv.Months, err = addInt32(iv.Months, int64(wholeMonth)); err != nil {
		return iv, err
	}
	if iv.Months > 0 && (iv.Days < 0 || (iv.Days == 0 && iv.Micros < 0)) {
		iv.Days += 30
		iv.Months--
	} else if iv.Months < 0 && (iv.Days > 0 || (iv.Days == 0 && iv.Micros > 0)) {
		iv.Days -= 30
		iv.Months++
	}
	if iv.Days > 0 && iv.Micros < 0 {
		iv.Micros += microsPerDay
		iv.Days--
	} else if iv.Days < 0 && iv.Micros > 0 {
		iv.Micros -= microsPerDay
		iv.Days++
	}
	return iv, nil
}

// makeInterval is make_interval(years, months, weeks, days, hours, mins,
// secs).
func makeInterval(a []types.Datum) (types.Datum, error) {
	var v [6]int64
	for i := range 6 {
		if i < len(a) {
			v[i] = a[i].Int64()
		}
	}
	secs := 0.0
	if len(a) > 6 {
		secs = a[6].Float64()
	}
	if math.IsInf(secs, 0) || math.IsNaN(secs) {
		return types.Null, errIntervalRange
	}
	months := v[0]*12 + v[1]
	days := v[2]*7 + v[3]
	us := math.RoundToEven(secs * 1e6)
	total := float64(v[4])*3600e6 + float64(v[5])*60e6 + us
	if months > math.MaxInt32 || months < math.MinInt32 || days > math.MaxInt32 || days < math.MinInt32 ||
		math.Abs(total) >= 9.2e18 {
		return types.Null, errIntervalRange
	}
	micros := v[4]*3600*microsPerSecond + v[5]*60*microsPerSecond + int64(us)
	return types.NewInterval(types.IntervalValue{Months: int32(months), Days: int32(days), Micros: micros}), nil
}

// toTimestamp is to_timestamp(double precision): Unix seconds to an
// instant, rounded to the microsecond as Postgres rounds it (from its own
// 2000-01-01 epoch).
func toTimestamp(sec float64) (types.Datum, error) {
	switch {
	case math.IsNaN(sec):
		return types.Null, errorf(sqlerr.DatetimeFieldOverflow, "timestamp cannot be NaN")
	case math.IsInf(sec, 1):
		return types.NewTimestampTZ(types.TimestampInfinity), nil
	case math.IsInf(sec, -1):
		return types.NewTimestampTZ(types.TimestampNegInfinity), nil
	}
	const pgEpochSecs = 946684800
	bad := errorf(sqlerr.DatetimeFieldOverflow, "timestamp out of range: \"%s\"", pgG(sec))
	if sec < float64(types.MinTimestamp)/1e6 || sec >= float64(types.MaxTimestamp)/1e6 {
		return types.Null, bad
	}
	us := int64(math.RoundToEven((sec-pgEpochSecs)*1e6)) + pgEpochSecs*microsPerSecond
	if checkTimestamp(us) != nil {
		return types.Null, bad
	}
	return types.NewTimestampTZ(us), nil
}

func registerDatetime(r *Registry) {
	const (
		kDate = types.KindDate
		kTime = types.KindTime
		kTS   = types.KindTimestamp
		kTSTZ = types.KindTimestampTZ
		kIv   = types.KindInterval
	)
	for _, k := range []types.Kind{kDate, kTime, kTS, kTSTZ, kIv} {
		r.Add(strict("extract", kinds(kText, k), kNum, func(ctx *Context, a []types.Datum) (types.Datum, error) {
			fv, ok, err := extractField(ctx, a[0].Str(), a[1])
			if err != nil || !ok {
				return types.Null, err
			}
			return types.NewNumeric(fv.dec), nil
		}))
		k := k
		r.Add(strict("date_part", kinds(kText, k), kFloat, func(ctx *Context, a []types.Datum) (types.Datum, error) {
			v := a[1]
			if k == kDate {
				// date_part(text, date) is date_part(text, date::timestamp).
				d := v.Date()
				switch d {
				case types.DateInfinity:
					v = types.NewTimestamp(types.TimestampInfinity)
				case types.DateNegInfinity:
					v = types.NewTimestamp(types.TimestampNegInfinity)
				default:
					v = types.NewTimestamp(int64(d) * microsPerDay)
				}
			}
			fv, ok, err := extractField(ctx, a[0].Str(), v)
			if err != nil || !ok {
				return types.Null, err
			}
			return types.NewFloat64(fv.f), nil
		}))
	}
	r.Add(strict("date_trunc", kinds(kText, kTS), kTS, func(_ *Context, a []types.Datum) (types.Datum, error) {
		us, err := dateTrunc(a[0].Str(), a[1].Micros(), nil)
		return types.NewTimestamp(us), err
	}))
	r.Add(strict("date_trunc", kinds(kText, kTSTZ), kTSTZ, func(ctx *Context, a []types.Datum) (types.Datum, error) {
		us, err := dateTrunc(a[0].Str(), a[1].Micros(), ctx.Location())
		return types.NewTimestampTZ(us), err
	}))
	r.Add(strict("date_trunc", kinds(kText, kTSTZ, kText), kTSTZ, func(_ *Context, a []types.Datum) (types.Datum, error) {
		loc, err := zoneByName(a[2].Str())
		if err != nil {
			return types.Null, err
		}
		us, err := dateTrunc(a[0].Str(), a[1].Micros(), loc)
		return types.NewTimestampTZ(us), err
	}))
	r.Add(strict("date_trunc", kinds(kText, kIv), kIv, func(_ *Context, a []types.Datum) (types.Datum, error) {
		iv, err := intervalTrunc(a[0].Str(), a[1].Interval())
		if err != nil {
			return types.Null, err
		}
		return types.NewInterval(iv), nil
	}))
	for _, k := range []types.Kind{kTS, kTSTZ} {
		k := k
		r.Add(strict("date_bin", kinds(kIv, k, k), k, func(_ *Context, a []types.Datum) (types.Datum, error) {
			us, err := dateBin(a[0].Interval(), a[1].Micros(), a[2].Micros())
			if k == kTS {
				return types.NewTimestamp(us), err
			}
			return types.NewTimestampTZ(us), err
		}))
	}
	r.Add(strict("make_date", kinds(kInt, kInt, kInt), kDate, func(_ *Context, a []types.Datum) (types.Datum, error) {
		d, err := makeDate(a[0].Int64(), a[1].Int64(), a[2].Int64())
		return types.NewDate(int32(d)), err
	}))
	r.Add(strict("make_time", kinds(kInt, kInt, kFloat), kTime, func(_ *Context, a []types.Datum) (types.Datum, error) {
		us, err := makeTimeOfDay(a[0].Int64(), a[1].Int64(), a[2].Float64())
		if err != nil {
			return types.Null, err
		}
		return types.NewTime(us), nil
	}))
	makeTS := func(a []types.Datum) (int64, error) {
		d, err := makeDate(a[0].Int64(), a[1].Int64(), a[2].Int64())
		if err != nil {
			return 0, err
		}
		tod, err := makeTimeOfDay(a[3].Int64(), a[4].Int64(), a[5].Float64())
		if err != nil {
			return 0, err
		}
		us := d*microsPerDay + tod
		if checkTimestamp(us) != nil {
			return 0, errorf(sqlerr.DatetimeFieldOverflow, "timestamp out of range: %d-%02d-%02d %d:%02d:%s",
				a[0].Int64(), a[1].Int64(), a[2].Int64(), a[3].Int64(), a[4].Int64(), pgG(a[5].Float64()))
		}
		return us, nil
	}
	r.Add(strict("make_timestamp", kinds(kInt, kInt, kInt, kInt, kInt, kFloat), kTS, func(_ *Context, a []types.Datum) (types.Datum, error) {
		us, err := makeTS(a)
		return types.NewTimestamp(us), err
	}))
	r.Add(strict("make_timestamptz", kinds(kInt, kInt, kInt, kInt, kInt, kFloat), kTSTZ, func(ctx *Context, a []types.Datum) (types.Datum, error) {
		us, err := makeTS(a)
		if err != nil {
			return types.Null, err
		}
		return types.NewTimestampTZ(localToUTC(us, ctx.Location())), nil
	}))
	r.Add(strict("make_timestamptz", kinds(kInt, kInt, kInt, kInt, kInt, kFloat, kText), kTSTZ, func(_ *Context, a []types.Datum) (types.Datum, error) {
		us, err := makeTS(a)
		if err != nil {
			return types.Null, err
		}
		loc, err := zoneByName(a[6].Str())
		if err != nil {
			return types.Null, err
		}
		return types.NewTimestampTZ(localToUTC(us, loc)), nil
	}))
	// make_interval has defaults (0) for every parameter: one overload per
	// arity, so that make_interval(1, 2) means 1 year 2 months.
	ivParams := kinds(kInt, kInt, kInt, kInt, kInt, kInt, kFloat)
	for n := 0; n <= len(ivParams); n++ {
		r.Add(strict("make_interval", append([]types.Kind{}, ivParams[:n]...), kIv, func(_ *Context, a []types.Datum) (types.Datum, error) {
			return makeInterval(a)
		}))
	}
	r.Add(strict("to_timestamp", kinds(kFloat), kTSTZ, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return toTimestamp(a[0].Float64())
	}))
	r.Add(strict("age", kinds(kTS, kTS), kIv, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return age(a[0].Micros(), a[1].Micros())
	}))
	r.Add(strict("age", kinds(kTSTZ, kTSTZ), kIv, func(ctx *Context, a []types.Datum) (types.Datum, error) {
		loc := ctx.Location()
		x, y := a[0].Micros(), a[1].Micros()
		if isInfTimestamp(x) || isInfTimestamp(y) {
			return age(x, y)
		}
		return age(toLocal(x, loc), toLocal(y, loc))
	}))
	for _, j := range []struct {
		name string
		f    func(types.IntervalValue) (types.IntervalValue, error)
	}{{"justify_days", justifyDays}, {"justify_hours", justifyHours}, {"justify_interval", justifyInterval}} {
		j := j
		r.Add(strict(j.name, kinds(kIv), kIv, func(_ *Context, a []types.Datum) (types.Datum, error) {
			iv, err := j.f(a[0].Interval())
			if err != nil {
				return types.Null, err
			}
			return types.NewInterval(iv), nil
		}))
	}
}
