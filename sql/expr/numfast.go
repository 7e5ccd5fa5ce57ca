package expr

import (
	"math/bits"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
)

// NUMERIC arithmetic on small values without apd (invariant
// small-numeric-exact): NUMERIC +, - and * of finite operands whose
// coefficients fit in 64 bits give, when the exact result's coefficient
// fits in 64 bits too, the same decimal as the apd path of numericArith
// (same coefficient, exponent and sign, zero never negative), computed
// with integer instructions and one allocation instead of apd's
// arbitrary-precision calls and three. Any other case (NaN, infinities,
// wider coefficients, a result that would need more than 64 bits,
// exponents far from zero) falls back to apd. Nexmark's 0.908 * price,
// a BIGINT cast to NUMERIC and scaled by a constant, is the case this is
// for; TestSmallNumericMatchesApd compares both paths over random and
// edge-case values.

// smallExpLimit bounds the operand exponents the fast path takes: with
// |exponent| at most this, neither the sum of two exponents nor an
// adjusted exponent (exponent plus digits) comes near apd's limits of
// ±100000, where the apd path reports overflow or underflow.
const smallExpLimit = 10000

// smallDec is a finite decimal (-1)^neg * coeff * 10^exp.
type smallDec struct {
	coeff uint64
	exp   int32
	neg   bool
}

// smallOf returns d as a smallDec; ok is false when d is not finite, its
// coefficient needs more than 64 bits or its exponent is out of range.
func smallOf(d *apd.Decimal) (smallDec, bool) {
	if d.Form != apd.Finite || !d.Coeff.IsUint64() || d.Exponent > smallExpLimit || d.Exponent < -smallExpLimit {
		return smallDec{}, false
	}
	return smallDec{coeff: d.Coeff.Uint64(), exp: d.Exponent, neg: d.Negative}, true
}

// smallOfInt returns v as a smallDec, as apd.New(v, 0) (the cast of an
// integer to NUMERIC) holds it.
func smallOfInt(v int64) smallDec {
	if v < 0 {
		return smallDec{coeff: uint64(-v), neg: true} // -MinInt64 wraps to 1<<63, its magnitude
	}
	return smallDec{coeff: uint64(v)}
}

// pow10 are the powers of ten that fit in a uint64.
var pow10 = func() (p [20]uint64) {
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// smallArith computes a op b for op '+', '-' or '*'; ok is false when the
// exact result does not fit a smallDec (the caller then uses apd).
func smallArith(op byte, a, b smallDec) (smallDec, bool) {
	switch op {
	case '*':
		hi, lo := bits.Mul64(a.coeff, b.coeff)
		if hi != 0 {
			return smallDec{}, false
		}
		return smallDec{coeff: lo, exp: a.exp + b.exp, neg: a.neg != b.neg && lo != 0}, true
	case '+', '-':
		if op == '-' {
			b.neg = !b.neg
		}
		// Bring both to the smaller exponent, as apd's upscale does.
		if a.exp != b.exp {
			if a.exp < b.exp {
				a, b = b, a
			}
			shift := int(a.exp - b.exp)
			if shift >= len(pow10) {
				return smallDec{}, false
			}
			hi, lo := bits.Mul64(a.coeff, pow10[shift])
			if hi != 0 {
				return smallDec{}, false
			}
			a.coeff, a.exp = lo, b.exp
		}
		r := smallDec{exp: a.exp, neg: a.neg}
		if a.neg == b.neg {
			var carry uint64
			r.coeff, carry = bits.Add64(a.coeff, b.coeff, 0)
			if carry != 0 {
				return smallDec{}, false
			}
		} else if a.coeff >= b.coeff {
			r.coeff = a.coeff - b.coeff
		} else {
			r.coeff, r.neg = b.coeff-a.coeff, b.neg
		}
		if r.coeff == 0 {
			r.neg = false
		}
		return r, true
	}
	return smallDec{}, false
}

// datum returns s as a NUMERIC datum.
func (s smallDec) datum() types.Datum {
	var d apd.Decimal
	d.Form, d.Negative, d.Exponent = apd.Finite, s.neg, s.exp
	d.Coeff.SetUint64(s.coeff)
	return types.NewNumeric(&d)
}

// numericArithFast is numericArith for + - * when both operands and the
// result are small (see smallArith); ok is false otherwise.
func numericArithFast(op byte, a, b *apd.Decimal) (types.Datum, bool) {
	if op != '+' && op != '-' && op != '*' {
		return types.Null, false
	}
	x, ok := smallOf(a)
	if !ok {
		return types.Null, false
	}
	y, ok := smallOf(b)
	if !ok {
		return types.Null, false
	}
	r, ok := smallArith(op, x, y)
	if !ok {
		return types.Null, false
	}
	return r.datum(), true
}
