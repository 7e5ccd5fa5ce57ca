package expr

import (
	"math"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

func mustZone(t *testing.T, name string) *time.Location {
	t.Helper()
	loc, err := time.LoadLocation(name)
	if err != nil {
		t.Skipf("no time zone database: %v", err)
	}
	return loc
}

// ivS builds an interval from months, days and microseconds.
func ivS(months, days int32, micros int64) types.IntervalValue {
	return types.IntervalValue{Months: months, Days: days, Micros: micros}
}

const (
	usSec  = int64(1_000_000)
	usHour = 3600 * usSec
)

// Expected values are what Postgres 15 prints.
func TestExtract(t *testing.T) {
	bc44 := types.NewTimestamp(time.Date(-43, 3, 15, 0, 0, 0, 0, time.UTC).UnixMicro())
	runCases(t, &Context{}, []fcase{
		{"extract", []any{"second", tsS("2020-01-01 00:00:05.5")}, "5.500000", ""},
		{"extract", []any{"epoch", tsS("2020-01-01 00:00:05")}, "1577836805.000000", ""},
		{"extract", []any{"millisecond", tsS("2020-01-01 00:00:05.5")}, "5500.000", ""},
		{"extract", []any{"microseconds", tsS("2020-01-01 00:00:05.5")}, "5500000", ""},
		{"extract", []any{"YEAR", tsS("2020-02-03 04:05:06")}, "2020", ""},
		{"extract", []any{"month", tsS("2020-02-03 04:05:06")}, "2", ""},
		{"extract", []any{"day", tsS("2020-02-03 04:05:06")}, "3", ""},
		{"extract", []any{"hour", tsS("2020-01-01 13:00:00")}, "13", ""},
		{"extract", []any{"minute", tsS("2020-01-01 13:07:00")}, "7", ""},
		{"extract", []any{"dow", tsS("2020-02-02 00:00:00")}, "0", ""},
		{"extract", []any{"isodow", tsS("2020-02-02 00:00:00")}, "7", ""},
		{"extract", []any{"doy", tsS("2020-12-31 00:00:00")}, "366", ""},
		{"extract", []any{"week", tsS("2021-01-01 00:00:00")}, "53", ""},
		{"extract", []any{"isoyear", tsS("2021-01-01 00:00:00")}, "2020", ""},
		{"extract", []any{"quarter", tsS("2020-08-01 00:00:00")}, "3", ""},
		{"extract", []any{"decade", tsS("2020-08-01 00:00:00")}, "202", ""},
		{"extract", []any{"century", tsS("2000-08-01 00:00:00")}, "20", ""},
		{"extract", []any{"millennium", tsS("2001-08-01 00:00:00")}, "3", ""},
		{"extract", []any{"julian", tsS("2020-01-01 12:00:00")}, "2458850.50000000000000000000", ""},
		{"extract", []any{"year", bc44}, "-44", ""},
		{"extract", []any{"decade", bc44}, "-5", ""},
		{"extract", []any{"millennium", bc44}, "-1", ""},
		{"extract", []any{"year", types.NewTimestamp(types.TimestampInfinity)}, "Infinity", ""},
		{"extract", []any{"month", types.NewTimestamp(types.TimestampInfinity)}, "NULL", ""},
		{"extract", []any{"epoch", types.NewTimestamp(types.TimestampNegInfinity)}, "-Infinity", ""},
		{"extract", []any{"foo", tsS("2024-02-29 00:00:00")}, `unit "foo" not recognized for type timestamp without time zone`, sqlerr.InvalidParameterValue},
		{"extract", []any{"timezone", tsS("2024-02-29 00:00:00")}, `unit "timezone" not supported for type timestamp without time zone`, sqlerr.FeatureNotSupported},
		{"extract", []any{"epoch", dateS("2024-02-29")}, "1709164800", ""},
		{"extract", []any{"day", dateS("2024-02-29")}, "29", ""},
		{"extract", []any{"julian", dateS("2024-02-29")}, "2460370", ""},
		{"extract", []any{"week", dateS("2024-02-29")}, "9", ""},
		{"extract", []any{"day", types.NewDate(types.DateNegInfinity)}, "NULL", ""},
		{"extract", []any{"epoch", types.NewDate(types.DateInfinity)}, "Infinity", ""},
		{"extract", []any{"hour", dateS("2024-02-29")}, `unit "hour" not supported for type date`, sqlerr.FeatureNotSupported},
		{"extract", []any{"foo", dateS("2024-02-29")}, `unit "foo" not recognized for type date`, sqlerr.InvalidParameterValue},
		{"extract", []any{"hour", timeS("13:45:10.25")}, "13", ""},
		{"extract", []any{"second", timeS("13:45:10.25")}, "10.250000", ""},
		{"extract", []any{"epoch", timeS("13:45:10.25")}, "49510.250000", ""},
		{"extract", []any{"millisecond", timeS("13:45:10.25")}, "10250.000", ""},
		{"extract", []any{"day", timeS("13:45:00")}, `unit "day" not supported for type time without time zone`, sqlerr.FeatureNotSupported},
		{"extract", []any{"epoch", ivS(14, 3, 4*usHour+5*60*usSec+6500000)}, "37015506.500000", ""},
		{"extract", []any{"hour", ivS(0, 0, -27*usHour)}, "-27", ""},
		{"extract", []any{"minute", ivS(0, 0, -usHour-5*60*usSec)}, "-5", ""},
		{"extract", []any{"second", ivS(0, 0, -65500000)}, "-5.500000", ""},
		{"extract", []any{"millisecond", ivS(0, 0, 1500000)}, "1500.000", ""},
		{"extract", []any{"quarter", ivS(7, 0, 0)}, "3", ""},
		{"extract", []any{"decade", ivS(-300, 0, 0)}, "-2", ""},
		{"extract", []any{"year", ivS(-14, 0, 0)}, "-1", ""},
		{"extract", []any{"month", ivS(-14, 0, 0)}, "-2", ""},
		{"extract", []any{"day", ivS(0, 40, 0)}, "40", ""},
		{"extract", []any{"dow", ivS(0, 1, 0)}, `unit "dow" not supported for type interval`, sqlerr.FeatureNotSupported},
		{"extract", []any{nil, tsS("2024-02-29 00:00:00")}, "NULL", ""},
		{"date_part", []any{"second", tsS("2020-01-01 00:00:05.5")}, "5.5", ""},
		{"date_part", []any{"epoch", tsS("2020-01-01 00:00:05.25")}, "1577836805.25", ""},
		{"date_part", []any{"millisecond", tsS("2020-01-01 00:00:05.5")}, "5500", ""},
		{"date_part", []any{"microseconds", tsS("2020-01-01 00:00:05.5")}, "5500000", ""},
		{"date_part", []any{"julian", tsS("2020-01-01 12:00:00")}, "2458850.5", ""},
		{"date_part", []any{"century", bc44}, "-1", ""},
		{"date_part", []any{"year", bc44}, "-44", ""},
		{"date_part", []any{"dow", dateS("2024-02-29")}, "4", ""},
		{"date_part", []any{"hour", dateS("2024-02-29")}, "0", ""},
		{"date_part", []any{"year", types.NewDate(types.DateInfinity)}, "Infinity", ""},
		{"date_part", []any{"epoch", ivS(14, 3, 4*usHour+5*60*usSec+6500000)}, "37015506.5", ""},
		{"date_part", []any{"millisecond", timeS("13:45:10.25")}, "10250", ""},
		{"date_part", []any{"epoch", types.NewTime(24 * usHour)}, "86400", ""},
	})
	ny := &Context{Loc: mustZone(t, "America/New_York")}
	runCases(t, ny, []fcase{
		{"extract", []any{"timezone", tstzS("2024-07-01 12:00:00")}, "-14400", ""},
		{"extract", []any{"timezone_hour", tstzS("2024-01-01 12:00:00")}, "-5", ""},
		{"extract", []any{"timezone_minute", tstzS("2024-01-01 12:00:00")}, "0", ""},
		{"extract", []any{"hour", tstzS("2024-07-01 08:00:00")}, "8", ""},
		{"extract", []any{"epoch", tstzS("2024-07-01 08:00:00")}, "1719835200.000000", ""},
		{"date_part", []any{"day", tstzS("2024-06-30 22:00:00")}, "30", ""},
	})
	runCases(t, &Context{Loc: mustZone(t, "Asia/Kolkata")}, []fcase{
		{"extract", []any{"timezone", tstzS("2024-07-01 12:00:00")}, "19800", ""},
		{"extract", []any{"timezone_minute", tstzS("2024-01-01 12:00:00")}, "30", ""},
	})
	runCases(t, &Context{Loc: mustZone(t, "America/St_Johns")}, []fcase{
		{"extract", []any{"timezone_hour", tstzS("2024-01-01 12:00:00")}, "-3", ""},
		{"extract", []any{"timezone_minute", tstzS("2024-01-01 12:00:00")}, "-30", ""},
	})
}

func TestDateTruncAndBin(t *testing.T) {
	bc44 := types.NewTimestamp(time.Date(-43, 3, 15, 0, 0, 0, 0, time.UTC).UnixMicro())
	runCases(t, &Context{}, []fcase{
		{"date_trunc", []any{"week", tsS("2021-01-01 10:00:00")}, "2020-12-28 00:00:00", ""},
		{"date_trunc", []any{"quarter", tsS("2024-08-15 10:00:00")}, "2024-07-01 00:00:00", ""},
		{"date_trunc", []any{"decade", tsS("2024-08-15 00:00:00")}, "2020-01-01 00:00:00", ""},
		{"date_trunc", []any{"century", tsS("2000-08-15 00:00:00")}, "1901-01-01 00:00:00", ""},
		{"date_trunc", []any{"century", tsS("2001-08-15 00:00:00")}, "2001-01-01 00:00:00", ""},
		{"date_trunc", []any{"millennium", tsS("2000-08-15 00:00:00")}, "1001-01-01 00:00:00", ""},
		{"date_trunc", []any{"millennium", bc44}, "1000-01-01 00:00:00 BC", ""},
		{"date_trunc", []any{"century", bc44}, "0100-01-01 00:00:00 BC", ""},
		{"date_trunc", []any{"decade", bc44}, "0051-01-01 00:00:00 BC", ""},
		{"date_trunc", []any{"year", tsS("2024-08-15 10:11:12")}, "2024-01-01 00:00:00", ""},
		{"date_trunc", []any{"month", tsS("2024-08-15 10:11:12")}, "2024-08-01 00:00:00", ""},
		{"date_trunc", []any{"day", tsS("2024-08-15 10:11:12")}, "2024-08-15 00:00:00", ""},
		{"date_trunc", []any{"hour", tsS("2024-08-15 10:11:12")}, "2024-08-15 10:00:00", ""},
		{"date_trunc", []any{"minute", tsS("2024-08-15 10:11:12")}, "2024-08-15 10:11:00", ""},
		{"date_trunc", []any{"second", tsS("2024-08-15 10:11:12.5")}, "2024-08-15 10:11:12", ""},
		{"date_trunc", []any{"milliseconds", tsS("2024-01-01 00:00:01.123456")}, "2024-01-01 00:00:01.123", ""},
		{"date_trunc", []any{"microseconds", tsS("2024-01-01 00:00:01.123456")}, "2024-01-01 00:00:01.123456", ""},
		{"date_trunc", []any{"hour", tsS("1969-12-31 23:59:59.5")}, "1969-12-31 23:00:00", ""},
		{"date_trunc", []any{"hour", types.NewTimestamp(types.TimestampInfinity)}, "infinity", ""},
		{"date_trunc", []any{"fortnight", tsS("2024-01-01 00:00:00")}, `unit "fortnight" not recognized for type timestamp without time zone`, sqlerr.InvalidParameterValue},
		{"date_trunc", []any{"timezone", tsS("2024-01-01 00:00:00")}, `unit "timezone" not supported for type timestamp without time zone`, sqlerr.FeatureNotSupported},
		{"date_trunc", []any{"dow", tsS("2020-01-01 00:00:00")}, `unit "dow" not recognized for type timestamp without time zone`, sqlerr.InvalidParameterValue},
		{"date_trunc", []any{"epoch", tsS("2020-01-01 00:00:00")}, `unit "epoch" not recognized for type timestamp without time zone`, sqlerr.InvalidParameterValue},
		{"date_trunc", []any{"hour", ivS(0, 2, 5*usHour+30*60*usSec)}, "2 days 05:00:00", ""},
		{"date_trunc", []any{"year", ivS(15, 3, 0)}, "1 year", ""},
		{"date_trunc", []any{"decade", ivS(-297, 0, 0)}, "-20 years", ""},
		{"date_trunc", []any{"quarter", ivS(5, 2, 0)}, "3 mons", ""},
		{"date_trunc", []any{"millisecond", ivS(0, 0, 1234560)}, "00:00:01.234", ""},
		{"date_trunc", []any{"day", ivS(0, -1, -3*usHour)}, "-1 days", ""},
		{"date_trunc", []any{"week", ivS(0, 3, 0)}, `unit "week" not supported for type interval`, sqlerr.FeatureNotSupported},
		{"date_trunc", []any{"dow", ivS(0, 3, 0)}, `unit "dow" not recognized for type interval`, sqlerr.InvalidParameterValue},
		{"date_bin", []any{ivS(0, 0, 15*60*usSec), tsS("2020-02-11 15:44:17"), tsS("2001-01-01 00:00:00")}, "2020-02-11 15:30:00", ""},
		{"date_bin", []any{ivS(0, 0, 15*60*usSec), tsS("2020-02-11 15:44:17"), tsS("2001-01-01 00:02:30")}, "2020-02-11 15:32:30", ""},
		{"date_bin", []any{ivS(0, 1, 0), tsS("1969-12-31 12:00:00"), tsS("1970-01-01 00:00:00")}, "1969-12-31 00:00:00", ""},
		{"date_bin", []any{ivS(0, 7, 0), tsS("2024-01-03 00:00:00"), tsS("2024-01-01 00:00:00")}, "2024-01-01 00:00:00", ""},
		{"date_bin", []any{ivS(0, 2000000000, 0), tsS("2020-02-11 00:00:00"), tsS("2001-01-01 00:00:00")}, "interval out of range", sqlerr.DatetimeFieldOverflow},
		{"date_bin", []any{ivS(0, 0, 100*365*24*usHour), tsS("2020-02-11 00:00:00"), tsS("1970-01-01 00:00:00")}, "1970-01-01 00:00:00", ""},
		{"date_bin", []any{ivS(1, 0, 0), tsS("2020-02-11 00:00:00"), tsS("2001-01-01 00:00:00")}, "timestamps cannot be binned into intervals containing months or years", sqlerr.FeatureNotSupported},
		{"date_bin", []any{ivS(0, 0, 0), tsS("2020-02-11 00:00:00"), tsS("2001-01-01 00:00:00")}, "stride must be greater than zero", sqlerr.DatetimeFieldOverflow},
	})
	paris := &Context{Loc: mustZone(t, "Europe/Paris")}
	runCases(t, paris, []fcase{
		// The day of the spring-forward change starts at +01, noon is +02.
		{"date_trunc", []any{"day", tstzS("2024-03-31 12:00:00")}, "2024-03-31 00:00:00+01", ""},
		{"date_trunc", []any{"day", tstzS("2024-10-27 12:00:00")}, "2024-10-27 00:00:00+02", ""},
		{"date_trunc", []any{"month", tstzS("2024-04-15 00:00:00")}, "2024-04-01 00:00:00+02", ""},
		{"date_trunc", []any{"week", tstzS("2024-04-03 00:00:00")}, "2024-04-01 00:00:00+02", ""},
		// Hour truncation keeps the offset: both 02:30s of the fall-back night.
		{"date_trunc", []any{"hour", types.NewTimestampTZ(time.Date(2024, 10, 27, 1, 30, 0, 0, time.UTC).UnixMicro())}, "2024-10-27 02:00:00+01", ""},
		{"date_trunc", []any{"hour", types.NewTimestampTZ(time.Date(2024, 10, 27, 0, 30, 0, 0, time.UTC).UnixMicro())}, "2024-10-27 02:00:00+02", ""},
		{"date_trunc", []any{"day", tstzS("2024-03-31 12:00:00"), "America/New_York"}, "2024-03-31 06:00:00+02", ""},
		{"date_trunc", []any{"day", tstzS("2024-03-31 12:00:00"), "UTC"}, "2024-03-31 01:00:00+01", ""},
		{"date_trunc", []any{"day", tstzS("2024-03-31 12:00:00"), "Mars/Olympus"}, `time zone "Mars/Olympus" not recognized`, sqlerr.InvalidParameterValue},
		{"date_bin", []any{ivS(0, 0, usHour), tstzS("2024-03-31 03:40:00"), tstzS("2024-01-01 00:00:00")}, "2024-03-31 03:00:00+02", ""},
	})
	// Midnight does not exist in Sao Paulo on 2018-11-04: the day starts
	// at 01:00 (the offset before the change).
	runCases(t, &Context{Loc: mustZone(t, "America/Sao_Paulo")}, []fcase{
		{"date_trunc", []any{"day", tstzS("2018-11-04 12:00:00")}, "2018-11-04 01:00:00-02", ""},
	})
}

func TestMakeAndConvert(t *testing.T) {
	utc := &Context{}
	runCases(t, utc, []fcase{
		{"make_date", []any{2024, 2, 29}, "2024-02-29", ""},
		{"make_date", []any{-44, 3, 15}, "0044-03-15 BC", ""},
		{"make_date", []any{0, 1, 1}, "date field value out of range: 0-01-01", sqlerr.DatetimeFieldOverflow},
		{"make_date", []any{2023, 2, 29}, "date field value out of range: 2023-02-29", sqlerr.DatetimeFieldOverflow},
		{"make_date", []any{2023, 13, 1}, "date field value out of range: 2023-13-01", sqlerr.DatetimeFieldOverflow},
		{"make_time", []any{24, 0, 0.0}, "24:00:00", ""},
		{"make_time", []any{1, 2, 3.5}, "01:02:03.5", ""},
		{"make_time", []any{25, 0, 0.0}, "time field value out of range: 25:00:00", sqlerr.DatetimeFieldOverflow},
		{"make_time", []any{23, 59, 60.5}, "time field value out of range: 23:59:60.5", sqlerr.DatetimeFieldOverflow},
		{"make_time", []any{1, 60, 0.0}, "time field value out of range: 1:60:00", sqlerr.DatetimeFieldOverflow},
		{"make_timestamp", []any{2024, 2, 29, 12, 30, 45.123456789}, "2024-02-29 12:30:45.123457", ""},
		{"make_timestamp", []any{-44, 3, 15, 0, 0, 0.0}, "0044-03-15 00:00:00 BC", ""},
		{"make_interval", []any{1, 2, 3, 4, 5, 6, 7.5}, "1 year 2 mons 25 days 05:06:07.5", ""},
		{"make_interval", []any{1}, "1 year", ""},
		{"make_interval", []any{0, 0, 0, 10}, "10 days", ""},
		{"make_interval", []any{0, 0, 0, 0, 0, 0, -1.5}, "-00:00:01.5", ""},
		{"make_interval", nil, "00:00:00", ""},
		// Postgres 15 wraps around here (-178956970 years -4 mons); Strata
		// reports the overflow, as Postgres 16 does.
		{"make_interval", []any{178956971, 0}, "interval out of range", sqlerr.DatetimeFieldOverflow},
		{"to_timestamp", []any{1284352323.5}, "2010-09-13 04:32:03.5+00", ""},
		{"to_timestamp", []any{0.0}, "1970-01-01 00:00:00+00", ""},
		{"to_timestamp", []any{-1.5}, "1969-12-31 23:59:58.5+00", ""},
		{"to_timestamp", []any{1.0000005}, "1970-01-01 00:00:01+00", ""},
		{"to_timestamp", []any{1.0000015}, "1970-01-01 00:00:01.000002+00", ""},
		{"to_timestamp", []any{1e20}, `timestamp out of range: "1e+20"`, sqlerr.DatetimeFieldOverflow},
		{"to_timestamp", []any{math.Inf(-1)}, "-infinity", ""},
		{"to_timestamp", []any{math.NaN()}, "timestamp cannot be NaN", sqlerr.DatetimeFieldOverflow},
		{"justify_days", []any{ivS(-1, 35, 0)}, "5 days", ""},
		{"justify_days", []any{ivS(0, 65, 0)}, "2 mons 5 days", ""},
		{"justify_hours", []any{ivS(0, -1, 25*usHour)}, "01:00:00", ""},
		{"age", []any{tsS("2024-03-01 00:00:00"), tsS("2024-01-31 00:00:00")}, "1 mon 1 day", ""},
		{"age", []any{tsS("2001-04-10 00:00:00"), tsS("1957-06-13 00:00:00")}, "43 years 9 mons 27 days", ""},
		{"age", []any{tsS("2024-01-31 00:00:00"), tsS("2024-03-01 00:00:00")}, "-1 mons -1 days", ""},
		{"age", []any{tsS("2024-03-01 10:00:00"), tsS("2024-02-28 12:00:00.5")}, "1 day 21:59:59.5", ""},
		{"age", []any{tsS("2020-01-01 00:00:00"), tsS("2020-01-01 00:00:00")}, "00:00:00", ""},
		{"justify_days", []any{ivS(0, 35, 0)}, "1 mon 5 days", ""},
		{"justify_days", []any{ivS(0, -35, 0)}, "-1 mons -5 days", ""},
		{"justify_days", []any{ivS(1, -35, 0)}, "-5 days", ""},
		{"justify_hours", []any{ivS(0, 0, 27*usHour)}, "1 day 03:00:00", ""},
		{"justify_hours", []any{ivS(0, 1, -usHour)}, "23:00:00", ""},
		{"justify_hours", []any{ivS(0, 0, -27*usHour)}, "-1 days -03:00:00", ""},
		{"justify_interval", []any{ivS(1, 0, -usHour)}, "29 days 23:00:00", ""},
		{"justify_interval", []any{ivS(-1, 0, usHour)}, "-29 days -23:00:00", ""},
		{"justify_interval", []any{ivS(0, 50, 30*usHour)}, "1 mon 21 days 06:00:00", ""},
		{"timezone", []any{"America/Denver", tstzS("2001-02-16 20:38:40")}, "2001-02-16 13:38:40", ""},
		{"timezone", []any{"America/Denver", tsS("2001-02-16 20:38:40")}, "2001-02-17 03:38:40+00", ""},
		{"timezone", []any{"+05", tsS("2020-01-01 00:00:00")}, "2020-01-01 05:00:00+00", ""},
		{"timezone", []any{"UTC+3", tsS("2020-01-01 00:00:00")}, "2020-01-01 03:00:00+00", ""},
		{"timezone", []any{"EST", tsS("2020-07-01 00:00:00")}, "2020-07-01 05:00:00+00", ""},
		{"timezone", []any{"pdt", tstzS("2020-01-01 00:00:00")}, "2019-12-31 17:00:00", ""},
		{"timezone", []any{"Europe/Paris", tsS("2024-03-31 02:30:00")}, "2024-03-31 01:30:00+00", ""},
		{"timezone", []any{"Europe/Paris", tsS("2024-10-27 02:30:00")}, "2024-10-27 01:30:00+00", ""},
		{"timezone", []any{ivS(0, 0, -8*usHour), tstzS("2020-01-01 00:00:00")}, "2019-12-31 16:00:00", ""},
		{"timezone", []any{"Europe/Paris", types.NewTimestamp(types.TimestampInfinity)}, "infinity", ""},
		{"timezone", []any{"Europe/Paris", types.NewTimestampTZ(types.TimestampNegInfinity)}, "-infinity", ""},
		{"timezone", []any{"Mars/Olympus", tsS("2020-01-01 00:00:00")}, `time zone "Mars/Olympus" not recognized`, sqlerr.InvalidParameterValue},
		{"timezone", []any{ivS(0, 1, 0), tsS("2020-01-01 00:00:00")}, `interval time zone "1 day" must not include months or days`, sqlerr.InvalidParameterValue},
	})
	paris := &Context{Loc: mustZone(t, "Europe/Paris")}
	runCases(t, paris, []fcase{
		// A day across the spring-forward change is 23 hours, age says 1 day.
		{"age", []any{tstzS("2024-04-01 00:00:00"), tstzS("2024-03-31 00:00:00")}, "1 day", ""},
		{"make_timestamptz", []any{2024, 3, 31, 2, 30, 0.0}, "2024-03-31 03:30:00+02", ""},
		{"make_timestamptz", []any{2024, 7, 1, 12, 0, 0.0, "America/New_York"}, "2024-07-01 18:00:00+02", ""},
	})
}

func TestChainedAtTimeZone(t *testing.T) {
	// timestamp '2001-02-16 20:38:40' AT TIME ZONE 'Asia/Tokyo' AT TIME
	// ZONE 'America/Chicago' = 2001-02-16 05:38:40.
	toTZ, _, err := Builtins.Lookup("timezone", []types.Type{types.Text, types.Timestamp})
	if err != nil {
		t.Fatal(err)
	}
	toTS, _, err := Builtins.Lookup("timezone", []types.Type{types.Text, types.TimestampTZ})
	if err != nil {
		t.Fatal(err)
	}
	ctx := &Context{}
	src, _ := toDatum(t, ctx, tsS("2001-02-16 20:38:40"))
	e := NewCall(toTS, &Const{types.NewText("America/Chicago"), types.Text},
		NewCall(toTZ, &Const{types.NewText("Asia/Tokyo"), types.Text}, &Const{src, types.Timestamp}))
	got, err := e.Eval(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s := types.FormatText(got, nil); s != "2001-02-16 05:38:40" {
		t.Fatalf("%s = %s, want 2001-02-16 05:38:40", e, s)
	}
}

func TestClockTimestampIsVolatile(t *testing.T) {
	fn, _, err := Builtins.Lookup("clock_timestamp", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !fn.Volatile {
		t.Fatal("clock_timestamp must be Volatile")
	}
	before := time.Now().UnixMicro()
	v, err := fn.Eval(&Context{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v.Micros() < before || v.Micros() > time.Now().UnixMicro() {
		t.Fatalf("clock_timestamp() = %s, not between the surrounding clock reads", v)
	}
}
