package ddl

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/sql/sqlerr"
)

// characterNotInRepertoire is SQLSTATE 22021, Postgres's code for input
// bytes that are not valid in the encoding (sqlerr has no name for it).
const characterNotInRepertoire = "22021"

// Parse splits text into statements and parses each one. Strata's own
// statements (see the package doc) are recognised by their leading words
// and parsed here; every other statement goes to the Postgres parser. Empty
// statements are dropped. Every error is a *sqlerr.Error with a SQLSTATE
// and the 1-based character position in text of the offending token.
//
// Parse trees (pg_query nodes) hold byte offsets into text, not into the
// statement's own text.
func Parse(text string) ([]Statement, error) {
	if err := checkEncoding(text); err != nil {
		return nil, err
	}
	toks, err := scan(text)
	if err != nil {
		return nil, err
	}
	p := &parser{input: text, toks: toks, lastPos: 1}
	return p.run()
}

// checkEncoding refuses input that is not valid UTF-8 or holds a NUL byte:
// the C parser would stop at the NUL and silently ignore the rest.
func checkEncoding(text string) error {
	for i, r := range text {
		if r == 0 {
			return sqlerr.New(characterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": 0x00").WithPosition(position(text, i))
		}
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(text[i:]); size == 1 {
				return sqlerr.New(characterNotInRepertoire, "invalid byte sequence for encoding \"UTF8\": 0x%02x", text[i]).WithPosition(position(text, i))
			}
		}
	}
	return nil
}

// parser holds one call of Parse.
type parser struct {
	input string
	toks  []token
	// rw is the input rewritten for the Postgres parser: Strata's clauses
	// and statements blanked with spaces, byte for byte, so that every
	// offset Postgres reports is an offset in input too.
	rw []byte
	// lastOff and lastPos memoise pos: byte offset lastOff is at
	// character position lastPos (1-based).
	lastOff, lastPos int
}

// segment is one statement's tokens, between semicolons.
type segment struct {
	// lo and hi bound the bytes between the previous semicolon (or the
	// start) and this statement's semicolon (or the end).
	lo, hi int
	// toks are the statement's tokens followed by a sentinel: its
	// semicolon, or a token of kind eof at hi.
	toks []token
}

// pending is a statement parsed by the pre-parser, waiting for the
// Postgres parse of the part of its text that Postgres understands.
type pending struct {
	seg     segment
	needsPG bool
	// build makes the Statement from the Postgres parse tree (nil unless
	// needsPG).
	build func(node *pg_query.Node) (Statement, error)
}

func (p *parser) run() ([]Statement, error) {
	p.rw = []byte(p.input)
	var pend []pending
	for _, seg := range p.split() {
		c := &cursor{p: p, toks: seg.toks}
		needsPG, build, err := p.statement(c)
		if err != nil && sqlerr.Code(err) != sqlerr.SyntaxError {
			// Postgres reports every syntax error of a script before any
			// other error: hide this statement from Postgres, go on, and
			// report the error when its turn comes to be built.
			p.blank(seg.toks[0].start, seg.toks[len(seg.toks)-2].end)
			deferred := err
			pend = append(pend, pending{seg: seg, build: func(*pg_query.Node) (Statement, error) { return nil, deferred }})
			continue
		}
		if err != nil {
			// Among syntax errors the first in the text wins: one in an
			// earlier statement that Postgres parses comes before this.
			if perr := p.pgCheck(seg.lo); perr != nil {
				return nil, perr
			}
			return nil, p.withHint(err)
		}
		pend = append(pend, pending{seg: seg, needsPG: needsPG, build: build})
	}
	nodes, err := p.pgParse(pend)
	if err != nil {
		return nil, err
	}
	out := make([]Statement, 0, len(pend))
	for i, pd := range pend {
		st, err := pd.build(nodes[i])
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// split cuts the tokens at semicolons. Statements with no tokens are
// dropped.
func (p *parser) split() []segment {
	var segs []segment
	lo, first := 0, 0
	for i := 0; i <= len(p.toks); i++ {
		if i < len(p.toks) && p.toks[i].kind != tokSemi {
			continue
		}
		hi := len(p.input)
		var end token
		if i < len(p.toks) {
			hi = p.toks[i].start
			end = p.toks[i]
		} else {
			end = token{kind: eof, start: hi, end: hi}
		}
		if i > first {
			toks := make([]token, 0, i-first+1)
			toks = append(toks, p.toks[first:i]...)
			segs = append(segs, segment{lo: lo, hi: hi, toks: append(toks, end)})
		}
		lo, first = end.end, i+1
	}
	return segs
}

// blank hides input[from:to] from the Postgres parser.
func (p *parser) blank(from, to int) {
	for i := from; i < to; i++ {
		p.rw[i] = ' '
	}
}

// pgCheck parses the rewritten input before byte offset upTo and returns
// its syntax error, if any.
func (p *parser) pgCheck(upTo int) error {
	text := string(p.rw[:upTo])
	if strings.TrimSpace(text) == "" {
		return nil
	}
	if _, err := pg_query.Parse(text); err != nil {
		return p.withHint(pgError(p.input, text, err))
	}
	return nil
}

// pgParse parses the rewritten input once and hands each pending statement
// that needs it its parse tree.
func (p *parser) pgParse(pend []pending) ([]*pg_query.Node, error) {
	nodes := make([]*pg_query.Node, len(pend))
	any := false
	for _, pd := range pend {
		any = any || pd.needsPG
	}
	if !any {
		return nodes, nil
	}
	text := string(p.rw)
	tree, err := pg_query.Parse(text)
	if err != nil {
		return nil, p.withHint(pgError(p.input, text, err))
	}
	got := make([]int, len(pend))
	for _, raw := range tree.GetStmts() {
		loc := int(raw.GetStmtLocation())
		// The statement starts after the semicolon that ends the previous
		// one, so inside exactly one segment's [lo, hi].
		i := sort.Search(len(pend), func(i int) bool { return pend[i].seg.hi >= loc })
		if i == len(pend) || pend[i].seg.lo > loc {
			return nil, sqlerr.New(sqlerr.InternalError, "Postgres parsed a statement at byte %d outside every statement", loc)
		}
		got[i]++
		nodes[i] = raw.GetStmt()
	}
	for i, pd := range pend {
		if (pd.needsPG && got[i] == 1) || (!pd.needsPG && got[i] == 0) {
			continue
		}
		// Postgres split the script elsewhere than at this statement's
		// semicolons: only a semicolon inside a BEGIN ATOMIC body does that.
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "statement cannot be split at its semicolons (BEGIN ATOMIC bodies are not supported)").
			WithPosition(position(p.input, pd.seg.toks[0].start))
	}
	return nodes, nil
}

// cursor walks one statement's tokens. Its last token is the sentinel (a
// semicolon or eof), which no rule consumes.
type cursor struct {
	p    *parser
	toks []token
	i    int
}

func (c *cursor) peek() token       { return c.toks[c.i] }
func (c *cursor) peekN(n int) token { return c.toks[min(c.i+n, len(c.toks)-1)] }
func (c *cursor) atEnd() bool       { return c.i >= len(c.toks)-1 }

func (c *cursor) next() token {
	t := c.toks[c.i]
	if !c.atEnd() {
		c.i++
	}
	return t
}

// isWord reports whether the next tokens are the words ws.
func (c *cursor) isWord(ws ...string) bool {
	for k, w := range ws {
		if c.i+k >= len(c.toks)-1 || c.toks[c.i+k].word() != w {
			return false
		}
	}
	return true
}

// acceptWord consumes the words ws if they come next.
func (c *cursor) acceptWord(ws ...string) bool {
	if !c.isWord(ws...) {
		return false
	}
	c.i += len(ws)
	return true
}

func (c *cursor) expectWord(ws ...string) error {
	for _, w := range ws {
		if !c.acceptWord(w) {
			return c.syntaxError()
		}
	}
	return nil
}

func (c *cursor) accept(kind pg_query.Token) bool {
	if c.atEnd() || c.peek().kind != kind {
		return false
	}
	c.i++
	return true
}

func (c *cursor) expect(kind pg_query.Token) (token, error) {
	t := c.peek()
	if !c.accept(kind) {
		return t, c.syntaxError()
	}
	return t, nil
}

// syntaxError reports the next token as Postgres does: `syntax error at
// or near "x"`, or `at end of input`.
func (c *cursor) syntaxError() *sqlerr.Error {
	t := c.peek()
	if t.kind == eof {
		return c.p.errAt(t.start, sqlerr.SyntaxError, "syntax error at end of input")
	}
	return c.p.errAt(t.start, sqlerr.SyntaxError, "syntax error at or near %q", t.text)
}

// errAt returns an error whose position is that of byte offset off.
func (p *parser) errAt(off int, code, format string, args ...any) *sqlerr.Error {
	return sqlerr.New(code, format, args...).WithPosition(p.pos(off))
}

// pos returns the 1-based character position of byte offset off in the
// input. Statements ask for positions mostly in increasing order, so it
// counts on from the last answer rather than from the start: a script of
// many statements costs linear time, not quadratic.
func (p *parser) pos(off int) int {
	if off < 0 {
		return 0
	}
	off = min(off, len(p.input))
	if off < p.lastOff {
		p.lastOff, p.lastPos = 0, 1
	}
	p.lastPos += utf8.RuneCountInString(p.input[p.lastOff:off])
	p.lastOff = off
	return p.lastPos
}

// span returns the Span of the tokens toks[from:to].
func (p *parser) span(toks []token) Span {
	if len(toks) == 0 {
		return Span{}
	}
	s, e := toks[0].start, toks[len(toks)-1].end
	return Span{SQL: p.input[s:e], Start: s}
}

// name parses a possibly qualified name, `name` or `db.name`, each part an
// identifier or unreserved keyword, and returns it as written: lower-cased
// unless quoted.
func (c *cursor) name() (string, token, error) {
	first := c.peek()
	var parts []string
	for {
		t := c.peek()
		if !t.isColID() {
			return "", first, c.syntaxError()
		}
		c.next()
		v := identValue(t)
		if strings.Contains(v, ".") {
			return "", first, c.p.errAt(t.start, invalidName, "name %s holds a dot; Strata names may not", t.text)
		}
		parts = append(parts, v)
		if !c.accept(tokDot) {
			break
		}
		if len(parts) == 2 {
			return "", first, c.p.errAt(first.start, sqlerr.SyntaxError, "improper qualified name (too many dotted names): %s", strings.Join(append(parts, identValue(c.peek())), "."))
		}
	}
	return strings.Join(parts, "."), first, nil
}

// invalidName is SQLSTATE 42602 invalid_name.
const invalidName = "42602"

// rangeVarName returns a RangeVar's name as written ("db.t"); Postgres has
// lower-cased its unquoted parts already.
func (p *parser) rangeVarName(rv *pg_query.RangeVar) (string, error) {
	if rv.GetCatalogname() != "" {
		return "", p.errAt(int(rv.GetLocation()), sqlerr.SyntaxError, "improper qualified name (too many dotted names): %s.%s.%s", rv.GetCatalogname(), rv.GetSchemaname(), rv.GetRelname())
	}
	var parts []string
	for _, s := range []string{rv.GetSchemaname(), rv.GetRelname()} {
		if s == "" {
			continue
		}
		if strings.Contains(s, ".") {
			return "", p.errAt(int(rv.GetLocation()), invalidName, "name %q holds a dot; Strata names may not", s)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "."), nil
}

// kindName names a statement's node kind for messages: "CreateStmt"
// becomes "Create".
func kindName(n *pg_query.Node) string {
	t := strings.TrimPrefix(fmt.Sprintf("%T", n.GetNode()), "*pg_query.Node_")
	return strings.TrimSuffix(t, "Stmt")
}
