package olap

import (
	"sort"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
)

// [verify-quotient] A quotient has no single exact decimal value: the
// view's job divides NUMERIC as PostgreSQL does (exactly, to a scale of at
// least 16 significant digits, or to the scale the column declares),
// while DuckDB divides DECIMAL in DOUBLE PRECISION, casts an
// unconstrained NUMERIC to DECIMAL(18,3), and divides the HUGEINT sum of
// a BIGINT column as an integer. The two sides of Verify then write the
// same quotient to different scales, or round it once apart. For a
// NUMERIC column of the view that holds quotients (the engine marks the
// columns whose expression divides or takes avg: Input.Quotients), a
// computed value and a stored one that Verify found different are equal
// when they differ by at most one unit in the last place of the less
// precise of the two:
//
//   - a value's precision is the scale its column declares (NUMERIC(p,s):
//     the view's own scale, to which both sides are cast), else the scale
//     it is written with (18.5000000000000000: 16; DuckDB's 18: 0);
//   - a computed value is at most as precise as DOUBLE PRECISION, whose
//     15 significant digits survive a decimal round trip (DuckDB divided
//     in it), and a value both sides rounded to approxDigits
//     ([verify-approx]) is as precise as those digits;
//   - one unit, not half: either side may be rounded (or truncated, for
//     the integer division) from its own inexact quotient, so two
//     roundings of the same quotient to one scale can land one unit
//     apart (1.025 exactly gives 1.03, DuckDB's double 1.02499... gives
//     1.02).
//
// Rows pair up only when every other column is equal, as Compare says,
// and each row pairs once. Columns that hold no quotient (integers,
// exact decimals, sums) and quotient columns of other types (DOUBLE
// PRECISION has [verify-approx]) compare exactly; so does a quotient
// column everywhere except in the rows that the exact comparison left
// over.

// doubleDigits are the significant decimal digits DOUBLE PRECISION holds
// exactly (DBL_DIG).
const doubleDigits = 15

// quotientPrecision says how a column is compared ([verify-quotient]).
type quotientPrecision struct {
	// on: the column holds quotients; otherwise it compares exactly.
	on bool
	// stored and computed are the scales the column's values are precise
	// to on each side, -1 for the scale each value is written with.
	stored, computed int
	// digits, when not 0, is the number of significant digits both sides
	// were rounded to ([verify-approx]).
	digits int
}

// msd is the power of ten of d's most significant digit; ok is false for
// zero and non-finite values.
func msd(d *apd.Decimal) (int, bool) {
	if d.Form != apd.Finite || d.IsZero() {
		return 0, false
	}
	return int(d.NumDigits()) + int(d.Exponent) - 1, true
}

// precisionOf is the scale to which v, a value of a column compared with
// p, is precise: declared (-1: v's own scale), at most digits
// significant digits when digits is not 0.
func precisionOf(v *apd.Decimal, declared, digits int) int {
	s := declared
	if s < 0 {
		s = max(0, -int(v.Exponent))
	}
	if m, ok := msd(v); ok && digits > 0 {
		s = min(s, digits-1-m)
	}
	return s
}

// within tells whether computed value c and stored value v of a column
// compared with p are equal to the precision of the less precise of the
// two ([verify-quotient]). Values that are not finite NUMERICs (NULL,
// NaN, infinities, a float) are equal only when Compare says so.
func within(c, v types.Datum, p quotientPrecision) bool {
	if types.Compare(c, v) == 0 {
		return true
	}
	if c.IsNull() || v.IsNull() || c.Kind() != types.KindNumeric || v.Kind() != types.KindNumeric {
		return false
	}
	cd, vd := c.Decimal(), v.Decimal()
	if cd.Form != apd.Finite || vd.Form != apd.Finite {
		return false
	}
	cDigits, vDigits := doubleDigits, 0
	if p.digits > 0 {
		cDigits, vDigits = min(doubleDigits, p.digits), p.digits
	}
	s := min(precisionOf(cd, p.computed, cDigits), precisionOf(vd, p.stored, vDigits))
	var diff apd.Decimal
	if _, err := apd.BaseContext.WithPrecision(100).Sub(&diff, cd, vd); err != nil {
		return false
	}
	diff.Abs(&diff)
	return diff.Cmp(apd.New(1, int32(-s))) <= 0
}

// matchQuotients pairs the computed rows Verify found missing from the
// view with the stored rows it found extra that are equal by within in
// every quotient column and by Compare in the others, and returns the
// rows left unpaired (counts lowered by the pairs).
func matchQuotients(missing, extra []DiffRow, prec []quotientPrecision) ([]DiffRow, []DiffRow) {
	var exact []int
	for i, p := range prec {
		if !p.on {
			exact = append(exact, i)
		}
	}
	cmpExact := func(a, b types.Row) int {
		if len(exact) == 0 {
			return 0
		}
		return types.CompareRows(a, b, exact)
	}
	// extra is sorted by every column, so by the exact ones only where
	// they come first: sort it by them.
	sort.SliceStable(extra, func(i, j int) bool { return cmpExact(extra[i].Row, extra[j].Row) < 0 })
	for mi := range missing {
		m := &missing[mi]
		lo := sort.Search(len(extra), func(j int) bool { return cmpExact(extra[j].Row, m.Row) >= 0 })
		for j := lo; j < len(extra) && m.Count > 0 && cmpExact(extra[j].Row, m.Row) == 0; j++ {
			x := &extra[j]
			if x.Count == 0 || !rowWithin(m.Row, x.Row, prec) {
				continue
			}
			n := min(m.Count, x.Count)
			m.Count -= n
			x.Count -= n
		}
	}
	left := func(rs []DiffRow) []DiffRow {
		var out []DiffRow
		for _, r := range rs {
			if r.Count > 0 {
				out = append(out, r)
			}
		}
		sort.SliceStable(out, func(i, j int) bool { return types.CompareRows(out[i].Row, out[j].Row, nil) < 0 })
		return out
	}
	return left(missing), left(extra)
}

// rowWithin tells whether computed row c and stored row v are equal in
// every quotient column by within.
func rowWithin(c, v types.Row, prec []quotientPrecision) bool {
	for i, p := range prec {
		if p.on && !within(c[i], v[i], p) {
			return false
		}
	}
	return true
}
