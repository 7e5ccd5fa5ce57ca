package expr

import (
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
)

// Column-at-a-time evaluation is compared here with Eval row by row
// (invariant batch-same-result): random expressions over random chunks
// with NULLs, empty and non-ASCII strings, invalid UTF-8 and rows that
// raise errors, evaluated as a streaming operator evaluates them
// (Specialize, then Memoize over all of them).

// Columns of the random chunks.
const (
	bcInt    = iota // BIGINT
	bcURL           // VARCHAR, url-like
	bcText          // TEXT
	bcField         // INTEGER, -3..6 (0 makes split_part fail)
	bcFlag          // BOOLEAN
	bcChan          // VARCHAR, channel-like
	bcDiv           // BIGINT, often 0
	bcChar          // CHAR(4), blank-padded
	bcNumCol        // number of columns
)

var batchColTypes = []types.Type{types.Int64, types.Varchar, types.Text, types.Int32, types.Bool, types.Varchar, types.Int64,
	{Kind: types.KindChar, Length: 4}}

func randomBatchChunk(r *rand.Rand, n int) *types.Chunk {
	c := types.NewChunk(batchColTypes, n)
	urls := []string{"", "https://www.nexmark.com/abc/def/item.htm?query=1&channel_id=123",
		"channel_id=9&x=1", "a/b//c/d/e/f/g", "/é/ü/ß/", "x&channel_id=&y", "bad\xffutf8/channel_id=1",
		"nul\x00byte", "https://h/ÄÖ/üé/item?channel_id=77&z=2", "&channel_id=é&"}
	texts := []string{"", "Apple", "apple", "GOOGLE", "Facebook", "baidu", "ÄPFEL", "ǅ", "a/b/c", "İstanbul"}
	chans := []string{"Apple", "Google", "FaceBook", "Baidu", "channel-12", "", "ÉCLAIR", "baidu "}
	for range n {
		row := make(types.Row, bcNumCol)
		null := func() bool { return r.IntN(7) == 0 }
		if !null() {
			row[bcInt] = types.NewInt64(r.Int64N(2_000_000_000) - 1_000_000_000)
			if r.IntN(10) == 0 {
				row[bcInt] = types.NewInt64([]int64{1<<63 - 1, -1 << 63, 0}[r.IntN(3)])
			}
		}
		if !null() {
			row[bcURL] = types.NewVarchar(urls[r.IntN(len(urls))])
		}
		if !null() {
			row[bcText] = types.NewText(texts[r.IntN(len(texts))])
		}
		if !null() {
			row[bcField] = types.NewInt32(int32(r.IntN(10) - 3))
		}
		if !null() {
			row[bcFlag] = types.NewBool(r.IntN(2) == 0)
		}
		if !null() {
			row[bcChan] = types.NewVarchar(chans[r.IntN(len(chans))])
		}
		if !null() {
			row[bcDiv] = types.NewInt64(int64(r.IntN(3)))
		}
		if !null() {
			row[bcChar] = types.NewChar([]string{"ab  ", "ab", "é   ", "    ", "abcd"}[r.IntN(5)])
		}
		c.Append(types.Insert, row)
	}
	return c
}

// batchExprGen draws random expressions over the chunk's columns.
type batchExprGen struct {
	r *rand.Rand
	t *testing.T
}

func (g *batchExprGen) call(name string, args ...Expr) Expr {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	fn, params, err := Builtins.Lookup(name, ts)
	if err != nil {
		g.t.Fatalf("%s%v: %v", name, ts, err)
	}
	for i := range args {
		if params[i] != ts[i] {
			args[i] = &Cast{Arg: args[i], To: params[i]}
		}
	}
	return NewCall(fn, args...)
}

func col(i int) Expr { return &ColumnRef{Index: i, Typ: batchColTypes[i]} }

func textConst(s string) Expr { return &Const{Value: types.NewText(s), Typ: types.Text} }

func (g *batchExprGen) text(depth int) Expr {
	r := g.r
	if depth <= 0 {
		switch r.IntN(5) {
		case 4:
			return &Cast{Arg: col(bcChar), To: types.Text}
		case 0:
			return col(bcText)
		case 1:
			return &Cast{Arg: col(bcURL), To: types.Text}
		case 2:
			return &Cast{Arg: col(bcChan), To: types.Text}
		default:
			if r.IntN(5) == 0 {
				return &Const{Value: types.Null, Typ: types.Text}
			}
			return textConst([]string{"", "x", "é", "apple"}[r.IntN(4)])
		}
	}
	switch r.IntN(9) {
	case 0:
		return g.call([]string{"lower", "upper"}[r.IntN(2)], g.text(depth-1))
	case 1:
		var field Expr = &Const{Value: types.NewInt32(int32(r.IntN(7) - 2)), Typ: types.Int32}
		if r.IntN(3) == 0 {
			field = col(bcField)
		}
		return g.call("split_part", g.text(depth-1), textConst([]string{"/", "&", "", "é"}[r.IntN(4)]), field)
	case 2:
		pattern := []string{`(?:&|^)channel_id=([^&]*)`, `/(\w+)/`, `é.`, `^h(.*)$`, `[`}[r.IntN(5)]
		return g.call("substring", g.text(depth-1), textConst(pattern))
	case 3:
		w := &Case{Typ: types.Text}
		for range 1 + r.IntN(3) {
			w.Whens = append(w.Whens, When{Cond: g.bool(depth - 1), Result: g.text(depth - 1)})
		}
		if r.IntN(3) > 0 {
			w.Else = g.text(depth - 1)
		}
		return w
	case 4:
		return &Coalesce{Args: []Expr{g.text(depth - 1), g.text(depth - 1)}, Typ: types.Text}
	case 5:
		return g.call("||", g.text(depth-1), g.text(depth-1))
	case 6:
		return g.call("btrim", g.text(depth-1))
	default:
		return g.text(0)
	}
}

func (g *batchExprGen) integer(depth int) Expr {
	r := g.r
	if depth <= 0 {
		switch r.IntN(3) {
		case 0:
			return col(bcInt)
		case 1:
			return col(bcDiv)
		default:
			return &Const{Value: types.NewInt64(int64(r.IntN(5) - 2)), Typ: types.Int64}
		}
	}
	switch r.IntN(5) {
	case 0:
		return g.call("+", g.integer(depth-1), g.integer(depth-1)) // may overflow
	case 1:
		return g.call("/", g.integer(depth-1), g.integer(depth-1)) // may divide by zero
	case 2:
		return &Cast{Arg: g.call("length", g.text(depth-1)), To: types.Int64}
	default:
		return g.integer(0)
	}
}

func (g *batchExprGen) bool(depth int) Expr {
	r := g.r
	if depth <= 0 {
		if r.IntN(2) == 0 {
			return col(bcFlag)
		}
		return g.call("=", g.call("lower", &Cast{Arg: col(bcChan), To: types.Text}), textConst("apple"))
	}
	switch r.IntN(12) {
	case 10:
		// CHAR compares without its trailing blanks: no kernel, and IN
		// of CHAR constants searches the list per row.
		ch := col(bcChar)
		if r.IntN(2) == 0 {
			return g.call([]string{"=", "<"}[r.IntN(2)], ch, &Const{Value: types.NewChar("ab"), Typ: batchColTypes[bcChar]})
		}
		return &In{Arg: ch, List: []Expr{&Const{Value: types.NewChar("ab  "), Typ: batchColTypes[bcChar]}, &Const{Value: types.NewChar("é"), Typ: batchColTypes[bcChar]}}}
	case 0:
		return g.call([]string{"=", "<>", "<", ">="}[r.IntN(4)], g.text(depth-1), g.text(depth-1))
	case 1:
		return g.call([]string{"=", "<", ">", "<="}[r.IntN(4)], g.integer(depth-1), g.integer(depth-1))
	case 2:
		list := []Expr{textConst("apple"), textConst("google"), textConst("facebook"), textConst("baidu")}
		if r.IntN(2) == 0 {
			for _, s := range []string{"a", "b", "c", "d", "e", ""} {
				list = append(list, textConst(s))
			}
		}
		return &In{Arg: g.text(depth - 1), List: list, Negate: r.IntN(3) == 0}
	case 3:
		list := []Expr{&Const{Value: types.NewInt64(1), Typ: types.Int64}, g.integer(depth - 1)}
		if r.IntN(2) == 0 {
			list = append(list, &Const{Value: types.Null, Typ: types.Int64})
		}
		return &In{Arg: g.integer(depth - 1), List: list, Negate: r.IntN(2) == 0}
	case 4:
		return &IsNull{Arg: g.text(depth - 1), Negate: r.IntN(2) == 0}
	case 5:
		return &And{Args: []Expr{g.bool(depth - 1), g.bool(depth - 1), g.bool(depth - 1)}}
	case 6:
		return &Or{Args: []Expr{g.bool(depth - 1), g.bool(depth - 1)}}
	case 7:
		return &Not{Arg: g.bool(depth - 1)}
	case 8:
		scale := g.call("*", &Const{Value: types.NewNumeric(apd.New(908, -3)), Typ: types.Numeric}, &Cast{Arg: col(bcInt), To: types.Numeric})
		return g.call([]string{">", "<"}[r.IntN(2)], scale, &Const{Value: types.NewNumeric(apd.New(1000000, 0)), Typ: types.Numeric})
	case 9:
		return g.call("starts_with", g.text(depth-1), g.text(depth-1))
	default:
		return g.bool(0)
	}
}

func (g *batchExprGen) any(depth int) Expr {
	switch g.r.IntN(4) {
	case 0:
		return g.bool(depth)
	case 1:
		return g.integer(depth)
	case 2:
		return g.call("*", &Const{Value: types.NewNumeric(apd.New(908, -3)), Typ: types.Numeric}, &Cast{Arg: col(bcInt), To: types.Numeric})
	}
	return g.text(depth)
}

// rowResult is one expression's value or error on one row.
type rowResult struct {
	v   types.Datum
	err error
}

// TestBatchMatchesEval checks invariant batch-same-result: on every row
// of a random selection, a Batch gives the value Eval gives, of the same
// kind, or fails where Eval fails on some selected row (with an error one
// of those rows raises, or by giving up); where no selected row fails it
// fails only by giving up, and rarely.
func TestBatchMatchesEval(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	g := &batchExprGen{r: r, t: t}
	vectorized, compared, gaveUp, failed, spurious := 0, 0, 0, 0, 0
	for round := range 400 {
		es := make([]Expr, 1+r.IntN(4))
		for j := range es {
			es[j] = g.any(1 + r.IntN(3))
		}
		// q21's shape: one shared sub-expression in several of them.
		if round%4 == 0 {
			es = append(es, g.call("=", g.call("lower", &Cast{Arg: col(bcChan), To: types.Text}), textConst("google")))
		}
		for j := range es {
			es[j] = Specialize(es[j])
		}
		var memo Memo
		rowForm := Memoize(es, &memo)
		batchForm := Memoize(es, new(Memo))
		b := NewBatch(batchForm)
		for range 3 {
			c := randomBatchChunk(r, 1+r.IntN(60))
			var sel []int
			for i := range c.Len() {
				if r.IntN(4) > 0 {
					sel = append(sel, i)
				}
			}
			want := make([][]rowResult, len(es))
			ctx := (&Context{}).Owned()
			for _, i := range sel {
				memo.NextRow()
				row := c.Row(i)
				for j, e := range rowForm {
					v, err := e.Eval(ctx, row)
					want[j] = append(want[j], rowResult{v, err})
				}
			}
			b.Start((&Context{}).Owned(), c)
			for j := range es {
				if !b.Vectorized(j) {
					continue
				}
				vectorized++
				v, err := b.Eval(j, sel)
				var rowErrs []error
				for _, w := range want[j] {
					if w.err != nil {
						rowErrs = append(rowErrs, w.err)
					}
				}
				if err != nil {
					failed++
					if errors.Is(err, errBatchGiveUp) {
						gaveUp++
						if len(rowErrs) == 0 {
							spurious++
							t.Logf("gave up without a row error: %s", es[j])
						}
						continue
					}
					found := false
					for _, re := range rowErrs {
						found = found || re.Error() == err.Error()
					}
					if !found {
						t.Fatalf("%s: batch error %q, row errors %v", es[j], err, rowErrs)
					}
					continue
				}
				if len(rowErrs) > 0 {
					t.Fatalf("%s: batch succeeded, rows raise %v", es[j], rowErrs)
				}
				for k, i := range sel {
					got := v.Get(i)
					if !sameDatum(got, want[j][k].v) {
						t.Fatalf("%s, row %d %v: batch %v (%s), Eval %v (%s)", es[j], i, c.Row(i), got, got.Kind(), want[j][k].v, want[j][k].v.Kind())
					}
					compared++
				}
			}
		}
	}
	t.Logf("%d vectorized evaluations, %d values compared, %d failed, %d gave up (%d without a row error)", vectorized, compared, failed, gaveUp, spurious)
	if vectorized < 1000 || compared < 20000 {
		t.Fatalf("too little compared: %d evaluations, %d values", vectorized, compared)
	}
	if spurious*100 > vectorized || failed == gaveUp {
		t.Fatalf("gave up on %d of %d evaluations without a row error; %d of %d failures were give-ups", spurious, vectorized, gaveUp, failed)
	}
}

// TestBatchShapes checks which expressions get a vector form.
func TestBatchShapes(t *testing.T) {
	g := &batchExprGen{r: rand.New(rand.NewPCG(1, 2)), t: t}
	lowerChan := g.call("lower", &Cast{Arg: col(bcChan), To: types.Text})
	for _, c := range []struct {
		e    Expr
		want bool
	}{
		{g.call("split_part", &Cast{Arg: col(bcURL), To: types.Text}, textConst("/"), &Const{Value: types.NewInt32(4), Typ: types.Int32}), true},
		{&In{Arg: lowerChan, List: []Expr{textConst("apple")}}, true},
		{Specialize(g.call("substring", &Cast{Arg: col(bcURL), To: types.Text}, textConst("a(b)"))), true},
		{g.call("md5", col(bcText)), true},                                         // per row
		{g.call("||", col(bcText), g.call("version")), false},                      // volatile
		{&Const{Value: types.Null, Typ: types.Unknown}, false},                     // untyped NULL
		{g.call("to_jsonb", col(bcText)), false},                                   // JSONB has no vector form
		{&Coalesce{Args: []Expr{col(bcText), col(bcURL)}, Typ: types.Text}, false}, // a VARCHAR argument of a TEXT COALESCE
	} {
		if got := NewBatch([]Expr{c.e}).Vectorized(0); got != c.want {
			t.Errorf("%s: Vectorized = %v, want %v", c.e, got, c.want)
		}
	}
}

// TestBatchKernelsUsed checks that the hot functions run as kernels, not
// per row.
func TestBatchKernelsUsed(t *testing.T) {
	g := &batchExprGen{r: rand.New(rand.NewPCG(1, 2)), t: t}
	url := &Cast{Arg: col(bcURL), To: types.Text}
	for _, e := range []Expr{
		g.call("lower", url), g.call("upper", url), g.call("length", url),
		g.call("split_part", url, textConst("/"), &Const{Value: types.NewInt32(4), Typ: types.Int32}),
		g.call("=", url, textConst("x")), g.call("<", col(bcInt), col(bcDiv)),
	} {
		n := NewBatch([]Expr{e}).roots[0]
		if c, ok := n.(*vcall); !ok || c.kernel == nil {
			t.Errorf("%s: no kernel", e)
		}
	}
}
