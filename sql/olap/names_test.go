package olap

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/sql/sqlerr"
)

func TestLexRoundTripsAndClassifies(t *testing.T) {
	for _, c := range []struct{ in, kinds string }{
		{`SELECT "a""b", 'it''s' -- c`, `I_Q,_S__`},
		{`x::int[]`, `I::I[]`},
		{`E'a\'b' $tag$ x $tag$ $$y$$ /* a /* b */ c */ 1.5e-3`, `S_S_S___N`},
		{`a!~'x'||b`, `I!S|I`},
	} {
		toks := lex(c.in)
		if got := join(toks); got != c.in {
			t.Errorf("%q: round trip %q", c.in, got)
		}
		var b strings.Builder
		for _, tk := range toks {
			switch tk.kind {
			case tokSpace:
				b.WriteByte('_')
			case tokIdent:
				b.WriteByte('I')
			case tokQuoted:
				b.WriteByte('Q')
			case tokString:
				b.WriteByte('S')
			case tokNumber:
				b.WriteByte('N')
			default:
				b.WriteString(tk.text[:1])
			}
		}
		if got := b.String(); got != c.kinds {
			t.Errorf("%q: kinds %s, want %s", c.in, got, c.kinds)
		}
	}
}

func TestBindNames(t *testing.T) {
	cases := []struct {
		inputs []string
		sql    string
		views  string // per input, views joined by "," and inputs by ";"
		out    string
		code   string
	}{
		{[]string{"t1"}, "SELECT * FROM t1", "t1", "SELECT * FROM t1", ""},
		{[]string{"dev.t1", "t2"}, "SELECT dev.t1.k, x.dev FROM dev . t1 JOIN t2 ON t2.k = dev.t1.k, x WHERE 'dev.t1' <> s.dev.t1",
			"dev.t1,t1;t2", `SELECT "dev.t1".k, x.dev FROM "dev.t1" JOIN t2 ON t2.k = "dev.t1".k, x WHERE 'dev.t1' <> s.dev.t1`, ""},
		{[]string{"dev.t", "prod.t"}, "SELECT * FROM dev.t, PROD.T", "dev.t;prod.t", `SELECT * FROM "dev.t", "prod.t"`, ""},
		{[]string{`Dev.T`}, `SELECT * FROM "Dev"."T", dev.t`, "Dev.T,T", `SELECT * FROM "Dev.T", dev.t`, ""},
		// Input names are exact; only ASCII letters of bare names fold.
		{[]string{"Ünïcødé_表", "Вид"}, `SELECT * FROM "Ünïcødé_表", Вид`, "Ünïcødé_表;Вид", `SELECT * FROM "Ünïcødé_表", Вид`, ""},
		// Names DuckDB would take for one get names of their own.
		{[]string{"MixedCase", "mixedcase"}, `SELECT m.x, MixedCase.y, n.mixedcase FROM "MixedCase" m, MixedCase, f(mixedcase) mixedcase()`,
			"MixedCase;mixedcase (input 2)", `SELECT m.x, "mixedcase (input 2)".y, n.mixedcase FROM "MixedCase" m, "mixedcase (input 2)", f("mixedcase (input 2)") mixedcase()`, ""},
		{[]string{"dev.T", "prod.t"}, `SELECT * FROM dev."T", prod.t`, "dev.T,T;prod.t,t (input 2)", `SELECT * FROM "dev.T", "prod.t"`, ""},
		{[]string{"t", "t"}, "", "", "", sqlerr.DuplicateTable},
		{[]string{"dev.t", "t"}, "", "", "", sqlerr.DuplicateTable},
		{[]string{"a.b.c"}, "", "", "", sqlerr.InvalidParameterValue},
		{[]string{".t"}, "", "", "", sqlerr.InvalidParameterValue},
		{[]string{""}, "", "", "", sqlerr.InvalidParameterValue},
	}
	for _, c := range cases {
		var in []Input
		for _, n := range c.inputs {
			in = append(in, Input{Name: n})
		}
		bs, out, err := bindNames(in, c.sql)
		if c.code != "" {
			if sqlerr.Code(err) != c.code {
				t.Errorf("%v: %v, want %s", c.inputs, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", c.inputs, err)
			continue
		}
		var views []string
		for _, b := range bs {
			views = append(views, strings.Join(b.views, ","))
		}
		if got := strings.Join(views, ";"); got != c.views {
			t.Errorf("%v: views %s, want %s", c.inputs, got, c.views)
		}
		if out != c.out {
			t.Errorf("%v: %s\n got %s\nwant %s", c.inputs, c.sql, out, c.out)
		}
	}
}

func TestRegexLiterals(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT a ~ 'x', b !~* '^y$', c ~ d, e ~ E'z'": "SELECT a ~ '(?s).*(?:x).*', b !~* '(?s).*(?:^y$).*', c ~ d, e ~ E'z'",
		"SELECT 'a ~ b'": "SELECT 'a ~ b'",
	} {
		if got := regexLiterals(in); got != want {
			t.Errorf("%s\n got %s\nwant %s", in, got, want)
		}
	}
}

func TestPgColumnName(t *testing.T) {
	for in, want := range map[string]string{
		"count_star()": "count", "sum(v)": "sum", "main.list_value(1, 2)": "?column?", "CAST(x AS INTEGER)": "?column?",
		"(a + 1)": "?column?", "name": "name", "Mixed Case": "Mixed Case", "regexp_full_match(a, 'x')": "?column?",
	} {
		if got := pgColumnName(in); got != want {
			t.Errorf("%s: %s, want %s", in, got, want)
		}
	}
}
