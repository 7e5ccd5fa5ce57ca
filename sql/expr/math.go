package expr

import (
	"math"
	"math/rand/v2"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Mathematical functions with Postgres 15's overloads, result types and
// errors.
//
// DOUBLE PRECISION versions call the C library as Postgres's float.c does
// (see libm.go) and apply its range checks: an infinite result from
// finite input is "value out of range: overflow", a zero from nonzero
// input "underflow" (22003); a logarithm of zero or a negative number is
// 2201E; a square root of a negative number, 0 to a negative power and a
// negative number to a fractional power are 2201F.
//
// NUMERIC versions are exact where Postgres is exact (abs, sign, round,
// trunc, ceil, floor, mod, div, gcd, lcm, width_bucket, integral powers
// before their final rounding) and choose the result scale as
// Postgres's numeric.c does:
//
//   - sqrt: 16 significant digits from the argument's base-10000 weight
//     (sqrt_var's sweight), at least the argument's scale;
//   - exp: 16 significant digits from the result's estimated decimal
//     weight, at least the argument's scale;
//   - ln and log: 16 significant digits from estimate_ln_dweight, at
//     least the arguments' scales;
//   - power with an integral exponent: scale max(16, base's scale);
//     otherwise 16 significant digits from the result's estimated weight,
//     at least either input's scale.
//
// The digits themselves come from apd at ten guard digits beyond the
// result scale, rounded half away from zero, so they agree with Postgres
// except where Postgres's own last digit is not correctly rounded.

// numericMaxDisplayScale and numericMinSigDigits are numeric.c's
// NUMERIC_MAX_DISPLAY_SCALE and NUMERIC_MIN_SIG_DIGITS.
const (
	numericMaxDisplayScale = 1000
	numericMinSigDigits    = 16
	// numericMaxWeight10 is the largest decimal weight a NUMERIC holds
	// (131072 digits before the point).
	numericMaxWeight10 = 131072
)

var (
	errNumericOverflow = sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
	errFloatOverflow   = sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
	errFloatUnderflow  = sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: underflow")
	errInputRange      = sqlerr.New(sqlerr.NumericValueOutOfRange, "input is out of range")
	errLogZero         = sqlerr.New(codeInvalidLogArgument, "cannot take logarithm of zero")
	errLogNegative     = sqlerr.New(codeInvalidLogArgument, "cannot take logarithm of a negative number")
	errSqrtNegative    = sqlerr.New(codeInvalidPowerArgument, "cannot take square root of a negative number")
	errZeroNegPower    = sqlerr.New(codeInvalidPowerArgument, "zero raised to a negative power is undefined")
	errComplexPower    = sqlerr.New(codeInvalidPowerArgument, "a negative number raised to a non-integer power yields a complex result")
)

// radiansPerDegree is float.c's RADIANS_PER_DEGREE.
const radiansPerDegree = 0.0174532925199432957692

// checkFloat is float.c's check_float8_val: an infinite result is an
// overflow unless an input was infinite, a zero result an underflow unless
// zero was possible.
func checkFloat(r float64, infOK, zeroOK bool) (types.Datum, error) {
	if math.IsInf(r, 0) && !infOK {
		return types.Null, errFloatOverflow
	}
	if r == 0 && !zeroOK {
		return types.Null, errFloatUnderflow
	}
	return types.NewFloat64(r), nil
}

func floatTrig(f func(float64) (float64, error)) func(float64) (types.Datum, error) {
	return func(x float64) (types.Datum, error) {
		if math.IsNaN(x) {
			return types.NewFloat64(x), nil
		}
		r, err := f(x)
		if err != nil || math.IsInf(x, 0) {
			return types.Null, errInputRange
		}
		return checkFloat(r, false, true)
	}
}

func floatInverseTrig(f func(float64) float64) func(float64) (types.Datum, error) {
	return func(x float64) (types.Datum, error) {
		if math.IsNaN(x) {
			return types.NewFloat64(x), nil
		}
		if x < -1 || x > 1 {
			return types.Null, errInputRange
		}
		return checkFloat(f(x), false, true)
	}
}

func floatLog(f func(float64) float64) func(float64) (types.Datum, error) {
	return func(x float64) (types.Datum, error) {
		switch {
		case x == 0:
			return types.Null, errLogZero
		case x < 0:
			return types.Null, errLogNegative
		}
		return checkFloat(f(x), math.IsInf(x, 0), x == 1)
	}
}

func floatExp(x float64) (types.Datum, error) {
	switch {
	case math.IsNaN(x):
		return types.NewFloat64(x), nil
	case math.IsInf(x, 1):
		return types.NewFloat64(x), nil
	case math.IsInf(x, -1):
		return types.NewFloat64(0), nil
	}
	r, err := cExp(x)
	switch {
	case libmRange(err) && r != 0, math.IsInf(r, 0):
		return types.Null, errFloatOverflow
	case libmRange(err), r == 0:
		return types.Null, errFloatUnderflow
	}
	return types.NewFloat64(r), nil
}

// floatPow is float.c's dpow, POSIX special cases spelled out.
func floatPow(x, y float64) (types.Datum, error) {
	if math.IsNaN(x) {
		if math.IsNaN(y) || y != 0 {
			return types.NewFloat64(math.NaN()), nil
		}
		return types.NewFloat64(1), nil
	}
	if math.IsNaN(y) {
		if x != 1 {
			return types.NewFloat64(math.NaN()), nil
		}
		return types.NewFloat64(1), nil
	}
	if x == 0 && y < 0 {
		return types.Null, errZeroNegPower
	}
	if x < 0 && math.Floor(y) != y {
		return types.Null, errComplexPower
	}
	if math.IsInf(y, 0) || math.IsInf(x, 0) {
		return types.NewFloat64(math.Pow(x, y)), nil // Go follows POSIX here
	}
	r, err := cPow(x, y)
	switch {
	case libmRange(err) && r != 0, math.IsInf(r, 0):
		return types.Null, errFloatOverflow
	case libmRange(err), r == 0 && x != 0:
		return types.Null, errFloatUnderflow
	}
	return types.NewFloat64(r), nil
}

// Numeric helpers.

func newNum(d *apd.Decimal) types.Datum {
	if d.IsZero() {
		d.Negative = false
	}
	return types.NewNumeric(d)
}

var numNaN = &apd.Decimal{Form: apd.NaN}

func isNaN(d *apd.Decimal) bool { return d.Form == apd.NaN || d.Form == apd.NaNSignaling }

// adjExp is the power of ten of d's leading digit (d nonzero, finite).
func adjExp(d *apd.Decimal) int64 { return int64(d.Exponent) + d.NumDigits() - 1 }

// roundScale rounds d to scale digits after the point with rounding mode
// rnd; a negative scale rounds to tens, hundreds, ... and the result then
// has no fractional digits, as Postgres's round_var and trunc_var.
func roundScale(d *apd.Decimal, scale int64, rnd apd.Rounder) (*apd.Decimal, error) {
	if d.Form != apd.Finite {
		return new(apd.Decimal).Set(d), nil
	}
	ctx := exact
	ctx.Rounding = rnd
	ctx.Precision = uint32(max(numDigits(d)+max(scale, 0)+2, 1))
	r := new(apd.Decimal)
	if _, err := ctx.Quantize(r, d, int32(-scale)); err != nil {
		return nil, errNumericOverflow
	}
	if scale < 0 {
		if _, err := ctx.Quantize(r, r, 0); err != nil {
			return nil, errNumericOverflow
		}
	}
	if r.IsZero() {
		r.Negative = false
	}
	return r, nil
}

// nbaseDigits returns Postgres's base-10000 representation of a nonzero
// finite d: the weight of the first digit and up to n leading digits.
func nbaseDigits(d *apd.Decimal, n int) (weight int64, digits []int64) {
	coeff := d.Coeff.String()
	exp := int64(d.Exponent)
	// Pad on the right so that the exponent is a multiple of 4.
	pad := exp - floorDiv(exp, 4)*4
	for range pad {
		coeff += "0"
	}
	exp -= pad
	// Pad on the left to whole groups of 4.
	for len(coeff)%4 != 0 {
		coeff = "0" + coeff
	}
	groups := int64(len(coeff) / 4)
	weight = groups + exp/4 - 1
	for i := int64(0); i < groups && len(digits) < n; i++ {
		var v int64
		for _, c := range coeff[4*i : 4*i+4] {
			v = v*10 + int64(c-'0')
		}
		if len(digits) == 0 && v == 0 {
			weight--
			continue
		}
		digits = append(digits, v)
	}
	return weight, digits
}

// estimateLnDweight is numeric.c's estimate_ln_dweight: the decimal
// weight of ln(d) for a positive d.
func estimateLnDweight(d *apd.Decimal) int64 {
	if d.Sign() <= 0 {
		return 0
	}
	lo, hi := apd.New(9, -1), apd.New(11, -1)
	if d.Cmp(lo) >= 0 && d.Cmp(hi) <= 0 {
		x := new(apd.Decimal)
		if _, err := exact.Sub(x, d, apd.New(1, 0)); err != nil || x.IsZero() {
			return 0
		}
		return adjExp(x)
	}
	weight, digits := nbaseDigits(d, 2)
	f := float64(digits[0])
	dweight := weight * 4
	if len(digits) > 1 {
		f = f*10000 + float64(digits[1])
		dweight -= 4
	}
	lnVar := math.Log(f) + float64(dweight)*2.302585092994046
	return int64(math.Log10(math.Abs(lnVar)))
}

func clampScale(rscale int64, scales ...int64) int64 {
	for _, s := range scales {
		rscale = max(rscale, s)
	}
	return min(max(rscale, 0), numericMaxDisplayScale)
}

// computeScaled runs f at enough precision for a result of decimal weight
// about weight10 and rscale digits after the point, then rounds half away
// from zero to rscale.
func computeScaled(weight10, rscale int64, f func(ctx *apd.Context, r *apd.Decimal) error) (types.Datum, error) {
	ctx := apd.BaseContext
	ctx.Precision = uint32(max(weight10+1, 1) + rscale + 10)
	ctx.MaxExponent, ctx.MinExponent = apd.MaxExponent, apd.MinExponent
	r := new(apd.Decimal)
	if err := f(&ctx, r); err != nil {
		return types.Null, err
	}
	out, err := roundScale(r, rscale, apd.RoundHalfUp)
	if err != nil {
		return types.Null, err
	}
	return newNum(out), nil
}

func apdErr(c apd.Condition, err error) error {
	if err != nil || c&(apd.Overflow|apd.InvalidOperation|apd.DivisionByZero) != 0 {
		return errNumericOverflow
	}
	return nil
}

func numericSqrt(x *apd.Decimal) (types.Datum, error) {
	switch {
	case isNaN(x):
		return types.NewNumeric(numNaN), nil
	case x.Sign() < 0:
		return types.Null, errSqrtNegative
	case x.Form == apd.Infinite:
		return types.NewNumeric(x), nil
	}
	var weight int64
	if !x.IsZero() {
		weight, _ = nbaseDigits(x, 1)
	}
	sweight := (weight+1)*4/2 - 1
	rscale := clampScale(numericMinSigDigits-sweight, dscale(x))
	if x.IsZero() {
		return types.NewNumeric(&apd.Decimal{Exponent: int32(-rscale)}), nil
	}
	return computeScaled(adjExp(x)/2+1, rscale, func(ctx *apd.Context, r *apd.Decimal) error {
		return apdErr(ctx.Sqrt(r, x))
	})
}

func numericExp(x *apd.Decimal) (types.Datum, error) {
	switch {
	case isNaN(x):
		return types.NewNumeric(numNaN), nil
	case x.Form == apd.Infinite && x.Negative:
		return types.NewNumeric(apd.New(0, 0)), nil
	case x.Form == apd.Infinite:
		return types.NewNumeric(x), nil
	}
	f, _ := x.Float64()
	val := min(max(f*0.434294481903252, -2000), 2000)
	rscale := clampScale(numericMinSigDigits-int64(val), dscale(x))
	if math.Abs(f) >= 6000 { // exp_var's guard: NUMERIC_MAX_RESULT_SCALE * 3
		if f > 0 {
			return types.Null, errNumericOverflow
		}
		return types.NewNumeric(&apd.Decimal{Exponent: int32(-rscale)}), nil
	}
	return computeScaled(int64(f*0.434294481903252), rscale, func(ctx *apd.Context, r *apd.Decimal) error {
		return apdErr(ctx.Exp(r, x))
	})
}

// checkLogArg rejects zero and negative arguments of ln and log.
func checkLogArg(x *apd.Decimal) error {
	switch {
	case isNaN(x):
		return nil
	case x.Sign() < 0:
		return errLogNegative
	case x.IsZero():
		return errLogZero
	}
	return nil
}

func numericLn(x *apd.Decimal) (types.Datum, error) {
	if err := checkLogArg(x); err != nil {
		return types.Null, err
	}
	if x.Form != apd.Finite {
		return types.NewNumeric(x), nil // NaN or +Infinity
	}
	dw := estimateLnDweight(x)
	rscale := clampScale(numericMinSigDigits-dw, dscale(x))
	return computeScaled(dw, rscale, func(ctx *apd.Context, r *apd.Decimal) error {
		return apdErr(ctx.Ln(r, x))
	})
}

// numericLog is log(b, x), numeric.c's log_var.
func numericLog(b, x *apd.Decimal) (types.Datum, error) {
	if b.Form != apd.Finite || x.Form != apd.Finite {
		if isNaN(b) || isNaN(x) {
			return types.NewNumeric(numNaN), nil
		}
		if err := checkLogArg(b); err != nil {
			return types.Null, err
		}
		if err := checkLogArg(x); err != nil {
			return types.Null, err
		}
		if b.Form == apd.Infinite {
			if x.Form == apd.Infinite {
				return types.NewNumeric(numNaN), nil
			}
			return types.NewNumeric(apd.New(0, 0)), nil
		}
		return types.NewNumeric(x), nil
	}
	if err := checkLogArg(b); err != nil {
		return types.Null, err
	}
	if err := checkLogArg(x); err != nil {
		return types.Null, err
	}
	dwb, dwx := estimateLnDweight(b), estimateLnDweight(x)
	dw := dwx - dwb
	rscale := clampScale(numericMinSigDigits-dw, dscale(b), dscale(x))
	return computeScaled(dw, rscale, func(ctx *apd.Context, r *apd.Decimal) error {
		inner := *ctx
		inner.Precision += uint32(max(dwb, -dwb, dwx, -dwx)) + 10
		lb, lx := new(apd.Decimal), new(apd.Decimal)
		if err := apdErr(inner.Ln(lb, b)); err != nil {
			return err
		}
		if err := apdErr(inner.Ln(lx, x)); err != nil {
			return err
		}
		if lb.IsZero() {
			return errDivisionByZero
		}
		return apdErr(inner.Quo(r, lx, lb))
	})
}

func isIntegral(d *apd.Decimal) bool {
	if d.Form != apd.Finite {
		return false
	}
	if d.Exponent >= 0 || d.IsZero() {
		return true
	}
	r := new(apd.Decimal)
	_, _, _ = exact.Reduce(r, d)
	return r.Exponent >= 0
}

// numericPower is numeric.c's numeric_power and power_var.
func numericPower(x, y *apd.Decimal) (types.Datum, error) {
	one := apd.New(1, 0)
	if isNaN(x) {
		if y.Form == apd.Finite && y.IsZero() {
			return types.NewNumeric(one), nil
		}
		return types.NewNumeric(numNaN), nil
	}
	if isNaN(y) {
		if x.Form == apd.Finite && x.Cmp(one) == 0 {
			return types.NewNumeric(one), nil
		}
		return types.NewNumeric(numNaN), nil
	}
	sx, sy := x.Sign(), y.Sign()
	if sx == 0 && sy < 0 {
		return types.Null, errZeroNegPower
	}
	if sx < 0 && !isIntegral(y) && y.Form == apd.Finite {
		return types.Null, errComplexPower
	}
	if x.Form != apd.Finite || y.Form != apd.Finite {
		return numericPowerInfinite(x, y)
	}
	if isIntegral(y) {
		if n, err := y.Int64(); err == nil && n >= math.MinInt32 && n <= math.MaxInt32 {
			return numericPowerInt(x, n)
		}
	}
	if sx == 0 {
		return types.NewNumeric(&apd.Decimal{Exponent: -numericMinSigDigits}), nil
	}
	// e^(y ln x): estimate the result's weight from a low-precision ln.
	fx, _ := x.Float64()
	fy, _ := y.Float64()
	val := fy * math.Log(math.Abs(fx))
	if math.Abs(val) > 2000*3.01 {
		if val > 0 {
			return types.Null, errNumericOverflow
		}
		return types.NewNumeric(&apd.Decimal{Exponent: -numericMaxDisplayScale}), nil
	}
	val *= 0.434294481903252
	rscale := clampScale(numericMinSigDigits-int64(val), dscale(x), dscale(y))
	return computeScaled(int64(val), rscale, func(ctx *apd.Context, r *apd.Decimal) error {
		return apdErr(ctx.Pow(r, x, y))
	})
}

// numericPowerInt is power_var_int's case: an exponent that fits int32,
// result scale max(16, base's scale).
func numericPowerInt(x *apd.Decimal, n int64) (types.Datum, error) {
	rscale := clampScale(numericMinSigDigits, dscale(x))
	if n == 0 {
		one, err := roundScale(apd.New(1, 0), rscale, apd.RoundDown)
		if err != nil {
			return types.Null, err
		}
		return types.NewNumeric(one), nil
	}
	if x.IsZero() {
		return types.NewNumeric(&apd.Decimal{Exponent: int32(-rscale)}), nil
	}
	// Estimated decimal weight of the result.
	fx, _ := x.Float64()
	w := float64(n) * math.Log10(math.Abs(fx))
	if math.IsInf(fx, 0) || math.IsNaN(w) {
		w = float64(n) * float64(adjExp(x))
	}
	if w > numericMaxWeight10 {
		return types.Null, errNumericOverflow
	}
	if w < -float64(rscale)-2 {
		return types.NewNumeric(&apd.Decimal{Exponent: int32(-rscale)}), nil
	}
	return computeScaled(int64(w), rscale, func(ctx *apd.Context, r *apd.Decimal) error {
		return apdErr(ctx.Pow(r, x, apd.New(n, 0)))
	})
}

// numericPowerInfinite follows POSIX pow(3) for infinite inputs, as
// numeric_power does.
func numericPowerInfinite(x, y *apd.Decimal) (types.Datum, error) {
	inf := func(neg bool) (types.Datum, error) {
		return types.NewNumeric(&apd.Decimal{Form: apd.Infinite, Negative: neg}), nil
	}
	zero := func() (types.Datum, error) { return types.NewNumeric(apd.New(0, 0)), nil }
	if y.Form == apd.Infinite {
		ax := new(apd.Decimal).Abs(x)
		switch c := ax.Cmp(apd.New(1, 0)); {
		case c == 0:
			return types.NewNumeric(apd.New(1, 0)), nil
		case (c > 0) == !y.Negative:
			return inf(false)
		default:
			return zero()
		}
	}
	// x is ±Infinity, y finite.
	switch {
	case y.IsZero():
		return types.NewNumeric(apd.New(1, 0)), nil
	case y.Negative:
		return zero()
	case !x.Negative:
		return inf(false)
	}
	odd := false
	if isIntegral(y) {
		r := new(apd.Decimal)
		ctx := exact
		ctx.Precision = uint32(numDigits(y) + 2)
		_, _ = ctx.Rem(r, y, apd.New(2, 0))
		odd = !r.IsZero()
	}
	return inf(odd)
}

// numericGCD is Euclid's algorithm on exact decimals (Postgres allows
// fractional arguments: gcd(0.3, 0.2) = 0.1); the result has the larger
// input scale.
func numericGCD(a, b *apd.Decimal) (*apd.Decimal, error) {
	x := new(apd.Decimal).Abs(a)
	y := new(apd.Decimal).Abs(b)
	scale := max(dscale(a), dscale(b))
	for !y.IsZero() {
		ctx := exact
		ctx.Precision = uint32(numDigits(x) + numDigits(y) + 2)
		r := new(apd.Decimal)
		if _, err := ctx.Rem(r, x, y); err != nil {
			return nil, errNumericOverflow
		}
		x, y = y, r
	}
	return roundScale(x, scale, apd.RoundDown)
}

func numericDivTrunc(a, b *apd.Decimal) (types.Datum, error) {
	if isNaN(a) || isNaN(b) {
		return types.NewNumeric(numNaN), nil
	}
	if b.Form == apd.Finite && b.IsZero() {
		return types.Null, errDivisionByZero
	}
	if a.Form == apd.Infinite {
		if b.Form == apd.Infinite {
			return types.NewNumeric(numNaN), nil
		}
		return types.NewNumeric(&apd.Decimal{Form: apd.Infinite, Negative: a.Negative != b.Negative}), nil
	}
	if b.Form == apd.Infinite || a.IsZero() {
		return types.NewNumeric(apd.New(0, 0)), nil
	}
	ctx := exact
	ctx.Precision = uint32(max(adjExp(a)-adjExp(b)+3, 1))
	ctx.Rounding = apd.RoundDown
	q := new(apd.Decimal)
	if _, err := ctx.QuoInteger(q, a, b); err != nil {
		return types.Null, errNumericOverflow
	}
	r, err := roundScale(q, 0, apd.RoundDown)
	if err != nil {
		return types.Null, err
	}
	return newNum(r), nil
}

// widthBucketFloat is width_bucket(float8, float8, float8, int).
func widthBucketFloat(op, lo, hi float64, count int64) (types.Datum, error) {
	if count <= 0 {
		return types.Null, errorf("2201G", "count must be greater than zero")
	}
	if math.IsNaN(op) || math.IsNaN(lo) || math.IsNaN(hi) {
		return types.Null, errorf("2201G", "operand, lower bound, and upper bound cannot be NaN")
	}
	if math.IsInf(lo, 0) || math.IsInf(hi, 0) {
		return types.Null, errorf("2201G", "lower and upper bounds must be finite")
	}
	var r int64
	switch {
	case lo < hi:
		switch {
		case op < lo:
			r = 0
		case op >= hi:
			r = count + 1
		default:
			r = int64(float64(count)*((op-lo)/(hi-lo))) + 1
			r = min(r, count)
		}
	case lo > hi:
		switch {
		case op > lo:
			r = 0
		case op <= hi:
			r = count + 1
		default:
			r = int64(float64(count)*((lo-op)/(lo-hi))) + 1
			r = min(r, count)
		}
	default:
		return types.Null, errorf("2201G", "lower bound cannot equal upper bound")
	}
	if r > math.MaxInt32 {
		return types.Null, intOutOfRange("integer")
	}
	return types.NewInt32(int32(r)), nil
}

// widthBucketNumeric is width_bucket(numeric, numeric, numeric, int),
// exact.
func widthBucketNumeric(op, lo, hi *apd.Decimal, count int64) (types.Datum, error) {
	if count <= 0 {
		return types.Null, errorf("2201G", "count must be greater than zero")
	}
	if isNaN(op) || isNaN(lo) || isNaN(hi) {
		return types.Null, errorf("2201G", "operand, lower bound, and upper bound cannot be NaN")
	}
	if lo.Form != apd.Finite || hi.Form != apd.Finite {
		return types.Null, errorf("2201G", "lower and upper bounds must be finite")
	}
	c := lo.Cmp(hi)
	if c == 0 {
		return types.Null, errorf("2201G", "lower bound cannot equal upper bound")
	}
	if c > 0 { // descending: mirror everything
		op, lo, hi = new(apd.Decimal).Neg(op), new(apd.Decimal).Neg(lo), new(apd.Decimal).Neg(hi)
	}
	if op.Cmp(lo) < 0 {
		return types.NewInt32(0), nil
	}
	if op.Cmp(hi) >= 0 {
		if count+1 > math.MaxInt32 {
			return types.Null, intOutOfRange("integer")
		}
		return types.NewInt32(int32(count + 1)), nil
	}
	num, den := new(apd.Decimal), new(apd.Decimal)
	_, _ = exact.Sub(num, op, lo)
	_, _ = exact.Mul(num, num, apd.New(count, 0))
	_, _ = exact.Sub(den, hi, lo)
	ctx := exact
	ctx.Precision = uint32(max(adjExp(num)-adjExp(den)+3, 1))
	q := new(apd.Decimal)
	if _, err := ctx.QuoInteger(q, num, den); err != nil {
		return types.Null, errNumericOverflow
	}
	n, _ := q.Int64()
	return types.NewInt32(int32(min(n+1, count))), nil
}

func intGCD(a, b int64) uint64 {
	x, y := uabs(a), uabs(b)
	for y != 0 {
		x, y = y, x%y
	}
	return x
}

func uabs(a int64) uint64 {
	if a < 0 {
		return uint64(-a)
	}
	return uint64(a)
}

func registerMath(r *Registry) {
	floatFn := func(name string, f func(x float64) (types.Datum, error)) {
		r.Add(strict(name, kinds(kFloat), kFloat, func(_ *Context, a []types.Datum) (types.Datum, error) { return f(a[0].Float64()) }))
	}
	numFn := func(name string, f func(x *apd.Decimal) (types.Datum, error)) {
		r.Add(strict(name, kinds(kNum), kNum, func(_ *Context, a []types.Datum) (types.Datum, error) { return f(a[0].Decimal()) }))
	}
	pure := func(f func(float64) float64) func(float64) (types.Datum, error) {
		return func(x float64) (types.Datum, error) { return types.NewFloat64(f(x)), nil }
	}
	// abs, and the prefix operator @.
	for _, name := range []string{"abs", "@"} {
		for _, k := range intKinds {
			k := k
			f := strict(name, kinds(k), k, func(_ *Context, a []types.Datum) (types.Datum, error) {
				v := a[0].Int64()
				if v < 0 {
					return checkedInt(k, '-', 0, v)
				}
				return a[0], nil
			})
			f.Infix = name == "@"
			r.Add(f)
		}
		for _, k := range []types.Kind{types.KindFloat32, kFloat} {
			k := k
			f := strict(name, kinds(k), k, func(_ *Context, a []types.Datum) (types.Datum, error) {
				if k == types.KindFloat32 {
					return types.NewFloat32(float32(math.Abs(a[0].Float64()))), nil
				}
				return types.NewFloat64(math.Abs(a[0].Float64())), nil
			})
			f.Infix = name == "@"
			r.Add(f)
		}
		f := strict(name, kinds(kNum), kNum, func(_ *Context, a []types.Datum) (types.Datum, error) {
			return types.NewNumeric(new(apd.Decimal).Abs(a[0].Decimal())), nil
		})
		f.Infix = name == "@"
		r.Add(f)
	}
	floatFn("sign", func(x float64) (types.Datum, error) {
		switch {
		case x > 0:
			return types.NewFloat64(1), nil
		case x < 0:
			return types.NewFloat64(-1), nil
		}
		return types.NewFloat64(0), nil
	})
	numFn("sign", func(x *apd.Decimal) (types.Datum, error) {
		if isNaN(x) {
			return types.NewNumeric(x), nil
		}
		return types.NewNumeric(apd.New(int64(x.Sign()), 0)), nil
	})
	floatFn("round", pure(math.RoundToEven)) // rint: half to even
	floatFn("trunc", pure(math.Trunc))
	for _, name := range []string{"ceil", "ceiling"} {
		floatFn(name, pure(math.Ceil))
	}
	floatFn("floor", pure(math.Floor))
	roundFn := func(name string, rnd apd.Rounder, withScale bool) {
		numFn(name, func(x *apd.Decimal) (types.Datum, error) {
			d, err := roundScale(x, 0, rnd)
			if err != nil {
				return types.Null, err
			}
			return types.NewNumeric(d), nil
		})
		if !withScale {
			return
		}
		r.Add(strict(name, kinds(kNum, kInt), kNum, func(_ *Context, a []types.Datum) (types.Datum, error) {
			s := min(max(a[1].Int64(), -2000), 2000)
			d, err := roundScale(a[0].Decimal(), s, rnd)
			if err != nil {
				return types.Null, err
			}
			return types.NewNumeric(d), nil
		}))
	}
	roundFn("round", apd.RoundHalfUp, true)
	roundFn("trunc", apd.RoundDown, true)
	// ceil and floor: apd's Quantize does not honour the directed
	// roundings, so these use Ceil and Floor.
	ceilFloor := func(ceil bool) func(x *apd.Decimal) (types.Datum, error) {
		return func(x *apd.Decimal) (types.Datum, error) {
			if x.Form != apd.Finite {
				return types.NewNumeric(x), nil
			}
			ctx := exact
			ctx.Precision = uint32(max(numDigits(x)+2, 1))
			d := new(apd.Decimal)
			var err error
			if ceil {
				_, err = ctx.Ceil(d, x)
			} else {
				_, err = ctx.Floor(d, x)
			}
			if err != nil {
				return types.Null, errNumericOverflow
			}
			if d, err = roundScale(d, 0, apd.RoundDown); err != nil {
				return types.Null, err
			}
			return newNum(d), nil
		}
	}
	numFn("ceil", ceilFloor(true))
	numFn("ceiling", ceilFloor(true))
	numFn("floor", ceilFloor(false))
	floatFn("sqrt", func(x float64) (types.Datum, error) {
		if x < 0 {
			return types.Null, errSqrtNegative
		}
		return checkFloat(math.Sqrt(x), math.IsInf(x, 0), x == 0)
	})
	numFn("sqrt", numericSqrt)
	r.Add(&Func{Name: "|/", Params: kinds(kFloat), Infix: true, Strict: true, ResultKind: kFloat,
		Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
			x := a[0].Float64()
			if x < 0 {
				return types.Null, errSqrtNegative
			}
			return checkFloat(math.Sqrt(x), math.IsInf(x, 0), x == 0)
		}})
	cbrt := func(x float64) (types.Datum, error) { return checkFloat(cCbrt(x), math.IsInf(x, 0), x == 0) }
	floatFn("cbrt", cbrt)
	r.Add(&Func{Name: "||/", Params: kinds(kFloat), Infix: true, Strict: true, ResultKind: kFloat,
		Eval: func(_ *Context, a []types.Datum) (types.Datum, error) { return cbrt(a[0].Float64()) }})
	for _, name := range []string{"power", "pow", "^"} {
		fp := strict(name, kinds(kFloat, kFloat), kFloat, func(_ *Context, a []types.Datum) (types.Datum, error) {
			return floatPow(a[0].Float64(), a[1].Float64())
		})
		np := strict(name, kinds(kNum, kNum), kNum, func(_ *Context, a []types.Datum) (types.Datum, error) {
			return numericPower(a[0].Decimal(), a[1].Decimal())
		})
		fp.Infix, np.Infix = name == "^", name == "^"
		r.Add(fp, np)
	}
	floatFn("exp", floatExp)
	numFn("exp", numericExp)
	floatFn("ln", floatLog(cLog))
	numFn("ln", numericLn)
	for _, name := range []string{"log", "log10"} {
		floatFn(name, floatLog(cLog10))
		numFn(name, func(x *apd.Decimal) (types.Datum, error) { return numericLog(apd.New(10, 0), x) })
	}
	r.Add(strict("log", kinds(kNum, kNum), kNum, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return numericLog(a[0].Decimal(), a[1].Decimal())
	}))
	for _, k := range intKinds {
		k := k
		r.Add(strict("mod", kinds(k, k), k, func(_ *Context, a []types.Datum) (types.Datum, error) {
			return checkedInt(k, '%', a[0].Int64(), a[1].Int64())
		}))
	}
	r.Add(strict("mod", kinds(kNum, kNum), kNum, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return numericArith('%', a[0].Decimal(), a[1].Decimal())
	}))
	r.Add(strict("div", kinds(kNum, kNum), kNum, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return numericDivTrunc(a[0].Decimal(), a[1].Decimal())
	}))
	for _, k := range []types.Kind{kInt, types.KindInt64} {
		k := k
		r.Add(strict("gcd", kinds(k, k), k, func(_ *Context, a []types.Datum) (types.Datum, error) {
			g := intGCD(a[0].Int64(), a[1].Int64())
			_, hi, name := intRange(k)
			if g > uint64(hi) {
				return types.Null, intOutOfRange(name)
			}
			return makeInt(k, int64(g)), nil
		}))
		r.Add(strict("lcm", kinds(k, k), k, func(_ *Context, a []types.Datum) (types.Datum, error) {
			x, y := a[0].Int64(), a[1].Int64()
			if x == 0 || y == 0 {
				return makeInt(k, 0), nil
			}
			g := intGCD(x, y)
			_, hi, name := intRange(k)
			q := uabs(x) / g
			if g > uint64(hi) {
				return types.Null, intOutOfRange(name)
			}
			p, err := checkedInt(k, '*', int64(q), int64(uabs(y)))
			if err != nil || uabs(y) > uint64(hi) {
				return types.Null, intOutOfRange(name)
			}
			return p, nil
		}))
	}
	r.Add(strict("gcd", kinds(kNum, kNum), kNum, func(_ *Context, a []types.Datum) (types.Datum, error) {
		x, y := a[0].Decimal(), a[1].Decimal()
		if x.Form != apd.Finite || y.Form != apd.Finite {
			return types.NewNumeric(numNaN), nil
		}
		g, err := numericGCD(x, y)
		if err != nil {
			return types.Null, err
		}
		return types.NewNumeric(g), nil
	}))
	r.Add(strict("lcm", kinds(kNum, kNum), kNum, func(_ *Context, a []types.Datum) (types.Datum, error) {
		x, y := a[0].Decimal(), a[1].Decimal()
		if x.Form != apd.Finite || y.Form != apd.Finite {
			return types.NewNumeric(numNaN), nil
		}
		scale := max(dscale(x), dscale(y))
		if x.IsZero() || y.IsZero() {
			return types.NewNumeric(&apd.Decimal{Exponent: int32(-scale)}), nil
		}
		g, err := numericGCD(x, y)
		if err != nil {
			return types.Null, err
		}
		p, q := new(apd.Decimal), new(apd.Decimal)
		_, _ = exact.Mul(p, x, y)
		p.Abs(p)
		ctx := exact
		ctx.Precision = uint32(numDigits(p) + scale + 2)
		if _, err := ctx.Quo(q, p, g); err != nil {
			return types.Null, errNumericOverflow
		}
		out, err := roundScale(q, scale, apd.RoundDown)
		if err != nil {
			return types.Null, err
		}
		return types.NewNumeric(out), nil
	}))
	r.Add(&Func{Name: "pi", Params: []types.Kind{}, ResultKind: kFloat, Eval: func(*Context, []types.Datum) (types.Datum, error) {
		return types.NewFloat64(math.Pi), nil
	}})
	floatFn("degrees", func(x float64) (types.Datum, error) {
		return checkFloat(x/radiansPerDegree, math.IsInf(x, 0), x == 0)
	})
	floatFn("radians", func(x float64) (types.Datum, error) {
		return checkFloat(x*radiansPerDegree, math.IsInf(x, 0), x == 0)
	})
	floatFn("sin", floatTrig(cSin))
	floatFn("cos", floatTrig(cCos))
	floatFn("tan", floatTrig(cTan))
	floatFn("cot", func(x float64) (types.Datum, error) {
		if math.IsNaN(x) {
			return types.NewFloat64(x), nil
		}
		t, err := cTan(x)
		if err != nil || math.IsInf(x, 0) {
			return types.Null, errInputRange
		}
		return types.NewFloat64(1 / t), nil
	})
	floatFn("asin", floatInverseTrig(cAsin))
	floatFn("acos", floatInverseTrig(cAcos))
	floatFn("atan", func(x float64) (types.Datum, error) {
		if math.IsNaN(x) {
			return types.NewFloat64(x), nil
		}
		return checkFloat(cAtan(x), false, true)
	})
	r.Add(strict("atan2", kinds(kFloat, kFloat), kFloat, func(_ *Context, a []types.Datum) (types.Datum, error) {
		y, x := a[0].Float64(), a[1].Float64()
		if math.IsNaN(x) || math.IsNaN(y) {
			return types.NewFloat64(math.NaN()), nil
		}
		return checkFloat(cAtan2(y, x), false, true)
	}))
	r.Add(strict("width_bucket", kinds(kFloat, kFloat, kFloat, kInt), kInt, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return widthBucketFloat(a[0].Float64(), a[1].Float64(), a[2].Float64(), a[3].Int64())
	}))
	r.Add(strict("width_bucket", kinds(kNum, kNum, kNum, kInt), kInt, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return widthBucketNumeric(a[0].Decimal(), a[1].Decimal(), a[2].Decimal(), a[3].Int64())
	}))
	r.Add(strict("scale", kinds(kNum), kInt, func(_ *Context, a []types.Datum) (types.Datum, error) {
		if a[0].Decimal().Form != apd.Finite {
			return types.Null, nil
		}
		return types.NewInt32(int32(dscale(a[0].Decimal()))), nil
	}))
	numFn("trim_scale", func(x *apd.Decimal) (types.Datum, error) {
		if x.Form != apd.Finite {
			return types.NewNumeric(x), nil
		}
		d := new(apd.Decimal)
		_, _, _ = exact.Reduce(d, x)
		if d.Exponent > 0 {
			var err error
			if d, err = roundScale(d, 0, apd.RoundDown); err != nil {
				return types.Null, err
			}
		}
		return newNum(d), nil
	})
	r.Add(&Func{Name: "random", Params: []types.Kind{}, Volatile: true, ResultKind: kFloat, Eval: func(*Context, []types.Datum) (types.Datum, error) {
		return types.NewFloat64(rand.Float64()), nil
	}})
	// greatest and least take any one type, ignore NULLs and are NULL only
	// when every argument is.
	for _, name := range []string{"greatest", "least"} {
		want := 1
		if name == "least" {
			want = -1
		}
		for _, k := range comparable {
			r.Add(&Func{Name: name, Params: kinds(k), Variadic: true, ResultKind: k,
				Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
					best := types.Null
					for _, v := range a {
						if v.IsNull() {
							continue
						}
						if best.IsNull() || types.Compare(v, best) == want {
							best = v
						}
					}
					return best, nil
				}})
		}
	}
}
