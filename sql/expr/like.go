package expr

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// LIKE, ILIKE and SIMILAR TO, as Postgres has them.
//
// The parser turns `s LIKE p` into the operator ~~ (ILIKE: ~~*, NOT LIKE:
// !~~, NOT ILIKE: !~~*) and `s LIKE p ESCAPE e` into `s ~~ like_escape(p,
// e)`, which rewrites p to use the default escape character, backslash.
// The same operators are registered here, and also the functions like,
// ilike, notlike and notilike with an optional third argument, the escape
// string, for binders that keep ESCAPE beside the pattern.
//
// In a pattern, % matches any run of characters, _ exactly one character,
// and the escape character makes the next one literal; a pattern that
// ends with the escape character is an error (22025) once matching gets
// there with text left, as in Postgres. ILIKE lower-cases
// both sides first, as Postgres does in a multibyte encoding. Matching
// works on characters with no compilation step: a greedy scan that
// remembers the last % to back up to, linear in most cases and at worst
// O(len(s) × len(p)).
//
// SIMILAR TO is rewritten by similar_to_escape into a POSIX regular
// expression (anchored, % as .*, _ as ., parentheses non-capturing) and
// matched with ~, exactly as Postgres does.

// likeToken is one element of a compiled LIKE pattern.
type likeToken struct {
	kind byte // 'c': the literal r; '_': any one character; '%': any run; 'E': a dangling escape
	r    rune
}

var errLikeEndsWithEscape = sqlerr.New(sqlerr.InvalidEscapeSequence, "LIKE pattern must not end with escape character")

// likeTokens splits pattern into tokens with escape character esc (-1:
// none), lower-casing literals when fold is set.
func likeTokens(pattern string, esc rune, fold bool) ([]likeToken, error) {
	toks := make([]likeToken, 0, len(pattern))
	afterEsc := false
	for _, r := range pattern {
		switch {
		case afterEsc:
			afterEsc = false
		case r == esc:
			afterEsc = true
			continue
		case r == '%':
			// Adjacent %s are one.
			if n := len(toks); n == 0 || toks[n-1].kind != '%' {
				toks = append(toks, likeToken{kind: '%'})
			}
			continue
		case r == '_':
			toks = append(toks, likeToken{kind: '_'})
			continue
		}
		if fold {
			r = unicode.ToLower(r)
		}
		toks = append(toks, likeToken{kind: 'c', r: r})
	}
	if afterEsc {
		// Postgres raises the error only when matching reaches this point
		// with text left, so 'abc' LIKE 'x\' is simply false.
		toks = append(toks, likeToken{kind: 'E'})
	}
	return toks, nil
}

// likeMatch reports whether s matches the tokens. It is the classic
// wildcard scan: on a mismatch it backs up to just after the last %,
// which then swallows one more character.
func likeMatch(s string, toks []likeToken, fold bool) (bool, error) {
	text := []rune(s)
	if fold {
		for i, r := range text {
			text[i] = unicode.ToLower(r)
		}
	}
	ti, pi := 0, 0
	starP, starT := -1, 0
	for ti < len(text) {
		if pi < len(toks) {
			switch tk := toks[pi]; tk.kind {
			case '%':
				starP, starT = pi, ti
				pi++
				continue
			case '_':
				ti, pi = ti+1, pi+1
				continue
			case 'E':
				return false, errLikeEndsWithEscape
			default:
				if tk.r == text[ti] {
					ti, pi = ti+1, pi+1
					continue
				}
			}
		}
		if starP < 0 {
			return false, nil
		}
		starT++
		ti, pi = starT, starP+1
	}
	for pi < len(toks) && toks[pi].kind == '%' {
		pi++
	}
	return pi == len(toks), nil
}

// escapeRune checks an ESCAPE string: empty means no escape character
// (-1), one character is it, anything longer is an error.
func escapeRune(esc string) (rune, error) {
	switch utf8.RuneCountInString(esc) {
	case 0:
		return -1, nil
	case 1:
		r, _ := utf8.DecodeRuneInString(esc)
		return r, nil
	}
	return 0, &sqlerr.Error{Code: sqlerr.InvalidEscapeSequence, Message: "invalid escape string",
		Hint: "Escape string must be empty or one character."}
}

// Like reports whether s matches the LIKE pattern with escape character
// esc (-1 for none); fold makes it ILIKE. Errors are 22025.
func Like(s, pattern string, esc rune, fold bool) (bool, error) {
	toks, err := likeTokens(pattern, esc, fold)
	if err != nil {
		return false, err
	}
	return likeMatch(s, toks, fold)
}

// likeEscape is Postgres's like_escape: pattern rewritten from escape
// character esc to the default backslash.
func likeEscape(pattern, esc string) (string, error) {
	e, err := escapeRune(esc)
	if err != nil {
		return "", err
	}
	if e == '\\' {
		return pattern, nil
	}
	var b strings.Builder
	afterEsc := false
	for _, r := range pattern {
		switch {
		case r == e && !afterEsc:
			b.WriteByte('\\')
			afterEsc = true
		case r == '\\':
			b.WriteByte('\\')
			if !afterEsc {
				b.WriteByte('\\')
			}
			afterEsc = false
		default:
			b.WriteRune(r)
			afterEsc = false
		}
	}
	return b.String(), nil
}

// similarToRegex is Postgres's similar_to_escape: the POSIX regular
// expression equivalent to a SQL SIMILAR TO pattern with escape character
// esc (-1 for none). An escaped double quote separates the parts that
// substring(s similar p escape e) returns; at most two are allowed.
func similarToRegex(pattern string, esc rune) (string, error) {
	var b strings.Builder
	b.WriteString("^(?:")
	afterEsc, inClass, quotes := false, false, 0
	for _, r := range pattern {
		switch {
		case afterEsc:
			if r == '"' && !inClass {
				switch quotes {
				case 0:
					b.WriteString("){1,1}?(")
				case 1:
					b.WriteString("){1,1}(?:")
				default:
					return "", errorf("2200C", "SQL regular expression may not contain more than two escape-double-quote separators")
				}
				quotes++
			} else {
				b.WriteByte('\\')
				b.WriteRune(r)
			}
			afterEsc = false
		case r == esc:
			afterEsc = true
		case inClass:
			if r == '\\' {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
			if r == ']' {
				inClass = false
			}
		case r == '[':
			b.WriteRune(r)
			inClass = true
		case r == '%':
			b.WriteString(".*")
		case r == '_':
			b.WriteByte('.')
		case r == '(':
			b.WriteString("(?:")
		case r == '\\' || r == '.' || r == '^' || r == '$':
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(")$")
	return b.String(), nil
}

func registerLike(r *Registry) {
	likeOp := func(name string, fold, negate bool) *Func {
		return &Func{Name: name, Params: kinds(kText, kText), Infix: true, Strict: true, ResultKind: kBool,
			Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
				ok, err := Like(a[0].Str(), a[1].Str(), '\\', fold)
				return types.NewBool(ok != negate), err
			}}
	}
	likeFn := func(name string, fold, negate bool) *Func {
		return strict(name, kinds(kText, kText, kText), kBool, func(_ *Context, a []types.Datum) (types.Datum, error) {
			esc, err := escapeRune(a[2].Str())
			if err != nil {
				return types.Null, err
			}
			ok, err := Like(a[0].Str(), a[1].Str(), esc, fold)
			return types.NewBool(ok != negate), err
		})
	}
	for _, v := range []struct {
		op, fn       string
		fold, negate bool
	}{
		{"~~", "like", false, false}, {"!~~", "notlike", false, true},
		{"~~*", "ilike", true, false}, {"!~~*", "notilike", true, true},
	} {
		r.Add(likeOp(v.op, v.fold, v.negate))
		f := likeOp(v.fn, v.fold, v.negate)
		f.Infix = false
		r.Add(f, likeFn(v.fn, v.fold, v.negate))
	}
	r.Add(strict("like_escape", kinds(kText, kText), kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
		s, err := likeEscape(a[0].Str(), a[1].Str())
		if err != nil {
			return types.Null, err
		}
		return text(s)
	}))
	r.Add(strict("similar_to_escape", kinds(kText), kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
		s, err := similarToRegex(a[0].Str(), '\\')
		if err != nil {
			return types.Null, err
		}
		return text(s)
	}))
	r.Add(strict("similar_to_escape", kinds(kText, kText), kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
		e, err := escapeRune(a[1].Str())
		if err != nil {
			return types.Null, err
		}
		s, err := similarToRegex(a[0].Str(), e)
		if err != nil {
			return types.Null, err
		}
		return text(s)
	}))
}
