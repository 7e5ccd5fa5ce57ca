package types

import (
	"strings"
	"unicode/utf8"
)

// jsonSyntaxDetail returns the DETAIL PostgreSQL gives when json_in or
// jsonb_in refuses text (src/common/jsonapi.c, json_errdetail): `Token
// "bad" is invalid.`, `Expected ":", but found ",".`, `The input string
// ended unexpectedly.`, and so on; "" when text is well-formed JSON (a
// value refused for another reason, such as a number out of range).
//
// It follows PostgreSQL's lexer: a token is a string, a number, a
// punctuation character, or a run of letters, digits, '_', '$' and
// non-ASCII characters (true, false and null are such runs; any other is
// invalid, as is a number directly followed by such characters).
func jsonSyntaxDetail(text string) string {
	l := &jsonLexer{s: text}
	if detail := l.value(); detail != "" {
		return detail
	}
	if tok, kind := l.next(); kind != jsonTokEnd {
		return l.found("Expected end of input", tok, kind)
	}
	return ""
}

type jsonTokKind uint8

const (
	jsonTokEnd jsonTokKind = iota
	jsonTokPunct
	jsonTokString
	jsonTokNumber
	jsonTokWord // true, false, null
	jsonTokInvalid
	jsonTokBadString // a string with an error; the token text is the detail
)

// jsonLexer reads PostgreSQL's JSON tokens from s at i.
type jsonLexer struct {
	s string
	i int
}

// jsonWordChar is PostgreSQL's JSON_ALPHANUMERIC_CHAR.
func jsonWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '$' || c >= 0x80
}

// next returns the next token and its kind; for jsonTokBadString the
// text is the whole detail.
func (l *jsonLexer) next() (string, jsonTokKind) {
	for l.i < len(l.s) && (l.s[l.i] == ' ' || l.s[l.i] == '\t' || l.s[l.i] == '\n' || l.s[l.i] == '\r') {
		l.i++
	}
	if l.i >= len(l.s) {
		return "", jsonTokEnd
	}
	start := l.i
	switch c := l.s[l.i]; {
	case strings.IndexByte("{}[],:", c) >= 0:
		l.i++
		return l.s[start:l.i], jsonTokPunct
	case c == '"':
		return l.str()
	case c == '-' || c >= '0' && c <= '9':
		return l.number()
	case jsonWordChar(c):
		for l.i < len(l.s) && jsonWordChar(l.s[l.i]) {
			l.i++
		}
		w := l.s[start:l.i]
		if w == "true" || w == "false" || w == "null" {
			return w, jsonTokWord
		}
		return w, jsonTokInvalid
	default:
		_, n := utf8.DecodeRuneInString(l.s[l.i:])
		l.i += n
		return l.s[start:l.i], jsonTokInvalid
	}
}

// str reads a string token at l.i (its opening quote).
func (l *jsonLexer) str() (string, jsonTokKind) {
	start := l.i
	l.i++
	for l.i < len(l.s) {
		c := l.s[l.i]
		switch {
		case c == '"':
			l.i++
			return l.s[start:l.i], jsonTokString
		case c < 0x20:
			return "Character with value 0x" + hex2(c) + " must be escaped.", jsonTokBadString
		case c == '\\':
			l.i++
			if l.i >= len(l.s) {
				return "", jsonTokEnd
			}
			switch e := l.s[l.i]; e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				l.i++
			case 'u':
				l.i++
				for k := 0; k < 4; k++ {
					if l.i >= len(l.s) {
						return "", jsonTokEnd
					}
					if !isHex(l.s[l.i]) {
						return `"\u" must be followed by four hexadecimal digits.`, jsonTokBadString
					}
					l.i++
				}
			default:
				_, n := utf8.DecodeRuneInString(l.s[l.i:])
				return `Escape sequence "\` + l.s[l.i:l.i+n] + `" is invalid.`, jsonTokBadString
			}
		default:
			l.i++
		}
	}
	return "", jsonTokEnd
}

// number reads a number token at l.i; one followed by word characters,
// or malformed (a leading zero, a missing digit), is an invalid token
// that runs to the end of the word characters.
func (l *jsonLexer) number() (string, jsonTokKind) {
	start := l.i
	ok := true
	digits := func() int {
		n := 0
		for l.i < len(l.s) && l.s[l.i] >= '0' && l.s[l.i] <= '9' {
			l.i++
			n++
		}
		return n
	}
	if l.s[l.i] == '-' {
		l.i++
	}
	intStart := l.i
	if n := digits(); n == 0 || n > 1 && l.s[intStart] == '0' {
		ok = false
	}
	if l.i < len(l.s) && l.s[l.i] == '.' {
		l.i++
		if digits() == 0 {
			ok = false
		}
	}
	if l.i < len(l.s) && (l.s[l.i] == 'e' || l.s[l.i] == 'E') {
		l.i++
		if l.i < len(l.s) && (l.s[l.i] == '+' || l.s[l.i] == '-') {
			l.i++
		}
		if digits() == 0 {
			ok = false
		}
	}
	for l.i < len(l.s) && jsonWordChar(l.s[l.i]) {
		l.i++
		ok = false
	}
	if !ok {
		return l.s[start:l.i], jsonTokInvalid
	}
	return l.s[start:l.i], jsonTokNumber
}

// found is PostgreSQL's detail for a token that is not what the parser
// expected: "<expected>, but found "<tok>"." for a valid token, the
// token's own error otherwise.
func (l *jsonLexer) found(expected, tok string, kind jsonTokKind) string {
	switch kind {
	case jsonTokEnd:
		return "The input string ended unexpectedly."
	case jsonTokInvalid:
		return `Token "` + tok + `" is invalid.`
	case jsonTokBadString:
		return tok
	}
	return expected + `, but found "` + tok + `".`
}

// value parses one JSON value; it returns the detail of the first error,
// "" for none.
func (l *jsonLexer) value() string {
	tok, kind := l.next()
	switch {
	case kind == jsonTokString || kind == jsonTokNumber || kind == jsonTokWord:
		return ""
	case tok == "[":
		save := l.i
		if t, k := l.next(); t == "]" && k == jsonTokPunct {
			return ""
		} else if k != jsonTokPunct || t == "{" || t == "[" {
			l.i = save
		} else {
			return l.found("Expected array element or \"]\"", t, k)
		}
		for {
			if d := l.value(); d != "" {
				return d
			}
			t, k := l.next()
			if k == jsonTokPunct && t == "]" {
				return ""
			}
			if k != jsonTokPunct || t != "," {
				return l.found(`Expected "," or "]"`, t, k)
			}
		}
	case tok == "{":
		t, k := l.next()
		if k == jsonTokPunct && t == "}" {
			return ""
		}
		expected := `Expected string or "}"`
		for {
			if k != jsonTokString {
				return l.found(expected, t, k)
			}
			if t, k = l.next(); k != jsonTokPunct || t != ":" {
				return l.found(`Expected ":"`, t, k)
			}
			if d := l.value(); d != "" {
				return d
			}
			t, k = l.next()
			if k == jsonTokPunct && t == "}" {
				return ""
			}
			if k != jsonTokPunct || t != "," {
				return l.found(`Expected "," or "}"`, t, k)
			}
			t, k = l.next()
			expected = "Expected string"
		}
	}
	return l.found("Expected JSON value", tok, kind)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}
