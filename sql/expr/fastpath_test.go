package expr

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
)

// Each fast path is compared here with the general path it stands for,
// over random and edge-case inputs; a fast path that gives another value,
// kind, scale or error fails these tests.

// sameDatum reports whether a and b are the same value of the same kind,
// with the same text (so the same NUMERIC scale).
func sameDatum(a, b types.Datum) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() == b.IsNull()
	}
	return a.Kind() == b.Kind() && types.Compare(a, b) == 0 && a.String() == b.String()
}

// sameDecimal reports whether a and b hold the same form, sign, exponent
// and coefficient.
func sameDecimal(a, b *apd.Decimal) bool {
	return a.Form == b.Form && a.Negative == b.Negative && a.Exponent == b.Exponent && a.Coeff.Cmp(&b.Coeff) == 0
}

// apdArith is numericArith's apd path for finite operands.
func apdArith(op byte, a, b *apd.Decimal) (types.Datum, error) {
	r := new(apd.Decimal)
	var c apd.Condition
	var err error
	switch op {
	case '+':
		c, err = exact.Add(r, a, b)
	case '-':
		c, err = exact.Sub(r, a, b)
	case '*':
		c, err = exact.Mul(r, a, b)
	}
	return numericResult(r, c, err)
}

// randomDecimal draws a finite decimal: small and large coefficients
// (some past 64 bits), both signs, exponents near zero and at the edge of
// the fast path's range.
func randomDecimal(r *rand.Rand) *apd.Decimal {
	d := new(apd.Decimal)
	switch r.IntN(6) {
	case 0:
		d.Coeff.SetUint64(0)
	case 1:
		d.Coeff.SetUint64(r.Uint64()) // may be past 63 bits
	case 2:
		var b big.Int
		b.Lsh(big.NewInt(int64(r.IntN(1000)+1)), uint(60+r.IntN(10)))
		d.Coeff.SetMathBigInt(&b)
	case 3:
		d.Coeff.SetUint64(math.MaxUint64 - uint64(r.IntN(3)))
	default:
		d.Coeff.SetUint64(uint64(r.Int64N(1_000_000_000)))
	}
	d.Negative = r.IntN(2) == 0
	switch r.IntN(8) {
	case 0:
		d.Exponent = int32(smallExpLimit + r.IntN(3) - 1)
	case 1:
		d.Exponent = int32(-smallExpLimit + r.IntN(3) - 1)
	default:
		d.Exponent = int32(r.IntN(41) - 20)
	}
	return d
}

func TestSmallNumericMatchesApd(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fast := 0
	for range 200_000 {
		a, b := randomDecimal(r), randomDecimal(r)
		for _, op := range []byte{'+', '-', '*'} {
			got, ok := numericArithFast(op, a, b)
			if !ok {
				continue
			}
			fast++
			want, err := apdArith(op, a, b)
			if err != nil {
				t.Fatalf("%s %c %s: fast path gave %s, apd an error %v", a, op, b, got, err)
			}
			if !sameDecimal(got.Decimal(), want.Decimal()) || got.String() != want.String() {
				t.Fatalf("%s %c %s: fast path %s (exp %d), apd %s (exp %d)", a, op, b, got, got.Decimal().Exponent, want, want.Decimal().Exponent)
			}
		}
	}
	if fast < 100_000 {
		t.Fatalf("the fast path took %d of 600000 operations", fast)
	}
	// Through numericArith, the NUMERIC operators' implementation, both
	// paths give the same for any operands, NaN and infinities included.
	specials := []*apd.Decimal{{Form: apd.NaN}, {Form: apd.Infinite}, {Form: apd.Infinite, Negative: true}, apd.New(0, 0), apd.New(-5, -1)}
	for _, a := range specials {
		for _, b := range specials {
			for _, op := range []byte{'+', '-', '*'} {
				got, gerr := numericArith(op, a, b)
				_, fastOK := numericArithFast(op, a, b)
				if a.Form == apd.Finite && b.Form == apd.Finite {
					if !fastOK {
						t.Fatalf("%s %c %s should take the fast path", a, op, b)
					}
					want, _ := apdArith(op, a, b)
					if !sameDatum(got, want) || gerr != nil {
						t.Fatalf("%s %c %s = %s, %v; apd %s", a, op, b, got, gerr, want)
					}
				} else if fastOK {
					t.Fatalf("%s %c %s took the fast path", a, op, b)
				}
			}
		}
	}
}

func TestSmallNumericCases(t *testing.T) {
	for _, c := range []struct {
		a, b string
		op   byte
		want string
	}{
		{"0.908", "12345", '*', "11209.260"},
		{"0.908", "-12345", '*', "-11209.260"},
		{"-0.908", "0", '*', "0.000"},
		{"1.5", "-1.50", '+', "0.00"},
		{"1.5", "0.25", '-', "1.25"},
		{"18446744073709551615", "1", '*', "18446744073709551615"},
		{"18446744073709551615", "2", '*', "36893488147419103230"}, // past 64 bits: apd
		{"18446744073709551615", "1", '+', "18446744073709551616"},
		{"1E+30", "1", '+', "1000000000000000000000000000001"},
	} {
		a, _, _ := apd.NewFromString(c.a)
		b, _, _ := apd.NewFromString(c.b)
		got, err := numericArith(c.op, a, b)
		if err != nil || got.String() != c.want {
			t.Errorf("%s %c %s = %s, %v; want %s", c.a, c.op, c.b, got, err, c.want)
		}
	}
}

// call builds the builtin call of name on args (no casts inserted).
func builtinCall(t *testing.T, name string, args ...Expr) *Call {
	t.Helper()
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	fn, _, err := Builtins.Lookup(name, ts)
	if err != nil {
		t.Fatal(err)
	}
	return NewCall(fn, args...)
}

func TestSpecializeMatchesGeneral(t *testing.T) {
	col := &ColumnRef{Index: 0, Typ: types.Int64, Name: "price"}
	col32 := &ColumnRef{Index: 1, Typ: types.Int32, Name: "small"}
	price := &Cast{Arg: col, To: types.Numeric}
	consts := []string{"0.908", "-2.5", "0", "1000000", "18446744073709551615", "1E+9999"}
	var exprs []Expr
	for _, c := range consts {
		k := &Const{Value: num(t, c), Typ: types.Numeric}
		scale := builtinCall(t, "*", k, price)
		exprs = append(exprs, scale, builtinCall(t, "*", price, k), builtinCall(t, "*", k, &Cast{Arg: col32, To: types.Numeric}))
		for _, op := range []string{"=", "<>", "<", "<=", ">", ">="} {
			bound := &Const{Value: num(t, "1000000.5"), Typ: types.Numeric}
			exprs = append(exprs, builtinCall(t, op, scale, bound), builtinCall(t, op, bound, scale), builtinCall(t, op, builtinCall(t, "*", price, k), k))
		}
	}
	// A shape that is not specialized stays as it is.
	plain := builtinCall(t, "+", price, price)
	if s, ok := Specialize(plain).(*Call); !ok || s.String() != plain.String() {
		t.Fatal("Specialize changed an expression it has no form for")
	}
	specialized := 0
	for _, e := range exprs {
		s := Specialize(e)
		switch s.(type) {
		case *numericScale, *numericScaleCompare:
			specialized++
		}
		if s.String() != e.String() || s.Type() != e.Type() {
			t.Fatalf("Specialize(%s) renders as %s, type %s", e, s, s.Type())
		}
	}
	if specialized != len(exprs) {
		t.Fatalf("%d of %d expressions specialized", specialized, len(exprs))
	}
	r := rand.New(rand.NewPCG(3, 4))
	values := []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt32, math.MinInt32, 1101322, 1101323}
	ctx := &Context{}
	for i := range 4000 {
		row := types.Row{types.Null, types.Null}
		switch {
		case i < len(values):
			row[0] = types.NewInt64(values[i])
		case i%17 == 0:
			// NULL
		default:
			v := int64(r.Uint64() >> uint(r.IntN(64))) // magnitudes of every size
			if r.IntN(2) == 0 {
				v = -v
			}
			row[0] = types.NewInt64(v)
		}
		if i%13 != 0 {
			row[1] = types.NewInt32(int32(r.Uint32()))
		}
		for _, e := range exprs {
			want, werr := e.Eval(ctx, row)
			got, gerr := Specialize(e).Eval(ctx, row)
			if (werr != nil) != (gerr != nil) || (werr != nil && werr.Error() != gerr.Error()) || !sameDatum(got, want) {
				t.Fatalf("%s on %v: specialized %s, %v; general %s, %v", e, row, got, gerr, want, werr)
			}
		}
	}
}

func TestCastStringFast(t *testing.T) {
	strs := []string{"", "abc", "héllo", "trailing  ", "a\x00b", "bad\xff", "\xe2\x82", "日本語", strings.Repeat("x", 40)}
	vc3 := types.Type{Kind: types.KindVarchar, Length: 3}
	targets := []types.Type{types.Text, types.Varchar, vc3, {Kind: types.KindChar, Length: 4}}
	taken := 0
	for _, s := range strs {
		for _, from := range []types.Datum{types.NewVarchar(s), types.NewText(s), types.NewChar(s)} {
			for _, to := range targets {
				for _, explicit := range []bool{false, true} {
					c := &Cast{Arg: &Const{Value: from, Typ: typeOfKind(from.Kind())}, To: to, Explicit: explicit}
					got, gerr := c.Eval(&Context{}, nil)
					want, werr := types.Cast(from, to, types.CastContext{Explicit: explicit})
					if (gerr != nil) != (werr != nil) || !sameDatum(got, want) {
						t.Fatalf("CAST(%q %s AS %s) = %v, %v; types.Cast %v, %v", s, from.Kind(), to, got, gerr, want, werr)
					}
					if _, ok := castStringFast(from, to); ok {
						taken++
					}
				}
			}
		}
	}
	if taken == 0 {
		t.Fatal("the fast path was never taken")
	}
}

func TestSplitPartMatchesSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	alphabet := []string{"a", "/", "aa", "é", "//", "b"}
	for range 20_000 {
		var b strings.Builder
		for range r.IntN(12) {
			b.WriteString(alphabet[r.IntN(len(alphabet))])
		}
		s := b.String()
		delim := []string{"/", "aa", "a", "//", "é", "xyz"}[r.IntN(6)]
		n := int64(r.IntN(13) - 6)
		if n == 0 {
			continue
		}
		got, err := splitPart(s, delim, n)
		if err != nil {
			t.Fatal(err)
		}
		want := ""
		if s != "" {
			fields := strings.Split(s, delim)
			i := n
			if i < 0 {
				i += int64(len(fields)) + 1
			}
			if i >= 1 && i <= int64(len(fields)) {
				want = fields[i-1]
			}
		}
		if got.Str() != want {
			t.Fatalf("split_part(%q, %q, %d) = %q, want %q", s, delim, n, got.Str(), want)
		}
	}
}

func TestRegexWindowMatchesPlain(t *testing.T) {
	patterns := []string{
		`(?:&|^)channel_id=([^&]*)`, `\bfoo=(\d+)`, `a.{0,3}bc`, `(x|yy)?zz`, `^abc`, `é.b`, `(?i)abc`,
		`(a)(b)?cd`, `x*abc`, `[^&]{2}id`, `(?m)^id=(.)`, `\Bid`, `ab|cd`, `id=`, `.\x{FFFD}id`,
	}
	alphabet := []string{"a", "b", "c", "d", "x", "y", "z", "&", "=", "id", "foo", "channel_id", "abc", "é", "日", "\n", " ", "\xff", "\xe2\x82", "5", "A"}
	r := rand.New(rand.NewPCG(7, 8))
	skipped := 0
	for _, p := range patterns {
		c, err := compileRegexLit(p, regexOpts{newline: 's'})
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		plain := c.re
		for range 20_000 {
			var b strings.Builder
			for range r.IntN(16) {
				b.WriteString(alphabet[r.IntN(len(alphabet))])
			}
			s := b.String()
			got, want := c.findStringSubmatchIndex(s), plain.FindStringSubmatchIndex(s)
			if !slices.Equal(got, want) {
				t.Fatalf("%s on %q: %v, plain matcher %v (literal %q, before %d)", p, s, got, want, c.lit, c.before)
			}
			if c.matchString(s) != plain.MatchString(s) {
				t.Fatalf("%s on %q: matchString differs", p, s)
			}
			if start, _ := c.window(s); start > 0 {
				skipped++
			}
		}
	}
	c, err := compileRegexLit(`(?:&|^)channel_id=([^&]*)`, regexOpts{newline: 's'})
	if err != nil {
		t.Fatal(err)
	}
	if c.lit != "channel_id=" || c.before < 0 {
		t.Fatalf("q21's pattern: literal %q, before %d", c.lit, c.before)
	}
	if skipped == 0 {
		t.Fatal("no search skipped text ahead of the literal")
	}
	for _, w := range []struct {
		p      string
		lit    string
		before int
	}{{`(?i)abc`, "", -1}, {`ab|cd`, "", -1}, {`x*abc`, "abc", -1}, {`(a)(b)?cd`, "cd", 8}, {`id=`, "id=", 0}} {
		c, err := compileRegexLit(w.p, regexOpts{newline: 's'})
		if err != nil {
			t.Fatal(err)
		}
		if c.lit != w.lit || (w.lit != "" && c.before != w.before) {
			t.Errorf("%s: literal %q before %d, want %q before %d", w.p, c.lit, c.before, w.lit, w.before)
		}
	}
}

// TestOwnedContextCalls evaluates nested calls, with NULLs and errors
// part way, on an owned Context and on a plain one: the values and errors
// agree and the owned argument stack is empty after each row.
func TestOwnedContextCalls(t *testing.T) {
	a := &ColumnRef{Index: 0, Typ: types.Int64}
	b := &ColumnRef{Index: 1, Typ: types.Int64}
	s := &ColumnRef{Index: 2, Typ: types.Text}
	div := builtinCall(t, "/", a, b)
	e := builtinCall(t, "||", builtinCall(t, "upper", s),
		&Cast{Arg: builtinCall(t, "+", builtinCall(t, "*", div, a), builtinCall(t, "-", b, div)), To: types.Text})
	owned, plain := (&Context{}).Owned(), &Context{}
	r := rand.New(rand.NewPCG(9, 10))
	errs := 0
	for range 5000 {
		row := types.Row{types.NewInt64(r.Int64N(7) - 3), types.NewInt64(r.Int64N(5) - 2), types.NewText("ab")}
		if r.IntN(8) == 0 {
			row[r.IntN(3)] = types.Null
		}
		got, gerr := e.Eval(owned, row)
		want, werr := e.Eval(plain, row)
		if (gerr != nil) != (werr != nil) || (gerr != nil && gerr.Error() != werr.Error()) || !sameDatum(got, want) {
			t.Fatalf("%v: owned %s, %v; plain %s, %v", row, got, gerr, want, werr)
		}
		if werr != nil {
			errs++
		}
		if n := len(*owned.args); n != 0 {
			t.Fatalf("%v: %d arguments left on the stack", row, n)
		}
	}
	if errs == 0 {
		t.Fatal("no row failed")
	}
}

// TestMemoizeSharesRepeats counts the evaluations of a repeated call: once
// per row when shared, and not at all on a row whose branches do not
// reach it; the values equal those of the expressions as bound.
func TestMemoizeSharesRepeats(t *testing.T) {
	calls := 0
	twice := &Func{Name: "twice", Params: []types.Kind{types.KindInt64}, Strict: true, ResultKind: types.KindInt64,
		Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
			calls++
			return types.NewInt64(2 * a[0].Int64()), nil
		}}
	x := &ColumnRef{Index: 0, Typ: types.Int64}
	pos := builtinCall(t, ">", x, &Const{Value: types.NewInt64(0), Typ: types.Int64})
	es := []Expr{
		&Case{Whens: []When{{Cond: pos, Result: NewCall(twice, x)}}, Typ: types.Int64},
		&Case{Whens: []When{{Cond: pos, Result: builtinCall(t, "+", NewCall(twice, x), x)}}, Typ: types.Int64},
		NewCall(twice, &ColumnRef{Index: 1, Typ: types.Int64}), // another argument: not shared with the others
	}
	var m Memo
	shared := Memoize(es, &m)
	ctx := (&Context{}).Owned()
	for _, tc := range []struct {
		x, y  int64
		calls int
	}{{3, 1, 2}, {-3, 1, 1}, {5, 5, 2}} {
		calls = 0
		row := types.Row{types.NewInt64(tc.x), types.NewInt64(tc.y)}
		m.NextRow()
		for i, e := range shared {
			got, err := e.Eval(ctx, row)
			if err != nil {
				t.Fatal(err)
			}
			n := calls
			want, _ := es[i].Eval(ctx, row)
			calls = n
			if !sameDatum(got, want) || got.String() != want.String() {
				t.Fatalf("%s on %v: shared %s, bound %s", es[i], row, got, want)
			}
		}
		if calls != tc.calls {
			t.Errorf("row %v: twice evaluated %d times, want %d", row, calls, tc.calls)
		}
	}
	// A volatile function is never shared.
	vol := *twice
	vol.Volatile = true
	v := []Expr{NewCall(&vol, x), NewCall(&vol, x)}
	if out := Memoize(v, &m); out[0] == out[1] {
		t.Fatal("a volatile call was shared")
	}
}

func TestSpecializeRegexSubstring(t *testing.T) {
	url := &ColumnRef{Index: 0, Typ: types.Text, Name: "url"}
	pat := func(p string) *Const { return &Const{Value: types.NewText(p), Typ: types.Text} }
	good := builtinCall(t, "substring", url, pat(`(?:&|^)channel_id=([^&]*)`))
	if _, ok := Specialize(good).(*regexSubstringConst); !ok {
		t.Fatal("substring with a constant pattern was not specialized")
	}
	bad := builtinCall(t, "substring", url, pat(`(unclosed`))
	if _, ok := Specialize(bad).(*Call); !ok {
		t.Fatal("a pattern that does not compile was specialized")
	}
	nullPat := builtinCall(t, "substring", url, &Const{Value: types.Null, Typ: types.Text})
	r := rand.New(rand.NewPCG(13, 14))
	parts := []string{"https://www.nexmark.com/", "abc", "/item.htm?query=1", "&channel_id=", "channel_id=", "42", "&", "é"}
	ctx := &Context{}
	for i := range 5000 {
		row := types.Row{types.Null}
		if i%11 != 0 {
			var b strings.Builder
			for range r.IntN(6) {
				b.WriteString(parts[r.IntN(len(parts))])
			}
			row[0] = types.NewText(b.String())
		}
		for _, e := range []Expr{good, bad, nullPat} {
			want, werr := e.Eval(ctx, row)
			got, gerr := Specialize(e).Eval(ctx, row)
			if (werr != nil) != (gerr != nil) || !sameDatum(got, want) {
				t.Fatalf("%s on %v: specialized %s, %v; general %s, %v", e, row, got, gerr, want, werr)
			}
		}
	}
}
