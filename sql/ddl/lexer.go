package ddl

import (
	"errors"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	pgparser "github.com/pganalyze/pg_query_go/v6/parser"

	"github.com/stratadb/strata/sql/pglex"
	"github.com/stratadb/strata/sql/sqlerr"
)

// token is one lexical token of the input, as Postgres's own scanner
// (pg_query.Scan) cuts it: quotes, dollar quotes, comments and escape
// strings are therefore exactly Postgres's.
type token struct {
	kind  pg_query.Token
	kw    pg_query.KeywordKind
	start int // byte offsets into the input
	end   int
	text  string // input[start:end]
}

// eof is the kind of the sentinel token that ends a statement with no
// semicolon.
const eof pg_query.Token = -1

// Punctuation tokens.
const (
	tokLParen = pg_query.Token_ASCII_40
	tokRParen = pg_query.Token_ASCII_41
	tokPlus   = pg_query.Token_ASCII_43
	tokComma  = pg_query.Token_ASCII_44
	tokMinus  = pg_query.Token_ASCII_45
	tokDot    = pg_query.Token_ASCII_46
	tokSemi   = pg_query.Token_ASCII_59
	tokEquals = pg_query.Token_ASCII_61
)

// word returns the token's lower-case text when it is a keyword or an
// unquoted identifier, else "". Statement keywords are matched on words, so
// that Strata's words (SOURCE, SINK, WATERMARK, EPOCH), which are plain
// identifiers to Postgres, match like its keywords.
func (t token) word() string {
	if t.kw != pg_query.KeywordKind_NO_KEYWORD || (t.kind == pg_query.Token_IDENT && !strings.HasPrefix(t.text, `"`)) {
		return pglex.FoldIdent(t.text)
	}
	return ""
}

// isColID reports whether t may name a column or relation: an identifier
// or a keyword that is not reserved (Postgres's ColId).
func (t token) isColID() bool {
	switch t.kw {
	case pg_query.KeywordKind_NO_KEYWORD:
		return t.kind == pg_query.Token_IDENT
	case pg_query.KeywordKind_UNRESERVED_KEYWORD, pg_query.KeywordKind_COL_NAME_KEYWORD:
		return true
	}
	return false
}

// isLabel reports whether t may be an option key part: an identifier or any
// keyword (Postgres's ColLabel).
func (t token) isLabel() bool {
	return t.kind == pg_query.Token_IDENT || t.kw != pg_query.KeywordKind_NO_KEYWORD
}

// maxIdentifierLength is Postgres's NAMEDATALEN-1: its scanner cuts
// longer identifiers to this many bytes, so the names of the column lists
// and queries Postgres parses are cut too, and the pre-parser's names must
// be cut alike to match them.
const maxIdentifierLength = 63

// identValue returns the name an identifier token stands for: a quoted
// identifier without its quotes (doubled quotes undone), anything else
// lower-cased as Postgres does (ASCII letters only); either cut to
// maxIdentifierLength bytes at a character boundary.
func identValue(t token) string { return truncateIdent(fullIdent(t.text)) }

// fullIdent is the name identifier text stands for before any cut: a
// quoted one without its quotes, anything else folded.
func fullIdent(text string) string {
	if strings.HasPrefix(text, `"`) && len(text) >= 2 {
		return pglex.UnquoteIdent(text)
	}
	return pglex.FoldIdent(text)
}

// truncateIdent cuts name to maxIdentifierLength bytes at a character
// boundary, as Postgres's truncate_identifier does.
func truncateIdent(name string) string {
	if len(name) <= maxIdentifierLength {
		return name
	}
	n := maxIdentifierLength
	for n > 0 && !utf8.RuneStart(name[n]) {
		n--
	}
	return name[:n]
}

// TruncationNotices returns PostgreSQL's notice (42622, name_too_long)
// for each identifier of text longer than maxIdentifierLength bytes:
// identifier "..." will be truncated to "...". Postgres's scanner sends
// it as it reads the text, before any statement in it runs; the names
// are cut either way (identValue, and libpg_query's own scanner). Text
// the scanner refuses has none: its error says what is wrong.
func TruncationNotices(text string) []*sqlerr.Error {
	if !mayHoldLongIdent(text) {
		return nil
	}
	res, err := pg_query.Scan(text)
	if err != nil {
		return nil
	}
	var out []*sqlerr.Error
	for _, st := range res.Tokens {
		s, e := int(st.Start), int(st.End)
		if st.Token != pg_query.Token_IDENT || s < 0 || e > len(text) || s > e {
			continue
		}
		full := fullIdent(text[s:e])
		if cut := truncateIdent(full); cut != full {
			out = append(out, sqlerr.New(sqlerr.NameTooLong, `identifier "%s" will be truncated to "%s"`, full, cut))
		}
	}
	return out
}

// mayHoldLongIdent reports whether text may hold an identifier longer
// than maxIdentifierLength bytes: a quote, or a run of more identifier
// bytes than that. Without either (most statements) TruncationNotices
// skips the second scan of the text.
func mayHoldLongIdent(text string) bool {
	if strings.IndexByte(text, '"') >= 0 {
		return true
	}
	run := 0
	for i := 0; i < len(text); i++ {
		if pglex.IsIdentChar(text[i]) {
			if run++; run > maxIdentifierLength {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// scan cuts input into tokens, dropping comments. A lexical error
// (unterminated quote or comment) is a 42601 *sqlerr.Error at Postgres's
// position.
func scan(input string) ([]token, error) {
	res, err := pg_query.Scan(input)
	if err != nil {
		return nil, pgError(input, input, err)
	}
	toks := make([]token, 0, len(res.Tokens))
	for _, st := range res.Tokens {
		if st.Token == pg_query.Token_C_COMMENT {
			if err := dynamicOptions(input, int(st.Start), int(st.End)); err != nil {
				return nil, err
			}
		}
		if st.Token == pg_query.Token_SQL_COMMENT || st.Token == pg_query.Token_C_COMMENT {
			continue
		}
		s, e := int(st.Start), int(st.End)
		if s < 0 || e > len(input) || s > e {
			return nil, sqlerr.New(sqlerr.InternalError, "scanner returned token bounds %d..%d outside the input of %d bytes", s, e, len(input))
		}
		toks = append(toks, token{kind: st.Token, kw: st.KeywordKind, start: s, end: e, text: input[s:e]})
	}
	return toks, nil
}

// dynamicOptions refuses Flink's and Paimon's dynamic table options, a
// comment /*+ OPTIONS('scan.snapshot-id' = '1') */ after a table name,
// with 0A000 at the comment: dropped as a comment, it would read
// another version than the one asked for without a word. Other comments,
// and other hints (/*+ BROADCAST(t) */), which change no result, stay
// comments.
func dynamicOptions(input string, start, end int) error {
	if start < 0 || end > len(input) || start > end {
		return nil
	}
	body, ok := strings.CutPrefix(input[start:end], "/*+")
	if !ok {
		return nil
	}
	body = strings.ToLower(strings.TrimSpace(body))
	if !strings.HasPrefix(body, "options") || !strings.HasPrefix(strings.TrimSpace(body[len("options"):]), "(") {
		return nil
	}
	e := sqlerr.New(sqlerr.FeatureNotSupported, "dynamic table options /*+ OPTIONS(...) */ are not supported").WithPosition(position(input, start))
	e.Hint = dynamicOptionsHint
	return e
}

// pgError turns an error of libpg_query on text (input, or a rewrite of it
// with the same byte layout) into a 42601 *sqlerr.Error whose position is
// in input: Postgres counts characters of text, which may differ from
// input's where the rewrite blanked multi-byte characters.
func pgError(input, text string, err error) error {
	var pe *pgparser.Error
	if !errors.As(err, &pe) {
		return sqlerr.Wrap(sqlerr.SyntaxError, err)
	}
	e := sqlerr.New(sqlerr.SyntaxError, "%s", pe.Message)
	if pe.Cursorpos > 0 {
		off := charToByte(text, int(pe.Cursorpos))
		e = e.WithPosition(position(input, off))
	}
	return e
}

// charToByte returns the byte offset of the 1-based character position
// pos in s (len(s) past its end).
func charToByte(s string, pos int) int {
	n := 1
	for i := range s {
		if n == pos {
			return i
		}
		n++
	}
	return len(s)
}

// position returns the 1-based character position of byte offset off in
// input, as Postgres reports positions.
func position(input string, off int) int {
	if off > len(input) {
		off = len(input)
	}
	if off < 0 {
		return 0
	}
	return utf8.RuneCountInString(input[:off]) + 1
}

// stringValue decodes a string-constant token (SCONST): standard '...'
// with doubled quotes, E'...' with backslash escapes, $tag$...$tag$, and
// literals continued across newlines ('a'\n'b' is "ab"), all as Postgres
// reads them with standard_conforming_strings on (pglex's rules).
func stringValue(t token) (string, error) {
	text := t.text
	if t.kind != pg_query.Token_SCONST || text == "" {
		return "", errors.New("not a string constant")
	}
	if text[0] == '$' {
		tag, end, ok := pglex.DollarQuoted(text)
		if tag == "" || !ok || end != len(text) {
			return "", errors.New("malformed dollar-quoted string")
		}
		return text[len(tag) : end-len(tag)], nil
	}
	escapes := false
	if text[0] == 'E' || text[0] == 'e' {
		escapes = true
		text = text[1:]
	}
	var b strings.Builder
	i := 0
	for i < len(text) {
		if text[i] != '\'' {
			return "", errors.New("malformed string constant")
		}
		var err error
		if i, err = pglex.ScanQuoted(text, i+1, '\'', escapes, &b); err != nil {
			return "", err
		}
		// A continuation: whitespace holding a newline, then the next
		// quoted part (the scanner made both one token).
		for i < len(text) && text[i] != '\'' {
			switch text[i] {
			case ' ', '\t', '\n', '\r', '\f', '\v':
				i++
			default:
				return "", errors.New("malformed string continuation")
			}
		}
	}
	if !utf8.ValidString(b.String()) {
		return "", errors.New("string constant is not valid UTF-8")
	}
	return b.String(), nil
}
