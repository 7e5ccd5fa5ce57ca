package ddl

import (
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/sql/sqlerr"
)

// buildFunc makes a Statement from the Postgres parse tree of the part of
// the statement the pre-parser left for Postgres (nil when it left none).
type buildFunc = func(node *pg_query.Node) (Statement, error)

// statement pre-parses the statement under c: it recognises Strata's
// statements by their leading words and parses them, blanking in p.rw what
// Postgres must not see; anything else is left to Postgres whole. needsPG
// tells whether a Postgres parse tree is expected for it.
func (p *parser) statement(c *cursor) (needsPG bool, build buildFunc, err error) {
	switch {
	case c.isWord("create", "table"):
		return p.createTable(c)
	case c.isWord("create", "source"):
		return p.createSource(c)
	case c.isWord("create", "materialized", "view"):
		return p.createView(c)
	case c.isWord("create", "or", "replace", "materialized", "view"):
		// Neither PostgreSQL nor RisingWave has it; say what does the job.
		e := p.errAt(c.toks[1].start, sqlerr.FeatureNotSupported, "CREATE OR REPLACE MATERIALIZED VIEW is not supported")
		e.Hint = "DROP MATERIALIZED VIEW the view, then CREATE MATERIALIZED VIEW it again with the new query; the new view computes its inputs' history again."
		return false, nil, e
	case c.isWord("create", "sink"):
		return p.createSink(c)
	case c.isWord("create", "temporary", "table"), c.isWord("create", "temp", "table"):
		// Flink's temporary tables, with or without WITH: Postgres's
		// parser would stop at a quoted option name.
		e := p.errAt(c.toks[1].start, sqlerr.FeatureNotSupported, "statement %q is not supported", "CREATE "+strings.ToUpper(c.toks[1].text)+" TABLE")
		e.Hint = temporaryTableHint
		return false, nil, e
	case c.isWord("drop"):
		if k, n := dropKind(c); k != "" {
			return p.drop(c, k, n)
		}
	case c.isWord("show", "create"):
		if k, n := showCreateKind(c); k != "" {
			return p.showCreate(c, k, n)
		}
	case c.isWord("show"):
		if what, n := showList(c); what != "" {
			return p.show(c, what, n)
		}
	case c.isWord("describe"), c.isWord("desc"):
		return p.describe(c)
	case c.isWord("explain"):
		return p.explain(c)
	}
	return p.postgres(c)
}

// temporaryTableHint answers CREATE TEMPORARY TABLE.
const temporaryTableHint = "Strata has no temporary tables: CREATE TABLE t (...) [WITH (...)] stores the rows, and CREATE SOURCE t (...) WITH (connector = '...') reads a connector in the views that name it without storing anything."

// done checks that the statement has no tokens left and blanks all of it
// for Postgres.
func (p *parser) done(c *cursor) error {
	if !c.atEnd() {
		return c.syntaxError()
	}
	p.blank(c.toks[0].start, c.toks[len(c.toks)-2].end)
	return nil
}

// whole returns the Span of the statement under c, sentinel excluded.
func (p *parser) whole(c *cursor) Span { return p.span(c.toks[:len(c.toks)-1]) }

// dropKind recognises the object kind after DROP and how many words it
// takes; "" for kinds Postgres handles (DROP INDEX, ...).
func dropKind(c *cursor) (ObjectKind, int) {
	switch {
	case c.isWord("drop", "table"):
		return Table, 2
	case c.isWord("drop", "materialized", "view"):
		return View, 3
	case c.isWord("drop", "view"):
		return PlainView, 2
	case c.isWord("drop", "source"):
		return Source, 2
	case c.isWord("drop", "sink"):
		return Sink, 2
	}
	return "", 0
}

func (p *parser) drop(c *cursor, kind ObjectKind, words int) (bool, buildFunc, error) {
	c.i += words
	d := &Drop{Span: p.whole(c), Kind: kind}
	d.IfExists = c.acceptWord("if", "exists")
	for {
		n, _, err := c.name()
		if err != nil {
			return false, nil, err
		}
		d.Names = append(d.Names, n)
		if !c.accept(tokComma) {
			break
		}
	}
	switch {
	case c.acceptWord("cascade"):
		d.Cascade = true
	case c.acceptWord("restrict"):
	}
	if err := p.done(c); err != nil {
		return false, nil, err
	}
	return false, func(*pg_query.Node) (Statement, error) { return d, nil }, nil
}

// showList recognises SHOW of one of Strata's object lists.
func showList(c *cursor) (string, int) {
	if c.peekN(2).kind == eof || c.peekN(2).kind == tokSemi {
		switch c.peekN(1).word() {
		case "tables":
			return ShowTables, 2
		case "sources":
			return ShowSources, 2
		case "sinks":
			return ShowSinks, 2
		case "jobs":
			return ShowJobs, 2
		}
	}
	if c.isWord("show", "materialized", "views") {
		return ShowMaterializedViews, 3
	}
	return "", 0
}

func (p *parser) show(c *cursor, what string, words int) (bool, buildFunc, error) {
	c.i += words
	s := &Show{Span: p.whole(c), What: what}
	if err := p.done(c); err != nil {
		return false, nil, err
	}
	return false, func(*pg_query.Node) (Statement, error) { return s, nil }, nil
}

// showCreateKind recognises the object kind after SHOW CREATE and how
// many words SHOW CREATE and the kind take.
func showCreateKind(c *cursor) (ObjectKind, int) {
	switch {
	case c.isWord("show", "create", "table"):
		return Table, 3
	case c.isWord("show", "create", "materialized", "view"):
		return View, 4
	case c.isWord("show", "create", "view"):
		return PlainView, 3
	case c.isWord("show", "create", "source"):
		return Source, 3
	case c.isWord("show", "create", "sink"):
		return Sink, 3
	}
	return "", 0
}

func (p *parser) showCreate(c *cursor, kind ObjectKind, words int) (bool, buildFunc, error) {
	c.i += words
	n, _, err := c.name()
	if err != nil {
		return false, nil, err
	}
	s := &ShowCreate{Span: p.whole(c), Kind: kind, Name: n}
	if err := p.done(c); err != nil {
		return false, nil, err
	}
	return false, func(*pg_query.Node) (Statement, error) { return s, nil }, nil
}

func (p *parser) describe(c *cursor) (bool, buildFunc, error) {
	c.next()
	n, _, err := c.name()
	if err != nil {
		return false, nil, err
	}
	d := &Describe{Span: p.whole(c), Name: n}
	if err := p.done(c); err != nil {
		return false, nil, err
	}
	return false, func(*pg_query.Node) (Statement, error) { return d, nil }, nil
}

// explain parses EXPLAIN [ANALYZE] stmt and EXPLAIN (ANALYZE [bool]) stmt;
// the explained statement is parsed as any other, then wrapped.
func (p *parser) explain(c *cursor) (bool, buildFunc, error) {
	c.next()
	analyze := false
	switch {
	case c.acceptWord("analyze"), c.acceptWord("analyse"):
		analyze = true
	case c.accept(tokLParen):
		for {
			t := c.peek()
			if w := t.word(); w != "analyze" && w != "analyse" {
				if t.isLabel() {
					return false, nil, p.errAt(t.start, sqlerr.FeatureNotSupported, "EXPLAIN option %q is not supported", identValue(t))
				}
				return false, nil, c.syntaxError()
			}
			c.next()
			analyze = true
			switch c.peek().word() {
			case "true", "on":
				c.next()
			case "false", "off":
				c.next()
				analyze = false
			}
			if c.accept(tokRParen) {
				break
			}
			if _, err := c.expect(tokComma); err != nil {
				return false, nil, err
			}
		}
	}
	if c.atEnd() {
		return false, nil, c.syntaxError()
	}
	p.blank(c.toks[0].start, c.toks[c.i-1].end)
	innerStart := c.i
	inner := &cursor{p: p, toks: c.toks[c.i:]}
	needsPG, build, err := p.statement(inner)
	if err != nil {
		return false, nil, err
	}
	span := p.whole(c)
	first := c.toks[innerStart]
	return needsPG, func(n *pg_query.Node) (Statement, error) {
		st, err := build(n)
		if err != nil {
			return nil, err
		}
		switch st.(type) {
		case *Query, *Insert, *Update, *Delete, *CreateTable, *CreateView, *CreateSink:
		default:
			return nil, p.errAt(first.start, sqlerr.FeatureNotSupported, "EXPLAIN of %s is not supported", strings.ToUpper(first.text))
		}
		return &Explain{Span: span, Statement: st, Analyze: analyze}, nil
	}, nil
}

// postgres leaves the statement to Postgres, after taking off a trailing
// time-travel clause `AS OF EPOCH n`, and maps the parse tree to a
// Statement.
func (p *parser) postgres(c *cursor) (bool, buildFunc, error) {
	span := p.whole(c)
	queryEnd := len(c.toks) - 1 // index of the sentinel
	var atEpoch *uint64
	asOf := -1
	n := len(c.toks) - 1
	if n >= 5 && (c.toks[n-2].kind == tokMinus || c.toks[n-2].kind == tokPlus) && c.toks[n-5].word() == "as" && c.toks[n-4].word() == "of" && c.toks[n-3].word() == "epoch" {
		// A signed epoch: the clause is at the end, its value is wrong.
		sign, t := c.toks[n-2], c.toks[n-1]
		if sign.kind == tokMinus && (t.kind == pg_query.Token_ICONST || t.kind == pg_query.Token_FCONST) {
			e := p.errAt(sign.start, sqlerr.InvalidParameterValue, "AS OF EPOCH -%s: the epoch must be a non-negative integer", t.text)
			e.Hint = "SHOW epoch gives the current epoch, and strata_catalog.tables the epoch each table has committed."
			return false, nil, e
		}
		// AS OF EPOCH +5 is epoch 5: drop the sign and read on.
		p.blank(sign.start, sign.end)
		c = &cursor{p: p, toks: append(append([]token(nil), c.toks[:n-2]...), c.toks[n-1:]...)}
	}
	if n := len(c.toks) - 1; n >= 4 && c.toks[n-4].word() == "as" && c.toks[n-3].word() == "of" && c.toks[n-2].word() == "epoch" {
		t := c.toks[n-1]
		if t.kind != pg_query.Token_ICONST && t.kind != pg_query.Token_FCONST {
			return false, nil, p.errAt(t.start, sqlerr.SyntaxError, "AS OF EPOCH takes an epoch number, not %q", t.text)
		}
		e, err := strconv.ParseUint(t.text, 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
				return false, nil, p.errAt(t.start, sqlerr.NumericValueOutOfRange, "epoch %s is out of range for an unsigned 64-bit integer", t.text)
			}
			return false, nil, p.errAt(t.start, sqlerr.SyntaxError, "AS OF EPOCH takes a whole epoch number, not %q", t.text)
		}
		atEpoch = &e
		asOf = c.toks[n-4].start
		queryEnd = n - 4
		p.blank(c.toks[n-4].start, t.end)
	}
	if queryEnd == 0 {
		return false, nil, p.errAt(c.toks[0].start, sqlerr.SyntaxError, "syntax error at or near %q", c.toks[0].text)
	}
	for i := 1; i+2 < queryEnd; i++ {
		if c.toks[i].word() == "as" && c.toks[i+1].word() == "of" && c.toks[i+2].word() == "epoch" {
			// Postgres would say only "syntax error at or near EPOCH".
			e := p.errAt(c.toks[i].start, sqlerr.SyntaxError, "syntax error at or near %q: AS OF EPOCH goes at the end of the statement", c.toks[i].text)
			e.Hint = "Write AS OF EPOCH n last, after WHERE, GROUP BY, ORDER BY and LIMIT: SELECT * FROM t WHERE k > 1 ORDER BY k LIMIT 10 AS OF EPOCH 5."
			return false, nil, e
		}
	}
	queryText := p.span(c.toks[:queryEnd]).SQL
	return true, func(n *pg_query.Node) (Statement, error) {
		if atEpoch != nil && n.GetSelectStmt() == nil {
			return nil, p.errAt(asOf, sqlerr.FeatureNotSupported, "AS OF EPOCH applies to queries only, not to %s", kindName(n))
		}
		return p.fromPostgres(span, queryText, atEpoch, n)
	}, nil
}

// fromPostgres maps a Postgres parse tree to a Statement.
func (p *parser) fromPostgres(span Span, queryText string, atEpoch *uint64, n *pg_query.Node) (Statement, error) {
	switch {
	case n.GetSelectStmt() != nil:
		if into := n.GetSelectStmt().GetIntoClause(); into != nil {
			return nil, p.errAt(int(into.GetRel().GetLocation()), sqlerr.FeatureNotSupported, "SELECT ... INTO is not supported; use CREATE TABLE ... AS")
		}
		return &Query{Span: span, Node: n, QueryText: queryText, AtEpoch: atEpoch}, nil
	case n.GetInsertStmt() != nil:
		is := n.GetInsertStmt()
		name, err := p.rangeVarName(is.GetRelation())
		if err != nil {
			return nil, err
		}
		ins := &Insert{Span: span, Node: n, Table: name, Rows: is.GetSelectStmt()}
		for _, col := range is.GetCols() {
			rt := col.GetResTarget()
			if len(rt.GetIndirection()) > 0 {
				return nil, p.errAt(int(rt.GetLocation()), sqlerr.FeatureNotSupported, "INSERT into a field or element of column %q is not supported", rt.GetName())
			}
			ins.Columns = append(ins.Columns, rt.GetName())
		}
		return ins, nil
	case n.GetUpdateStmt() != nil:
		name, err := p.rangeVarName(n.GetUpdateStmt().GetRelation())
		if err != nil {
			return nil, err
		}
		return &Update{Span: span, Node: n, Table: name}, nil
	case n.GetDeleteStmt() != nil:
		name, err := p.rangeVarName(n.GetDeleteStmt().GetRelation())
		if err != nil {
			return nil, err
		}
		return &Delete{Span: span, Node: n, Table: name}, nil
	case n.GetVariableSetStmt() != nil:
		return p.set(span, n)
	case n.GetVariableShowStmt() != nil:
		return &Show{Span: span, What: strings.ToLower(n.GetVariableShowStmt().GetName())}, nil
	}
	return &Other{Span: span, Node: n}, nil
}

// set maps SET, SET TIME ZONE and RESET.
func (p *parser) set(span Span, n *pg_query.Node) (Statement, error) {
	vs := n.GetVariableSetStmt()
	s := &Set{Span: span, Name: strings.ToLower(vs.GetName()), Local: vs.GetIsLocal()}
	switch vs.GetKind() {
	case pg_query.VariableSetKind_VAR_SET_VALUE:
		var vals []string
		for _, a := range vs.GetArgs() {
			c := a.GetAConst()
			switch {
			case c == nil:
				loc := span.Start
				if tc := a.GetTypeCast(); tc != nil {
					for _, l := range []int32{tc.GetLocation(), tc.GetTypeName().GetLocation(), tc.GetArg().GetAConst().GetLocation()} {
						if l >= 0 {
							loc = int(l)
							break
						}
					}
				}
				return nil, p.errAt(loc, sqlerr.FeatureNotSupported, "SET %s takes a string or number here", s.Name)
			case c.GetSval() != nil:
				vals = append(vals, c.GetSval().GetSval())
			case c.GetIval() != nil:
				vals = append(vals, strconv.FormatInt(int64(c.GetIval().GetIval()), 10))
			case c.GetFval() != nil:
				vals = append(vals, c.GetFval().GetFval())
			case c.GetBoolval() != nil:
				vals = append(vals, strconv.FormatBool(c.GetBoolval().GetBoolval()))
			default:
				return nil, p.errAt(int(c.GetLocation()), sqlerr.FeatureNotSupported, "SET %s takes a string or number", s.Name)
			}
		}
		s.Value = strings.Join(vals, ", ")
	case pg_query.VariableSetKind_VAR_SET_DEFAULT, pg_query.VariableSetKind_VAR_RESET:
		s.Default = true
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		s.Name, s.Default = "all", true
	default:
		// SET TRANSACTION ..., SET SESSION CHARACTERISTICS ...,
		// SET x FROM CURRENT: passed through.
		return &Other{Span: span, Node: n}, nil
	}
	return s, nil
}
