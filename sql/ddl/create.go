package ddl

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/sql/sqlerr"
)

// createHead parses `CREATE <words> [IF NOT EXISTS] name`.
func (c *cursor) createHead(words ...string) (name string, ifNotExists bool, nameTok token, err error) {
	c.next() // CREATE
	if err := c.expectWord(words...); err != nil {
		return "", false, token{}, err
	}
	ifNotExists = c.acceptWord("if", "not", "exists")
	name, nameTok, err = c.name()
	return name, ifNotExists, nameTok, err
}

// elements is the parenthesised column list of CREATE TABLE or CREATE
// SOURCE as the pre-parser sees it: where it is, and its WATERMARK
// clauses, which it has blanked for Postgres.
type elements struct {
	present   bool
	watermark *watermarkClause
}

// columnList scans `( element, ... )` under c. WATERMARK FOR elements are
// parsed here and blanked, each with one comma beside it, so that Postgres
// parses the rest as a CREATE TABLE column list.
func (p *parser) columnList(c *cursor) (elements, error) {
	var el elements
	if _, err := c.expect(tokLParen); err != nil {
		return el, err
	}
	el.present = true
	prevComma := -1 // index of the comma before the current element
	for {
		start := c.i
		// Find the element's end: a comma or the closing parenthesis at
		// depth 0.
		depth := 0
		for {
			t := c.peek()
			if t.kind == eof || t.kind == tokSemi {
				return el, c.syntaxError()
			}
			if depth == 0 && (t.kind == tokComma || t.kind == tokRParen) {
				break
			}
			switch t.kind {
			case tokLParen:
				depth++
			case tokRParen:
				depth--
			}
			c.next()
		}
		end := c.i // index of the comma or ')'
		if end-start >= 2 && c.toks[start].word() == "watermark" && c.toks[start+1].word() == "for" {
			if el.watermark != nil {
				return el, p.errAt(c.toks[start].start, sqlerr.SyntaxError, "a table has at most one WATERMARK clause")
			}
			wc, err := p.watermarkClause(c.toks[start:end])
			if err != nil {
				return el, err
			}
			el.watermark = wc
			// Blank the element and the comma before it, or after it when
			// it is the first element.
			from, to := c.toks[start].start, c.toks[end-1].end
			switch {
			case prevComma >= 0:
				from = c.toks[prevComma].start
			case c.toks[end].kind == tokComma:
				to = c.toks[end].end
			}
			p.blank(from, to)
		}
		if c.accept(tokRParen) {
			return el, nil
		}
		prevComma = c.i
		c.next() // the comma
	}
}

// createTable parses CREATE TABLE in its three forms: a column list with
// Strata's clauses, FROM source TABLE 'name', and AS query.
func (p *parser) createTable(c *cursor) (bool, buildFunc, error) {
	name, ifNot, _, err := c.createHead("table")
	if err != nil {
		return false, nil, err
	}
	ct := &CreateTable{Span: p.whole(c), Name: name, IfNotExists: ifNot}
	var el elements
	if c.peek().kind == tokLParen {
		if el, err = p.columnList(c); err != nil {
			return false, nil, err
		}
	}
	// FROM and WITH may come in either order (RisingWave writes WITH
	// first, the CDC examples FROM first).
	for el.present && c.isWord("from") || c.isWord("with") {
		if c.isWord("with") {
			if ct.With != nil {
				return false, nil, c.syntaxError()
			}
			if ct.With, err = p.withOptions(c); err != nil {
				return false, nil, err
			}
			continue
		}
		if ct.FromSource != "" {
			return false, nil, c.syntaxError()
		}
		from := c.next()
		if ct.FromSource, _, err = c.name(); err != nil {
			return false, nil, err
		}
		if err := c.expectWord("table"); err != nil {
			return false, nil, err
		}
		t := c.peek()
		if t.kind != pg_query.Token_SCONST {
			return false, nil, c.syntaxError()
		}
		if ct.FromTable, err = stringValue(t); err != nil {
			return false, nil, p.errAt(t.start, sqlerr.SyntaxError, "%v", err)
		}
		c.next()
		p.blank(from.start, t.end)
	}
	if !el.present {
		// CREATE TABLE t [WITH (...)] AS query: Postgres parses the query
		// alone.
		as := c.peek()
		if err := c.expectWord("as"); err != nil {
			return false, nil, err
		}
		return p.asQuery(c, as, func(q *pg_query.Node, text string) (Statement, error) {
			ct.Query, ct.QueryText = q, text
			return ct, nil
		})
	}
	if c.isWord("as") {
		return false, nil, p.errAt(c.peek().start, sqlerr.FeatureNotSupported, "CREATE TABLE with both a column list and AS query is not supported")
	}
	if !c.atEnd() {
		return false, nil, c.syntaxError()
	}
	toks := c.toks
	return true, func(n *pg_query.Node) (Statement, error) {
		cs := n.GetCreateStmt()
		if cs == nil {
			return nil, p.errAt(toks[0].start, sqlerr.InternalError, "CREATE TABLE parsed as %s", kindName(n))
		}
		cols, pk, err := p.columns(cs, toks, "table", name)
		if err != nil {
			return nil, err
		}
		if len(cols) == 0 {
			return nil, p.errAt(toks[0].start, invalidTableDefinition, "table %s has no columns", name)
		}
		ct.Columns, ct.PrimaryKey = cols, pk
		if ct.Watermark, err = p.checkWatermark(el.watermark, cols); err != nil {
			return nil, err
		}
		return ct, nil
	}, nil
}

// invalidTableDefinition is SQLSTATE 42P16.
const invalidTableDefinition = "42P16"

// createSource parses CREATE SOURCE name [(columns)] WITH (connector = ...).
// Postgres parses the column list as that of a CREATE TABLE: SOURCE is
// rewritten to TABLE.
func (p *parser) createSource(c *cursor) (bool, buildFunc, error) {
	kw := c.toks[1]
	name, ifNot, nameTok, err := c.createHead("source")
	if err != nil {
		return false, nil, err
	}
	src := &CreateSource{Span: p.whole(c), Name: name, IfNotExists: ifNot}
	var el elements
	if c.peek().kind == tokLParen {
		if el, err = p.columnList(c); err != nil {
			return false, nil, err
		}
	}
	withTok := c.peek()
	if c.isWord("with") {
		if src.With, err = p.withOptions(c); err != nil {
			return false, nil, err
		}
	}
	if !c.atEnd() {
		return false, nil, c.syntaxError()
	}
	if _, ok := src.With["connector"]; !ok {
		at := nameTok
		if src.With != nil {
			at = withTok
		}
		return false, nil, p.errAt(at.start, sqlerr.InvalidObjectDefinition, "source %s needs a connector: add WITH (connector = '...')", name)
	}
	if !el.present {
		p.blank(c.toks[0].start, c.toks[len(c.toks)-2].end)
		return false, func(*pg_query.Node) (Statement, error) { return src, nil }, nil
	}
	copy(p.rw[kw.start:kw.end], "TABLE ")
	toks := c.toks
	return true, func(n *pg_query.Node) (Statement, error) {
		cs := n.GetCreateStmt()
		if cs == nil {
			return nil, p.errAt(toks[0].start, sqlerr.InternalError, "CREATE SOURCE parsed as %s", kindName(n))
		}
		cols, pk, err := p.columns(cs, toks, "source", name)
		if err != nil {
			return nil, err
		}
		src.Columns, src.PrimaryKey = cols, pk
		if src.Watermark, err = p.checkWatermark(el.watermark, cols); err != nil {
			return nil, err
		}
		return src, nil
	}, nil
}

// createView parses CREATE MATERIALIZED VIEW name [WITH (...)] AS query.
func (p *parser) createView(c *cursor) (bool, buildFunc, error) {
	name, ifNot, _, err := c.createHead("materialized", "view")
	if err != nil {
		return false, nil, err
	}
	v := &CreateView{Span: p.whole(c), Name: name, IfNotExists: ifNot}
	if c.peek().kind == tokLParen {
		return false, nil, p.errAt(c.peek().start, sqlerr.FeatureNotSupported, "a column list on CREATE MATERIALIZED VIEW is not supported; name the columns in the query")
	}
	if c.isWord("with") {
		if v.With, err = p.withOptions(c); err != nil {
			return false, nil, err
		}
	}
	as := c.peek()
	if err := c.expectWord("as"); err != nil {
		return false, nil, err
	}
	return p.asQuery(c, as, func(q *pg_query.Node, text string) (Statement, error) {
		v.Query, v.QueryText = q, text
		return v, nil
	})
}

// createSink parses CREATE SINK name INTO table [WITH (...)] AS query and
// CREATE SINK name FROM relation WITH (connector = ...).
func (p *parser) createSink(c *cursor) (bool, buildFunc, error) {
	name, ifNot, _, err := c.createHead("sink")
	if err != nil {
		return false, nil, err
	}
	k := &CreateSink{Span: p.whole(c), Name: name, IfNotExists: ifNot}
	switch {
	case c.acceptWord("into"):
		if k.Into, _, err = c.name(); err != nil {
			return false, nil, err
		}
		if c.isWord("with") {
			if k.With, err = p.withOptions(c); err != nil {
				return false, nil, err
			}
		}
		as := c.peek()
		if err := c.expectWord("as"); err != nil {
			return false, nil, err
		}
		return p.asQuery(c, as, func(q *pg_query.Node, text string) (Statement, error) {
			k.Query, k.QueryText = q, text
			return k, nil
		})
	case c.acceptWord("from"):
		if k.From, _, err = c.name(); err != nil {
			return false, nil, err
		}
		withTok := c.peek()
		if !c.isWord("with") {
			return false, nil, p.errAt(withTok.start, sqlerr.InvalidObjectDefinition, "sink %s FROM %s needs a connector: add WITH (connector = '...')", name, k.From)
		}
		if k.With, err = p.withOptions(c); err != nil {
			return false, nil, err
		}
		if _, ok := k.With["connector"]; !ok {
			return false, nil, p.errAt(withTok.start, sqlerr.InvalidObjectDefinition, "sink %s FROM %s needs a connector: add WITH (connector = '...')", name, k.From)
		}
		if err := p.done(c); err != nil {
			return false, nil, err
		}
		return false, func(*pg_query.Node) (Statement, error) { return k, nil }, nil
	}
	return false, nil, c.syntaxError()
}

// asQuery leaves the tokens after AS to Postgres, which must parse them as
// a query (SELECT, VALUES, WITH ... SELECT, TABLE t); everything before
// them is blanked.
func (p *parser) asQuery(c *cursor, as token, build func(q *pg_query.Node, text string) (Statement, error)) (bool, buildFunc, error) {
	if c.atEnd() {
		return false, nil, c.syntaxError()
	}
	first := c.peek()
	p.blank(c.toks[0].start, as.end)
	text := p.span(c.toks[c.i : len(c.toks)-1]).SQL
	return true, func(n *pg_query.Node) (Statement, error) {
		sel := n.GetSelectStmt()
		if sel == nil {
			return nil, p.errAt(first.start, sqlerr.SyntaxError, "syntax error at or near %q: AS must be followed by a query", first.text)
		}
		if sel.GetIntoClause() != nil {
			return nil, p.errAt(first.start, sqlerr.SyntaxError, "SELECT ... INTO is not allowed here")
		}
		return build(n, text)
	}, nil
}
