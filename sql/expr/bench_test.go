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
