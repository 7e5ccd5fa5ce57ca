package olap

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// DiffRow is a row with the number of times it is missing or extra.
type DiffRow struct {
	Row   types.Row
	Count int
}

// Diff is the outcome of Verify: the rows in which a stored view and the
// recomputation of its query differ, as multisets.
type Diff struct {
	// View is the stored input's name; Epoch the epoch both were read at.
	View  string
	Epoch base.Epoch
	// Computed and Stored count the rows of the recomputation and of the
	// stored view.
	Computed, Stored int
	// Missing are rows the query gives that the stored view lacks (Count:
	// how many copies are missing); Extra are rows the stored view holds
	// beyond what the query gives. Both are sorted.
	Missing, Extra []DiffRow
}

// Empty reports whether the stored view equals the recomputation.
func (d Diff) Empty() bool { return len(d.Missing) == 0 && len(d.Extra) == 0 }

// maxDiffLines bounds the rows String prints on each side.
const maxDiffLines = 50

// String prints the difference for people: a summary line, then "- " for
// each missing row and "+ " for each extra one, with "×n" when a row
// differs more than once; at most 50 rows a side, then how many more.
func (d Diff) String() string {
	var b strings.Builder
	if d.Empty() {
		fmt.Fprintf(&b, "view %s at epoch %d: equal (%d rows)\n", d.View, d.Epoch, d.Stored)
		return b.String()
	}
	fmt.Fprintf(&b, "view %s at epoch %d: %d rows missing, %d extra (query gives %d rows, view holds %d)\n",
		d.View, d.Epoch, countRows(d.Missing), countRows(d.Extra), d.Computed, d.Stored)
	line := func(sign string, r DiffRow) {
		b.WriteString(sign)
		b.WriteString(formatRow(r.Row))
		if r.Count > 1 {
			fmt.Fprintf(&b, " ×%d", r.Count)
		}
		b.WriteByte('\n')
	}
	side := func(sign string, rs []DiffRow) {
		for i, r := range rs {
			if i == maxDiffLines {
				fmt.Fprintf(&b, "%s... and %d more distinct rows\n", sign, len(rs)-i)
				return
			}
			line(sign, r)
		}
	}
	side("- missing ", d.Missing)
	side("+ extra   ", d.Extra)
	return b.String()
}

func countRows(rs []DiffRow) int {
	n := 0
	for _, r := range rs {
		n += r.Count
	}
	return n
}

// formatRow prints a row as (v1, v2, ...) with NULL spelled out.
func formatRow(r types.Row) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range r {
		if i > 0 {
			b.WriteString(", ")
		}
		if d.IsNull() {
			b.WriteString("NULL")
			continue
		}
		s := types.FormatText(d, nil)
		if d.Kind() == types.KindText || d.Kind() == types.KindVarchar || d.Kind() == types.KindChar {
			s = quoteString(s)
		}
		b.WriteString(s)
	}
	b.WriteByte(')')
	return b.String()
}

// Verify recomputes a view: it runs viewQuery over inputs (each at its
// epoch) and compares the result, as a multiset, with the stored view
// table read at stored.Epoch ([verify-multiset]). Computed values are cast
// to the stored columns' types first, so NUMERIC 1.5 equals 1.50, -0.0
// equals 0 and a DuckDB HUGEINT sum equals a BIGINT column, by
// types.Compare. A column count or type that cannot be reconciled is an
// error, not a difference.
func (e *Engine) Verify(ctx context.Context, viewQuery string, inputs []Input, stored Input) (Diff, error) {
	return e.VerifyIn(ctx, nil, viewQuery, inputs, stored)
}

// VerifyIn is Verify with the query evaluated in time zone loc (nil:
// UTC), the one the view's job evaluates in.
func (e *Engine) VerifyIn(ctx context.Context, loc *time.Location, viewQuery string, inputs []Input, stored Input) (Diff, error) {
	d := Diff{View: stored.Name, Epoch: stored.Epoch}
	if stored.Table == nil {
		return d, sqlerr.New(sqlerr.InvalidParameterValue, "view %s has no table", stored.Name)
	}
	res, err := e.Query(ctx, inputs, viewQuery, QueryOptions{Location: loc})
	if err != nil {
		return d, err
	}
	sc, err := stored.Table.Schema()
	if err != nil {
		return d, sqlerr.Wrap(sqlerr.IOError, fmt.Errorf("view %s: %w", stored.Name, err))
	}
	want, err := stored.Table.ReadAtEpoch(stored.Epoch)
	if err != nil {
		return d, sqlerr.Wrap(sqlerr.ObjectNotInPrerequisiteState, fmt.Errorf("view %s: %w", stored.Name, err))
	}
	// Rows read with an older schema are shorter: pad with NULLs.
	for i, r := range want {
		for len(r) < len(sc.Fields) {
			r = append(r, types.Null)
		}
		want[i] = r
	}
	fields := sc.Fields
	if stored.Multiset {
		// [multiset-inputs] Each stored row as often as its last column
		// says.
		fields = fields[:len(fields)-1]
		want = ExpandMultiset(want)
	}
	if len(res.Columns) != len(fields) {
		return d, sqlerr.New(sqlerr.DatatypeMismatch, "view %s has %d columns, its query gives %d", stored.Name, len(fields), len(res.Columns))
	}
	got := res.Rows
	isFloat := func(t types.Type) bool { return t.Kind == types.KindFloat64 || t.Kind == types.KindFloat32 }
	// prec says, per column, how precise its values are on each side,
	// for the columns of quotients ([verify-quotient]).
	prec := make([]quotientPrecision, len(fields))
	for i, f := range fields {
		ct := res.Columns[i].Type
		if i < len(stored.Quotients) && stored.Quotients[i] && f.Type.Kind == types.KindNumeric {
			prec[i] = quotientPrecision{on: true, stored: -1, computed: -1}
			if f.Type.Precision > 0 {
				prec[i].stored, prec[i].computed = int(f.Type.Scale), int(f.Type.Scale)
			} else if ct.Kind == types.KindNumeric && ct.Precision > 0 {
				prec[i].computed = int(ct.Scale)
			}
		}
		avgOfInts := ct.Kind == types.KindNumeric && ct.Scale == avgScale && ct.Precision == maxDecimalWidth
		if (isFloat(ct) || avgOfInts) && (f.Type == types.Numeric || isFloat(f.Type)) {
			prec[i].digits = approxDigits
			// [verify-approx] DuckDB computes some exact aggregates
			// (avg of floats and decimals) and NUMERIC division in
			// DOUBLE PRECISION, avg of integers at 16 digits where
			// PostgreSQL's scale depends on the mean's size
			// ([avg-numeric]), and sums of floats in another order
			// than the view's job: compare both sides at
			// approxDigits significant digits.
			for _, rows := range [][]types.Row{got, want} {
				for _, r := range rows {
					if r[i], err = approx(r[i]); err != nil {
						return d, sqlerr.Wrap(sqlerr.DatatypeMismatch, fmt.Errorf("view %s column %s: %w", stored.Name, f.Name, err))
					}
				}
			}
			continue
		}
		if ct == f.Type {
			continue
		}
		if !types.CanCast(res.Columns[i].Type, f.Type, true) {
			return d, sqlerr.New(sqlerr.DatatypeMismatch, "view %s column %s is %s, its query gives %s", stored.Name, f.Name, f.Type, res.Columns[i].Type)
		}
		for _, r := range got {
			if r[i], err = types.Cast(r[i], f.Type, types.CastContext{Explicit: true}); err != nil {
				return d, sqlerr.Wrap(sqlerr.DatatypeMismatch, fmt.Errorf("view %s column %s: %w", stored.Name, f.Name, err))
			}
		}
	}
	d.Computed, d.Stored = len(got), len(want)
	d.Missing, d.Extra = multisetDiff(got, want)
	if slices.ContainsFunc(prec, func(p quotientPrecision) bool { return p.on }) {
		d.Missing, d.Extra = matchQuotients(d.Missing, d.Extra, prec)
	}
	return d, nil
}

// multisetDiff returns the rows of a not in b and of b not in a, counted.
func multisetDiff(a, b []types.Row) (onlyA, onlyB []DiffRow) {
	less := func(rs []types.Row) func(i, j int) bool {
		return func(i, j int) bool { return types.CompareRows(rs[i], rs[j], nil) < 0 }
	}
	sort.Slice(a, less(a))
	sort.Slice(b, less(b))
	run := func(rs []types.Row, i int) int {
		j := i + 1
		for j < len(rs) && types.CompareRows(rs[i], rs[j], nil) == 0 {
			j++
		}
		return j - i
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		c := 0
		switch {
		case i == len(a):
			c = 1
		case j == len(b):
			c = -1
		default:
			c = types.CompareRows(a[i], b[j], nil)
		}
		switch {
		case c < 0:
			n := run(a, i)
			onlyA = append(onlyA, DiffRow{Row: a[i], Count: n})
			i += n
		case c > 0:
			n := run(b, j)
			onlyB = append(onlyB, DiffRow{Row: b[j], Count: n})
			j += n
		default:
			na, nb := run(a, i), run(b, j)
			if na > nb {
				onlyA = append(onlyA, DiffRow{Row: a[i], Count: na - nb})
			} else if nb > na {
				onlyB = append(onlyB, DiffRow{Row: b[j], Count: nb - na})
			}
			i += na
			j += nb
		}
	}
	return onlyA, onlyB
}

// approxDigits is the number of significant digits at which [verify-approx]
// compares numbers computed in floating point: double precision carries
// 15 to 17, and a sum in another order or a quotient rounded once more
// moves the last two or three (the Nexmark comparison with DuckDB uses
// the same 12).
const approxDigits = 12

// approx rounds a number to DOUBLE PRECISION and then to approxDigits
// significant digits, returned as NUMERIC (NULL stays NULL; infinities
// and NaN keep their float value).
func approx(v types.Datum) (types.Datum, error) {
	if v.IsNull() {
		return v, nil
	}
	f, err := types.Cast(v, types.Float64, types.CastContext{})
	if err != nil {
		return types.Null, err
	}
	x := f.Float64()
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return f, nil
	}
	return types.Cast(types.NewText(strconv.FormatFloat(x, 'g', approxDigits, 64)), types.Numeric, types.CastContext{Explicit: true})
}

// ExpandMultiset turns the stored rows of a multiset view (each with its
// multiplicity, a BIGINT, as its last column) into the view's rows: each
// row as many times as its multiplicity, without that column. Rows with a
// multiplicity below one (never stored: the view's aggregate deletes a
// row whose count falls to zero) or NULL give nothing.
func ExpandMultiset(stored []types.Row) []types.Row {
	n := 0
	for _, r := range stored {
		if c := r[len(r)-1]; !c.IsNull() && c.Int64() > 0 {
			n += int(c.Int64())
		}
	}
	out := make([]types.Row, 0, n)
	for _, r := range stored {
		c := r[len(r)-1]
		if c.IsNull() {
			continue
		}
		for range c.Int64() {
			out = append(out, r[:len(r)-1])
		}
	}
	return out
}
