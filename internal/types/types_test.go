package types

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"pgregory.net/rapid"

	"github.com/stratadb/strata/internal/base"
)

func dec(t *testing.T, s string) Datum {
	t.Helper()
	d, _, err := apd.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return NewNumeric(d)
}

func jsonb(t *testing.T, s string) Datum {
	t.Helper()
	d, err := NewJSONB(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Outputs as Postgres 15 prints them (DateStyle ISO, IntervalStyle
// postgres, extra_float_digits 1, TimeZone UTC unless stated).
func TestFormatText(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal("time zone database:", err)
	}
	kolkata, _ := time.LoadLocation("Asia/Kolkata")
	ts := func(y int, mo time.Month, d, h, mi, s, us int) int64 {
		return time.Date(y, mo, d, h, mi, s, us*1000, time.UTC).UnixMicro()
	}
	for _, tc := range []struct {
		d    Datum
		loc  *time.Location
		want string
	}{
		{NewBool(true), nil, "t"},
		{NewBool(false), nil, "f"},
		{NewInt16(-32768), nil, "-32768"},
		{NewInt64(math.MaxInt64), nil, "9223372036854775807"},
		{NewFloat64(0.1), nil, "0.1"},
		{NewFloat64(1e15), nil, "1e+15"},
		{NewFloat64(1e14), nil, "100000000000000"},
		{NewFloat64(0.0001), nil, "0.0001"},
		{NewFloat64(0.00001), nil, "1e-05"},
		{NewFloat64(-1.5e300), nil, "-1.5e+300"},
		{NewFloat64(math.NaN()), nil, "NaN"},
		{NewFloat64(math.Inf(-1)), nil, "-Infinity"},
		{NewFloat64(math.Copysign(0, -1)), nil, "-0"},
		{NewFloat32(1e6), nil, "1e+06"},
		{NewFloat32(100000), nil, "100000"},
		{NewFloat32(0.1), nil, "0.1"},
		{dec(t, "1.50"), nil, "1.50"},
		{dec(t, "-0.001"), nil, "-0.001"},
		{dec(t, "1E+3"), nil, "1000"},
		{dec(t, "0.00"), nil, "0.00"},
		{dec(t, "NaN"), nil, "NaN"},
		{dec(t, "-Infinity"), nil, "-Infinity"},
		{NewChar("ab  "), nil, "ab  "},
		{NewBytea([]byte{0xde, 0xad, 0x00}), nil, `\xdead00`},
		{NewUUID([16]byte{0xa0, 0xee, 0xbc, 0x99, 0x9c, 0x0b, 0x4e, 0xf8, 0xbb, 0x6d, 0x6b, 0xb9, 0xbd, 0x38, 0x0a, 0x11}), nil, "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"},
		{NewDate(0), nil, "1970-01-01"},
		{NewDate(-1), nil, "1969-12-31"},
		{NewDate(int32(daysFromCivil(2024, 2, 29))), nil, "2024-02-29"},
		{NewDate(int32(daysFromCivil(-43, 3, 15))), nil, "0044-03-15 BC"},
		{NewDate(MinDate), nil, "4714-11-24 BC"},
		{NewDate(MaxDate), nil, "5874897-12-31"},
		{NewDate(DateInfinity), nil, "infinity"},
		{NewTime(0), nil, "00:00:00"},
		{NewTime(microsPerDay), nil, "24:00:00"},
		{NewTime(13*microsPerHour + 5*microsPerMinute + 7*microsPerSecond + 120000), nil, "13:05:07.12"},
		{NewTimestamp(ts(2024, 1, 2, 3, 4, 5, 123456)), nil, "2024-01-02 03:04:05.123456"},
		{NewTimestamp(-1), nil, "1969-12-31 23:59:59.999999"},
		{NewTimestamp(MaxTimestamp), nil, "294246-12-31 23:59:59.999999"},
		{NewTimestamp(TimestampNegInfinity), nil, "-infinity"},
		{NewTimestampTZ(ts(2024, 7, 1, 10, 0, 0, 0)), nil, "2024-07-01 10:00:00+00"},
		{NewTimestampTZ(ts(2024, 7, 1, 10, 0, 0, 0)), paris, "2024-07-01 12:00:00+02"},
		{NewTimestampTZ(ts(2024, 1, 1, 10, 0, 0, 500000)), paris, "2024-01-01 11:00:00.5+01"},
		{NewTimestampTZ(ts(2024, 1, 1, 0, 0, 0, 0)), kolkata, "2024-01-01 05:30:00+05:30"},
		{NewInterval(IntervalValue{}), nil, "00:00:00"},
		{NewInterval(IntervalValue{Months: 14, Days: 3, Micros: 4*microsPerHour + 5*microsPerMinute + 6*microsPerSecond + 500000}), nil, "1 year 2 mons 3 days 04:05:06.5"},
		{NewInterval(IntervalValue{Days: -1, Micros: 2 * microsPerHour}), nil, "-1 days +02:00:00"},
		{NewInterval(IntervalValue{Months: -1}), nil, "-1 mons"},
		{NewInterval(IntervalValue{Days: 1}), nil, "1 day"},
		{NewInterval(IntervalValue{Micros: -90 * microsPerMinute}), nil, "-01:30:00"},
		{NewInterval(IntervalValue{Micros: 100 * microsPerHour}), nil, "100:00:00"},
		{jsonb(t, `{"b": 1, "a": [1, 2.50, "x"], "aa": null, "a": true}`), nil, `{"a": true, "b": 1, "aa": null}`},
		{jsonb(t, ` [ 1e2 , "\u00e9\n" ] `), nil, `[100, "é\n"]`},
	} {
		if got := FormatText(tc.d, tc.loc); got != tc.want {
			t.Errorf("FormatText(%#v) = %q, want %q", tc.d, got, tc.want)
		}
	}
}

// Comparison rules that differ from naive ones, as Postgres has them.
func TestCompareSpecialCases(t *testing.T) {
	lt := func(a, b Datum) {
		t.Helper()
		if Compare(a, b) >= 0 || Compare(b, a) <= 0 {
			t.Errorf("want %s < %s", a, b)
		}
	}
	eq := func(a, b Datum) {
		t.Helper()
		if Compare(a, b) != 0 {
			t.Errorf("want %s = %s", a, b)
		}
	}
	nan := math.NaN()
	lt(Null, NewInt64(math.MinInt64))
	eq(Null, Null)
	eq(NewFloat64(nan), NewFloat64(-nan))
	lt(NewFloat64(math.Inf(1)), NewFloat64(nan))
	eq(NewFloat64(0), NewFloat64(math.Copysign(0, -1)))
	eq(dec(t, "1.0"), dec(t, "1.00"))
	eq(dec(t, "0"), dec(t, "-0.000"))
	lt(dec(t, "-Infinity"), dec(t, "-1e300"))
	lt(dec(t, "1e300"), dec(t, "Infinity"))
	lt(dec(t, "Infinity"), dec(t, "NaN"))
	eq(dec(t, "NaN"), dec(t, "NaN"))
	eq(NewChar("ab"), NewChar("ab   "))
	eq(NewChar("ab "), NewText("ab"))
	lt(NewText("ab"), NewText("ab "))
	lt(NewText("Z"), NewText("a")) // C collation
	eq(NewInterval(IntervalValue{Months: 1}), NewInterval(IntervalValue{Days: 30}))
	eq(NewInterval(IntervalValue{Days: 1}), NewInterval(IntervalValue{Micros: microsPerDay}))
	lt(NewInterval(IntervalValue{Days: 29}), NewInterval(IntervalValue{Months: 1}))
	lt(NewDate(DateNegInfinity), NewDate(MinDate))
	lt(NewTimestamp(MaxTimestamp), NewTimestamp(TimestampInfinity))
	lt(NewInt16(5), NewInt64(6)) // integers of different widths
	// jsonb: Object > Array > Boolean > Number > String > Null, but a
	// top-level scalar is a one-element raw array: [] < null < [null].
	lt(jsonb(t, `null`), jsonb(t, `""`))
	lt(jsonb(t, `"z"`), jsonb(t, `0`))
	lt(jsonb(t, `1e9`), jsonb(t, `false`))
	lt(jsonb(t, `false`), jsonb(t, `true`))
	lt(jsonb(t, `[]`), jsonb(t, `null`))
	lt(jsonb(t, `true`), jsonb(t, `[null]`))
	lt(jsonb(t, `[9]`), jsonb(t, `[1, 1]`))
	lt(jsonb(t, `[1, 2, 3]`), jsonb(t, `{}`))
	lt(jsonb(t, `{"b": 1}`), jsonb(t, `{"a": 1, "b": 1}`))
	lt(jsonb(t, `{"aa": 1}`), jsonb(t, `{"b": 2}`))
	// Keys compare in storage order (shorter first): "c" vs "b" decides,
	// the example of Postgres's documentation.
	lt(jsonb(t, `{"b": 1, "d": 1}`), jsonb(t, `{"aa": 1, "c": 1}`))
	eq(jsonb(t, `{"a": 1.0}`), jsonb(t, `{"a": 1}`))
	if _, ok := CompareSQL(Null, NewInt32(1)); ok {
		t.Error("CompareSQL with NULL must be unknown")
	}
}

func TestCompareMixedFamiliesPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Compare(INTEGER, TEXT) did not panic")
		}
	}()
	Compare(NewInt32(1), NewText("1"))
}

func TestJSONBRefusesBadInput(t *testing.T) {
	for _, in := range []string{``, `{`, `[1,]`, `{"a" 1}`, `"\u0000"`, `{"a\u0000": 1}`, `1 2`, `tru`, "\"\xff\""} {
		_, err := NewJSONB(in)
		if !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("NewJSONB(%q) error = %v, want ErrInvalidArgument", in, err)
		}
	}
}

func TestParseType(t *testing.T) {
	for in, want := range map[string]string{
		"bigint":                      "BIGINT",
		"INT8":                        "BIGINT",
		"int":                         "INTEGER",
		"numeric(10, 2)":              "NUMERIC(10,2)",
		"decimal(5)":                  "NUMERIC(5,0)",
		"numeric":                     "NUMERIC",
		"character varying(20)":       "VARCHAR(20)",
		"varchar":                     "VARCHAR",
		"char":                        "CHAR(1)",
		"bpchar(3)":                   "CHAR(3)",
		"double  precision":           "DOUBLE PRECISION",
		"timestamp(3)":                "TIMESTAMP(3)",
		"timestamp":                   "TIMESTAMP",
		"timestamp(3) with time zone": "TIMESTAMPTZ(3)",
		"timestamp without time zone": "TIMESTAMP",
		"TIMESTAMPTZ":                 "TIMESTAMPTZ",
		"time(0)":                     "TIME(0)",
		"interval":                    "INTERVAL",
		"jsonb":                       "JSONB",
		"uuid":                        "UUID",
		"bytea":                       "BYTEA",
		"date":                        "DATE",
		"real":                        "REAL",
		"bool":                        "BOOLEAN",
		"smallint":                    "SMALLINT",
		"text":                        "TEXT",
		"NUMERIC(1000,1000)":          "NUMERIC(1000,1000)",
		"time without time zone":      "TIME",
	} {
		got, err := ParseType(in)
		if err != nil {
			t.Errorf("ParseType(%q): %v", in, err)
			continue
		}
		if got.String() != want {
			t.Errorf("ParseType(%q) = %s, want %s", in, got, want)
		}
		again, err := ParseType(got.String())
		if err != nil || again != got {
			t.Errorf("ParseType(%q.String()) = %v, %v; want %v", in, again, err, got)
		}
	}
	for _, in := range []string{"", "foo", "numeric(0)", "numeric(1001)", "numeric(5,6)", "numeric(a)", "varchar(0)", "timestamp(7)", "int(3)", "numeric(1,2,3)", "varchar(10"} {
		if _, err := ParseType(in); !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("ParseType(%q) error = %v, want ErrInvalidArgument", in, err)
		}
	}
}

func TestDecodeCorruptInputIsAnError(t *testing.T) {
	ts := []Type{Int64, Text, Numeric}
	good := AppendRow(nil, Row{NewInt64(7), NewText("hello"), NewNumeric(apd.New(15, -1))}, ts)
	for i := range good {
		if _, _, err := DecodeRow(good[:i], ts); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("DecodeRow of %d of %d bytes: %v, want ErrCorruption", i, len(good), err)
		}
	}
	bad := append([]byte{}, good...)
	bad[0] = 9
	if _, _, err := DecodeRow(bad, ts); !errors.Is(err, base.ErrCorruption) {
		t.Errorf("DecodeRow with version 9: %v", err)
	}
	key := EncodeKey(nil, Row{NewText("a\x00b"), dec(t, "-12.5")}, []int{0, 1}, []Type{Text, Numeric})
	b := key
	for _, ty := range []Type{Text, Numeric} {
		var err error
		if _, b, err = DecodeKey(b, ty); err != nil {
			t.Fatal(err)
		}
	}
	for i := range key {
		b := key[:i]
		var err error
		for _, ty := range []Type{Text, Numeric} {
			if _, b, err = DecodeKey(b, ty); err != nil {
				break
			}
		}
		if !errors.Is(err, base.ErrCorruption) {
			t.Errorf("DecodeKey of %d of %d bytes: %v, want ErrCorruption", i, len(key), err)
		}
	}
}

func TestRowsWrittenBeforeAnAddedColumnDecode(t *testing.T) {
	old := []Type{Int32}
	enc := AppendRow(nil, Row{NewInt32(5)}, old)
	got, _, err := DecodeRow(enc, []Type{Int32, Text})
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Int64() != 5 || !got[1].IsNull() {
		t.Fatalf("got %s, want (5, NULL)", got)
	}
}

func TestRowKind(t *testing.T) {
	for _, k := range []RowKind{Insert, UpdateBefore, UpdateAfter, Delete} {
		p, err := ParseRowKind(k.String())
		if err != nil || p != k {
			t.Errorf("ParseRowKind(%s) = %v, %v", k, p, err)
		}
	}
	if !Insert.IsAdd() || !UpdateAfter.IsAdd() || !UpdateBefore.IsRetract() || !Delete.IsRetract() || Insert.IsRetract() {
		t.Error("IsAdd/IsRetract wrong")
	}
	if byte(UpdateAfter) != 2 || byte(Delete) != 3 {
		t.Error("row kind bytes must match Flink's RowKind")
	}
}

func TestChunkSelect(t *testing.T) {
	c := NewChunk([]Type{Int64, Text}, 4)
	for i := range 4 {
		c.Append(RowKind(i), Row{NewInt64(int64(i)), NewText(string(rune('a' + i)))})
	}
	got := c.Select([]int{3, 1}).String()
	if want := "-D (3, d)\n-U (1, b)\n"; got != want {
		t.Fatalf("Select = %q, want %q", got, want)
	}
	c.Reset()
	if c.Len() != 0 || c.Cols[1].Len() != 0 {
		t.Fatal("Reset left rows")
	}
}

func TestIntervalOutputSigns(t *testing.T) {
	for _, tc := range []struct {
		iv   IntervalValue
		want string
	}{
		{IntervalValue{Months: -12, Days: 3, Micros: 3600e6}, "-1 years +3 days 01:00:00"},
		{IntervalValue{Months: -1, Days: -1, Micros: 3600e6}, "-1 mons -1 days +01:00:00"},
		{IntervalValue{Months: 13, Days: -2}, "1 year 1 mon -2 days"},
		{IntervalValue{Days: -1}, "-1 days"},
	} {
		if got := FormatText(NewInterval(tc.iv), nil); got != tc.want {
			t.Errorf("%+v = %q, want %q", tc.iv, got, tc.want)
		}
	}
}

// Defects found by review: each must stay fixed.
func TestReviewRegressions(t *testing.T) {
	// A zero with a positive exponent prints as 0, also inside JSONB.
	for in, want := range map[string]string{"0e5": "0", "[0e3]": "[0]", `{"a": -0e2}`: `{"a": 0}`} {
		d, err := NewJSONB(in)
		if err != nil || d.JSONB() != want {
			t.Errorf("NewJSONB(%s) = %v, %v; want %s", in, d, err, want)
		}
	}
	if got := FormatText(NewNumeric(apd.New(0, 5)), nil); got != "0" {
		t.Errorf("0E+5 prints %q", got)
	}
	// A JSON number beyond Postgres's numeric range is refused, not
	// expanded into a billion digits.
	if _, err := NewJSONB("1e1000000000"); !errors.Is(err, base.ErrOutOfRange) {
		t.Errorf("huge JSON number: %v", err)
	}
	// Corrupt bytes give errors, not values that panic later.
	if _, _, err := DecodeRow([]byte{1, 1, 0, 1, 'x'}, []Type{JSONB}); !errors.Is(err, base.ErrCorruption) {
		t.Errorf("JSONB holding x: %v", err)
	}
	huge := []byte{0x01, 0x04}
	huge = append(huge, 0x80, 0, 0, 0, 0x3b, 0x9a, 0xca, 0x00) // exponent 1e9, sign bit flipped
	huge = append(huge, 0x0b, 0x00)
	if _, _, err := DecodeKey(huge, Numeric); !errors.Is(err, base.ErrCorruption) {
		t.Errorf("NUMERIC key with exponent 1e9: %v", err)
	}
	// The most negative interval's key decodes.
	iv := NewInterval(IntervalValue{Months: math.MinInt32, Days: math.MinInt32, Micros: -9223372036854775807})
	got, _, err := DecodeKey(AppendKey(nil, iv, Interval), Interval)
	if err != nil || Compare(got, iv) != 0 {
		t.Errorf("extreme interval key: %v, %v", got, err)
	}
}

func TestIntervalOutputMatchesEncodeInterval(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		d := genValue(Interval).Draw(t, "iv")
		if got, want := FormatText(d, nil), pgIntervalText(d.Interval()); got != want {
			t.Fatalf("FormatText %q, EncodeInterval %q", got, want)
		}
	})
}
