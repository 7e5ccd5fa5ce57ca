package expr

import (
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestToCharAgainstPostgres compares to_char with what PostgreSQL 15
// printed for each row of testdata/tochar_pg15.csv (chosen values and
// templates) and testdata/tochar_random_pg15.csv (random templates made
// of keywords, prefixes, suffixes, quotes and other text): the argument's type,
// its text, the template, the session time zone, then the result ("NULL",
// or "ERR:" and the SQLSTATE). Templates with EEEE, RN or V, which
// Strata refuses, must give 0A000 instead.
func TestToCharAgainstPostgres(t *testing.T) {
	t.Parallel()
	kinds := map[string]types.Type{
		"timestamp": types.Timestamp, "timestamptz": types.TimestampTZ, "date": types.Date,
		"integer": types.Int32, "bigint": types.Int64, "numeric": types.Numeric,
		"real": types.Float32, "double precision": types.Float64,
	}
	rows := readGolden(t, "testdata/tochar_pg15.csv")
	random := readGolden(t, "testdata/tochar_random_pg15.csv")
	if len(rows) < 10000 || len(random) < 9000 {
		t.Fatalf("%d and %d rows", len(rows), len(random))
	}
	rows = append(rows, random...)
	bad := 0
	for _, r := range rows {
		typ, val, tmpl, zone, want := kinds[r[0]], r[1], r[2], r[3], r[4]
		loc, err := time.LoadLocation(zone)
		if err != nil {
			t.Fatal(err)
		}
		ctx := &Context{Loc: loc}
		v, err := types.ParseText(typ, val, loc)
		if err != nil {
			if strings.HasPrefix(want, "ERR:22") {
				continue // not a value of the type, in Strata as in PostgreSQL
			}
			t.Fatalf("%s %q: %v", r[0], val, err)
		}
		got, ok, err := ToChar(ctx, v, tmpl)
		switch {
		case err != nil && sqlerr.Code(err) == sqlerr.FeatureNotSupported && unsupportedNumberPattern(tmpl):
			continue
		case err != nil:
			got = "ERR:" + sqlerr.Code(err)
		case !ok:
			got = "NULL"
		}
		if got != want {
			bad++
			if bad <= 40 {
				t.Errorf("to_char(%s %q, %q) in %s = %q, PostgreSQL %q", r[0], val, tmpl, zone, got, want)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d rows differ", bad, len(rows))
	}
}

func unsupportedNumberPattern(tmpl string) bool {
	u := strings.ToUpper(tmpl)
	return strings.Contains(u, "EEEE") || strings.Contains(u, "RN") || strings.Contains(u, "V")
}

// Expected values are what PostgreSQL 15 prints (the documentation's
// examples, and the session time zone where it matters).
func TestToChar(t *testing.T) {
	utc := &Context{}
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	runCases(t, utc, []fcase{
		{"to_char", []any{tsS("2002-04-20 17:31:12"), "HH12:MI:SS"}, "05:31:12", ""},
		{"to_char", []any{tsS("2002-04-20 17:31:12"), "Day, DD  HH12:MI:SS"}, "Saturday , 20  05:31:12", ""},
		{"to_char", []any{tsS("2002-04-20 17:31:12"), "FMDay, FMDD  HH12:MI:SS"}, "Saturday, 20  05:31:12", ""},
		{"to_char", []any{tsS("2002-04-20 17:31:12"), `YYYY "year" Mon MONTH month "a\"b"`}, `2002 year Apr APRIL     april     a"b`, ""},
		{"to_char", []any{tsS("2002-04-20 17:31:12"), "DDD D DDth Q WW IW J TZ OF"}, "110 7 20th 2 16 16 2452385  +00", ""},
		{"to_char", []any{tstzS("2020-07-01 12:00:00"), "YYYY-MM-DD HH24 TZ OF"}, "2020-07-01 12 UTC +00", ""},
		{"to_char", []any{nullOf(types.KindTimestamp), "YYYY"}, "NULL", ""},
		{"to_char", []any{tsS("2002-04-20 17:31:12"), ""}, "NULL", ""},
		{"to_char", []any{tsS("2002-04-20 17:31:12"), "FM"}, "", ""},
		{"to_char", []any{5, "FM"}, "", ""},
		{"to_char", []any{125, "999"}, " 125", ""},
		{"to_char", []any{-125, "999"}, "-125", ""},
		{"to_char", []any{12345, "999"}, " ###", ""},
		{"to_char", []any{int64(485), "9 9 9"}, " 4 8 5", ""},
		{"to_char", []any{125.8, "999D9"}, " 125.8", ""},
		{"to_char", []any{float32(125.8), "999D9"}, " 125.8", ""},
		{"to_char", []any{numS("-125.8"), "999D99S"}, "125.80-", ""},
		{"to_char", []any{numS("0.1"), "0.9"}, " 0.1", ""},
		{"to_char", []any{numS("-0.1"), "99.99"}, "  -.10", ""},
		{"to_char", []any{numS("-0.1"), "FM9.99"}, "-.1", ""},
		{"to_char", []any{numS("0.1"), "9.9"}, "  .1", ""},
		{"to_char", []any{12, "9990999.9"}, "    0012.0", ""},
		{"to_char", []any{12, "FM9990999.9"}, "0012.", ""},
		{"to_char", []any{numS("148.5"), "FM999.990"}, "148.500", ""},
		{"to_char", []any{numS("1485"), "9,999"}, " 1,485", ""},
		{"to_char", []any{numS("-485"), "999PR"}, "<485>", ""},
		{"to_char", []any{485, "PL999"}, "+ 485", ""},
		{"to_char", []any{-485, "SG999"}, "-485", ""},
		{"to_char", []any{485, "999MI"}, "485 ", ""},
		{"to_char", []any{21, "99th"}, " 21st", ""},
		{"to_char", []any{numS("1.005"), "9.99"}, " 1.01", ""},
		{"to_char", []any{numS("NaN"), "999.9"}, " NaN", ""},
		{"to_char", []any{1, ""}, "", ""},
		{"to_char", []any{nullOf(types.KindInt32), "9"}, "NULL", ""},
		{"to_char", []any{485, "9.99EEEE"}, `to_char pattern "EEEE" is not supported`, sqlerr.FeatureNotSupported},
		{"to_char", []any{485, "RN"}, `to_char pattern "RN" is not supported`, sqlerr.FeatureNotSupported},
		{"to_char", []any{485, "99V9"}, `to_char pattern "V" is not supported`, sqlerr.FeatureNotSupported},
		{"to_char", []any{485, "9.9.9"}, "multiple decimal points", sqlerr.SyntaxError},
		{"to_char", []any{485, "S999MI"}, `cannot use "S" and "MI" together`, sqlerr.SyntaxError},
	})
	runCases(t, &Context{Loc: paris}, []fcase{
		{"to_char", []any{tstzS("2020-07-01 12:00:00"), "YYYY-MM-DD HH24:MI TZ tz OF TZH:TZM"}, "2020-07-01 12:00 CEST cest +02 +02:00", ""},
		{"to_char", []any{tstzS("2020-01-01 00:30:00"), "YYYY-MM-DD HH24:MI TZ"}, "2020-01-01 00:30 CET", ""},
	})
}

// A date and a smallint resolve to the overloads PostgreSQL picks:
// timestamptz (a date is midnight in the session zone) and double
// precision.
func TestToCharOverloads(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arg  types.Datum
		tmpl string
		want string
		kind types.Kind
	}{
		{types.NewDate(18444), "YYYY-MM-DD HH24 TZ", "2020-07-01 00 CEST", types.KindTimestampTZ},
		{types.NewInt16(5), "9.99", " 5.00", types.KindFloat64},
	} {
		fn, params, err := Builtins.Lookup("to_char", []types.Type{typeOfKind(c.arg.Kind()), types.Text})
		if err != nil {
			t.Fatal(err)
		}
		if fn.Params[0] != c.kind {
			t.Errorf("to_char(%s) resolves to %s", c.arg.Kind(), fn.Signature())
		}
		_ = params
		got, ok, err := ToChar(&Context{Loc: paris}, c.arg, c.tmpl)
		if err != nil || !ok || got != c.want {
			t.Errorf("to_char(%v, %q) = %q, %v, %v; want %q", c.arg, c.tmpl, got, ok, err, c.want)
		}
	}
}

// A constant template with a pattern Strata lacks fails the call's Check.
func TestToCharCheck(t *testing.T) {
	fn, _, err := Builtins.Lookup("to_char", []types.Type{types.Numeric, types.Text})
	if err != nil {
		t.Fatal(err)
	}
	col := &ColumnRef{Index: 0, Typ: types.Numeric}
	if err := fn.Check([]Expr{col, &Const{Value: types.NewText("9.99EEEE"), Typ: types.Text}}); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Errorf("Check EEEE: %v", err)
	}
	if err := fn.Check([]Expr{col, &Const{Value: types.NewText("FM999.99"), Typ: types.Text}}); err != nil {
		t.Errorf("Check FM999.99: %v", err)
	}
	if err := fn.Check([]Expr{col, col}); err != nil {
		t.Errorf("Check of a column template: %v", err)
	}
}
