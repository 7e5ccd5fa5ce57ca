package expr

import (
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

func num(t *testing.T, s string) types.Datum {
	t.Helper()
	d, _, err := apd.NewFromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return types.NewNumeric(d)
}

func ts(t *testing.T, s string) types.Datum {
	t.Helper()
	v, err := time.Parse("2006-01-02 15:04:05", s)
	if err != nil {
		t.Fatal(err)
	}
	return types.NewTimestamp(v.UnixMicro())
}

func tstz(t *testing.T, s string, loc *time.Location) types.Datum {
	t.Helper()
	v, err := time.ParseInLocation("2006-01-02 15:04:05", s, loc)
	if err != nil {
		t.Fatal(err)
	}
	return types.NewTimestampTZ(v.UnixMicro())
}

func iv(months, days int32, micros int64) types.Datum {
	return types.NewInterval(types.IntervalValue{Months: months, Days: days, Micros: micros})
}

func date(t *testing.T, s string) types.Datum {
	t.Helper()
	v, err := time.Parse("2006-01-02", s)
	if err != nil {
		t.Fatal(err)
	}
	return types.NewDate(int32(v.Unix() / 86400))
}

// call resolves op for the argument kinds and applies it to constants.
func call(t *testing.T, ctx *Context, op string, args ...types.Datum) (types.Datum, error) {
	t.Helper()
	ts := make([]types.Type, len(args))
	cs := make([]Expr, len(args))
	for i, a := range args {
		ts[i] = types.Type{Kind: a.Kind()}
		if a.Kind() == types.KindTimestamp || a.Kind() == types.KindTimestampTZ || a.Kind() == types.KindTime {
			ts[i].Precision = 6
		}
		cs[i] = &Const{Value: a, Typ: ts[i]}
	}
	fn, params, err := Builtins.Lookup(op, ts)
	if err != nil {
		t.Fatalf("Lookup %s%v: %v", op, ts, err)
	}
	for i := range params {
		if params[i].Kind != ts[i].Kind {
			t.Fatalf("Lookup %s%v wants a cast of argument %d to %s; test constants must match exactly", op, ts, i, params[i])
		}
	}
	return NewCall(fn, cs...).Eval(ctx, nil)
}

// Expected values are what Postgres 15 returns.
func TestArithmetic(t *testing.T) {
	paris, err := time.LoadLocation("Europe/Paris")
	if err != nil {
		t.Fatal("time zone database:", err)
	}
	utc := &Context{}
	inParis := &Context{Loc: paris}
	for _, tc := range []struct {
		ctx  *Context
		op   string
		args []types.Datum
		want string
		code string // SQLSTATE of the expected error
	}{
		{utc, "+", []types.Datum{types.NewInt32(2), types.NewInt32(3)}, "5", ""},
		{utc, "/", []types.Datum{types.NewInt32(5), types.NewInt32(2)}, "2", ""},
		{utc, "/", []types.Datum{types.NewInt32(-5), types.NewInt32(2)}, "-2", ""},
		{utc, "%", []types.Datum{types.NewInt32(7), types.NewInt32(-3)}, "1", ""},
		{utc, "%", []types.Datum{types.NewInt32(-7), types.NewInt32(3)}, "-1", ""},
		{utc, "+", []types.Datum{types.NewInt32(2147483647), types.NewInt32(1)}, "", sqlerr.NumericValueOutOfRange},
		{utc, "*", []types.Datum{types.NewInt64(1 << 62), types.NewInt64(2)}, "", sqlerr.NumericValueOutOfRange},
		{utc, "/", []types.Datum{types.NewInt16(-32768), types.NewInt16(-1)}, "", sqlerr.NumericValueOutOfRange},
		{utc, "-", []types.Datum{types.NewInt64(-9223372036854775808)}, "", sqlerr.NumericValueOutOfRange},
		{utc, "/", []types.Datum{types.NewInt64(1), types.NewInt64(0)}, "", sqlerr.DivisionByZero},
		{utc, "%", []types.Datum{types.NewInt64(-9223372036854775808), types.NewInt64(-1)}, "0", ""},
		{utc, "/", []types.Datum{num(t, "1"), num(t, "3")}, "0.33333333333333333333", ""},
		{utc, "/", []types.Datum{num(t, "2"), num(t, "3")}, "0.66666666666666666667", ""},
		{utc, "/", []types.Datum{num(t, "10"), num(t, "4")}, "2.5000000000000000", ""},
		{utc, "/", []types.Datum{num(t, "100000"), num(t, "3")}, "33333.333333333333", ""},
		{utc, "/", []types.Datum{num(t, "1.000000000000000000000000"), num(t, "8")}, "0.125000000000000000000000", ""},
		{utc, "/", []types.Datum{num(t, "-7"), num(t, "2")}, "-3.5000000000000000", ""},
		{utc, "/", []types.Datum{num(t, "0"), num(t, "5")}, "0.00000000000000000000", ""},
		{utc, "/", []types.Datum{num(t, "1"), num(t, "0")}, "", sqlerr.DivisionByZero},
		{utc, "*", []types.Datum{num(t, "1.10"), num(t, "2.5")}, "2.750", ""},
		{utc, "+", []types.Datum{num(t, "1.10"), num(t, "2.5")}, "3.60", ""},
		{utc, "-", []types.Datum{num(t, "1"), num(t, "1.000")}, "0.000", ""},
		{utc, "%", []types.Datum{num(t, "10.5"), num(t, "3")}, "1.5", ""},
		{utc, "%", []types.Datum{num(t, "-10.5"), num(t, "3")}, "-1.5", ""},
		{utc, "+", []types.Datum{num(t, "Infinity"), num(t, "-Infinity")}, "NaN", ""},
		{utc, "*", []types.Datum{num(t, "Infinity"), num(t, "-2")}, "-Infinity", ""},
		{utc, "/", []types.Datum{num(t, "5"), num(t, "Infinity")}, "0", ""},
		{utc, "+", []types.Datum{num(t, "NaN"), num(t, "1")}, "NaN", ""},
		{utc, "*", []types.Datum{types.NewFloat64(1e308), types.NewFloat64(10)}, "", sqlerr.NumericValueOutOfRange},
		{utc, "/", []types.Datum{types.NewFloat64(1), types.NewFloat64(0)}, "", sqlerr.DivisionByZero},
		{utc, "+", []types.Datum{types.NewFloat64(0.1), types.NewFloat64(0.2)}, "0.30000000000000004", ""},
		{utc, "*", []types.Datum{types.NewFloat32(1.1), types.NewFloat32(1.1)}, "1.21", ""},
		{utc, "+", []types.Datum{ts(t, "2024-01-31 10:00:00"), iv(1, 0, 0)}, "2024-02-29 10:00:00", ""},
		{utc, "-", []types.Datum{ts(t, "2024-03-31 00:00:00"), iv(1, 0, 0)}, "2024-02-29 00:00:00", ""},
		{utc, "+", []types.Datum{ts(t, "2024-01-01 00:00:00"), iv(0, 0, 90*60*1e6)}, "2024-01-01 01:30:00", ""},
		{utc, "-", []types.Datum{ts(t, "2024-01-03 00:00:00"), ts(t, "2024-01-01 00:00:00")}, "2 days", ""},
		{utc, "-", []types.Datum{ts(t, "2024-01-02 00:00:00"), ts(t, "2024-01-01 12:00:00")}, "12:00:00", ""},
		{utc, "-", []types.Datum{ts(t, "2024-01-01 00:00:00"), ts(t, "2024-01-02 12:00:00")}, "-1 days -12:00:00", ""},
		// A day across the spring-forward change in Paris is 23 hours.
		{inParis, "+", []types.Datum{tstz(t, "2024-03-30 12:00:00", paris), iv(0, 1, 0)}, "2024-03-31 12:00:00+02", ""},
		{inParis, "+", []types.Datum{tstz(t, "2024-03-30 12:00:00", paris), iv(0, 0, 24*3600*1e6)}, "2024-03-31 13:00:00+02", ""},
		{utc, "+", []types.Datum{tstz(t, "2024-03-30 12:00:00", paris), iv(0, 1, 0)}, "2024-03-31 11:00:00+00", ""},
		{utc, "-", []types.Datum{date(t, "2024-03-01"), date(t, "2024-02-01")}, "29", ""},
		{utc, "+", []types.Datum{date(t, "2024-02-28"), types.NewInt32(2)}, "2024-03-01", ""},
		{utc, "+", []types.Datum{date(t, "2024-02-28"), iv(0, 0, 3600*1e6)}, "2024-02-28 01:00:00", ""},
		{utc, "*", []types.Datum{iv(1, 0, 0), types.NewFloat64(1.5)}, "1 mon 15 days", ""},
		{utc, "/", []types.Datum{iv(0, 1, 0), types.NewFloat64(3)}, "08:00:00", ""},
		{utc, "*", []types.Datum{iv(0, 1, 0), types.NewFloat64(0.5)}, "12:00:00", ""},
		{utc, "+", []types.Datum{iv(1, 2, 3), iv(-1, 1, 1)}, "3 days 00:00:00.000004", ""},
		{utc, "+", []types.Datum{types.NewTime(23 * 3600 * 1e6), iv(0, 0, 2*3600*1e6)}, "01:00:00", ""},
		{utc, "+", []types.Datum{types.NewTimestamp(types.TimestampInfinity), iv(1, 0, 0)}, "infinity", ""},
		{utc, "+", []types.Datum{types.NewTimestamp(types.MaxTimestamp), iv(0, 1, 0)}, "", sqlerr.DatetimeFieldOverflow},
		{utc, "<", []types.Datum{num(t, "1.0"), num(t, "NaN")}, "t", ""},
		{utc, "=", []types.Datum{types.NewText("a"), types.NewText("a")}, "t", ""},
		{utc, "<>", []types.Datum{iv(1, 0, 0), iv(0, 30, 0)}, "f", ""},
	} {
		got, err := call(t, tc.ctx, tc.op, tc.args...)
		name := tc.op + types.Row(tc.args).String()
		if tc.code != "" {
			if err == nil || sqlerr.Code(err) != tc.code {
				t.Errorf("%s: got %s, %v; want error %s", name, got, err, tc.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if s := types.FormatText(got, tc.ctx.Location()); s != tc.want {
			t.Errorf("%s = %s, want %s", name, s, tc.want)
		}
	}
}

func TestThreeValuedLogic(t *testing.T) {
	T, F, N := &Const{types.NewBool(true), types.Bool}, &Const{types.NewBool(false), types.Bool}, &Const{types.Null, types.Bool}
	show := func(e Expr) string {
		v, err := e.Eval(&Context{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return v.String()
	}
	for _, tc := range []struct {
		e    Expr
		want string
	}{
		{&And{[]Expr{T, N}}, "NULL"},
		{&And{[]Expr{F, N}}, "f"},
		{&Or{[]Expr{T, N}}, "t"},
		{&Or{[]Expr{F, N}}, "NULL"},
		{&Not{N}, "NULL"},
		{&IsNull{Arg: N}, "t"},
		{&IsNull{Arg: T, Negate: true}, "t"},
		{&IsDistinctFrom{Left: N, Right: N}, "f"},
		{&IsDistinctFrom{Left: N, Right: T}, "t"},
		{&In{Arg: T, List: []Expr{F, N}}, "NULL"},
		{&In{Arg: T, List: []Expr{F, T}}, "t"},
		{&In{Arg: T, List: []Expr{F}, Negate: true}, "t"},
		{&In{Arg: N, List: []Expr{T}}, "NULL"},
		{&Coalesce{Args: []Expr{N, F, T}, Typ: types.Bool}, "f"},
		{&NullIf{Left: T, Right: T}, "NULL"},
		{&Case{Whens: []When{{N, F}, {F, F}, {T, T}}, Typ: types.Bool}, "t"},
		{&Case{Whens: []When{{N, T}}, Typ: types.Bool}, "NULL"},
	} {
		if got := show(tc.e); got != tc.want {
			t.Errorf("%s = %s, want %s", tc.e, got, tc.want)
		}
	}
}

func TestLookup(t *testing.T) {
	// int4 + int8 resolves to int8 + int8 with one cast.
	fn, params, err := Builtins.Lookup("+", []types.Type{types.Int32, types.Int64})
	if err != nil || fn.Params[0] != types.KindInt64 || params[0] != types.Int64 {
		t.Fatalf("Lookup(+, int4, int8) = %v %v %v", fn, params, err)
	}
	// int4 + numeric resolves to numeric.
	fn, _, err = Builtins.Lookup("+", []types.Type{types.Int32, types.Numeric})
	if err != nil || fn.Params[0] != types.KindNumeric {
		t.Fatalf("Lookup(+, int4, numeric) = %v %v", fn, err)
	}
	if _, _, err := Builtins.Lookup("+", []types.Type{types.Bool, types.Int32}); sqlerr.Code(err) != sqlerr.UndefinedFunction {
		t.Fatalf("Lookup(+, bool, int4) error %v, want 42883", err)
	}
	if _, _, err := Builtins.Lookup("no_such_fn", nil); sqlerr.Code(err) != sqlerr.UndefinedFunction {
		t.Fatalf("unknown function error %v", err)
	}
}

func TestFilterDropsNullAndFalse(t *testing.T) {
	c := types.NewChunk([]types.Type{types.Int64}, 4)
	for _, v := range []types.Datum{types.NewInt64(1), types.Null, types.NewInt64(5), types.NewInt64(3)} {
		c.Append(types.Insert, types.Row{v})
	}
	gt, _, err := Builtins.Lookup(">", []types.Type{types.Int64, types.Int64})
	if err != nil {
		t.Fatal(err)
	}
	pred := NewCall(gt, &ColumnRef{Index: 0, Typ: types.Int64, Name: "x"}, &Const{types.NewInt64(2), types.Int64})
	sel, err := Filter(&Context{}, pred, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel) != 2 || sel[0] != 2 || sel[1] != 3 {
		t.Fatalf("Filter(x > 2) = %v, want [2 3]", sel)
	}
	if pred.String() != "(x > 2)" {
		t.Fatalf("String = %q", pred.String())
	}
}

func TestStatementTime(t *testing.T) {
	at := time.Date(2024, 3, 31, 23, 30, 0, 0, time.UTC)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal("time zone database:", err)
	}
	ctx := &Context{Now: at, Loc: tokyo}
	for name, want := range map[string]string{"now": "2024-04-01 08:30:00+09", "current_date": "2024-04-01"} {
		fn, _, err := Builtins.Lookup(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		v, err := NewCall(fn).Eval(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := types.FormatText(v, tokyo); got != want {
			t.Errorf("%s() = %s, want %s", name, got, want)
		}
	}
	// Lookup prefers TEXT for an untyped literal and DOUBLE PRECISION among
	// numbers, as Postgres does.
	fn, _, err := Builtins.Lookup("->", []types.Type{types.JSONB, types.Unknown})
	if err != nil || fn.Params[1] != types.KindText {
		t.Fatalf("jsonb -> unknown resolved to %v, %v", fn, err)
	}
	fn, _, err = Builtins.Lookup("round", []types.Type{types.Int32})
	if err != nil || fn.Params[0] != types.KindFloat64 {
		t.Fatalf("round(int4) resolved to %v, %v", fn, err)
	}
}

// NUMERIC has no negative zero: a product or difference that is zero is
// written without a sign and encodes as the positive zero.
func TestNumericNoNegativeZero(t *testing.T) {
	for _, tc := range []struct{ op, a, b, want string }{
		{"*", "-1.5", "0", "0.0"},
		{"*", "0.00", "-2", "0.00"},
		{"-", "-0.5", "-0.5", "0.0"},
		{"+", "-0.5", "0.5", "0.0"},
	} {
		f, _, err := Builtins.Lookup(tc.op, []types.Type{types.Numeric, types.Numeric})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := types.ParseText(types.Numeric, tc.a, nil)
		b, _ := types.ParseText(types.Numeric, tc.b, nil)
		got, err := f.Eval(nil, []types.Datum{a, b})
		if err != nil {
			t.Fatal(err)
		}
		if s := types.FormatText(got, nil); s != tc.want || got.Decimal().Negative {
			t.Errorf("%s %s %s = %s (negative %v), want %s", tc.a, tc.op, tc.b, s, got.Decimal().Negative, tc.want)
		}
	}
}
