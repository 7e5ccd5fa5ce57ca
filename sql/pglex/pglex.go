package pglex

import (
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrUnterminated is returned by ScanQuoted for a literal with no closing
// quote.
var ErrUnterminated = errors.New("unterminated string constant")

// IsIdentStart reports whether c may start an unquoted identifier: a
// letter, an underscore or any byte of a multi-byte UTF-8 character.
func IsIdentStart(c byte) bool {
	return c == '_' || c|0x20 >= 'a' && c|0x20 <= 'z' || c >= 0x80
}

// IsIdentChar reports whether c may continue an unquoted identifier: what
// may start one, a digit or a dollar sign.
func IsIdentChar(c byte) bool { return IsIdentStart(c) || c >= '0' && c <= '9' || c == '$' }

// FoldIdent folds an unquoted identifier as PostgreSQL does in a UTF-8
// database (downcase_identifier): ASCII A-Z become a-z, every other
// character, é or Ä or Д, is kept as written. It returns s itself when
// nothing changes.
func FoldIdent(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// UnquoteIdent returns the name a quoted identifier ("...", with its
// quotes) stands for: the text between the quotes with doubled quotes
// undone. A missing closing quote is tolerated (the name runs to the end).
func UnquoteIdent(s string) string {
	body := strings.TrimPrefix(s, `"`)
	if len(s) >= 2 && strings.HasSuffix(body, `"`) {
		body = body[:len(body)-1]
	}
	return strings.ReplaceAll(body, `""`, `"`)
}

// ScanQuoted scans the body of a literal quoted with q (' for strings, "
// for identifiers) that starts at s[i], just past the opening quote, and
// returns the index just past the closing quote. A doubled q stands for
// one; with escapes (E'...' strings) a backslash escape stands for the
// character it names. When b is not nil the literal's value is appended
// to it.
//
// An unterminated literal returns len(s) and ErrUnterminated; a malformed
// escape (only checked when b is not nil) returns its index and an error
// naming it.
func ScanQuoted(s string, i int, q byte, escapes bool, b *strings.Builder) (int, error) {
	for i < len(s) {
		c := s[i]
		switch {
		case c == q:
			if i+1 < len(s) && s[i+1] == q {
				if b != nil {
					b.WriteByte(q)
				}
				i += 2
				continue
			}
			return i + 1, nil
		case c == '\\' && escapes:
			if b == nil {
				// No escape holds a quote but \' itself, so skipping the
				// escaped byte finds the same end as decoding.
				i += 2
				continue
			}
			n, err := unescape(b, s[i:])
			if err != nil {
				return i, err
			}
			i += n
			continue
		}
		if b != nil {
			b.WriteByte(c)
		}
		i++
	}
	return len(s), ErrUnterminated
}

// DollarTag returns the opening $tag$ (or $$) at the start of s, or "".
func DollarTag(s string) string {
	if s == "" || s[0] != '$' {
		return ""
	}
	for i := 1; i < len(s); i++ {
		if s[i] == '$' {
			return s[:i+1]
		}
		if !IsIdentChar(s[i]) {
			return ""
		}
	}
	return ""
}

// DollarQuoted scans the dollar-quoted string at the start of s and
// returns its tag and the index just past its closing tag. tag is "" when
// s does not start with one; ok is false when the string is not closed,
// and end is then len(s).
func DollarQuoted(s string) (tag string, end int, ok bool) {
	tag = DollarTag(s)
	if tag == "" {
		return "", 0, false
	}
	if j := strings.Index(s[len(tag):], tag); j >= 0 {
		return tag, len(tag) + j + len(tag), true
	}
	return tag, len(s), false
}

// unescape decodes one backslash escape at the start of s into b and
// returns how many bytes of s it used (Postgres's E'...' escapes: \b \f \n
// \r \t, octal \ooo, hex \xhh, \uXXXX, \UXXXXXXXX; any other character
// stands for itself).
func unescape(b *strings.Builder, s string) (int, error) {
	if len(s) < 2 {
		return 0, errors.New("unterminated escape")
	}
	switch c := s[1]; c {
	case 'b':
		b.WriteByte('\b')
	case 'f':
		b.WriteByte('\f')
	case 'n':
		b.WriteByte('\n')
	case 'r':
		b.WriteByte('\r')
	case 't':
		b.WriteByte('\t')
	case '0', '1', '2', '3', '4', '5', '6', '7':
		n := 1
		for n < 3 && 1+n < len(s) && s[1+n] >= '0' && s[1+n] <= '7' {
			n++
		}
		v, _ := strconv.ParseUint(s[1:1+n], 8, 16)
		b.WriteByte(byte(v))
		return 1 + n, nil
	case 'x':
		n := 0
		for n < 2 && 2+n < len(s) && isHex(s[2+n]) {
			n++
		}
		if n == 0 {
			b.WriteByte('x')
			return 2, nil
		}
		v, _ := strconv.ParseUint(s[2:2+n], 16, 8)
		b.WriteByte(byte(v))
		return 2 + n, nil
	case 'u', 'U':
		n := 4
		if c == 'U' {
			n = 8
		}
		if len(s) < 2+n {
			return 0, errors.New("invalid Unicode escape")
		}
		for i := 0; i < n; i++ {
			if !isHex(s[2+i]) {
				return 0, errors.New("invalid Unicode escape")
			}
		}
		v, _ := strconv.ParseUint(s[2:2+n], 16, 32)
		if v == 0 || !utf8.ValidRune(rune(v)) {
			return 0, errors.New("invalid Unicode escape value")
		}
		b.WriteRune(rune(v))
		return 2 + n, nil
	default:
		b.WriteByte(c)
	}
	return 2, nil
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}
