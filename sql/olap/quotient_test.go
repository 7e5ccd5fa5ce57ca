package olap

import (
	"context"
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// TestVerifyQuotients: a view column of quotients that DuckDB computes at
// another scale or rounds once apart ([verify-quotient]) is equal to the
// view's when the two agree to the precision of the less precise; a value
// further off, or a column that holds no quotient, still differs.
func TestVerifyQuotients(t *testing.T) {
	e := newEngine(t)
	fs := fileio.NewMem()
	num2, _ := types.NumericType(10, 2)
	prices, err := table.Create(fs, "wh/dev/prices", []schema.Field{
		{Name: "k", Type: types.Int64}, {Name: "x", Type: num2}, {Name: "i", Type: types.Int64},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := prices.NewWriter("ingest")
	p := func(k int64, x string, i int64) change { return ins(types.Row{i64(k), num(x), i64(i)}) }
	commitEpoch(t, prices, pw, 1, p(1, "2.05", 10), p(1, "0.29", 27), p(2, "10.00", 7))
	view := func(name string, cols []schema.Field, rows ...types.Row) Input {
		tb, err := table.Create(fs, "wh/dev/"+name, cols, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		w, _ := tb.NewWriter("view")
		var cs []change
		for _, r := range rows {
			cs = append(cs, ins(r))
		}
		commitEpoch(t, tb, w, 1, cs...)
		return Input{Name: name, Table: tb, Epoch: 1}
	}
	in := []Input{{Name: "prices", Table: prices, Epoch: 1}}
	quot := []bool{false, true}
	for n, tc := range []struct {
		name, query string
		cols        []schema.Field
		rows        []types.Row
		quotients   []bool
		differs     bool
	}{
		// PostgreSQL rounds 1.025 and 0.145 up; DuckDB's doubles
		// (1.02499..., 0.14499...) round down.
		{"rounded", "SELECT k, CAST(x / 2 AS NUMERIC(10,2)) AS r FROM prices",
			[]schema.Field{{Name: "k", Type: types.Int64}, {Name: "r", Type: num2}},
			[]types.Row{{i64(1), num("1.03")}, {i64(1), num("0.15")}, {i64(2), num("5.00")}}, quot, false},
		// The same without the mark of a quotient compares exactly.
		{"rounded, not marked", "SELECT k, CAST(x / 2 AS NUMERIC(10,2)) AS r FROM prices",
			[]schema.Field{{Name: "k", Type: types.Int64}, {Name: "r", Type: num2}},
			[]types.Row{{i64(1), num("1.03")}, {i64(1), num("0.15")}, {i64(2), num("5.00")}}, nil, true},
		// Two units off at the declared scale is a difference.
		{"two units off", "SELECT k, CAST(x / 2 AS NUMERIC(10,2)) AS r FROM prices",
			[]schema.Field{{Name: "k", Type: types.Int64}, {Name: "r", Type: num2}},
			[]types.Row{{i64(1), num("1.04")}, {i64(1), num("0.15")}, {i64(2), num("5.00")}}, quot, true},
		// DuckDB casts to unconstrained NUMERIC as DECIMAL(18,3).
		{"three digits", "SELECT k, (x / 3)::numeric AS r FROM prices",
			[]schema.Field{{Name: "k", Type: types.Int64}, {Name: "r", Type: types.Numeric}},
			[]types.Row{{i64(1), num("0.68333333333333333333")}, {i64(1), num("0.09666666666666666667")}, {i64(2), num("3.3333333333333333")}}, quot, false},
		{"off at the third digit", "SELECT k, (x / 3)::numeric AS r FROM prices",
			[]schema.Field{{Name: "k", Type: types.Int64}, {Name: "r", Type: types.Numeric}},
			[]types.Row{{i64(1), num("0.68533333333333333333")}, {i64(1), num("0.09666666666666666667")}, {i64(2), num("3.3333333333333333")}}, quot, true},
		// sum(bigint) is NUMERIC in PostgreSQL, DuckDB's HUGEINT divides
		// as an integer.
		{"integer quotient", "SELECT k, sum(i) / count(*) AS r FROM prices GROUP BY k",
			[]schema.Field{{Name: "k", Type: types.Int64}, {Name: "r", Type: types.Numeric}},
			[]types.Row{{i64(1), num("18.5000000000000000")}, {i64(2), num("7.0000000000000000")}}, quot, false},
		{"off by one", "SELECT k, sum(i) / count(*) AS r FROM prices GROUP BY k",
			[]schema.Field{{Name: "k", Type: types.Int64}, {Name: "r", Type: types.Numeric}},
			[]types.Row{{i64(1), num("19.5000000000000000")}, {i64(2), num("7.0000000000000000")}}, quot, true},
		// A key that differs is a difference whatever the quotient.
		{"other key", "SELECT k, CAST(x / 2 AS NUMERIC(10,2)) AS r FROM prices",
			[]schema.Field{{Name: "k", Type: types.Int64}, {Name: "r", Type: num2}},
			[]types.Row{{i64(3), num("1.03")}, {i64(1), num("0.15")}, {i64(2), num("5.00")}}, quot, true},
	} {
		stored := view(fmt.Sprintf("v%d", n), tc.cols, tc.rows...)
		stored.Quotients = tc.quotients
		d, err := e.Verify(context.Background(), tc.query, in, stored)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if d.Empty() == tc.differs {
			t.Errorf("%s: differs %v, want %v:\n%s", tc.name, !d.Empty(), tc.differs, d)
		}
	}
}

func TestWithin(t *testing.T) {
	declared := func(s int) quotientPrecision { return quotientPrecision{on: true, stored: s, computed: s} }
	own := quotientPrecision{on: true, stored: -1, computed: -1}
	for _, tc := range []struct {
		computed, stored string
		p                quotientPrecision
		want             bool
	}{
		{"1.02", "1.03", declared(2), true},
		{"1.02", "1.04", declared(2), false},
		{"3.333", "3.3333333333333333", own, true},
		{"3.334", "3.3333333333333333", own, true},
		{"3.335", "3.3333333333333333", own, false},
		{"18", "18.5000000000000000", own, true},
		{"18", "19.5000000000000000", own, false},
		// A computed value holds 15 significant digits (DOUBLE PRECISION).
		{"30867.4750000000008192", "30867.4750000000000000", declared(16), true},
		{"30867.4751000000000000", "30867.4750000000000000", declared(16), false},
		{"0.0000000000000000123", "0.0000000000000000124", own, true},
		// Both rounded to 12 significant digits ([verify-approx]).
		{"0.123456789013", "0.123456789012", quotientPrecision{on: true, stored: -1, computed: -1, digits: 12}, true},
		{"0.123456789014", "0.123456789012", quotientPrecision{on: true, stored: -1, computed: -1, digits: 12}, false},
	} {
		if got := within(num(tc.computed), num(tc.stored), tc.p); got != tc.want {
			t.Errorf("within(%s, %s, %+v) = %v, want %v", tc.computed, tc.stored, tc.p, got, tc.want)
		}
	}
	if within(types.Null, num("1"), own) || !within(types.Null, types.Null, own) {
		t.Error("NULL is equal to NULL only")
	}
}
