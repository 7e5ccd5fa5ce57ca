package expr

import (
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Expected values are what Postgres 15 prints.
func TestLike(t *testing.T) {
	runCases(t, &Context{}, []fcase{
		{"~~", []any{"abc", "abc"}, "t", ""},
		{"~~", []any{"abc", "a%"}, "t", ""},
		{"~~", []any{"abc", "_b_"}, "t", ""},
		{"~~", []any{"abc", "c"}, "f", ""},
		{"~~", []any{"abc", "%"}, "t", ""},
		{"~~", []any{"", "%"}, "t", ""},
		{"~~", []any{"", "_"}, "f", ""},
		{"~~", []any{"abc", "%c%c"}, "f", ""},
		{"~~", []any{"abcbc", "%bc"}, "t", ""},
		{"~~", []any{"aXbXc", "a%b%c"}, "t", ""},
		{"~~", []any{"mississippi", "%iss%ppi"}, "t", ""},
		{"~~", []any{"mississippi", "m%issip%s"}, "f", ""},
		{"~~", []any{"a%c", `a\%c`}, "t", ""},
		{"~~", []any{"abc", `a\%c`}, "f", ""},
		{"~~", []any{"a_c", `a\_c`}, "t", ""},
		{"~~", []any{`a\c`, `a\\c`}, "t", ""},
		{"~~", []any{"日本語", "_本_"}, "t", ""},
		{"~~", []any{"abc", `ab\`}, "LIKE pattern must not end with escape character", sqlerr.InvalidEscapeSequence},
		{"~~", []any{nil, "a"}, "NULL", ""},
		{"!~~", []any{"abc", "a%"}, "f", ""},
		{"!~~", []any{"abc", "b%"}, "t", ""},
		{"~~*", []any{"ÀB", "àb"}, "t", ""},
		{"~~*", []any{"Hello", "h%O"}, "t", ""},
		{"!~~*", []any{"Hello", "h%O"}, "f", ""},
		{"like", []any{"abc", "A%"}, "f", ""},
		{"ilike", []any{"abc", "A%"}, "t", ""},
		{"like", []any{"a_c", "a#_c", "#"}, "t", ""},
		{"like", []any{"abc", "a#_c", "#"}, "f", ""},
		{"like", []any{`a\c`, `a\c`, ""}, "t", ""},
		{"like", []any{"a%", "a%", ""}, "t", ""},
		{"like", []any{"abc", "a%", "xy"}, "invalid escape string", sqlerr.InvalidEscapeSequence},
		{"notlike", []any{"abc", "a%", "!"}, "f", ""},
		{"notilike", []any{"ABC", "a%", "!"}, "f", ""},
		{"ilike", []any{"A_C", "a!_c", "!"}, "t", ""},
		{"like_escape", []any{`a#%b\c`, "#"}, `a\%b\\c`, ""},
		{"like_escape", []any{`a\b`, ""}, `a\\b`, ""},
		{"like_escape", []any{`a\b`, `\`}, `a\b`, ""},
		{"like_escape", []any{"a##b", "#"}, `a\#b`, ""},
		{"similar_to_escape", []any{"a%_.b"}, `^(?:a.*.\.b)$`, ""},
		{"similar_to_escape", []any{"a#%b", "#"}, `^(?:a\%b)$`, ""},
		{"similar_to_escape", []any{"(a|b)[%_]"}, `^(?:(?:a|b)[%_])$`, ""},
		{"similar_to_escape", []any{"a", "ab"}, "invalid escape string", sqlerr.InvalidEscapeSequence},
	})
}

func TestLikeEscapeMatchesOperator(t *testing.T) {
	// s LIKE p ESCAPE e is s ~~ like_escape(p, e): both routes agree.
	for _, tc := range []struct{ s, p, e string }{
		{"a_c", "a#_c", "#"}, {"abc", "a#_c", "#"}, {"a#c", "a##c", "#"},
		{`a\c`, `a\c`, "#"}, {"100%", "100!%", "!"}, {"100", "100!%", "!"},
	} {
		esc, _ := escapeRune(tc.e)
		direct, err := Like(tc.s, tc.p, esc, false)
		if err != nil {
			t.Fatal(err)
		}
		p, err := likeEscape(tc.p, tc.e)
		if err != nil {
			t.Fatal(err)
		}
		viaEscape, err := Like(tc.s, p, '\\', false)
		if err != nil {
			t.Fatal(err)
		}
		if direct != viaEscape {
			t.Errorf("%q LIKE %q ESCAPE %q: direct %v, via like_escape(%q) %v", tc.s, tc.p, tc.e, direct, p, viaEscape)
		}
	}
}

func TestRegex(t *testing.T) {
	runCases(t, &Context{}, []fcase{
		{"~", []any{"abc", "B"}, "f", ""},
		{"~*", []any{"abc", "B"}, "t", ""},
		{"!~", []any{"abc", "b"}, "f", ""},
		{"!~*", []any{"abc", "B"}, "f", ""},
		{"~", []any{"a\nb", "a.b"}, "t", ""},
		{"~", []any{"a\nb", "a$"}, "f", ""},
		{"~", []any{"a\nb", "(?n)a.b"}, "f", ""},
		{"~", []any{"x]", "[]x]+"}, "t", ""},
		{"~", []any{"a b", `a\yb`}, "f", ""},
		{"~", []any{"a b", `a\y b`}, "t", ""},
		{"~", []any{"ab", `a\Yb`}, "t", ""},
		{"~", []any{"abc", `c\Z`}, "t", ""},
		{"~", []any{"a.c", "***=."}, "t", ""},
		{"~", []any{"abc", "***=."}, "f", ""},
		{"~", []any{"aXb", "[[:upper:]]"}, "t", ""},
		{"~", []any{"abc", "^abc$"}, "t", ""},
		{"~", []any{"abc", nil}, "NULL", ""},
		{"~", []any{"a", "("}, "", sqlerr.InvalidRegularExpression},
		{"~", []any{"aa", `(a)\1`}, "", sqlerr.InvalidRegularExpression},
		{"~", []any{"aa", "a(?=a)"}, "invalid regular expression: lookahead and lookbehind constraints are not supported", sqlerr.InvalidRegularExpression},
		{"~", []any{"a b", `\ma`}, "", sqlerr.InvalidRegularExpression},
		{"~", []any{"a", "[[.a.]]"}, "", sqlerr.InvalidRegularExpression},
		{"~", []any{"a", "[[:<:]]a"}, "", sqlerr.InvalidRegularExpression},
		{"regexp_like", []any{"Abc", "b"}, "t", ""},
		{"regexp_like", []any{"ABC", "b", "i"}, "t", ""},
		{"regexp_like", []any{"ABC", "b", "g"}, `regexp_like() does not support the "global" option`, sqlerr.InvalidParameterValue},
		{"regexp_count", []any{"abcabc", "b"}, "2", ""},
		{"regexp_count", []any{"abcabc", "b", 3}, "1", ""},
		{"regexp_count", []any{"ABCabc", "b", 1, "i"}, "2", ""},
		{"regexp_count", []any{"abc", "b", 0}, `invalid value for parameter "start": 0`, sqlerr.InvalidParameterValue},
		{"regexp_replace", []any{"foobarbaz", "b(..)", `X\1Y`}, "fooXarYbaz", ""},
		{"regexp_replace", []any{"foobarbaz", "b(..)", `X\1Y`, "g"}, "fooXarYXazY", ""},
		{"regexp_replace", []any{"abc", "B", `[\&]`, "gi"}, "a[b]c", ""},
		{"regexp_replace", []any{"abc", "", "X", "g"}, "XaXbXcX", ""},
		{"regexp_replace", []any{"a.b", ".", `\\`, "g"}, `\\\`, ""},
		{"regexp_replace", []any{"abc", "(b)", `\2`}, "ac", ""},
		{"regexp_replace", []any{"abc", "b", `\x`}, `a\xc`, ""},
		{"regexp_replace", []any{"Thomas", ".[mN]a.", "M"}, "ThM", ""},
		{"regexp_replace", []any{"abc", "b", "X", "z"}, `invalid regular expression option: "z"`, sqlerr.InvalidParameterValue},
		{"regexp_replace", []any{"abcabc", "b", "X", 2}, "aXcabc", ""},
		{"regexp_replace", []any{"abcabcabc", "b", "X", 1, 2}, "abcaXcabc", ""},
		{"regexp_replace", []any{"abcabcabc", "b", "X", 1, 0}, "aXcaXcaXc", ""},
		{"regexp_replace", []any{"abcabcabc", "B", "X", 3, 0, "i"}, "abcaXcaXc", ""},
		{"regexp_replace", []any{"a", "b", "c", 0}, `invalid value for parameter "start": 0`, sqlerr.InvalidParameterValue},
		{"regexp_replace", []any{"éaé", "a", "b"}, "ébé", ""},
		{"regexp_replace", []any{"ab\nab", "^a", "X", "gn"}, "Xb\nXb", ""},
		{"regexp_replace", []any{"aaa", "^a", "X", "g"}, "Xaa", ""},
		{"regexp_replace", []any{"a b c", `\y`, "|", "g"}, "|a| |b| |c|", ""},
		{"regexp_replace", []any{"abc", "b*", "X", "g"}, "XaXXcX", ""},
		{"regexp_replace", []any{"AbC", "[[:lower:]]", "_", "g"}, "A_C", ""},
		{"regexp_replace", []any{"ÀbÇ", "[[:upper:]]", "_", "g"}, "_b_", ""},
		{"regexp_count", []any{"aaa", "a*"}, "2", ""},
		{"~*", []any{"É", "é"}, "t", ""},
		{"~", []any{"ß", `^\w$`}, "t", ""},
		{"~", []any{"a\bb", `a\bb`}, "t", ""},
		{"~", []any{"a", "^*"}, "invalid regular expression: quantifier operand invalid", sqlerr.InvalidRegularExpression},
		{"regexp_match", []any{"abcabc", "(a|ab)(c|bcd)"}, "{ab,c}", ""},
		{"regexp_match", []any{"xyz", "x(y)?(z)?"}, "{y,z}", ""},
		{"regexp_match", []any{"foobarbequebaz", "bar.*que"}, "{barbeque}", ""},
		{"regexp_match", []any{"foobarbequebaz", "(bar)(beque)"}, "{bar,beque}", ""},
		{"regexp_match", []any{"abc", "x"}, "NULL", ""},
		{"regexp_match", []any{"ab", "(a)(x)?"}, "{a,NULL}", ""},
		{"regexp_match", []any{"abc", "(b)|(x)"}, "{b,NULL}", ""},
		{"regexp_match", []any{"", ""}, `{""}`, ""},
		{"regexp_match", []any{`a b,"c`, "(.*)"}, `{"a b,\"c"}`, ""},
		{"regexp_match", []any{"null", "(.*)"}, `{"null"}`, ""},
		{"regexp_match", []any{"a\nb", "^b", "n"}, "{b}", ""},
		{"regexp_match", []any{"a b", "a # comment\n b", "x"}, "NULL", ""},
		{"regexp_match", []any{"xaby", "a # comment\n b", "x"}, "{ab}", ""},
		{"regexp_match", []any{"a", "a", "g"}, `regexp_match() does not support the "global" option`, sqlerr.InvalidParameterValue},
		{"regexp_match", []any{"a\nb", "a.b", "p"}, "NULL", ""},
		{"regexp_match", []any{"x\nb", "^b", "p"}, "NULL", ""},
		{"regexp_match", []any{"a\nb", "a.b", "w"}, "{\"a\nb\"}", ""},
		{"regexp_match", []any{"x\nb", "^b", "w"}, "{b}", ""},
		{"regexp_match", []any{"a.b", ".", "q"}, "{.}", ""},
		{"regexp_match", []any{"AB", "b", "ic"}, "NULL", ""},
		{"regexp_match", []any{"AB", "b", "ci"}, "{B}", ""},
		{"regexp_match", []any{"a\nb", "a.b", "ns"}, "{\"a\nb\"}", ""},
		{"regexp_match", []any{"abc", "(?i)B"}, "{b}", ""},
		{"regexp_match", []any{"ABC", "(?c)b"}, "NULL", ""},
		{"regexp_match", []any{"a.c", "(?q)."}, "{.}", ""},
		{"regexp_matches", []any{"abcabc", "(b)(c)"}, "{b,c}", ""},
		{"substring", []any{"foobar", "o.b"}, "oob", ""},
		{"substring", []any{"foobar", "o(.)b"}, "o", ""},
		{"substring", []any{"foobar", "x"}, "NULL", ""},
		{"substring", []any{"foobar", "(x)?o"}, "NULL", ""},
		{"substring", []any{"foobar", `%#"o_b#"%`, "#"}, "oob", ""},
		{"substring", []any{"foobar", "f%", "#"}, "foobar", ""},
		{"substring", []any{"foobar", "x%", "#"}, "NULL", ""},
		{"substring", []any{nullOf(types.KindText), "x"}, "NULL", ""},
	})
}
