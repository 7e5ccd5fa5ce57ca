package stream

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
)

// referenceMap is what Map computes, row by row with the expressions as
// bound (no specialized forms, no column copies, no owned context).
func referenceMap(t *testing.T, filter expr.Expr, exprs []expr.Expr, c *types.Chunk) ([]string, error) {
	t.Helper()
	ts := make([]types.Type, len(exprs))
	for i, e := range exprs {
		ts[i] = e.Type()
	}
	out := types.NewChunk(ts, c.Len())
	ctx := &expr.Context{}
	for i := range c.Len() {
		row := c.Row(i)
		if filter != nil {
			v, err := filter.Eval(ctx, row)
			if err != nil {
				return nil, err
			}
			if v.IsNull() || !v.Bool() {
				continue
			}
		}
		vals := make(types.Row, len(exprs))
		for j, e := range exprs {
			v, err := e.Eval(ctx, row)
			if err != nil {
				return nil, err
			}
			vals[j] = v
		}
		out.Append(c.Kinds[i], vals)
	}
	col := &collector{}
	if out = cancelNoise(out); out.Len() > 0 {
		col.chunks = append(col.chunks, out)
	}
	return col.rows(), nil
}

func mustLookup(t *testing.T, name string, args ...types.Type) *expr.Func {
	t.Helper()
	fn, _, err := expr.Builtins.Lookup(name, args)
	if err != nil {
		t.Fatal(err)
	}
	return fn
}

// TestMapMatchesRowByRow runs Maps that mix copied columns, columns of
// another type, specialized and general expressions, with and without a
// filter, over random chunks with NULLs and retractions, against
// referenceMap; and a Map whose expression fails on some row, which must
// fail with the error the row-by-row evaluation meets first.
func TestMapMatchesRowByRow(t *testing.T) {
	k := &expr.ColumnRef{Index: 0, Typ: types.Int64, Name: "k"}
	v := &expr.ColumnRef{Index: 1, Typ: types.Int64, Name: "v"}
	s := &expr.ColumnRef{Index: 2, Typ: types.Text, Name: "s"}
	num, err := types.ParseText(types.Numeric, "0.908", nil)
	if err != nil {
		t.Fatal(err)
	}
	c908 := &expr.Const{Value: num, Typ: types.Numeric}
	scaled := expr.NewCall(mustLookup(t, "*", types.Numeric, types.Numeric), c908, &expr.Cast{Arg: v, To: types.Numeric})
	bound, err := types.ParseText(types.Numeric, "40.5", nil)
	if err != nil {
		t.Fatal(err)
	}
	over := expr.NewCall(mustLookup(t, ">", types.Numeric, types.Numeric), scaled, &expr.Const{Value: bound, Typ: types.Numeric})
	upper := expr.NewCall(mustLookup(t, "upper", types.Text), s)
	div := expr.NewCall(mustLookup(t, "/", types.Int64, types.Int64), k, v) // fails where v = 0
	vNotNull := &expr.IsNull{Arg: v, Negate: true}
	zero := &expr.Const{Value: types.NewInt64(0), Typ: types.Int64}
	vNonZero := expr.NewCall(mustLookup(t, "<>", types.Int64, types.Int64), v, zero)
	guarded := &expr.Case{Whens: []expr.When{{Cond: vNonZero, Result: div}}, Else: zero, Typ: types.Int64}
	divPlus := expr.NewCall(mustLookup(t, "+", types.Int64, types.Int64), div, k)
	guardedPlus := &expr.Case{Whens: []expr.When{{Cond: vNonZero, Result: divPlus}}, Typ: types.Int64}
	upperCat := expr.NewCall(mustLookup(t, "||", types.Text, types.Text), upper, upper)
	jsonUpper := expr.NewCall(mustLookup(t, "to_jsonb", types.Text), upper)
	cases := []struct {
		filter expr.Expr
		exprs  []expr.Expr
	}{
		{nil, []expr.Expr{k, scaled, s, upper}},
		{over, []expr.Expr{s, scaled, v}},
		{vNotNull, []expr.Expr{&expr.ColumnRef{Index: 2, Typ: types.Varchar}, k, upper}},
		{over, []expr.Expr{k, v, s}},
		{nil, []expr.Expr{k, &expr.ColumnRef{Index: 2, Typ: types.Varchar}}},
		{nil, []expr.Expr{k, div}},
		{vNotNull, []expr.Expr{div, k}},
		// Repeated sub-expressions (shared, computed once per row): an
		// error only where a row reaches one unguarded.
		{vNotNull, []expr.Expr{guarded, guardedPlus, upper, upperCat}},
		{nil, []expr.Expr{guarded, div}},
		{vNonZero, []expr.Expr{div, divPlus, guarded}},
		// A JSONB output has no vector form: it is evaluated row by row
		// beside the vectorized ones, and an error of either comes first
		// as row by row.
		{over, []expr.Expr{jsonUpper, upper, scaled}},
		{vNotNull, []expr.Expr{jsonUpper, div, guarded}},
		{nil, []expr.Expr{div, jsonUpper}},
	}
	for _, tc := range cases[:2] {
		m := &Map{Filter: tc.filter, Exprs: tc.exprs}
		m.plan(len(inTypes))
		if !m.anyVec {
			t.Fatalf("%v: nothing vectorized", tc.exprs)
		}
	}
	r := rand.New(rand.NewPCG(11, 12))
	kinds := []types.RowKind{types.Insert, types.Delete, types.UpdateBefore, types.UpdateAfter}
	failed, emitted := 0, 0
	for round := range 300 {
		c := types.NewChunk(inTypes, 0)
		for range r.IntN(40) {
			rw := row(r.Int64N(5), r.Int64N(100)-10, []string{"a", "b", "Ab", "é"}[r.IntN(4)])
			if r.IntN(10) == 0 {
				rw[1] = types.Null
			}
			kind := kinds[r.IntN(len(kinds))]
			if kind == types.UpdateBefore {
				c.Append(kind, rw)
				kind = types.UpdateAfter
				rw = slices.Clone(rw)
				if r.IntN(2) == 0 {
					rw[0] = types.NewInt64(r.Int64N(5))
				}
			} else if kind == types.UpdateAfter {
				kind = types.Insert
			}
			c.Append(kind, rw)
		}
		for ci, tc := range cases {
			want, werr := referenceMap(t, tc.filter, tc.exprs, c)
			out := &collector{}
			m := &Map{Filter: tc.filter, Exprs: tc.exprs}
			if err := m.Open(newContext(t, heap.New(), out, 0)); err != nil {
				t.Fatal(err)
			}
			gerr := m.Process(0, c)
			if (gerr != nil) != (werr != nil) || (gerr != nil && gerr.Error() != werr.Error()) {
				t.Fatalf("round %d case %d: error %v, row by row %v", round, ci, gerr, werr)
			}
			if werr != nil {
				failed++
				continue
			}
			emitted += len(want)
			if got := out.rows(); !slices.Equal(got, want) {
				t.Fatalf("round %d case %d:\n got %q\nwant %q", round, ci, got, want)
			}
		}
	}
	if failed == 0 || emitted == 0 {
		t.Fatalf("%d failing and %d emitted rows: the inputs do not exercise both", failed, emitted)
	}
}

// TestMapFilterMatchesRowByRow runs Maps that only filter, with
// predicates that have a vector form, some failing on some rows, against
// the row-by-row evaluation: the same rows, or the first error.
func TestMapFilterMatchesRowByRow(t *testing.T) {
	k := &expr.ColumnRef{Index: 0, Typ: types.Int64, Name: "k"}
	v := &expr.ColumnRef{Index: 1, Typ: types.Int64, Name: "v"}
	s := &expr.ColumnRef{Index: 2, Typ: types.Text, Name: "s"}
	zero := &expr.Const{Value: types.NewInt64(0), Typ: types.Int64}
	div := expr.NewCall(mustLookup(t, "/", types.Int64, types.Int64), k, v) // fails where v = 0
	lower := expr.NewCall(mustLookup(t, "lower", types.Text), s)
	isA := &expr.In{Arg: lower, List: []expr.Expr{&expr.Const{Value: types.NewText("ab"), Typ: types.Text}, &expr.Const{Value: types.NewText("é"), Typ: types.Text}}}
	divPos := expr.NewCall(mustLookup(t, ">", types.Int64, types.Int64), div, zero)
	vNonZero := expr.NewCall(mustLookup(t, "<>", types.Int64, types.Int64), v, zero)
	preds := []expr.Expr{
		isA,
		&expr.Or{Args: []expr.Expr{isA, &expr.IsNull{Arg: v}}},
		divPos,
		&expr.And{Args: []expr.Expr{vNonZero, divPos}},
		&expr.Or{Args: []expr.Expr{isA, divPos}},
	}
	r := rand.New(rand.NewPCG(21, 22))
	failed, kept := 0, 0
	for round := range 300 {
		c := types.NewChunk(inTypes, 0)
		for range r.IntN(40) {
			rw := row(r.Int64N(5)-2, r.Int64N(6)-2, []string{"a", "AB", "ab", "É", "é"}[r.IntN(5)])
			if r.IntN(8) == 0 {
				rw[1] = types.Null
			}
			c.Append(types.Insert, rw)
		}
		for pi, pred := range preds {
			var want []string
			var werr error
			for i := range c.Len() {
				b, err := pred.Eval(&expr.Context{}, c.Row(i))
				if err != nil {
					werr = err
					break
				}
				if !b.IsNull() && b.Bool() {
					want = append(want, types.Insert.String()+" "+c.Row(i).String())
				}
			}
			out := &collector{}
			m := &Map{Filter: pred}
			if err := m.Open(newContext(t, heap.New(), out, 0)); err != nil {
				t.Fatal(err)
			}
			gerr := m.Process(0, c)
			if !m.batch.Vectorized(0) {
				t.Fatalf("%s: not vectorized", pred)
			}
			if (gerr != nil) != (werr != nil) || (gerr != nil && gerr.Error() != werr.Error()) {
				t.Fatalf("round %d predicate %d: error %v, row by row %v", round, pi, gerr, werr)
			}
			if werr != nil {
				failed++
				continue
			}
			kept += len(want)
			if got := out.rows(); !slices.Equal(got, want) {
				t.Fatalf("round %d predicate %d:\n got %q\nwant %q", round, pi, got, want)
			}
		}
	}
	if failed == 0 || kept == 0 {
		t.Fatalf("%d failing chunks and %d kept rows: the inputs do not exercise both", failed, kept)
	}
}

// TestSelectRowsMatchesChunkSelect compares the column gather with
// types.Chunk.Select over chunks of every representation with NULLs.
func TestSelectRowsMatchesChunkSelect(t *testing.T) {
	iv, err := types.ParseText(types.Interval, "1 mon 2 days 00:00:03", nil)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := types.ParseText(types.Numeric, "-12.50", nil)
	if err != nil {
		t.Fatal(err)
	}
	ts := []types.Type{types.Int64, types.Float64, types.Numeric, types.Text, types.Interval, types.Bool}
	vals := []types.Datum{types.NewInt64(7), types.NewFloat64(2.5), dec, types.NewText("x"), iv, types.NewBool(true)}
	r := rand.New(rand.NewPCG(15, 16))
	for range 200 {
		n := r.IntN(20) + 1
		c := types.NewChunk(ts, n)
		for range n {
			rw := slices.Clone(vals)
			for k := range rw {
				if r.IntN(4) == 0 {
					rw[k] = types.Null
				}
			}
			c.Append([]types.RowKind{types.Insert, types.Delete}[r.IntN(2)], rw)
		}
		var sel []int
		for i := range n {
			if r.IntN(2) == 0 {
				sel = append(sel, i)
			}
		}
		if len(sel) == 0 {
			continue
		}
		got, want := selectRows(c, sel), c.Select(sel)
		if got.String() != want.String() {
			t.Fatalf("selectRows:\n%s\nChunk.Select:\n%s", got, want)
		}
		for k := range ts {
			g, w := got.Cols[k], want.Cols[k]
			if !slices.Equal(g.Nulls, w.Nulls) || !slices.Equal(g.Ints, w.Ints) || !slices.Equal(g.Aux, w.Aux) ||
				!slices.Equal(g.Floats, w.Floats) || !slices.Equal(g.Strs, w.Strs) || !slices.Equal(g.Decimals, w.Decimals) {
				t.Fatalf("column %d (%s): %+v, Chunk.Select %+v", k, ts[k], g, w)
			}
		}
	}
}

// TestMapGivesUpBatch runs a Map whose expression returns values of
// another kind than its type (a VARCHAR from a TEXT function), which the
// vector form cannot hold: the chunk is evaluated row by row, with the
// row-by-row result, and the Map stops trying the vector form.
func TestMapGivesUpBatch(t *testing.T) {
	s := &expr.ColumnRef{Index: 2, Typ: types.Text, Name: "s"}
	asVarchar := &expr.Func{Name: "as_varchar", Params: []types.Kind{types.KindText}, Strict: true, ResultKind: types.KindText,
		Eval: func(_ *expr.Context, a []types.Datum) (types.Datum, error) { return types.NewVarchar(a[0].Str()), nil }}
	e := expr.NewCall(asVarchar, s)
	c := chunkOf(types.Insert, row(1, 2, "a"), row(3, 4, "b"))
	want, err := referenceMap(t, nil, []expr.Expr{e}, c)
	if err != nil {
		t.Fatal(err)
	}
	out := &collector{}
	m := &Map{Exprs: []expr.Expr{e}}
	if err := m.Open(newContext(t, heap.New(), out, 0)); err != nil {
		t.Fatal(err)
	}
	if err := m.Process(0, c); err != nil {
		t.Fatal(err)
	}
	if got := out.rows(); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	if !m.batch.Vectorized(1) || m.anyVec {
		t.Fatalf("vectorized %v, still batching %v: want a vector form given up", m.batch.Vectorized(1), m.anyVec)
	}
}
