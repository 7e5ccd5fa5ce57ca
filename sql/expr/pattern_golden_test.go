package expr

import (
	"testing"

	"github.com/stratadb/strata/internal/types"
)

// testdata/pattern_pg15.csv holds random strings s, LIKE patterns p and
// regular expressions r (the first three columns) and what Postgres 15
// computed for: s LIKE p, s ILIKE p, s NOT LIKE p, regexp_replace(s, r,
// '<\&>', 'g'), the same with 'gi', regexp_match(s, r)::text, and s
// SIMILAR TO p. A regexp error prints ERR, a NULL result of the regexp
// columns NULL, and an empty field is NULL.
func TestPatternsAgainstPostgres(t *testing.T) {
	t.Parallel()
	ctx := &Context{}
	show := func(v types.Datum, err error) string {
		switch {
		case err != nil:
			return "ERR"
		case v.IsNull():
			return "NULL"
		case v.Kind() == types.KindBool:
			if v.Bool() {
				return "t"
			}
			return "f"
		}
		return v.Str()
	}
	call := func(name string, args ...types.Datum) (types.Datum, error) {
		ts := make([]types.Type, len(args))
		cs := make([]Expr, len(args))
		for i, a := range args {
			ts[i] = types.Text
			cs[i] = &Const{Value: a, Typ: types.Text}
		}
		fn, _, err := Builtins.Lookup(name, ts)
		if err != nil {
			t.Fatal(err)
		}
		return NewCall(fn, cs...).Eval(ctx, nil)
	}
	for _, r := range readGolden(t, "testdata/pattern_pg15.csv") {
		if r[0] == "" || r[1] == "" {
			continue // NULL inputs
		}
		s, p, re := types.NewText(r[0]), types.NewText(r[1]), types.NewText(r[2])
		rep := types.NewText(`<\&>`)
		similar := func() (types.Datum, error) {
			rx, err := call("similar_to_escape", p)
			if err != nil {
				return rx, err
			}
			return call("~", s, rx)
		}
		got := []struct {
			name string
			v    string
		}{
			{"s LIKE p", show(call("~~", s, p))},
			{"s ILIKE p", show(call("~~*", s, p))},
			{"s NOT LIKE p", show(call("!~~", s, p))},
			{"regexp_replace g", show(call("regexp_replace", s, re, rep, types.NewText("g")))},
			{"regexp_replace gi", show(call("regexp_replace", s, re, rep, types.NewText("gi")))},
			{"regexp_match", show(call("regexp_match", s, re))},
			{"SIMILAR TO", map[string]string{"t": "true", "f": "false", "ERR": "ERR"}[show(similar())]},
		}
		for i, g := range got {
			want := r[3+i]
			if i < 3 && want == "" {
				want = "ERR" // LIKE errors print nothing in the file
			}
			if g.v != want {
				t.Errorf("%s with s=%q p=%q r=%q = %s, Postgres %s", g.name, r[0], r[1], r[2], g.v, want)
			}
		}
	}
}
