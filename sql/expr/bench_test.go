package expr

import (
	"testing"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
)

// Benchmarks of per-row costs of common functions; they print ns/op and
// assert nothing about speed.

func benchCall(b *testing.B, name string, args ...types.Datum) {
	b.Helper()
	ts := make([]types.Type, len(args))
	cs := make([]Expr, len(args))
	for i, a := range args {
		ts[i] = typeOfKind(a.Kind())
		cs[i] = &Const{Value: a, Typ: ts[i]}
	}
	fn, _, err := Builtins.Lookup(name, ts)
	if err != nil {
		b.Fatal(err)
	}
	e := NewCall(fn, cs...)
	ctx := &Context{}
	b.ResetTimer()
	for range b.N {
		if _, err := e.Eval(ctx, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLike(b *testing.B) {
	benchCall(b, "~~", types.NewText("the quick brown fox jumps over the lazy dog"), types.NewText("%fox%dog"))
}

func BenchmarkRegexMatch(b *testing.B) {
	benchCall(b, "~", types.NewText("the quick brown fox jumps over the lazy dog"), types.NewText(`f[aeiou]x\s+\w+`))
}

func BenchmarkRegexpReplace(b *testing.B) {
	benchCall(b, "regexp_replace", types.NewText("2024-02-29"), types.NewText(`(\d+)-(\d+)-(\d+)`), types.NewText(`\3/\2/\1`))
}

func BenchmarkExtractYear(b *testing.B) {
	benchCall(b, "extract", types.NewText("year"), types.NewTimestamp(1709208000000000))
}

func BenchmarkDateTruncDayTZ(b *testing.B) {
	benchCall(b, "date_trunc", types.NewText("day"), types.NewTimestampTZ(1709208000000000))
}

func BenchmarkJSONBField(b *testing.B) {
	d, err := types.NewJSONB(`{"user": {"id": 42, "name": "ann"}, "tags": ["a", "b"], "n": 1.5}`)
	if err != nil {
		b.Fatal(err)
	}
	benchCall(b, "->>", d, types.NewText("n"))
}

func BenchmarkNumericSqrt(b *testing.B) {
	benchCall(b, "sqrt", types.NewNumeric(apd.New(12345678, -3)))
}

// benchQ21 is Nexmark q21's projection and filter over a chunk of
// bid-like rows (channel, url), as a streaming Map prepares them.
func benchQ21(b *testing.B) ([]Expr, *types.Chunk) {
	b.Helper()
	ts := []types.Type{types.Varchar, types.Varchar}
	c := types.NewChunk(ts, types.DefaultChunkSize)
	chans := []string{"Google", "Facebook", "Baidu", "Apple", "channel-1234", "channel-77"}
	for i := range types.DefaultChunkSize {
		url := "https://www.nexmark.com/abcde_fgh/ijklm_no/pqrst_u/item.htm?query=1"
		if i%3 != 0 {
			url += "&channel_id=" + []string{"1234567", "98"}[i%2]
		}
		c.Append(types.Insert, types.Row{types.NewVarchar(chans[i%len(chans)]), types.NewVarchar(url)})
	}
	call := func(name string, args ...Expr) Expr {
		ats := make([]types.Type, len(args))
		for i, a := range args {
			ats[i] = a.Type()
		}
		fn, _, err := Builtins.Lookup(name, ats)
		if err != nil {
			b.Fatal(err)
		}
		return NewCall(fn, args...)
	}
	lit := func(s string) Expr { return &Const{Value: types.NewText(s), Typ: types.Text} }
	channel := &Cast{Arg: &ColumnRef{Index: 0, Typ: types.Varchar}, To: types.Text}
	url := &Cast{Arg: &ColumnRef{Index: 1, Typ: types.Varchar}, To: types.Text}
	pattern := lit(`(?:&|^)channel_id=([^&]*)`)
	lower := func() Expr { return call("lower", channel) }
	cs := &Case{Typ: types.Text, Else: call("substring", url, pattern)}
	for i, name := range []string{"apple", "google", "facebook", "baidu"} {
		cs.Whens = append(cs.Whens, When{Cond: call("=", lower(), lit(name)), Result: lit(string(rune('0' + i)))})
	}
	pred := &Or{Args: []Expr{&IsNull{Arg: call("substring", url, pattern), Negate: true},
		&In{Arg: lower(), List: []Expr{lit("apple"), lit("google"), lit("facebook"), lit("baidu")}}}}
	return []Expr{Specialize(pred), Specialize(cs)}, c
}

// BenchmarkQ21Rows evaluates q21's filter and CASE row by row, per chunk.
func BenchmarkQ21Rows(b *testing.B) {
	es, c := benchQ21(b)
	var memo Memo
	es = Memoize(es, &memo)
	ctx := (&Context{}).Owned()
	b.ResetTimer()
	for range b.N {
		for i := range c.Len() {
			memo.NextRow()
			row := c.Row(i)
			for _, e := range es {
				if _, err := e.Eval(ctx, row); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
}

// BenchmarkQ21Batch evaluates them a chunk at a time.
func BenchmarkQ21Batch(b *testing.B) {
	es, c := benchQ21(b)
	bt := NewBatch(Memoize(es, new(Memo)))
	ctx := (&Context{}).Owned()
	b.ResetTimer()
	for range b.N {
		bt.Start(ctx, c)
		for j := range es {
			if _, err := bt.Eval(j, bt.All()); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkToCharTimestamp(b *testing.B) {
	benchCall(b, "to_char", types.NewTimestamp(1_583_417_229_123_456), types.NewText("YYYY-MM-DD HH24:MI:SS.MS Dy"))
}

func BenchmarkToCharNumeric(b *testing.B) {
	benchCall(b, "to_char", types.NewNumeric(apd.New(-12345678, -4)), types.NewText("FM999,999,990.00"))
}
