package expr

import (
	"math"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Expected values are what Postgres 15 prints.
func TestMathNumeric(t *testing.T) {
	runCases(t, &Context{}, []fcase{
		{"abs", []any{numS("-1.50")}, "1.50", ""},
		{"@", []any{numS("-2")}, "2", ""},
		{"sign", []any{numS("-3.5")}, "-1", ""},
		{"sign", []any{numS("0.00")}, "0", ""},
		{"sign", []any{numS("NaN")}, "NaN", ""},
		{"round", []any{numS("2.5")}, "3", ""},
		{"round", []any{numS("-2.5")}, "-3", ""},
		{"round", []any{numS("-0.4")}, "0", ""},
		{"round", []any{numS("1234.5678"), 2}, "1234.57", ""},
		{"round", []any{numS("1234.5678"), -2}, "1200", ""},
		{"round", []any{numS("-1234.5678"), -2}, "-1200", ""},
		{"round", []any{numS("12"), -2}, "0", ""},
		{"round", []any{numS("0.5"), -1}, "0", ""},
		{"round", []any{numS("1.5"), 3}, "1.500", ""},
		{"round", []any{numS("0.005"), 2}, "0.01", ""},
		{"round", []any{numS("-0.005"), 2}, "-0.01", ""},
		{"round", []any{numS("NaN"), 2}, "NaN", ""},
		{"trunc", []any{numS("-1.99")}, "-1", ""},
		{"trunc", []any{numS("-0.5")}, "0", ""},
		{"trunc", []any{numS("1234.5678"), -2}, "1200", ""},
		{"trunc", []any{numS("5"), 2}, "5.00", ""},
		{"ceil", []any{numS("-1.5")}, "-1", ""},
		{"ceil", []any{numS("-0.5")}, "0", ""},
		{"ceiling", []any{numS("0.0001")}, "1", ""},
		{"floor", []any{numS("-1.5")}, "-2", ""},
		{"floor", []any{numS("-0.0001")}, "-1", ""},
		{"sqrt", []any{numS("2")}, "1.414213562373095", ""},
		{"sqrt", []any{numS("2.0")}, "1.414213562373095", ""},
		{"sqrt", []any{numS("100")}, "10.000000000000000", ""},
		{"sqrt", []any{numS("1e20")}, "10000000000.00000", ""},
		{"sqrt", []any{numS("0.0001")}, "0.01000000000000000", ""},
		{"sqrt", []any{numS("0.5")}, "0.70710678118654752", ""},
		{"sqrt", []any{numS("1e-10")}, "0.000010000000000000000", ""},
		{"sqrt", []any{numS("99999999")}, "9999.9999499999999", ""},
		{"sqrt", []any{numS("2.00000000000000000000")}, "1.41421356237309504880", ""},
		{"sqrt", []any{numS("12345678901234567890")}, "3513641828.8201443", ""},
		{"sqrt", []any{numS("0")}, "0.000000000000000", ""},
		{"sqrt", []any{numS("NaN")}, "NaN", ""},
		{"sqrt", []any{numS("Infinity")}, "Infinity", ""},
		{"sqrt", []any{numS("-1")}, "cannot take square root of a negative number", codeInvalidPowerArgument},
		{"exp", []any{numS("0")}, "1.0000000000000000", ""},
		{"exp", []any{numS("1")}, "2.7182818284590452", ""},
		{"exp", []any{numS("10")}, "22026.465794806717", ""},
		{"exp", []any{numS("-10")}, "0.00004539992976248485", ""},
		{"exp", []any{numS("100")}, "26881171418161354484126255515800135873611119", ""},
		{"exp", []any{numS("-100")}, "0.00000000000000000000000000000000000000000003720075976020836", ""},
		{"exp", []any{numS("1.5")}, "4.4816890703380648", ""},
		{"exp", []any{numS("0.5")}, "1.6487212707001281", ""},
		{"exp", []any{numS("2.302585092994046")}, "10.000000000000003", ""},
		{"exp", []any{numS("-1e-20")}, "0.99999999999999999999", ""},
		{"exp", []any{numS("-Infinity")}, "0", ""},
		{"ln", []any{numS("2")}, "0.6931471805599453", ""},
		{"ln", []any{numS("10")}, "2.3025850929940457", ""},
		{"ln", []any{numS("1.05")}, "0.048790164169432003", ""},
		{"ln", []any{numS("1")}, "0.0000000000000000", ""},
		{"ln", []any{numS("1e100")}, "230.25850929940457", ""},
		{"ln", []any{numS("0.001")}, "-6.9077552789821371", ""},
		{"ln", []any{numS("0.5")}, "-0.6931471805599453", ""},
		{"ln", []any{numS("123456789")}, "18.631401766168018", ""},
		{"ln", []any{numS("1.0000000001")}, "0.00000000009999999999500000", ""},
		{"ln", []any{numS("2.5000")}, "0.9162907318741551", ""},
		{"ln", []any{numS("Infinity")}, "Infinity", ""},
		{"ln", []any{numS("0")}, "cannot take logarithm of zero", codeInvalidLogArgument},
		{"ln", []any{numS("-1")}, "cannot take logarithm of a negative number", codeInvalidLogArgument},
		{"log", []any{numS("100")}, "2.0000000000000000", ""},
		{"log", []any{numS("2")}, "0.3010299956639812", ""},
		{"log", []any{numS("0.5")}, "-0.3010299956639812", ""},
		{"log", []any{numS("0.001")}, "-3.0000000000000000", ""},
		{"log", []any{numS("1e-50")}, "-50.00000000000000000000000000000000000000000000000000", ""},
		{"log10", []any{numS("1000")}, "3.0000000000000000", ""},
		{"log", []any{numS("2"), numS("8")}, "3.0000000000000000", ""},
		{"log", []any{numS("3"), numS("81")}, "4.0000000000000000", ""},
		{"log", []any{numS("10"), numS("2")}, "0.3010299956639812", ""},
		{"log", []any{numS("1000"), numS("10")}, "0.3333333333333333", ""},
		{"log", []any{numS("1"), numS("10")}, "division by zero", sqlerr.DivisionByZero},
		{"log", []any{numS("0"), numS("10")}, "cannot take logarithm of zero", codeInvalidLogArgument},
		{"log", []any{numS("Infinity"), numS("10")}, "0", ""},
		{"log", []any{numS("10"), numS("Infinity")}, "Infinity", ""},
		{"log", []any{numS("NaN"), numS("2")}, "NaN", ""},
		{"log", []any{numS("Infinity"), numS("Infinity")}, "NaN", ""},
		{"log", []any{numS("-1"), numS("Infinity")}, "cannot take logarithm of a negative number", codeInvalidLogArgument},
		{"power", []any{numS("2"), numS("10")}, "1024.0000000000000000", ""},
		{"power", []any{numS("2"), numS("-1")}, "0.5000000000000000", ""},
		{"power", []any{numS("2"), numS("-3")}, "0.1250000000000000", ""},
		{"power", []any{numS("10"), numS("-20")}, "0.0000000000000000", ""},
		{"power", []any{numS("10"), numS("-17")}, "0.0000000000000000", ""},
		{"power", []any{numS("1.5"), numS("2.0")}, "2.2500000000000000", ""},
		{"power", []any{numS("2.000"), numS("3")}, "8.0000000000000000", ""},
		{"power", []any{numS("2"), numS("3.00")}, "8.0000000000000000", ""},
		{"power", []any{numS("-2"), numS("3")}, "-8.0000000000000000", ""},
		{"power", []any{numS("-2"), numS("2.0")}, "4.0000000000000000", ""},
		{"power", []any{numS("1.12345678901234567890"), numS("2")}, "1.26215515677793019455", ""},
		{"power", []any{numS("1.1"), numS("100")}, "13780.6123398222701841", ""},
		{"power", []any{numS("10"), numS("40")}, "10000000000000000000000000000000000000000.0000000000000000", ""},
		{"power", []any{numS("0.5"), numS("100")}, "0.0000000000000000", ""},
		{"power", []any{numS("0"), numS("0")}, "1.0000000000000000", ""},
		{"power", []any{numS("0"), numS("1.5")}, "0.0000000000000000", ""},
		{"power", []any{numS("2"), numS("0.5")}, "1.4142135623730950", ""},
		{"power", []any{numS("4"), numS("2.5")}, "32.000000000000000", ""},
		{"power", []any{numS("2.5"), numS("1.5")}, "3.9528470752104742", ""},
		{"power", []any{numS("0.5"), numS("0.5")}, "0.7071067811865475", ""},
		{"power", []any{numS("100"), numS("-0.5")}, "0.10000000000000000", ""},
		{"^", []any{numS("2"), numS("0.5")}, "1.4142135623730950", ""},
		{"power", []any{numS("10"), numS("131072")}, "value overflows numeric format", sqlerr.NumericValueOutOfRange},
		{"power", []any{numS("0"), numS("-1")}, "zero raised to a negative power is undefined", codeInvalidPowerArgument},
		{"power", []any{numS("-8"), numS("0.5")}, "a negative number raised to a non-integer power yields a complex result", codeInvalidPowerArgument},
		{"power", []any{numS("NaN"), numS("0")}, "1", ""},
		{"power", []any{numS("1"), numS("NaN")}, "1", ""},
		{"power", []any{numS("2"), numS("NaN")}, "NaN", ""},
		{"power", []any{numS("2"), numS("Infinity")}, "Infinity", ""},
		{"power", []any{numS("0.5"), numS("-Infinity")}, "Infinity", ""},
		{"power", []any{numS("-Infinity"), numS("3")}, "-Infinity", ""},
		{"power", []any{numS("-Infinity"), numS("2")}, "Infinity", ""},
		{"mod", []any{numS("9.5"), numS("4")}, "1.5", ""},
		{"mod", []any{numS("-7.5"), numS("2")}, "-1.5", ""},
		{"div", []any{numS("9"), numS("4")}, "2", ""},
		{"div", []any{numS("-9"), numS("4")}, "-2", ""},
		{"div", []any{numS("-7.5"), numS("2")}, "-3", ""},
		{"div", []any{numS("7"), numS("-2.5")}, "-2", ""},
		{"div", []any{numS("1"), numS("0")}, "division by zero", sqlerr.DivisionByZero},
		{"gcd", []any{numS("0.3"), numS("0.2")}, "0.1", ""},
		{"gcd", []any{numS("-12"), numS("18")}, "6", ""},
		{"lcm", []any{numS("1.5"), numS("2.5")}, "7.5", ""},
		{"lcm", []any{numS("0"), numS("2.50")}, "0.00", ""},
		{"width_bucket", []any{numS("5.35"), numS("0.024"), numS("10.06"), 5}, "3", ""},
		{"width_bucket", []any{numS("10.06"), numS("0.024"), numS("10.06"), 5}, "6", ""},
		{"width_bucket", []any{numS("5"), numS("10"), numS("0"), 4}, "3", ""},
		{"width_bucket", []any{numS("11"), numS("10"), numS("0"), 4}, "0", ""},
		{"width_bucket", []any{numS("-1"), numS("10"), numS("0"), 4}, "5", ""},
		{"width_bucket", []any{numS("1"), numS("1"), numS("1"), 4}, "lower bound cannot equal upper bound", "2201G"},
		{"width_bucket", []any{numS("1"), numS("0"), numS("2"), 0}, "count must be greater than zero", "2201G"},
		{"scale", []any{numS("1.50")}, "2", ""},
		{"scale", []any{numS("0.00")}, "2", ""},
		{"scale", []any{numS("NaN")}, "NULL", ""},
		{"trim_scale", []any{numS("1.500")}, "1.5", ""},
		{"trim_scale", []any{numS("100.00")}, "100", ""},
		{"trim_scale", []any{numS("0.000")}, "0", ""},
		{"round", []any{nullOf(types.KindNumeric), 2}, "NULL", ""},
	})
}

func TestMathIntegerAndFloat(t *testing.T) {
	runCases(t, &Context{}, []fcase{
		{"abs", []any{-5}, "5", ""},
		{"abs", []any{int16(-5)}, "5", ""},
		{"abs", []any{-2147483648}, "integer out of range", sqlerr.NumericValueOutOfRange},
		{"abs", []any{int64(math.MinInt64)}, "bigint out of range", sqlerr.NumericValueOutOfRange},
		{"abs", []any{-1.5}, "1.5", ""},
		{"abs", []any{float32(-1.5)}, "1.5", ""},
		{"mod", []any{-9, 4}, "-1", ""},
		{"mod", []any{int64(9), int64(-4)}, "1", ""},
		{"mod", []any{1, 0}, "division by zero", sqlerr.DivisionByZero},
		{"gcd", []any{12, 18}, "6", ""},
		{"gcd", []any{-4, -6}, "2", ""},
		{"gcd", []any{0, 0}, "0", ""},
		{"gcd", []any{-2147483648, 0}, "integer out of range", sqlerr.NumericValueOutOfRange},
		{"gcd", []any{int64(math.MinInt64), int64(2)}, "2", ""},
		{"lcm", []any{4, 6}, "12", ""},
		{"lcm", []any{-4, 6}, "12", ""},
		{"lcm", []any{0, 6}, "0", ""},
		{"lcm", []any{int64(4), int64(6)}, "12", ""},
		{"lcm", []any{2147483647, 2147483646}, "integer out of range", sqlerr.NumericValueOutOfRange},
		{"round", []any{2.5}, "2", ""},
		{"round", []any{-2.5}, "-2", ""},
		{"round", []any{3.5}, "4", ""},
		{"trunc", []any{1.5}, "1", ""},
		{"trunc", []any{-1.5}, "-1", ""},
		{"ceil", []any{1.2}, "2", ""},
		{"ceil", []any{-0.5}, "-0", ""},
		{"floor", []any{-1.5}, "-2", ""},
		{"sign", []any{-2.0}, "-1", ""},
		{"sign", []any{0.0}, "0", ""},
		{"sqrt", []any{2.0}, "1.4142135623730951", ""},
		{"sqrt", []any{-1.0}, "cannot take square root of a negative number", codeInvalidPowerArgument},
		{"|/", []any{25.0}, "5", ""},
		{"cbrt", []any{8.0}, "2", ""},
		{"||/", []any{8.0}, "2", ""},
		{"exp", []any{1.0}, "2.718281828459045", ""},
		{"exp", []any{2.0}, "7.38905609893065", ""},
		{"exp", []any{0.5}, "1.6487212707001282", ""},
		{"exp", []any{-740.0}, "4.2e-322", ""},
		{"exp", []any{1000.0}, "value out of range: overflow", sqlerr.NumericValueOutOfRange},
		{"exp", []any{-1000.0}, "value out of range: underflow", sqlerr.NumericValueOutOfRange},
		{"exp", []any{math.Inf(-1)}, "0", ""},
		{"ln", []any{2.0}, "0.6931471805599453", ""},
		{"ln", []any{10.0}, "2.302585092994046", ""},
		{"ln", []any{1.0}, "0", ""},
		{"ln", []any{0.0}, "cannot take logarithm of zero", codeInvalidLogArgument},
		{"ln", []any{-1.0}, "cannot take logarithm of a negative number", codeInvalidLogArgument},
		{"log", []any{2.0}, "0.3010299956639812", ""},
		{"log10", []any{1000.0}, "3", ""},
		{"power", []any{2.0, 0.5}, "1.4142135623730951", ""},
		{"power", []any{2.0, 10.0}, "1024", ""},
		{"pow", []any{2.0, -1074.0}, "5e-324", ""},
		{"power", []any{2.0, -1080.0}, "value out of range: underflow", sqlerr.NumericValueOutOfRange},
		{"power", []any{2.0, 1024.0}, "value out of range: overflow", sqlerr.NumericValueOutOfRange},
		{"power", []any{0.0, 0.0}, "1", ""},
		{"power", []any{-1.0, math.Inf(1)}, "1", ""},
		{"power", []any{math.NaN(), 0.0}, "1", ""},
		{"power", []any{0.0, -1.0}, "zero raised to a negative power is undefined", codeInvalidPowerArgument},
		{"power", []any{-8.0, 1.0 / 3}, "a negative number raised to a non-integer power yields a complex result", codeInvalidPowerArgument},
		{"^", []any{2.0, 3.0}, "8", ""},
		{"pi", nil, "3.141592653589793", ""},
		{"degrees", []any{1.0}, "57.29577951308232", ""},
		{"degrees", []any{2.0}, "114.59155902616465", ""},
		{"radians", []any{180.0}, "3.141592653589793", ""},
		{"radians", []any{2.0}, "0.03490658503988659", ""},
		{"sin", []any{1.0}, "0.8414709848078965", ""},
		{"sin", []any{math.Inf(1)}, "input is out of range", sqlerr.NumericValueOutOfRange},
		{"cos", []any{1.0}, "0.5403023058681398", ""},
		{"cos", []any{2.0}, "-0.4161468365471424", ""},
		{"tan", []any{2.0}, "-2.185039863261519", ""},
		{"asin", []any{1.0}, "1.5707963267948966", ""},
		{"asin", []any{0.3}, "0.3046926540153975", ""},
		{"acos", []any{2.0}, "input is out of range", sqlerr.NumericValueOutOfRange},
		{"atan", []any{1.0}, "0.7853981633974483", ""},
		{"atan", []any{3.0}, "1.2490457723982544", ""},
		{"atan2", []any{1.0, 2.0}, "0.4636476090008061", ""},
		{"atan2", []any{-1.0, -3.0}, "-2.819842099193151", ""},
		{"width_bucket", []any{5.35, 0.024, 10.06, 5}, "3", ""},
		{"width_bucket", []any{10.06, 0.024, 10.06, 5}, "6", ""},
		{"width_bucket", []any{-1.0, 0.0, 10.0, 5}, "0", ""},
		{"width_bucket", []any{5.0, 10.0, 0.0, 4}, "3", ""},
		{"width_bucket", []any{10.0, 10.0, 0.0, 4}, "1", ""},
		{"width_bucket", []any{0.0, 10.0, 0.0, 4}, "5", ""},
		{"width_bucket", []any{10.5, 10.0, 0.0, 4}, "0", ""},
		{"width_bucket", []any{2.5, 10.0, 0.0, 4}, "4", ""},
		{"width_bucket", []any{1.0, math.Inf(1), 0.0, 4}, "lower and upper bounds must be finite", "2201G"},
		{"width_bucket", []any{1.0, 1.0, 1.0, 4}, "lower bound cannot equal upper bound", "2201G"},
		{"power", []any{1e-200, 2.0}, "value out of range: underflow", sqlerr.NumericValueOutOfRange},
		{"width_bucket", []any{math.NaN(), 0.0, 10.0, 5}, "operand, lower bound, and upper bound cannot be NaN", "2201G"},
		{"greatest", []any{1, 3, 2}, "3", ""},
		{"greatest", []any{1, nil, 2}, "2", ""},
		{"greatest", []any{nullOf(types.KindInt32), nullOf(types.KindInt32)}, "NULL", ""},
		{"least", []any{"b", "a", "c"}, "a", ""},
		{"least", []any{numS("2.50"), numS("2.5"), nil}, "2.50", ""},
		{"greatest", []any{dateS("2024-01-01"), dateS("2023-12-31")}, "2024-01-01", ""},
		{"sqrt", []any{nullOf(types.KindFloat64)}, "NULL", ""},
	})
}

func TestRandomIsVolatileAndInRange(t *testing.T) {
	fn, _, err := Builtins.Lookup("random", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !fn.Volatile {
		t.Fatal("random() must be Volatile")
	}
	seen := map[float64]bool{}
	for range 100 {
		v, err := fn.Eval(&Context{}, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := v.Float64()
		if f < 0 || f >= 1 {
			t.Fatalf("random() = %v, want [0, 1)", f)
		}
		seen[f] = true
	}
	if len(seen) < 90 {
		t.Fatalf("random() gave only %d distinct values in 100 calls", len(seen))
	}
}

// Large NUMERIC results keep every digit Postgres prints.
func TestNumericExtremes(t *testing.T) {
	zeros := "0." + strings.Repeat("0", 1000)
	runCases(t, &Context{}, []fcase{
		{"exp", []any{numS("6000")}, "value overflows numeric format", sqlerr.NumericValueOutOfRange},
		{"exp", []any{numS("-6000")}, zeros, ""},
		{"exp", []any{numS("-3000")}, zeros, ""},
		{"power", []any{numS("10"), numS("3000.5")}, "value overflows numeric format", sqlerr.NumericValueOutOfRange},
	})
	v, err := numericExp(apd.New(5000, 0))
	if err != nil {
		t.Fatal(err)
	}
	s := types.FormatText(v, nil)
	// Postgres: 2172 digits ending in 66014954663352693655.
	if len(s) != 2172 || !strings.HasSuffix(s, "66014954663352693655") {
		t.Fatalf("exp(5000) has %d digits ending %s", len(s), s[len(s)-20:])
	}
}
