package expr

import (
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// Simple expressions (invariant simple-regex-same-match): Go's matcher
// costs the better part of a microsecond per call even on a few bytes
// (it sets up a backtracker and explores every alternative for the
// longest match), which made substring(url FROM '(?:&|^)channel_id=
// ([^&]*)') the largest cost of Nexmark q21. An expression of the shape
// most extraction patterns have is matched here directly instead: a
// concatenation of
//
//   - literals (case-sensitive, without U+FFFD),
//   - single characters of a class (or any character),
//   - \A and \z (^ and $ without the n flag),
//   - alternations of literals and \A, and
//   - at most one repetition of a character class (*, +), greedy and
//     followed by nothing but \z,
//
// each possibly a capture group of its own (none nested). Only
// alternations branch, and each branch continues deterministically (the
// repetition last, taking as much as it can, since nothing after it but
// the end of the text can use what it leaves), so the matcher tries the
// start positions rune by rune as Go's does and, at each, the branches in
// their order, keeping the longest match (Longest; the first one on a
// tie, as Go's backtracker keeps it) or the first (leftmost-first). It
// reads the text rune by rune as Go's matcher does (an invalid byte is
// U+FFFD, one byte wide), so it finds the match and submatches Go's
// matcher finds: TestSimpleRegexMatchesGo compares both over random
// expressions of this shape and random texts.

// simpleItem is one part of a simple expression.
type simpleItem struct {
	kind  byte     // 'l' literal, 'c' one character of class, 'r' repetition, 'a' alternation, '^' \A, '$' \z
	lit   string   // 'l'
	class runeSet  // 'c', 'r'
	min   int      // 'r': 0 (*) or 1 (+)
	alts  []string // 'a': the literals; "\x00^" stands for \A
	cap   int      // capture group number of this item, 0 for none
}

// altBegin marks the \A branch of an alternation.
const altBegin = "\x00^"

// runeSet is a character class: ASCII by table, the rest by ranges.
type runeSet struct {
	ascii  [utf8.RuneSelf]bool
	ranges []rune // pairs lo, hi
	any    bool   // every character
	notNL  bool   // every character but \n
}

func (c *runeSet) has(r rune) bool {
	switch {
	case c.any:
		return true
	case c.notNL:
		return r != '\n'
	case r < utf8.RuneSelf:
		return c.ascii[r]
	}
	for i := 0; i+1 < len(c.ranges); i += 2 {
		if r < c.ranges[i] {
			return false
		}
		if r <= c.ranges[i+1] {
			return true
		}
	}
	return false
}

// simpleRegex is a simple expression (see above) for one capture layout.
type simpleRegex struct {
	items   []simpleItem
	longest bool
	ncap    int // capture groups in the expression
}

// newSimpleRegex returns the simple form of the parsed, simplified
// expression re, or nil when it does not have the shape.
func newSimpleRegex(re *syntax.Regexp, longest bool) *simpleRegex {
	parts := []*syntax.Regexp{re}
	if re.Op == syntax.OpConcat {
		parts = re.Sub
	}
	s := &simpleRegex{longest: longest}
	for k, p := range parts {
		capNum := 0
		if p.Op == syntax.OpCapture {
			capNum, p = p.Cap, p.Sub[0]
			s.ncap++
		}
		it, ok := simplePart(p)
		if !ok || (capNum != 0 && (it.kind == 'a' || it.kind == '^' || it.kind == '$')) {
			return nil
		}
		it.cap = capNum
		if it.kind == 'r' {
			for _, q := range parts[k+1:] {
				if q.Op != syntax.OpEndText {
					return nil
				}
			}
		}
		s.items = append(s.items, it)
	}
	if s.ncap != re.MaxCap() {
		return nil // a capture group inside a part
	}
	return s
}

// simplePart returns the item p is, ok false when p is none.
func simplePart(p *syntax.Regexp) (simpleItem, bool) {
	lit := func(p *syntax.Regexp) (string, bool) {
		if p.Op != syntax.OpLiteral || p.Flags&syntax.FoldCase != 0 || strings.ContainsRune(string(p.Rune), utf8.RuneError) {
			return "", false
		}
		for _, r := range p.Rune {
			if !utf8.ValidRune(r) {
				return "", false
			}
		}
		return string(p.Rune), true
	}
	class := func(p *syntax.Regexp) (runeSet, bool) {
		var c runeSet
		switch p.Op {
		case syntax.OpAnyChar:
			c.any = true
		case syntax.OpAnyCharNotNL:
			c.notNL = true
		case syntax.OpCharClass:
			c.ranges = p.Rune
			for r := rune(0); r < utf8.RuneSelf; r++ {
				for i := 0; i+1 < len(p.Rune); i += 2 {
					if p.Rune[i] <= r && r <= p.Rune[i+1] {
						c.ascii[r] = true
					}
				}
			}
		default:
			return c, false
		}
		return c, true
	}
	switch p.Op {
	case syntax.OpLiteral:
		s, ok := lit(p)
		return simpleItem{kind: 'l', lit: s}, ok
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL, syntax.OpCharClass:
		c, ok := class(p)
		return simpleItem{kind: 'c', class: c}, ok
	case syntax.OpBeginText:
		return simpleItem{kind: '^'}, true
	case syntax.OpEndText:
		return simpleItem{kind: '$'}, true
	case syntax.OpStar, syntax.OpPlus:
		if p.Flags&syntax.NonGreedy != 0 {
			return simpleItem{}, false
		}
		c, ok := class(p.Sub[0])
		it := simpleItem{kind: 'r', class: c}
		if p.Op == syntax.OpPlus {
			it.min = 1
		}
		return it, ok
	case syntax.OpAlternate:
		it := simpleItem{kind: 'a'}
		for _, b := range p.Sub {
			if b.Op == syntax.OpBeginText {
				it.alts = append(it.alts, altBegin)
				continue
			}
			s, ok := lit(b)
			if !ok {
				return simpleItem{}, false
			}
			it.alts = append(it.alts, s)
		}
		return it, true
	}
	return simpleItem{}, false
}

// step returns the character at t[pos:] and its width, as Go's matcher
// reads it.
func step(t string, pos int) (rune, int) {
	if c := t[pos]; c < utf8.RuneSelf {
		return rune(c), 1
	}
	return utf8.DecodeRuneInString(t[pos:])
}

// find returns the match of s in t as FindStringSubmatchIndex gives it,
// with group 1's bounds only (the whole match's when there is no group);
// ok is false without a match.
func (s *simpleRegex) find(t string) (start, end, g0, g1 int, ok bool) {
	for pos := 0; pos <= len(t); {
		if e, a, b := s.matchAt(t, 0, pos, -1, -1); e >= 0 {
			if s.ncap == 0 {
				return pos, e, pos, e, true
			}
			return pos, e, a, b, true
		}
		if pos == len(t) {
			break
		}
		_, w := step(t, pos)
		pos += w
	}
	return 0, 0, 0, 0, false
}

// matchAt matches items[k:] at pos with group 1 at g0, g1 so far and
// returns the end of the match (-1 for none) and group 1's bounds.
func (s *simpleRegex) matchAt(t string, k, pos, g0, g1 int) (end, c0, c1 int) {
	for ; k < len(s.items); k++ {
		it := &s.items[k]
		from := pos
		switch it.kind {
		case 'l':
			if !strings.HasPrefix(t[pos:], it.lit) {
				return -1, 0, 0
			}
			pos += len(it.lit)
		case 'c':
			if pos >= len(t) {
				return -1, 0, 0
			}
			r, w := step(t, pos)
			if !it.class.has(r) {
				return -1, 0, 0
			}
			pos += w
		case 'r':
			n := 0
			for pos < len(t) {
				r, w := step(t, pos)
				if !it.class.has(r) {
					break
				}
				pos += w
				n++
			}
			if n < it.min {
				return -1, 0, 0
			}
		case '^':
			if pos != 0 {
				return -1, 0, 0
			}
		case '$':
			if pos != len(t) {
				return -1, 0, 0
			}
		case 'a':
			best, b0, b1 := -1, 0, 0
			for _, alt := range it.alts {
				next := pos
				if alt == altBegin {
					if pos != 0 {
						continue
					}
				} else if strings.HasPrefix(t[pos:], alt) {
					next += len(alt)
				} else {
					continue
				}
				e, a, b := s.matchAt(t, k+1, next, g0, g1)
				if e < 0 {
					continue
				}
				if !s.longest {
					return e, a, b
				}
				if e > best {
					best, b0, b1 = e, a, b
				}
			}
			return best, b0, b1
		}
		if it.cap == 1 {
			g0, g1 = from, pos
		}
	}
	return pos, g0, g1
}
