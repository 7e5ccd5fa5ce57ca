package expr

import (
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"
)

// randomSimplePattern draws a Postgres pattern of the simple shape
// (regex_simple.go) over a small alphabet, so that random texts match it
// often and in more than one way.
func randomSimplePattern(r *rand.Rand) string {
	lits := []string{"a", "b=", "ab", "&", "é", "x_id="}
	classes := []string{"[^&]", "[a-c]", ".", `\d`, "[é&]", `\w`}
	var b strings.Builder
	n := 1 + r.IntN(4)
	capped := false
	for k := range n {
		var part string
		switch r.IntN(5) {
		case 0:
			part = lits[r.IntN(len(lits))]
		case 1:
			part = classes[r.IntN(len(classes))]
		case 2:
			alts := []string{"^", "&", "a", "ab", "b"}
			r.Shuffle(len(alts), func(i, j int) { alts[i], alts[j] = alts[j], alts[i] })
			part = "(?:" + strings.Join(alts[:1+r.IntN(3)], "|") + ")"
		case 3:
			if k == 0 {
				part = "^"
			} else {
				part = lits[r.IntN(len(lits))]
			}
		default:
			if k == n-1 {
				part = classes[r.IntN(len(classes))] + []string{"*", "+"}[r.IntN(2)]
				if r.IntN(3) == 0 {
					part += "$"
				}
			} else {
				part = lits[r.IntN(len(lits))]
			}
		}
		if !capped && r.IntN(3) == 0 && !strings.HasPrefix(part, "(?:") && part != "^" && !strings.HasSuffix(part, "$") {
			part, capped = "("+part+")", true
		}
		b.WriteString(part)
	}
	return b.String()
}

// randomSimpleText draws a text of the pattern alphabet, with non-ASCII
// characters and invalid bytes.
func randomSimpleText(r *rand.Rand) string {
	pieces := []string{"a", "b", "=", "&", "é", "x_id=", "ab=", "1", "\xff", "_", "\n", "c"}
	var b strings.Builder
	for range r.IntN(12) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// TestSimpleRegexMatchesGo checks invariant simple-regex-same-match: for
// random patterns of the simple shape, compileRegexLit uses the direct
// matcher, and substring(s FROM p) and s ~ p give on random texts what
// Go's matcher gives on the whole text, leftmost-longest and
// leftmost-first alike.
func TestSimpleRegexMatchesGo(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	simple := 0
	for range 3000 {
		pattern := randomSimplePattern(r)
		if r.IntN(4) == 0 {
			pattern = "(?:x|y)*?" + pattern // prefers the shortest: leftmost-first, and not simple
		}
		c, err := compileRegexLit(pattern, regexOpts{newline: 's'})
		if err != nil {
			t.Fatalf("%q: %v", pattern, err)
		}
		if c.simple != nil {
			simple++
		}
		src, err := translateRegex(pattern, regexOpts{newline: 's'})
		if err != nil {
			t.Fatal(err)
		}
		ref := regexp.MustCompile(src)
		if !prefersShortest(pattern) {
			ref.Longest()
		}
		for range 40 {
			s := randomSimpleText(r)
			want, wantOK := "", false
			if m := ref.FindStringSubmatchIndex(s); m != nil {
				switch {
				case len(m) == 2:
					want, wantOK = s[m[0]:m[1]], true
				case m[2] >= 0:
					want, wantOK = s[m[2]:m[3]], true
				}
			}
			got, ok := regexSubstringStr(s, c)
			if got != want || ok != wantOK {
				t.Fatalf("substring(%q FROM %q) = %q, %v; Go's matcher: %q, %v", s, pattern, got, ok, want, wantOK)
			}
			if m := c.matchString(s); m != ref.MatchString(s) {
				t.Fatalf("%q ~ %q = %v, Go's matcher: %v", s, pattern, m, !m)
			}
		}
	}
	if simple < 1000 {
		t.Fatalf("only %d of the patterns got the direct matcher", simple)
	}
}

// TestSimpleRegexShapes checks which expressions the direct matcher
// takes.
func TestSimpleRegexShapes(t *testing.T) {
	for _, c := range []struct {
		pattern string
		simple  bool
	}{
		{`(?:&|^)channel_id=([^&]*)`, true},
		{`^a(\d+)$`, true},
		{`id=(.*)`, true},
		{`a*b`, false},        // a repetition before something else
		{`(a|bc)d`, false},    // a capture of an alternation
		{`((a)b)`, false},     // nested captures
		{`a+?`, false},        // lazy
		{`(?i)abc`, false},    // case-folded
		{`(?m)^abc`, false},   // line anchors
		{`\ya`, false},        // word boundary
		{`a(?:b|c*)`, false},  // a repetition inside an alternation
		{`x(\d)(\d+)`, true},  // two groups
		{`x(?:ab|^|c)`, true}, // literals and \A
	} {
		src, err := translateRegex(c.pattern, regexOpts{newline: 's'})
		if err != nil {
			t.Fatal(err)
		}
		parsed, err := syntax.Parse(src, syntax.Perl)
		if err != nil {
			t.Fatal(err)
		}
		if got := newSimpleRegex(parsed.Simplify(), true) != nil; got != c.simple {
			t.Errorf("%q: simple = %v, want %v", c.pattern, got, c.simple)
		}
	}
}
