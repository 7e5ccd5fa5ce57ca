package olap

import (
	"strings"

	"github.com/stratadb/strata/sql/pglex"
)

// tokKind classifies a token of SQL text.
type tokKind uint8

const (
	tokSpace  tokKind = iota // white space and comments
	tokIdent                 // bare identifier or keyword
	tokQuoted                // "quoted identifier"
	tokString                // 'string', E'string', $$dollar$$
	tokNumber                // 42, 1.5, 1e3
	tokPunct                 // operators and punctuation, one token per run of operator characters
)

// token is one lexeme of SQL text; text is exactly the source slice, so
// joining every token's text gives the input back.
type token struct {
	kind tokKind
	text string
}

// lex splits PostgreSQL SQL text into tokens. It knows just enough of the
// lexical grammar to tell identifiers from literals and comments: quoted
// identifiers with "" escapes, strings with ” escapes, E” strings with
// backslash escapes, dollar-quoted strings, -- and nested /* */ comments.
// Literals end where pglex's scanners say, as sql/ddl reads them. It never
// fails: unterminated constructs run to the end of the text.
func lex(s string) []token {
	var out []token
	i := 0
	for i < len(s) {
		c := s[i]
		start := i
		kind := tokPunct
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			for i < len(s) && strings.IndexByte(" \t\n\r\f", s[i]) >= 0 {
				i++
			}
			kind = tokSpace
		case c == '-' && i+1 < len(s) && s[i+1] == '-':
			for i < len(s) && s[i] != '\n' {
				i++
			}
			kind = tokSpace
		case c == '/' && i+1 < len(s) && s[i+1] == '*':
			depth := 0
			for i < len(s) {
				if strings.HasPrefix(s[i:], "/*") {
					depth++
					i += 2
				} else if strings.HasPrefix(s[i:], "*/") {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			kind = tokSpace
		case c == '\'':
			i, _ = pglex.ScanQuoted(s, i+1, '\'', false, nil)
			kind = tokString
		case (c == 'E' || c == 'e') && i+1 < len(s) && s[i+1] == '\'':
			i, _ = pglex.ScanQuoted(s, i+2, '\'', true, nil)
			kind = tokString
		case c == '"':
			i, _ = pglex.ScanQuoted(s, i+1, '"', false, nil)
			kind = tokQuoted
		case c == '$' && pglex.DollarTag(s[i:]) != "":
			_, n, _ := pglex.DollarQuoted(s[i:])
			i += n
			kind = tokString
		case pglex.IsIdentStart(c):
			for i < len(s) && pglex.IsIdentChar(s[i]) {
				i++
			}
			kind = tokIdent
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9':
			for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.' || s[i] == 'e' || s[i] == 'E' ||
				(s[i] == '+' || s[i] == '-') && (s[i-1] == 'e' || s[i-1] == 'E')) {
				i++
			}
			kind = tokNumber
		case strings.IndexByte("+-*/<>=~!@#%^&|`?", c) >= 0:
			for i < len(s) && strings.IndexByte("+-*/<>=~!@#%^&|`?", s[i]) >= 0 {
				if i > start && (strings.HasPrefix(s[i:], "--") || strings.HasPrefix(s[i:], "/*")) {
					break
				}
				i++
			}
		default:
			i++ // ( ) , ; . [ ] : and anything else, one byte at a time
		}
		out = append(out, token{kind: kind, text: s[start:i]})
	}
	return out
}

// identName returns the name a token denotes: bare identifiers fold to
// lower case as in PostgreSQL, quoted ones are exact.
func (t token) identName() (string, bool) {
	switch t.kind {
	case tokIdent:
		return pglex.FoldIdent(t.text), true
	case tokQuoted:
		return pglex.UnquoteIdent(t.text), true
	}
	return "", false
}

// join concatenates the tokens' text.
func join(toks []token) string {
	var b strings.Builder
	for _, t := range toks {
		b.WriteString(t.text)
	}
	return b.String()
}

// quoteIdent quotes name as a SQL identifier.
func quoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// quoteString quotes s as a SQL string literal.
func quoteString(s string) string {
	return `'` + strings.ReplaceAll(s, `'`, `''`) + `'`
}

// nextSolid returns the index of the first token at or after i that is not
// space, or len(toks).
func nextSolid(toks []token, i int) int {
	for i < len(toks) && toks[i].kind == tokSpace {
		i++
	}
	return i
}

// prevSolid returns the index of the last token at or before i that is not
// space, or -1.
func prevSolid(toks []token, i int) int {
	for i >= 0 && toks[i].kind == tokSpace {
		i--
	}
	return i
}

// regexLiterals rewrites the pattern literal P of a regular-expression
// match (x ~ 'P', !~, ~*, !~*) into '(?s).*(?:P).*': DuckDB's ~ matches
// the whole string, PostgreSQL's any substring, and RE2 anchors ^ and $ at
// the ends of the text, so the whole-string match of the new pattern is
// the substring match of P. Patterns that are not plain literals are left
// alone (doc.go, known gaps).
func regexLiterals(sqlText string) string {
	if !strings.Contains(sqlText, "~") {
		return sqlText
	}
	toks := lex(sqlText)
	changed := false
	for i, t := range toks {
		if t.kind != tokPunct || t.text != "~" && t.text != "!~" && t.text != "~*" && t.text != "!~*" {
			continue
		}
		j := nextSolid(toks, i+1)
		if j < len(toks) && toks[j].kind == tokString && strings.HasPrefix(toks[j].text, "'") {
			toks[j].text = "'(?s).*(?:" + toks[j].text[1:len(toks[j].text)-1] + ").*'"
			changed = true
		}
	}
	if !changed {
		return sqlText
	}
	return join(toks)
}
