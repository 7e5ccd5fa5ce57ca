package expr

import (
	"math"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Arithmetic operators with Postgres's result types and errors.

var intKinds = []types.Kind{types.KindInt16, types.KindInt32, types.KindInt64}

func intRange(k types.Kind) (lo, hi int64, name string) {
	switch k {
	case types.KindInt16:
		return math.MinInt16, math.MaxInt16, "smallint"
	case types.KindInt32:
		return math.MinInt32, math.MaxInt32, "integer"
	}
	return math.MinInt64, math.MaxInt64, "bigint"
}

func makeInt(k types.Kind, v int64) types.Datum {
	switch k {
	case types.KindInt16:
		return types.NewInt16(int16(v))
	case types.KindInt32:
		return types.NewInt32(int32(v))
	}
	return types.NewInt64(v)
}

func intOutOfRange(name string) error {
	return errorf(sqlerr.NumericValueOutOfRange, "%s out of range", name)
}

var errDivisionByZero = sqlerr.New(sqlerr.DivisionByZero, "division by zero")

// checkedInt applies op on int64 with overflow detection, then checks k's
// range.
func checkedInt(k types.Kind, op byte, a, b int64) (types.Datum, error) {
	lo, hi, name := intRange(k)
	var r int64
	switch op {
	case '+':
		r = a + b
		if (b > 0 && r < a) || (b < 0 && r > a) {
			return types.Null, intOutOfRange(name)
		}
	case '-':
		r = a - b
		if (b < 0 && r < a) || (b > 0 && r > a) {
			return types.Null, intOutOfRange(name)
		}
	case '*':
		if a != 0 && b != 0 {
			r = a * b
			if r/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
				return types.Null, intOutOfRange(name)
			}
		}
	case '/':
		if b == 0 {
			return types.Null, errDivisionByZero
		}
		if b == -1 {
			if a == lo {
				return types.Null, intOutOfRange(name)
			}
			r = -a
		} else {
			r = a / b // truncates toward zero, as C and Postgres do
		}
	case '%':
		if b == 0 {
			return types.Null, errDivisionByZero
		}
		if b == -1 {
			r = 0 // avoids MinInt64 % -1 trapping; Postgres returns 0
		} else {
			r = a % b // sign of the dividend
		}
	}
	if r < lo || r > hi {
		return types.Null, intOutOfRange(name)
	}
	return makeInt(k, r), nil
}

// exact is the decimal context for exact NUMERIC arithmetic: no rounding
// (Precision 0 means unlimited for add, subtract and multiply).
var exact = apd.Context{Precision: 0, MaxExponent: apd.MaxExponent, MinExponent: apd.MinExponent, Traps: apd.InvalidOperation}

func numericResult(d *apd.Decimal, cond apd.Condition, err error) (types.Datum, error) {
	if err != nil || cond.Any() && cond&(apd.Overflow|apd.InvalidOperation|apd.Underflow) != 0 {
		return types.Null, errorf(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	if d.Form == apd.Finite && d.IsZero() {
		// NUMERIC has no negative zero (-1.5 * 0 is 0.0, not -0.0).
		d.Negative = false
	}
	return types.NewNumeric(d), nil
}

// numericSpecial handles NaN and infinities for + - * / as Postgres 14+
// does; ok is false when both operands are finite.
func numericSpecial(op byte, a, b *apd.Decimal) (types.Datum, bool, error) {
	if a.Form == apd.Finite && b.Form == apd.Finite {
		return types.Null, false, nil
	}
	nan := types.NewNumeric(&apd.Decimal{Form: apd.NaN})
	if a.Form != apd.Finite && a.Form != apd.Infinite || b.Form != apd.Finite && b.Form != apd.Infinite {
		return nan, true, nil
	}
	inf := func(neg bool) types.Datum {
		return types.NewNumeric(&apd.Decimal{Form: apd.Infinite, Negative: neg})
	}
	sa, sb := a.Sign(), b.Sign()
	switch op {
	case '+':
		if a.Form == apd.Infinite && b.Form == apd.Infinite && a.Negative != b.Negative {
			return nan, true, nil
		}
		if a.Form == apd.Infinite {
			return inf(a.Negative), true, nil
		}
		return inf(b.Negative), true, nil
	case '-':
		if a.Form == apd.Infinite && b.Form == apd.Infinite && a.Negative == b.Negative {
			return nan, true, nil
		}
		if a.Form == apd.Infinite {
			return inf(a.Negative), true, nil
		}
		return inf(!b.Negative), true, nil
	case '*':
		if sa == 0 || sb == 0 {
			return nan, true, nil
		}
		return inf((sa < 0) != (sb < 0)), true, nil
	case '/':
		if b.Form == apd.Infinite {
			if a.Form == apd.Infinite {
				return nan, true, nil
			}
			return types.NewNumeric(apd.New(0, 0)), true, nil
		}
		if sb == 0 {
			return types.Null, true, errDivisionByZero
		}
		return inf((sa < 0) != (sb < 0)), true, nil
	case '%':
		if a.Form == apd.Infinite {
			if sb == 0 {
				return types.Null, true, errDivisionByZero
			}
			return nan, true, nil
		}
		// finite % ±Infinity is the finite operand.
		return types.NewNumeric(a), true, nil
	}
	return nan, true, nil
}

func numericArith(op byte, a, b *apd.Decimal) (types.Datum, error) {
	if d, ok := numericArithFast(op, a, b); ok {
		return d, nil
	}
	if d, ok, err := numericSpecial(op, a, b); ok {
		return d, err
	}
	r := new(apd.Decimal)
	switch op {
	case '+':
		c, err := exact.Add(r, a, b)
		return numericResult(r, c, err)
	case '-':
		c, err := exact.Sub(r, a, b)
		return numericResult(r, c, err)
	case '*':
		c, err := exact.Mul(r, a, b)
		return numericResult(r, c, err)
	case '/':
		return numericDiv(a, b)
	case '%':
		if b.IsZero() {
			return types.Null, errDivisionByZero
		}
		ctx := exact
		ctx.Precision = uint32(max(numDigits(a), numDigits(b)) + 2)
		c, err := ctx.Rem(r, a, b)
		if r.IsZero() {
			r.Negative = false
		}
		return numericResult(r, c, err)
	}
	panic("expr: numericArith: bad operator")
}

func numDigits(d *apd.Decimal) int64 {
	n := d.NumDigits()
	if d.Exponent > 0 {
		n += int64(d.Exponent)
	}
	if d.Exponent < 0 && -int64(d.Exponent) > n {
		n = -int64(d.Exponent)
	}
	return n
}

// dscale is a NUMERIC's display scale: digits after the point.
func dscale(d *apd.Decimal) int64 {
	if d.Exponent >= 0 {
		return 0
	}
	return -int64(d.Exponent)
}

// weight10000 returns Postgres's weight (the position of the first nonzero
// base-10000 digit, 0 for the units group) and that digit, for a nonzero
// finite value.
func weight10000(d *apd.Decimal) (weight int64, first int64) {
	// adjusted exponent: the power of ten of the leading digit.
	adj := int64(d.Exponent) + d.NumDigits() - 1
	weight = floorDiv(adj, 4)
	// The first base-10000 digit holds the decimal digits from power
	// 4*weight+3 down to 4*weight: the leading 1..4 digits of the value.
	lead := adj - 4*weight + 1 // how many decimal digits the first group shows
	s := d.Coeff.String()
	if s[0] == '-' {
		s = s[1:]
	}
	for i := int64(0); i < lead; i++ {
		first *= 10
		if i < int64(len(s)) {
			first += int64(s[i] - '0')
		}
	}
	return weight, first
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// numericDivScale is Postgres's select_div_scale: enough digits for 16
// significant digits of the quotient, and no fewer than either input's
// display scale, at most 1000.
func numericDivScale(a, b *apd.Decimal) int64 {
	const minSigDigits, maxDisplayScale, decDigits = 16, 1000, 4
	var w1, f1, w2, f2 int64
	if !a.IsZero() {
		w1, f1 = weight10000(a)
	}
	if !b.IsZero() {
		w2, f2 = weight10000(b)
	}
	qweight := w1 - w2
	if f1 <= f2 {
		qweight--
	}
	rscale := minSigDigits - qweight*decDigits
	rscale = max(rscale, dscale(a), dscale(b), 0)
	return min(rscale, maxDisplayScale)
}

// numericDiv divides with Postgres's result scale, rounding half away
// from zero. The quotient is first computed truncated with one digit more
// than the result scale, so the final rounding sees exact digits.
func numericDiv(a, b *apd.Decimal) (types.Datum, error) {
	if b.IsZero() {
		return types.Null, errDivisionByZero
	}
	rscale := numericDivScale(a, b)
	if a.IsZero() {
		r := new(apd.Decimal)
		r.Exponent = int32(-rscale)
		return types.NewNumeric(r), nil
	}
	adjA := int64(a.Exponent) + a.NumDigits() - 1
	adjB := int64(b.Exponent) + b.NumDigits() - 1
	intDigits := max(adjA-adjB+2, 1)
	ctx := exact
	ctx.Precision = uint32(max(intDigits+rscale+2, 1))
	ctx.Rounding = apd.RoundDown
	q := new(apd.Decimal)
	if _, err := ctx.Quo(q, a, b); err != nil {
		return types.Null, errorf(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	return roundNumeric(q, rscale)
}

// roundNumeric rounds d to scale digits after the point, half away from
// zero (Postgres's round_var).
func roundNumeric(d *apd.Decimal, scale int64) (types.Datum, error) {
	ctx := exact
	ctx.Rounding = apd.RoundHalfUp
	ctx.Precision = uint32(max(numDigits(d)+scale+2, 1))
	r := new(apd.Decimal)
	c, err := ctx.Quantize(r, d, int32(-scale))
	if r.IsZero() {
		r.Negative = false
	}
	return numericResult(r, c, err)
}

// floatCheck is Postgres's check_float8_val: an infinity from finite inputs
// is an overflow, a zero where zero is not allowed an underflow.
func floatCheck(r float64, inputsInf bool, zeroOK bool) (float64, error) {
	if math.IsInf(r, 0) && !inputsInf {
		return 0, errorf(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
	}
	if r == 0 && !zeroOK {
		return 0, errorf(sqlerr.NumericValueOutOfRange, "value out of range: underflow")
	}
	return r, nil
}

func floatArith(k types.Kind, op byte, a, b float64) (types.Datum, error) {
	var r float64
	anyInf := math.IsInf(a, 0) || math.IsInf(b, 0)
	zeroOK := true
	switch op {
	case '+':
		r = a + b
	case '-':
		r = a - b
	case '*':
		r = a * b
		zeroOK = a == 0 || b == 0
	case '/':
		if b == 0 && !math.IsNaN(a) {
			return types.Null, errDivisionByZero // float8div: NaN / 0 is NaN
		}
		r = a / b
		zeroOK = a == 0 || math.IsInf(b, 0)
	}
	if k == types.KindFloat32 {
		r = float64(float32(r))
	}
	r, err := floatCheck(r, anyInf, zeroOK)
	if err != nil {
		return types.Null, err
	}
	if k == types.KindFloat32 {
		return types.NewFloat32(float32(r)), nil
	}
	return types.NewFloat64(r), nil
}

func binop(name string, k types.Kind, eval func(ctx *Context, a, b types.Datum) (types.Datum, error)) *Func {
	return &Func{
		Name: name, Params: []types.Kind{k, k}, Infix: true, Strict: true, ResultKind: k,
		Eval: func(ctx *Context, args []types.Datum) (types.Datum, error) { return eval(ctx, args[0], args[1]) },
	}
}

func registerArithmetic(r *Registry) {
	for _, op := range []byte{'+', '-', '*', '/', '%'} {
		op := op
		for _, k := range intKinds {
			k := k
			r.Add(binop(string(op), k, func(_ *Context, a, b types.Datum) (types.Datum, error) {
				return checkedInt(k, op, a.Int64(), b.Int64())
			}))
		}
		numeric := binop(string(op), types.KindNumeric, func(_ *Context, a, b types.Datum) (types.Datum, error) {
			return numericArith(op, a.Decimal(), b.Decimal())
		})
		numericBinops[numeric] = op
		r.Add(numeric)
		if op != '%' {
			for _, k := range []types.Kind{types.KindFloat32, types.KindFloat64} {
				k := k
				r.Add(binop(string(op), k, func(_ *Context, a, b types.Datum) (types.Datum, error) {
					return floatArith(k, op, a.Float64(), b.Float64())
				}))
			}
		}
	}
	// REAL with DOUBLE PRECISION computes in DOUBLE PRECISION (Postgres's
	// float48pl, float84mul, ...); with the preference for DOUBLE PRECISION
	// in Lookup this also makes REAL with NUMERIC a DOUBLE PRECISION.
	for _, op := range []byte{'+', '-', '*', '/'} {
		op := op
		for _, ks := range [][2]types.Kind{{types.KindFloat32, types.KindFloat64}, {types.KindFloat64, types.KindFloat32}} {
			r.Add(&Func{Name: string(op), Params: ks[:], Infix: true, Strict: true, ResultKind: types.KindFloat64,
				Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
					return floatArith(types.KindFloat64, op, a[0].Float64(), a[1].Float64())
				}})
		}
	}
	// Unary minus and plus.
	for _, k := range intKinds {
		k := k
		r.Add(&Func{Name: "-", Params: []types.Kind{k}, Infix: true, Strict: true, ResultKind: k,
			Eval: func(_ *Context, a []types.Datum) (types.Datum, error) { return checkedInt(k, '-', 0, a[0].Int64()) }})
	}
	r.Add(&Func{Name: "-", Params: []types.Kind{types.KindNumeric}, Infix: true, Strict: true, ResultKind: types.KindNumeric,
		Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
			d := new(apd.Decimal).Neg(a[0].Decimal())
			if d.Form == apd.NaN || d.IsZero() {
				d.Negative = false
			}
			return types.NewNumeric(d), nil
		}})
	r.Add(&Func{Name: "-", Params: []types.Kind{types.KindFloat64}, Infix: true, Strict: true, ResultKind: types.KindFloat64,
		Eval: func(_ *Context, a []types.Datum) (types.Datum, error) { return types.NewFloat64(-a[0].Float64()), nil }})
	r.Add(&Func{Name: "-", Params: []types.Kind{types.KindFloat32}, Infix: true, Strict: true, ResultKind: types.KindFloat32,
		Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
			return types.NewFloat32(float32(-a[0].Float64())), nil
		}})
	r.Add(&Func{Name: "-", Params: []types.Kind{types.KindInterval}, Infix: true, Strict: true, ResultKind: types.KindInterval,
		Eval: func(_ *Context, a []types.Datum) (types.Datum, error) { return intervalNeg(a[0].Interval()) }})
	registerDatetimeArithmetic(r)
	registerBitwise(r)
}

// registerBitwise adds Postgres's integer bitwise operators: & | # (xor)
// on two integers of one kind, unary ~, and << >> by an INTEGER count.
// Shifts behave as Postgres's int2shl, int4shl, int8shl (C shifts) do on
// the usual hardware: the count is taken modulo 32 (64 for BIGINT; a
// SMALLINT shifts as an INTEGER, then wraps), a right shift is
// arithmetic, and bits shifted out are lost without an error.
func registerBitwise(r *Registry) {
	for _, k := range intKinds {
		k := k
		for _, op := range []string{"&", "|", "#"} {
			op := op
			r.Add(binop(op, k, func(_ *Context, a, b types.Datum) (types.Datum, error) {
				x, y := a.Int64(), b.Int64()
				switch op {
				case "&":
					return makeInt(k, x&y), nil
				case "|":
					return makeInt(k, x|y), nil
				}
				return makeInt(k, x^y), nil
			}))
		}
		r.Add(&Func{Name: "~", Params: []types.Kind{k}, Infix: true, Strict: true, ResultKind: k,
			Eval: func(_ *Context, a []types.Datum) (types.Datum, error) { return makeInt(k, ^a[0].Int64()), nil }})
		for _, op := range []string{"<<", ">>"} {
			left := op == "<<"
			r.Add(&Func{Name: op, Params: []types.Kind{k, types.KindInt32}, Infix: true, Strict: true, ResultKind: k,
				Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
					return shift(k, a[0].Int64(), a[1].Int64(), left), nil
				}})
		}
	}
}

func shift(k types.Kind, x, n int64, left bool) types.Datum {
	if k == types.KindInt64 {
		n &= 63
		if left {
			return types.NewInt64(x << n)
		}
		return types.NewInt64(x >> n)
	}
	n &= 31
	v := int32(x)
	if left {
		v <<= n
	} else {
		v >>= n
	}
	return makeInt(k, int64(v))
}

// Date and time arithmetic.

const (
	microsPerSecond = int64(1_000_000)
	microsPerDay    = 86_400 * microsPerSecond
)

var errTimestampRange = sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")

func checkTimestamp(us int64) error {
	if us < types.MinTimestamp || us > types.MaxTimestamp {
		return errTimestampRange
	}
	return nil
}

func isInfTimestamp(us int64) bool {
	return us == types.TimestampInfinity || us == types.TimestampNegInfinity
}

// addInterval adds iv to the instant us as Postgres's timestamp_pl_interval
// does: months first (the day clamped to the month's last), then days, in
// the wall clock of loc (UTC for TIMESTAMP), then microseconds.
func addInterval(us int64, iv types.IntervalValue, loc *time.Location) (int64, error) {
	if isInfTimestamp(us) {
		return us, nil
	}
	if iv.Months != 0 || iv.Days != 0 {
		t := time.UnixMicro(us).In(loc)
		y, m, d := t.Date()
		if iv.Months != 0 {
			total := int64(y)*12 + int64(m-1) + int64(iv.Months)
			y, m = int(floorDiv(total, 12)), time.Month(total-floorDiv(total, 12)*12+1)
			if last := daysIn(y, m); d > last {
				d = last
			}
		}
		d += int(iv.Days)
		t = time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc)
		us = t.UnixMicro()
	}
	r := us + iv.Micros
	if (iv.Micros > 0 && r < us) || (iv.Micros < 0 && r > us) {
		return 0, errTimestampRange
	}
	return r, checkTimestamp(r)
}

func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func intervalNeg(iv types.IntervalValue) (types.Datum, error) {
	if iv.Months == math.MinInt32 || iv.Days == math.MinInt32 || iv.Micros == math.MinInt64 {
		return types.Null, errorf(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	return types.NewInterval(types.IntervalValue{Months: -iv.Months, Days: -iv.Days, Micros: -iv.Micros}), nil
}

func intervalAdd(a, b types.IntervalValue, sign int64) (types.Datum, error) {
	m := int64(a.Months) + sign*int64(b.Months)
	d := int64(a.Days) + sign*int64(b.Days)
	u := a.Micros + sign*b.Micros
	if m < math.MinInt32 || m > math.MaxInt32 || d < math.MinInt32 || d > math.MaxInt32 ||
		(sign > 0 && (b.Micros > 0 && u < a.Micros || b.Micros < 0 && u > a.Micros)) ||
		(sign < 0 && (b.Micros < 0 && u < a.Micros || b.Micros > 0 && u > a.Micros)) {
		return types.Null, errorf(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	return types.NewInterval(types.IntervalValue{Months: int32(m), Days: int32(d), Micros: u}), nil
}

// intervalScale multiplies an interval by a float as Postgres's interval_mul
// does: fractional months spill into days (30 a month), fractional days
// into microseconds (24 hours a day).
// With divide set it divides by factor instead (interval_div), which
// rounds differently from multiplying by 1/factor.
func intervalScale(iv types.IntervalValue, factor float64, divide bool) (types.Datum, error) {
	tsround := func(j float64) float64 { return math.Round(j*1e6) / 1e6 }
	scale := func(v float64) float64 {
		if divide {
			return v / factor
		}
		return v * factor
	}
	mf := scale(float64(iv.Months))
	df := scale(float64(iv.Days))
	if math.IsNaN(mf) || math.Abs(mf) > math.MaxInt32 || math.Abs(df) > math.MaxInt32 {
		return types.Null, errorf(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	month := int32(mf)
	day := int32(df)
	monthRemDays := tsround((mf - float64(month)) * 30)
	secRem := tsround((df - float64(day) + monthRemDays - float64(int32(monthRemDays))) * 86400)
	if math.Abs(secRem) >= 86400 {
		day += int32(secRem / 86400)
		secRem -= float64(int32(secRem/86400)) * 86400
	}
	day += int32(monthRemDays)
	t := math.RoundToEven(scale(float64(iv.Micros)) + secRem*1e6)
	if math.IsNaN(t) || t >= 9.223372036854775807e18 || t < -9.223372036854775808e18 {
		return types.Null, errorf(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	return types.NewInterval(types.IntervalValue{Months: month, Days: day, Micros: int64(t)}), nil
}

// justifyHoursDiff turns a difference of instants into an interval of days
// and microseconds, as timestamp_mi does.
func justifyHoursDiff(diff int64) types.Datum {
	return types.NewInterval(types.IntervalValue{Days: int32(diff / microsPerDay), Micros: diff % microsPerDay})
}

func registerDatetimeArithmetic(r *Registry) {
	K := func(ks ...types.Kind) []types.Kind { return ks }
	add := func(name string, params []types.Kind, res types.Kind, f func(ctx *Context, a, b types.Datum) (types.Datum, error)) {
		r.Add(&Func{Name: name, Params: params, Infix: true, Strict: true, ResultKind: res,
			Eval: func(ctx *Context, args []types.Datum) (types.Datum, error) { return f(ctx, args[0], args[1]) }})
	}
	const (
		kDate  = types.KindDate
		kTime  = types.KindTime
		kTS    = types.KindTimestamp
		kTSTZ  = types.KindTimestampTZ
		kIv    = types.KindInterval
		kInt   = types.KindInt32
		kFloat = types.KindFloat64
	)
	dateAddDays := func(d int32, n int64) (types.Datum, error) {
		if d == types.DateInfinity || d == types.DateNegInfinity {
			return types.NewDate(d), nil
		}
		v := int64(d) + n
		if v < int64(types.MinDate) || v > int64(types.MaxDate) {
			return types.Null, errorf(sqlerr.DatetimeFieldOverflow, "date out of range")
		}
		return types.NewDate(int32(v)), nil
	}
	dateTS := func(d int32) int64 {
		switch d {
		case types.DateInfinity:
			return types.TimestampInfinity
		case types.DateNegInfinity:
			return types.TimestampNegInfinity
		}
		return int64(d) * microsPerDay
	}
	add("+", K(kDate, kInt), kDate, func(_ *Context, a, b types.Datum) (types.Datum, error) { return dateAddDays(a.Date(), b.Int64()) })
	add("+", K(kInt, kDate), kDate, func(_ *Context, a, b types.Datum) (types.Datum, error) { return dateAddDays(b.Date(), a.Int64()) })
	add("-", K(kDate, kInt), kDate, func(_ *Context, a, b types.Datum) (types.Datum, error) { return dateAddDays(a.Date(), -b.Int64()) })
	add("-", K(kDate, kDate), kInt, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		x, y := a.Date(), b.Date()
		if x == types.DateInfinity || x == types.DateNegInfinity || y == types.DateInfinity || y == types.DateNegInfinity {
			return types.Null, errorf(sqlerr.DatetimeFieldOverflow, "cannot subtract infinite dates")
		}
		return checkedInt(types.KindInt32, '-', int64(x), int64(y))
	})
	add("+", K(kDate, kTime), kTS, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		us := dateTS(a.Date())
		if isInfTimestamp(us) {
			return types.NewTimestamp(us), nil
		}
		return types.NewTimestamp(us + b.Micros()), checkTimestamp(us + b.Micros())
	})
	add("+", K(kDate, kIv), kTS, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		us, err := addInterval(dateTS(a.Date()), b.Interval(), time.UTC)
		return types.NewTimestamp(us), err
	})
	add("-", K(kDate, kIv), kTS, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		neg, err := intervalNeg(b.Interval())
		if err != nil {
			return types.Null, err
		}
		us, err := addInterval(dateTS(a.Date()), neg.Interval(), time.UTC)
		return types.NewTimestamp(us), err
	})
	for _, k := range []types.Kind{kTS, kTSTZ} {
		k := k
		mk := func(us int64) types.Datum {
			if k == kTS {
				return types.NewTimestamp(us)
			}
			return types.NewTimestampTZ(us)
		}
		loc := func(ctx *Context) *time.Location {
			if k == kTS {
				return time.UTC
			}
			return ctx.Location()
		}
		add("+", K(k, kIv), k, func(ctx *Context, a, b types.Datum) (types.Datum, error) {
			us, err := addInterval(a.Micros(), b.Interval(), loc(ctx))
			return mk(us), err
		})
		add("+", K(kIv, k), k, func(ctx *Context, a, b types.Datum) (types.Datum, error) {
			us, err := addInterval(b.Micros(), a.Interval(), loc(ctx))
			return mk(us), err
		})
		add("-", K(k, kIv), k, func(ctx *Context, a, b types.Datum) (types.Datum, error) {
			neg, err := intervalNeg(b.Interval())
			if err != nil {
				return types.Null, err
			}
			us, err := addInterval(a.Micros(), neg.Interval(), loc(ctx))
			return mk(us), err
		})
		add("-", K(k, k), kIv, func(_ *Context, a, b types.Datum) (types.Datum, error) {
			x, y := a.Micros(), b.Micros()
			if isInfTimestamp(x) || isInfTimestamp(y) {
				return types.Null, errorf(sqlerr.DatetimeFieldOverflow, "cannot subtract infinite timestamps")
			}
			return justifyHoursDiff(x - y), nil
		})
	}
	add("+", K(kIv, kIv), kIv, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		return intervalAdd(a.Interval(), b.Interval(), 1)
	})
	add("-", K(kIv, kIv), kIv, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		return intervalAdd(a.Interval(), b.Interval(), -1)
	})
	add("*", K(kIv, kFloat), kIv, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		return intervalScale(a.Interval(), b.Float64(), false)
	})
	add("*", K(kFloat, kIv), kIv, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		return intervalScale(b.Interval(), a.Float64(), false)
	})
	add("/", K(kIv, kFloat), kIv, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		if b.Float64() == 0 {
			return types.Null, errDivisionByZero
		}
		return intervalScale(a.Interval(), b.Float64(), true)
	})
	timeAdd := func(t int64, iv types.IntervalValue, sign int64) types.Datum {
		v := (t + sign*(iv.Micros%microsPerDay)) % microsPerDay
		if v < 0 {
			v += microsPerDay
		}
		return types.NewTime(v)
	}
	add("+", K(kTime, kIv), kTime, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		return timeAdd(a.Micros(), b.Interval(), 1), nil
	})
	add("-", K(kTime, kIv), kTime, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		return timeAdd(a.Micros(), b.Interval(), -1), nil
	})
	add("-", K(kTime, kTime), kIv, func(_ *Context, a, b types.Datum) (types.Datum, error) {
		return types.NewInterval(types.IntervalValue{Micros: a.Micros() - b.Micros()}), nil
	})
}
