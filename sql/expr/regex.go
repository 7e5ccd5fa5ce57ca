package expr

import (
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// POSIX regular expressions: the operators ~ ~* !~ !~*, regexp_like,
// regexp_count, regexp_replace, regexp_match, regexp_matches (its
// single-row form) and substring(s FROM pattern).
//
// Postgres implements Henry Spencer's "advanced regular expressions"
// (ARE); Strata runs them on Go's RE2 engine, translating what differs:
//
//   - By default . and [^...] match a newline and ^ $ anchor only at the
//     ends of the string (Postgres's default; Go needs (?s)). Flag n (or m)
//     makes it newline-sensitive, flags p and w give the partial modes;
//     embedded options (?i) etc. at the start act as flags.
//   - \w, \W, [[:alpha:]], [[:alnum:]], [[:upper:]] and [[:lower:]] are
//     Unicode-aware, as Postgres's are in a UTF-8 locale (RE2's are ASCII).
//   - ARE escapes: \y and \Y (word boundary, not one) become \b and \B,
//     \b is a backspace and \B a backslash, \Z becomes \z, an escaped
//     non-alphanumeric character is itself; the ***= prefix and flag q
//     make the pattern a literal; flag x drops white space and #-comments.
//   - A quantifier on ^ or $ is an error, as in an ARE.
//   - The overall match is the longest at the leftmost position (POSIX),
//     unless the first quantifier is lazy, which makes the ARE prefer the
//     shortest: Strata then keeps RE2's leftmost-first semantics.
//   - Global matching (flag g, regexp_count) finds the empty match right
//     after a previous match, as Postgres does and Go's FindAll does not.
//
// What RE2 cannot do is refused with 2201B invalid_regular_expression,
// never silently changed: back references (\1 .. \9), lookahead and
// lookbehind constraints ((?=, (?!, (?<=, (?<!), the word-start and
// word-end escapes \m \M and classes [[:<:]] [[:>:]], collating elements
// [[.x.]] and equivalence classes [[=x=]], and the basic-RE flag b.
//
// Left as they are: a pattern that mixes lazy and greedy quantifiers may
// choose other submatches than Postgres (whose whole-RE preference
// governs every part); \y and \b-style boundaries use ASCII word
// characters.
//
// Compiled expressions are kept in a small bounded cache keyed by pattern
// and flags, as Postgres keeps its last 32, because patterns are almost
// always constants evaluated once per row.

// regexCacheSize bounds the compiled-expression cache.
const regexCacheSize = 128

var regexCache struct {
	mu sync.Mutex
	m  map[regexKey]*compiledRegex // guarded by mu; at most regexCacheSize entries
}

// regexKey names a compiled expression in regexCache: the pattern and the
// flags that change its translation (a struct, so that a lookup builds
// no key string per row).
type regexKey struct {
	caseInsensitive, literal, expanded bool
	newline                            byte
	pattern                            string
}

// compiledRegex is a compiled expression with a literal that every match
// contains (lit, "" when the expression has none that is easy to see),
// and the most bytes a match can span before it (before, -1 when
// unbounded). A string without lit cannot match, which strings.Index
// tells far sooner than the matcher; and a match cannot start more than
// before bytes ahead of lit's first occurrence, so the matcher can skip
// the text in front (Nexmark q21 looks for "(?:&|^)channel_id=" near the
// end of urls, most of which lack it).
type compiledRegex struct {
	re     *regexp.Regexp
	lit    string
	before int
	// simple is the expression's direct matcher when it has the shape
	// regex_simple.go takes, else nil.
	simple *simpleRegex
}

// matchString is c.re.MatchString(s).
func (c *compiledRegex) matchString(s string) bool {
	start, ok := c.window(s)
	if !ok {
		return false
	}
	if c.simple != nil {
		_, _, _, _, found := c.simple.find(s[start:])
		return found
	}
	return c.re.MatchString(s[start:])
}

// findStringSubmatchIndex is c.re.FindStringSubmatchIndex(s).
func (c *compiledRegex) findStringSubmatchIndex(s string) []int {
	start, ok := c.window(s)
	if !ok {
		return nil
	}
	m := c.re.FindStringSubmatchIndex(s[start:])
	if start > 0 {
		for i := range m {
			if m[i] >= 0 {
				m[i] += start
			}
		}
	}
	return m
}

// window returns where in s the matcher may start so as to find the
// matches of c.re in s (0 when there is nothing to skip); ok is false
// when s cannot match.
//
// With a literal whose first occurrence is at occ, every match starts at
// or after occ-before: the parts of the expression ahead of the literal
// span at most before bytes, and a match that began earlier would put
// the literal ahead of its first occurrence. The matcher then runs on
// s[start:], start a rune boundary one whole rune ahead of occ-before:
// from the slice's second rune on, every position sees the same text
// around it as in s (an assertion such as ^ or \b differs only at the
// slice's first position, where no match can start), and the caller
// shifts the match's offsets back by start.
func (c *compiledRegex) window(s string) (start int, ok bool) {
	if c.lit == "" {
		return 0, true
	}
	occ := strings.Index(s, c.lit)
	if occ < 0 {
		return 0, false
	}
	start = occ - c.before
	if c.before < 0 || start <= 0 {
		return 0, true
	}
	for start > 0 && !utf8.RuneStart(s[start]) {
		start--
	}
	if start > 0 {
		_, size := utf8.DecodeLastRuneInString(s[:start])
		start -= size
	}
	return start, true
}

// requiredLiteral returns the longest case-sensitive literal that every
// match of re contains, or "", with the most bytes a match spans before
// it (-1 when unbounded): a literal is required when it is the
// expression itself, a whole capture group of a required part, or one of
// the parts of a concatenation. Alternations, repetitions and
// case-folded literals give none (a part that can be skipped or varies
// requires nothing). A literal holding U+FFFD is left out, as the
// matcher reads an invalid byte as that character.
func requiredLiteral(re *syntax.Regexp) (lit string, before int) {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 || slices.Contains(re.Rune, utf8.RuneError) {
			return "", -1
		}
		return string(re.Rune), 0
	case syntax.OpCapture:
		return requiredLiteral(re.Sub[0])
	case syntax.OpConcat:
		lit, before = "", -1
		ahead := 0 // most bytes the parts so far span; -1 unbounded
		for _, sub := range re.Sub {
			if l, b := requiredLiteral(sub); len(l) > len(lit) {
				lit, before = l, -1
				if ahead >= 0 && b >= 0 {
					before = ahead + b
				}
			}
			if w := maxWidth(sub); w < 0 || ahead < 0 {
				ahead = -1
			} else {
				ahead += w
			}
		}
		return lit, before
	}
	return "", -1
}

// maxWidth returns the most bytes a match of re spans, -1 when
// unbounded; a character counts as utf8.UTFMax bytes (an invalid byte,
// read as one character, spans one).
func maxWidth(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return 0
	case syntax.OpLiteral:
		return utf8.UTFMax * len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxWidth(re.Sub[0])
	case syntax.OpConcat:
		sum := 0
		for _, sub := range re.Sub {
			w := maxWidth(sub)
			if w < 0 {
				return -1
			}
			sum += w
		}
		return sum
	case syntax.OpAlternate:
		most := 0
		for _, sub := range re.Sub {
			w := maxWidth(sub)
			if w < 0 {
				return -1
			}
			most = max(most, w)
		}
		return most
	case syntax.OpRepeat:
		if re.Max < 0 {
			return -1
		}
		w := maxWidth(re.Sub[0])
		if w < 0 {
			return -1
		}
		return w * re.Max
	}
	return -1 // star, plus, and anything not listed
}

// regexOpts are the parsed flags of a regexp function call.
type regexOpts struct {
	caseInsensitive bool
	newline         byte // 's' (default), 'n', 'p' or 'w'
	literal         bool
	expanded        bool
	global          bool
}

func regexError(format string, args ...any) error {
	return errorf(sqlerr.InvalidRegularExpression, "invalid regular expression: "+format, args...)
}

// parseRegexFlags reads Postgres's regexp flags; fn names the function for
// the error on g where g is not allowed ("" allows it).
func parseRegexFlags(flags string, allowGlobal bool, fn string) (regexOpts, error) {
	o := regexOpts{newline: 's'}
	for _, c := range flags {
		switch c {
		case 'g':
			if !allowGlobal {
				return o, &sqlerr.Error{Code: sqlerr.InvalidParameterValue,
					Message: fn + "() does not support the \"global\" option", Hint: globalHint(fn)}
			}
			o.global = true
		case 'i':
			o.caseInsensitive = true
		case 'c':
			o.caseInsensitive = false
		case 'n', 'm':
			o.newline = 'n'
		case 's':
			o.newline = 's'
		case 'p':
			o.newline = 'p'
		case 'w':
			o.newline = 'w'
		case 'q':
			o.literal = true
		case 'x':
			o.expanded = true
		case 't', 'e':
			// tight syntax and extended REs: both are what Strata parses.
		case 'b':
			return o, errorf(sqlerr.FeatureNotSupported, "basic regular expressions (flag \"b\") are not supported")
		default:
			return o, errorf(sqlerr.InvalidParameterValue, "invalid regular expression option: \"%c\"", c)
		}
	}
	return o, nil
}

func globalHint(fn string) string {
	switch fn {
	case "regexp_match":
		return "Use the regexp_matches function instead."
	case "regexp_matches":
		return "Only the single-row form of regexp_matches is supported; use regexp_replace or regexp_count for global work."
	}
	return ""
}

// compileRegex translates and compiles pattern under o, through the
// cache.
func compileRegex(pattern string, o regexOpts) (*regexp.Regexp, error) {
	c, err := compileRegexLit(pattern, o)
	if err != nil {
		return nil, err
	}
	return c.re, nil
}

// compileRegexLit is compileRegex with the expression's required literal.
func compileRegexLit(pattern string, o regexOpts) (*compiledRegex, error) {
	key := regexKey{caseInsensitive: o.caseInsensitive, literal: o.literal, expanded: o.expanded, newline: o.newline, pattern: pattern}
	regexCache.mu.Lock()
	c, ok := regexCache.m[key]
	regexCache.mu.Unlock()
	if ok {
		return c, nil
	}
	src, err := translateRegex(pattern, o)
	if err != nil {
		return nil, err
	}
	re, err := regexp.Compile(src)
	if err == nil && !prefersShortest(pattern) {
		re.Longest() // an ARE's overall match is the longest, as POSIX's
	}
	if err != nil {
		msg := err.Error()
		msg = strings.TrimPrefix(msg, "error parsing regexp: ")
		if strings.Contains(msg, "(?=") || strings.Contains(msg, "(?!") || strings.Contains(msg, "(?<") {
			return nil, regexError("lookahead and lookbehind constraints are not supported")
		}
		return nil, regexError("%s", msg)
	}
	c = &compiledRegex{re: re, before: -1}
	// regexp.Compile parsed src with syntax.Perl, so this parse succeeds
	// and gives the same expression.
	if parsed, err := syntax.Parse(src, syntax.Perl); err == nil {
		simplified := parsed.Simplify()
		c.lit, c.before = requiredLiteral(simplified)
		c.simple = newSimpleRegex(simplified, !prefersShortest(pattern))
	}
	regexCache.mu.Lock()
	if regexCache.m == nil || len(regexCache.m) >= regexCacheSize {
		regexCache.m = make(map[regexKey]*compiledRegex, regexCacheSize)
	}
	regexCache.m[key] = c
	regexCache.mu.Unlock()
	return c, nil
}

// translateRegex rewrites a Postgres ARE into RE2 syntax (see the comment
// at the top of this file).
func translateRegex(pattern string, o regexOpts) (string, error) {
	if s, ok := strings.CutPrefix(pattern, "***="); ok {
		pattern, o.literal = s, true
	} else {
		pattern = strings.TrimPrefix(pattern, "***:")
	}
	if opts, rest, ok := embeddedOptions(pattern); ok && !o.literal {
		// ARE embedded options, (?flags) at the very start, act as flags.
		pattern = rest
		for _, c := range opts {
			switch c {
			case 'i':
				o.caseInsensitive = true
			case 'c':
				o.caseInsensitive = false
			case 'x':
				o.expanded = true
			case 'q':
				o.literal = true
			case 'n', 'm', 's', 'p', 'w':
				o.newline = byte(c)
				if c == 'm' {
					o.newline = 'n'
				}
			case 'b':
				return "", errorf(sqlerr.FeatureNotSupported, "basic regular expressions (flag \"b\") are not supported")
			}
		}
	}
	flags := map[byte]string{'s': "s", 'n': "m", 'p': "", 'w': "sm"}[o.newline]
	if o.caseInsensitive {
		flags += "i"
	}
	var b strings.Builder
	if flags != "" {
		b.WriteString("(?" + flags + ")")
	}
	if o.literal {
		b.WriteString(regexp.QuoteMeta(pattern))
		return b.String(), nil
	}
	rs := []rune(pattern)
	prevAnchor := false // the last thing written was ^ or $
	for i := 0; i < len(rs); i++ {
		c := rs[i]
		if prevAnchor && (c == '*' || c == '+' || c == '?' || c == '{') {
			return "", regexError("quantifier operand invalid")
		}
		prevAnchor = false
		switch {
		case c == '\\':
			if i+1 >= len(rs) {
				return "", regexError("invalid escape \\ sequence")
			}
			i++
			switch e := rs[i]; {
			case e >= '1' && e <= '9':
				return "", regexError("back references (\\%c) are not supported", e)
			case e == 'm' || e == 'M':
				return "", regexError("word-start and word-end escapes (\\%c) are not supported", e)
			case e == 'y':
				b.WriteString(`\b`)
			case e == 'Y':
				b.WriteString(`\B`)
			case e == 'Z':
				b.WriteString(`\z`)
			case e == 'b': // backspace in an ARE
				b.WriteString(`\x08`)
			case e == 'B': // a synonym for \\ in an ARE
				b.WriteString(`\\`)
			case e == 'e':
				b.WriteString(`\x1B`)
			case e == 'w':
				b.WriteString(`[` + wordClass + `]`)
			case e == 'W':
				b.WriteString(`[^` + wordClass + `]`)
			case e < utf8.RuneSelf && (unicode.IsLetter(e) || unicode.IsDigit(e)):
				b.WriteByte('\\')
				b.WriteRune(e)
			default: // an escaped non-alphanumeric is itself
				b.WriteString(regexp.QuoteMeta(string(e)))
			}
		case c == '[':
			end, err := copyBracket(&b, rs, i)
			if err != nil {
				return "", err
			}
			i = end
		case o.expanded && (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'):
		case o.expanded && c == '#':
			for i < len(rs) && rs[i] != '\n' {
				i++
			}
		default:
			b.WriteRune(c)
			prevAnchor = c == '^' || c == '$'
		}
	}
	return b.String(), nil
}

// wordClass is what \w matches in Postgres with a UTF-8 locale: letters
// and digits of any script, and the underscore (RE2's \w is ASCII only).
const wordClass = `\p{L}\p{N}_`

// posixClasses maps bracket classes to Unicode-aware RE2 equivalents, as
// Postgres's iswalpha and friends classify characters.
var posixClasses = map[string]string{
	"[:alpha:]": `\p{L}`, "[:alnum:]": `\p{L}\p{N}`, "[:upper:]": `\p{Lu}`, "[:lower:]": `\p{Ll}`,
	"[:word:]": wordClass,
}

// prefersShortest reports whether an ARE prefers the shortest match: its
// first quantifier is non-greedy (*?, +?, ??, {m,n}?).
func prefersShortest(pattern string) bool {
	rs := []rune(pattern)
	inBracket := false
	for i := 0; i < len(rs); i++ {
		switch c := rs[i]; {
		case c == '\\':
			i++
		case inBracket:
			if c == ']' {
				inBracket = false
			}
		case c == '[':
			inBracket = true
			if i+1 < len(rs) && rs[i+1] == '^' {
				i++
			}
			if i+1 < len(rs) && rs[i+1] == ']' {
				i++
			}
		case c == '(' && i+1 < len(rs) && rs[i+1] == '?':
			i++ // a group flag, not a quantifier
		case c == '*' || c == '+' || c == '?':
			return i+1 < len(rs) && rs[i+1] == '?'
		case c == '{':
			j := i
			for j < len(rs) && rs[j] != '}' {
				j++
			}
			if j < len(rs) {
				return j+1 < len(rs) && rs[j+1] == '?'
			}
		}
	}
	return false
}

// allMatches returns the successive matches of re in s as Postgres's
// regexp functions find them: after a match the search resumes at its
// end, and after an empty match one character later. This differs from
// Go's FindAll, which skips an empty match right after a previous match
// (Postgres reports it: matching 'b|' globally in 'ab' finds 'b' and
// then the empty string at the end). The empty match is found by matching the rest of the string,
// which is exact unless the pattern looks behind (^, \b, \B), where Go's
// result stands.
func allMatches(re *regexp.Regexp, s string) [][]int {
	ms := re.FindAllStringSubmatchIndex(s, -1)
	if lookBehind.MatchString(re.String()) {
		return ms
	}
	var out [][]int
	for k, m := range ms {
		out = append(out, m)
		e := m[1]
		if m[0] == e || (k+1 < len(ms) && ms[k+1][0] == e) {
			continue
		}
		if x := re.FindStringSubmatchIndex(s[e:]); x != nil && x[0] == 0 && x[1] == 0 {
			for j := range x {
				if x[j] >= 0 {
					x[j] += e
				}
			}
			out = append(out, x)
		}
	}
	return out
}

// lookBehind finds assertions that depend on the text before a position.
var lookBehind = regexp.MustCompile(`\^|\\[bBA]|\(\?[a-z]*m`)

// embeddedOptions splits a leading ARE option group "(?xyz)" off pattern.
func embeddedOptions(pattern string) (opts, rest string, ok bool) {
	if !strings.HasPrefix(pattern, "(?") {
		return "", pattern, false
	}
	end := strings.IndexByte(pattern, ')')
	if end < 3 {
		return "", pattern, false
	}
	for _, c := range pattern[2:end] {
		if !strings.ContainsRune("bcegimnpqstwx", c) {
			return "", pattern, false
		}
	}
	return pattern[2:end], pattern[end+1:], true
}

// copyBracket copies the bracket expression starting at rs[start] == '['
// and returns the index of its closing ']'.
func copyBracket(b *strings.Builder, rs []rune, start int) (int, error) {
	rest := string(rs[start:])
	if strings.HasPrefix(rest, "[[:<:]]") || strings.HasPrefix(rest, "[[:>:]]") {
		return 0, regexError("word-start and word-end classes ([[:<:]], [[:>:]]) are not supported")
	}
	b.WriteByte('[')
	i := start + 1
	if i < len(rs) && rs[i] == '^' {
		b.WriteByte('^')
		i++
	}
	if i < len(rs) && rs[i] == ']' {
		b.WriteString(`\]`)
		i++
	}
	for ; i < len(rs); i++ {
		switch c := rs[i]; c {
		case ']':
			b.WriteByte(']')
			return i, nil
		case '\\':
			if i+1 < len(rs) && rs[i+1] == 'w' {
				b.WriteString(wordClass)
				i++
				continue
			}
			b.WriteByte('\\')
			if i+1 < len(rs) {
				i++
				b.WriteRune(rs[i])
			}
		case '[':
			if i+1 < len(rs) && (rs[i+1] == '.' || rs[i+1] == '=') {
				return 0, regexError("collating elements and equivalence classes ([[.x.]], [[=x=]]) are not supported")
			}
			if i+1 < len(rs) && rs[i+1] == ':' {
				end := strings.Index(string(rs[i:]), ":]")
				if end < 0 {
					return 0, regexError("brackets [] not balanced")
				}
				n := utf8.RuneCountInString(string(rs[i:])[:end+2])
				class := string(rs[i : i+n])
				if u, ok := posixClasses[class]; ok {
					class = u
				}
				b.WriteString(class)
				i += n - 1
				continue
			}
			b.WriteString(`\[`)
		default:
			b.WriteRune(c)
		}
	}
	return 0, regexError("brackets [] not balanced")
}

// regexFor compiles the pattern of a call with optional flags.
func regexFor(pattern string, flags string, allowGlobal bool, fn string) (*regexp.Regexp, regexOpts, error) {
	o, err := parseRegexFlags(flags, allowGlobal, fn)
	if err != nil {
		return nil, o, err
	}
	re, err := compileRegex(pattern, o)
	return re, o, err
}

// expandReplacement appends rep to dst with \1..\9 replaced by the
// submatches of m in s and \& by the whole match, as Postgres's
// regexp_replace does; \\ is a backslash and any other backslash is kept.
func expandReplacement(dst []byte, rep, s string, m []int) []byte {
	for i := 0; i < len(rep); i++ {
		c := rep[i]
		if c != '\\' || i+1 >= len(rep) {
			dst = append(dst, c)
			continue
		}
		n := rep[i+1]
		switch {
		case n >= '1' && n <= '9':
			g := int(n - '0')
			if 2*g+1 < len(m) && m[2*g] >= 0 {
				dst = append(dst, s[m[2*g]:m[2*g+1]]...)
			}
			i++
		case n == '&':
			dst = append(dst, s[m[0]:m[1]]...)
			i++
		case n == '\\':
			dst = append(dst, '\\')
			i++
		default:
			dst = append(dst, '\\')
		}
	}
	return dst
}

// regexpReplace replaces in s, from 1-based character start, the n-th
// match (n = 0: every match) of re by rep.
func regexpReplace(s string, re *regexp.Regexp, rep string, start, n int64) string {
	off := len(runeSlice(s, 0, start-1))
	ms := allMatches(re, s[off:])
	var out []byte
	out = append(out, s[:off]...)
	last := off
	for k, m := range ms {
		if n != 0 && int64(k+1) != n {
			continue
		}
		for j := range m {
			if m[j] >= 0 {
				m[j] += off
			}
		}
		out = append(out, s[last:m[0]]...)
		out = expandReplacement(out, rep, s, m)
		last = m[1]
		if n != 0 {
			break
		}
	}
	out = append(out, s[last:]...)
	return string(out)
}

// formatTextArray prints a one-dimensional text[] as Postgres's
// array_out does: {a,b,NULL}, with elements quoted when they are empty,
// spell NULL, or hold braces, commas, quotes, backslashes or white space.
func formatTextArray(elems []string, null []bool) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		if null[i] {
			b.WriteString("NULL")
			continue
		}
		if e != "" && !strings.EqualFold(e, "null") && !strings.ContainsAny(e, "{},\"\\ \t\n\r\v\f") {
			b.WriteString(e)
			continue
		}
		b.WriteByte('"')
		for _, r := range e {
			if r == '"' || r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// regexpMatch returns regexp_match's text[] (as its text form): the
// capture groups of the first match, or the whole match when the pattern
// has no groups; NULL without a match.
func regexpMatch(s string, re *regexp.Regexp) types.Datum {
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return types.Null
	}
	if len(m) == 2 {
		return types.NewText(formatTextArray([]string{s[m[0]:m[1]]}, []bool{false}))
	}
	n := len(m)/2 - 1
	elems, null := make([]string, n), make([]bool, n)
	for g := 1; g <= n; g++ {
		if m[2*g] < 0 {
			null[g-1] = true
			continue
		}
		elems[g-1] = s[m[2*g]:m[2*g+1]]
	}
	return types.NewText(formatTextArray(elems, null))
}

// regexSubstring is substring(s FROM pattern): the first capture group
// of the first match (NULL if that group took no part), or the whole
// match when there are no groups; NULL without a match.
func regexSubstring(s string, re *compiledRegex) types.Datum {
	if sub, ok := regexSubstringStr(s, re); ok {
		return types.NewText(sub)
	}
	return types.Null
}

// regexSubstringStr is regexSubstring's text; ok is false for NULL.
func regexSubstringStr(s string, re *compiledRegex) (string, bool) {
	if re.simple != nil {
		start, ok := re.window(s)
		if !ok {
			return "", false
		}
		_, _, g0, g1, found := re.simple.find(s[start:])
		return s[start+g0 : start+g1], found
	}
	m := re.findStringSubmatchIndex(s)
	switch {
	case m == nil:
		return "", false
	case len(m) == 2:
		return s[m[0]:m[1]], true
	case m[2] < 0:
		return "", false
	}
	return s[m[2]:m[3]], true
}

func checkPositive(name string, v int64) error {
	if v <= 0 {
		return errorf(sqlerr.InvalidParameterValue, "invalid value for parameter \"%s\": %d", name, v)
	}
	return nil
}

func registerRegex(r *Registry) {
	for _, v := range []struct {
		op           string
		fold, negate bool
	}{{"~", false, false}, {"~*", true, false}, {"!~", false, true}, {"!~*", true, true}} {
		v := v
		o := regexOpts{newline: 's', caseInsensitive: v.fold}
		r.Add(&Func{Name: v.op, Params: kinds(kText, kText), Infix: true, Strict: true, ResultKind: kBool,
			Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
				re, err := compileRegexLit(a[1].Str(), o)
				if err != nil {
					return types.Null, err
				}
				return types.NewBool(re.matchString(a[0].Str()) != v.negate), nil
			}})
	}
	flagsArg := func(a []types.Datum, i int) string {
		if i < len(a) {
			return a[i].Str()
		}
		return ""
	}
	like := func(_ *Context, a []types.Datum) (types.Datum, error) {
		re, _, err := regexFor(a[1].Str(), flagsArg(a, 2), false, "regexp_like")
		if err != nil {
			return types.Null, err
		}
		return types.NewBool(re.MatchString(a[0].Str())), nil
	}
	r.Add(strict("regexp_like", kinds(kText, kText), kBool, like), strict("regexp_like", kinds(kText, kText, kText), kBool, like))
	count := func(_ *Context, a []types.Datum) (types.Datum, error) {
		start := int64(1)
		if len(a) > 2 {
			start = a[2].Int64()
			if err := checkPositive("start", start); err != nil {
				return types.Null, err
			}
		}
		re, _, err := regexFor(a[1].Str(), flagsArg(a, 3), false, "regexp_count")
		if err != nil {
			return types.Null, err
		}
		s := a[0].Str()
		s = s[len(runeSlice(s, 0, start-1)):]
		return types.NewInt32(int32(len(allMatches(re, s)))), nil
	}
	r.Add(strict("regexp_count", kinds(kText, kText), kInt, count),
		strict("regexp_count", kinds(kText, kText, kInt), kInt, count),
		strict("regexp_count", kinds(kText, kText, kInt, kText), kInt, count))
	// regexp_replace(s, p, rep [, flags]) and, since Postgres 15,
	// regexp_replace(s, p, rep, start [, n [, flags]]).
	replace := func(a []types.Datum, start, n int64, flags string) (types.Datum, error) {
		re, o, err := regexFor(a[1].Str(), flags, true, "regexp_replace")
		if err != nil {
			return types.Null, err
		}
		if n < 0 {
			n = 1
			if o.global {
				n = 0
			}
		}
		return text(regexpReplace(a[0].Str(), re, a[2].Str(), start, n))
	}
	r.Add(strict("regexp_replace", kinds(kText, kText, kText), kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return replace(a, 1, -1, "")
	}))
	r.Add(strict("regexp_replace", kinds(kText, kText, kText, kText), kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return replace(a, 1, -1, a[3].Str())
	}))
	startN := func(_ *Context, a []types.Datum) (types.Datum, error) {
		start, n := a[3].Int64(), int64(1)
		if err := checkPositive("start", start); err != nil {
			return types.Null, err
		}
		if len(a) > 4 {
			if n = a[4].Int64(); n < 0 {
				return types.Null, errorf(sqlerr.InvalidParameterValue, "invalid value for parameter \"n\": %d", n)
			}
		}
		flags := flagsArg(a, 5)
		if len(a) <= 4 && strings.Contains(flags, "g") {
			n = 0
		}
		return replace(a, start, n, flags)
	}
	r.Add(strict("regexp_replace", kinds(kText, kText, kText, kInt), kText, startN),
		strict("regexp_replace", kinds(kText, kText, kText, kInt, kInt), kText, startN),
		strict("regexp_replace", kinds(kText, kText, kText, kInt, kInt, kText), kText, startN))
	// regexp_match and regexp_matches return text[] in Postgres; without
	// an array type Strata returns the array's text form as TEXT.
	for _, name := range []string{"regexp_match", "regexp_matches"} {
		name := name
		match := func(_ *Context, a []types.Datum) (types.Datum, error) {
			re, _, err := regexFor(a[1].Str(), flagsArg(a, 2), false, name)
			if err != nil {
				return types.Null, err
			}
			return regexpMatch(a[0].Str(), re), nil
		}
		r.Add(strict(name, kinds(kText, kText), kText, match), strict(name, kinds(kText, kText, kText), kText, match))
	}
	regexSubstringFunc = strict("substring", kinds(kText, kText), kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
		re, err := compileRegexLit(a[1].Str(), regexOpts{newline: 's'})
		if err != nil {
			return types.Null, err
		}
		return regexSubstring(a[0].Str(), re), nil
	})
	r.Add(regexSubstringFunc)
	// substring(s SIMILAR p ESCAPE e): the part between the escaped double
	// quotes, or the whole match.
	r.Add(strict("substring", kinds(kText, kText, kText), kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
		e, err := escapeRune(a[2].Str())
		if err != nil {
			return types.Null, err
		}
		src, err := similarToRegex(a[1].Str(), e)
		if err != nil {
			return types.Null, err
		}
		re, err := compileRegexLit(src, regexOpts{newline: 's'})
		if err != nil {
			return types.Null, err
		}
		return regexSubstring(a[0].Str(), re), nil
	}))
}
