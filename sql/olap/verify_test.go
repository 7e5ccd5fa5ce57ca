package olap

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

const totalsQuery = `SELECT account, sum(amount) AS total, avg(amount) AS mean, 0.0::DOUBLE AS z FROM orders GROUP BY account`

// verifyTables makes an append table orders and a primary-key view table
// totals that holds totalsQuery's result, written at epochs 1 and 2 with
// values spelled differently from what DuckDB computes (1.5 stored as
// NUMERIC(10,2) 1.50, 0 as -0.0).
func verifyTables(t *testing.T) (orders, totals *table.Table) {
	t.Helper()
	fs := fileio.NewMem()
	var err error
	orders, err = table.Create(fs, "wh/dev/orders", []schema.Field{
		{Name: "account", Type: types.Int64}, {Name: "amount", Type: types.Int32},
	}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	num2, _ := types.NumericType(10, 2)
	totals, err = table.Create(fs, "wh/dev/totals", []schema.Field{
		{Name: "account", Type: types.Int64}, {Name: "total", Type: types.Int64},
		{Name: "mean", Type: num2}, {Name: "z", Type: types.Float64},
	}, []string{"account"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ow, _ := orders.NewWriter("ingest")
	o := func(acct int64, amt int32) change { return ins(types.Row{i64(acct), types.NewInt32(amt)}) }
	commitEpoch(t, orders, ow, 1, o(1, 1), o(1, 2), o(2, 5))
	commitEpoch(t, orders, ow, 2, o(2, 7), o(3, 4))
	tw, _ := totals.NewWriter("view")
	tot := func(acct, total int64, mean string) types.Row {
		return types.Row{i64(acct), i64(total), num(mean), types.NewFloat64(math.Copysign(0, -1))}
	}
	commitEpoch(t, totals, tw, 1, ins(tot(1, 3, "1.50")), ins(tot(2, 5, "5.00")))
	commitEpoch(t, totals, tw, 2, upd(tot(2, 12, "6.00")), ins(tot(3, 4, "4.00")))
	return orders, totals
}

func TestVerifyPassesOnEqualData(t *testing.T) {
	e := newEngine(t)
	orders, totals := verifyTables(t)
	for ep := base.Epoch(1); ep <= 2; ep++ {
		d, err := e.Verify(context.Background(), totalsQuery, []Input{{Name: "orders", Table: orders, Epoch: ep}}, Input{Name: "totals", Table: totals, Epoch: ep})
		if err != nil {
			t.Fatal(err)
		}
		if !d.Empty() {
			t.Errorf("epoch %d: %s", ep, d)
		}
		if want := map[base.Epoch]int{1: 2, 2: 3}[ep]; d.Stored != want || d.Computed != want {
			t.Errorf("epoch %d: stored %d computed %d, want %d", ep, d.Stored, d.Computed, want)
		}
	}
	// Reading the inputs at another epoch than the view is a difference.
	d, err := e.Verify(context.Background(), totalsQuery, []Input{{Name: "orders", Table: orders, Epoch: 2}}, Input{Name: "totals", Table: totals, Epoch: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d.Empty() || len(d.Missing) != 2 || len(d.Extra) != 1 {
		t.Errorf("mixed epochs:\n%s", d)
	}
}

func TestVerifyFindsInjectedDifferences(t *testing.T) {
	e := newEngine(t)
	orders, totals := verifyTables(t)
	// Epoch 3: the view job goes wrong: account 3's total is off, account
	// 9 appears from nowhere, account 1 disappears.
	tw, _ := totals.NewWriter("bad")
	ow, _ := orders.NewWriter("ingest2")
	commitEpoch(t, orders, ow, 3)
	commitEpoch(t, totals, tw, 3,
		upd(types.Row{i64(3), i64(5), num("4.00"), types.NewFloat64(0)}),
		ins(types.Row{i64(9), i64(1), num("1"), types.NewFloat64(0)}),
		del(types.Row{i64(1), i64(0), num("0"), types.NewFloat64(0)}))
	d, err := e.Verify(context.Background(), totalsQuery, []Input{{Name: "orders", Table: orders, Epoch: 3}}, Input{Name: "totals", Table: totals, Epoch: 3})
	if err != nil {
		t.Fatal(err)
	}
	want := `view totals at epoch 3: 2 rows missing, 2 extra (query gives 3 rows, view holds 3)
- missing (1, 3, 1.50, 0)
- missing (3, 4, 4.00, 0)
+ extra   (3, 5, 4.00, 0)
+ extra   (9, 1, 1, 0)
`
	if got := d.String(); got != want {
		t.Errorf("diff:\n%s\nwant\n%s", got, want)
	}
}

func TestMultisetDiffCounts(t *testing.T) {
	r := func(v int64) types.Row { return types.Row{i64(v)} }
	a := []types.Row{r(1), r(1), r(1), r(2), r(3)}
	b := []types.Row{r(3), r(1), r(4), r(4)}
	onlyA, onlyB := multisetDiff(a, b)
	d := Diff{View: "v", Epoch: 7, Computed: 5, Stored: 4, Missing: onlyA, Extra: onlyB}
	want := `view v at epoch 7: 3 rows missing, 2 extra (query gives 5 rows, view holds 4)
- missing (1) ×2
- missing (2)
+ extra   (4) ×2
`
	if got := d.String(); got != want {
		t.Errorf("%s\nwant\n%s", got, want)
	}
}

func TestVerifyRefusesMismatchedColumns(t *testing.T) {
	e := newEngine(t)
	orders, totals := verifyTables(t)
	_, err := e.Verify(context.Background(), "SELECT account FROM orders", []Input{{Name: "orders", Table: orders, Epoch: 1}}, Input{Name: "totals", Table: totals, Epoch: 1})
	if err == nil {
		t.Fatal("a query with one column verified against four")
	}
}

func TestDiffStringIsBounded(t *testing.T) {
	var a []types.Row
	for i := range 60 {
		a = append(a, types.Row{i64(int64(i))})
	}
	onlyA, _ := multisetDiff(a, nil)
	got := Diff{View: "v", Computed: 60, Missing: onlyA}.String()
	if !strings.HasSuffix(got, "- missing (49)\n- missing ... and 10 more distinct rows\n") {
		t.Errorf("%s", got)
	}
}

func TestVerifyComparesFloatAggregatesAtFloatPrecision(t *testing.T) {
	e := newEngine(t)
	fs := fileio.NewMem()
	orders, err := table.Create(fs, "wh/dev/o", []schema.Field{{Name: "a", Type: types.Int32}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	view, err := table.Create(fs, "wh/dev/v", []schema.Field{{Name: "m", Type: types.Numeric}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ow, _ := orders.NewWriter("o")
	commitEpoch(t, orders, ow, 1, ins(types.Row{types.NewInt32(1)}), ins(types.Row{types.NewInt32(0)}), ins(types.Row{types.NewInt32(0)}))
	vw, _ := view.NewWriter("v")
	commitEpoch(t, view, vw, 1, ins(types.Row{num("0.33333333333333333333")})) // PostgreSQL's avg: exact NUMERIC
	commitEpoch(t, view, vw, 2, upd(types.Row{num("0.33334")}))
	commitEpoch(t, orders, ow, 2)
	for ep, equal := range map[base.Epoch]bool{1: true, 2: false} {
		d, err := e.Verify(context.Background(), "SELECT avg(a) AS m FROM o", []Input{{Name: "o", Table: orders, Epoch: ep}}, Input{Name: "v", Table: view, Epoch: ep})
		if err != nil {
			t.Fatal(err)
		}
		if d.Empty() != equal {
			t.Errorf("epoch %d: %s", ep, d)
		}
	}
}

// TestVerifyComparesFloatSumsAndDivisionAtTwelveDigits stores what the
// view's job computes, PostgreSQL's exact NUMERIC quotient and a float sum
// taken in another order than DuckDB's, beside DuckDB's DOUBLE PRECISION
// results of the same query: they are equal at 12 significant digits, and
// a difference in the eleventh digit is still found.
func TestVerifyComparesFloatSumsAndDivisionAtTwelveDigits(t *testing.T) {
	e := newEngine(t)
	fs := fileio.NewMem()
	num2, _ := types.NumericType(12, 2)
	in, err := table.Create(fs, "wh/dev/n", []schema.Field{{Name: "a", Type: num2}, {Name: "f", Type: types.Float64}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	iw, _ := in.NewWriter("n")
	commitEpoch(t, in, iw, 1, ins(types.Row{num("489.21"), types.NewFloat64(0.1)}), ins(types.Row{num("0.00"), types.NewFloat64(0.2)}))
	// sum(a)/7 is 69.887142857142857142857... in PostgreSQL (DuckDB:
	// 69.88714285714286); 0.1 + 0.2 is 0.30000000000000004 in double
	// precision, 0.3 in a compensated sum.
	for _, tc := range []struct {
		q     string
		s     float64
		equal bool
	}{
		{"69.8871428571428571", 0.3, true},
		{"69.8871428571428571", 0.30000000000000004, true},
		{"69.8871428572", 0.3, false},
		{"69.8871428571428571", 0.3000000001, false},
	} {
		view, err := table.Create(fs, "wh/dev/v"+tc.q+fmt.Sprint(tc.s), []schema.Field{{Name: "q", Type: types.Numeric}, {Name: "s", Type: types.Float64}}, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		vw, _ := view.NewWriter("v")
		commitEpoch(t, view, vw, 1, ins(types.Row{num(tc.q), types.NewFloat64(tc.s)}))
		d, err := e.Verify(context.Background(), "SELECT sum(a)/7 AS q, sum(f) AS s FROM n", []Input{{Name: "n", Table: in, Epoch: 1}}, Input{Name: "v", Table: view, Epoch: 1})
		if err != nil {
			t.Fatal(err)
		}
		if d.Empty() != tc.equal {
			t.Errorf("stored (%s, %v): equal %v, want %v:\n%s", tc.q, tc.s, d.Empty(), tc.equal, d)
		}
	}
}
