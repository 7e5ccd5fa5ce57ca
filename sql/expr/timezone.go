package expr

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Time zones: names as AT TIME ZONE and date_trunc's third argument take
// them, and the mapping from a local wall-clock time to an instant.
//
// A zone name is resolved as Postgres does: first as an abbreviation with
// a fixed offset (a subset of Postgres's "Default" abbreviation set:
// UTC, EST, PDT, CET, ...), then as an IANA zone name from the time zone
// database, then as a POSIX-style offset such as '+05' or 'UTC+5', whose
// sign is POSIX's: positive is west of Greenwich, so '+05' is UTC-5.

// tzAbbrevs are fixed-offset abbreviations (seconds east of UTC).
var tzAbbrevs = map[string]int{
	"utc": 0, "gmt": 0, "z": 0, "zulu": 0, "ut": 0, "wet": 0,
	"est": -5 * 3600, "edt": -4 * 3600, "cst": -6 * 3600, "cdt": -5 * 3600,
	"mst": -7 * 3600, "mdt": -6 * 3600, "pst": -8 * 3600, "pdt": -7 * 3600,
	"akst": -9 * 3600, "akdt": -8 * 3600, "hst": -10 * 3600,
	"west": 3600, "bst": 3600, "cet": 3600, "cest": 2 * 3600, "met": 3600, "mest": 2 * 3600,
	"eet": 2 * 3600, "eest": 3 * 3600, "jst": 9 * 3600, "kst": 9 * 3600,
	"aest": 10 * 3600, "aedt": 11 * 3600, "nzst": 12 * 3600, "nzdt": 13 * 3600,
}

var zoneCache sync.Map // name -> *time.Location; only names that resolved

var posixOffset = regexp.MustCompile(`^([A-Za-z]{3,})?([+-]?)(\d{1,2})(?::(\d{2})(?::(\d{2}))?)?$`)

// zoneByName resolves a time zone name; an unknown name is 22023
// `time zone "x" not recognized`.
func zoneByName(name string) (*time.Location, error) {
	if l, ok := zoneCache.Load(name); ok {
		return l.(*time.Location), nil
	}
	loc, ok := resolveZone(name)
	if !ok {
		return nil, errorf(sqlerr.InvalidParameterValue, "time zone \"%s\" not recognized", name)
	}
	zoneCache.Store(name, loc)
	return loc, nil
}

func resolveZone(name string) (*time.Location, bool) {
	if off, ok := tzAbbrevs[strings.ToLower(name)]; ok {
		return time.FixedZone(strings.ToUpper(name), off), true
	}
	if name != "" && !strings.HasPrefix(name, "/") && !strings.Contains(name, "..") {
		if loc, err := time.LoadLocation(name); err == nil {
			return loc, true
		}
	}
	m := posixOffset.FindStringSubmatch(name)
	if m == nil {
		return nil, false
	}
	h, _ := strconv.Atoi(m[3])
	mi, _ := strconv.Atoi(m[4] + "0")
	s, _ := strconv.Atoi(m[5] + "0")
	off := h*3600 + mi/10*60 + s/10
	if off > 15*3600+59*60+59 || mi/10 > 59 || s/10 > 59 {
		return nil, false
	}
	if m[2] != "-" {
		off = -off // POSIX: positive is west
	}
	return time.FixedZone(name, off), true
}

// zoneOffset returns loc's UTC offset in seconds at instant us (µs).
func zoneOffset(us int64, loc *time.Location) int64 {
	_, off := time.Unix(floorDiv(us, microsPerSecond), 0).In(loc).Zone()
	return int64(off)
}

// localToUTC maps a local wall-clock time in loc (µs since 1970 as if it
// were UTC) to an instant, resolving daylight-saving gaps and overlaps as
// Postgres's DetermineTimeZoneOffset does: a time skipped by a
// spring-forward change is read with the offset before the change, a
// time repeated by a fall-back change with the offset after it.
func localToUTC(wall int64, loc *time.Location) int64 {
	if isInfTimestamp(wall) {
		return wall
	}
	t := floorDiv(wall, microsPerSecond)
	prev := time.Unix(t-86400, 0).In(loc)
	_, before := prev.Zone()
	_, end := prev.ZoneBounds()
	if end.IsZero() {
		return wall - int64(before)*microsPerSecond
	}
	boundary := end.Unix()
	_, after := end.In(loc).Zone()
	beforeTime, afterTime := t-int64(before), t-int64(after)
	var off int
	switch {
	case beforeTime < boundary && afterTime < boundary:
		off = before
	case beforeTime >= boundary && afterTime >= boundary:
		off = after
	case beforeTime > afterTime: // a gap: spring forward
		off = before
	default: // an overlap: fall back
		off = after
	}
	return wall - int64(off)*microsPerSecond
}

// checkFinite checks a computed timestamp's range; ±infinity passes.
func checkFinite(us int64) error {
	if isInfTimestamp(us) {
		return nil
	}
	return checkTimestamp(us)
}

// toLocal returns the wall-clock time (µs as if UTC) of instant us in loc.
func toLocal(us int64, loc *time.Location) int64 {
	if isInfTimestamp(us) {
		return us
	}
	return us + zoneOffset(us, loc)*microsPerSecond
}

func registerTimezone(r *Registry) {
	const kTS, kTSTZ, kIv = types.KindTimestamp, types.KindTimestampTZ, types.KindInterval
	// timezone(zone, timestamptz) is `tstz AT TIME ZONE zone`: the wall
	// clock there, as a TIMESTAMP.
	r.Add(strict("timezone", kinds(kText, kTSTZ), kTS, func(_ *Context, a []types.Datum) (types.Datum, error) {
		loc, err := zoneByName(a[0].Str())
		if err != nil {
			return types.Null, err
		}
		us := toLocal(a[1].Micros(), loc)
		return types.NewTimestamp(us), checkFinite(us)
	}))
	// timezone(zone, timestamp) reads the wall clock in zone: a TIMESTAMPTZ.
	r.Add(strict("timezone", kinds(kText, kTS), kTSTZ, func(_ *Context, a []types.Datum) (types.Datum, error) {
		loc, err := zoneByName(a[0].Str())
		if err != nil {
			return types.Null, err
		}
		us := localToUTC(a[1].Micros(), loc)
		return types.NewTimestampTZ(us), checkFinite(us)
	}))
	// An interval zone is a fixed offset east of UTC.
	ivOffset := func(d types.Datum) (int64, error) {
		iv := d.Interval()
		if iv.Months != 0 || iv.Days != 0 {
			return 0, errorf(sqlerr.InvalidParameterValue, "interval time zone \"%s\" must not include months or days", types.FormatText(d, nil))
		}
		return iv.Micros, nil
	}
	r.Add(strict("timezone", kinds(kIv, kTSTZ), kTS, func(_ *Context, a []types.Datum) (types.Datum, error) {
		off, err := ivOffset(a[0])
		if err != nil || isInfTimestamp(a[1].Micros()) {
			return types.NewTimestamp(a[1].Micros()), err
		}
		us := a[1].Micros() + off
		return types.NewTimestamp(us), checkTimestamp(us)
	}))
	r.Add(strict("timezone", kinds(kIv, kTS), kTSTZ, func(_ *Context, a []types.Datum) (types.Datum, error) {
		off, err := ivOffset(a[0])
		if err != nil || isInfTimestamp(a[1].Micros()) {
			return types.NewTimestampTZ(a[1].Micros()), err
		}
		us := a[1].Micros() - off
		return types.NewTimestampTZ(us), checkTimestamp(us)
	}))
	// clock_timestamp() is the wall clock at the call. now(),
	// current_timestamp and statement_timestamp() need a statement-stable
	// time, which the Context does not carry yet.
	// now() and its synonyms return the statement's start time. They are
	// Volatile so that the binder does not fold them into a plan that
	// outlives the statement (a view).
	for _, name := range []string{"now", "statement_timestamp", "transaction_timestamp"} {
		r.Add(&Func{Name: name, Params: []types.Kind{}, Volatile: true, ResultKind: kTSTZ,
			Eval: func(ctx *Context, _ []types.Datum) (types.Datum, error) {
				return types.NewTimestampTZ(ctx.StatementTime().UnixMicro()), nil
			}})
	}
	r.Add(&Func{Name: "current_date", Params: []types.Kind{}, Volatile: true, ResultKind: types.KindDate,
		Eval: func(ctx *Context, _ []types.Datum) (types.Datum, error) {
			y, m, d := ctx.StatementTime().In(ctx.Location()).Date()
			days := time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400
			return types.NewDate(int32(days)), nil
		}})
	r.Add(&Func{Name: "clock_timestamp", Params: []types.Kind{}, Volatile: true, ResultKind: kTSTZ,
		Eval: func(*Context, []types.Datum) (types.Datum, error) {
			return types.NewTimestampTZ(time.Now().UnixMicro()), nil
		}})
}
