package ddl

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/sql/sqlerr"
)

// withOptions parses `WITH ( key = value [, ...] )` and blanks it for
// Postgres, whose grammar takes at most one dot in a key.
//
//	key   = label { "." label } | 'string'
//	value = 'string' | [+|-] number | label
//
// Keys are lower-cased (options are case-insensitive); a label value is
// lower-cased unless quoted; a string value is decoded; a number is kept
// as written. A key given twice is a 42601 error at the second one.
func (p *parser) withOptions(c *cursor) (map[string]string, error) {
	with := c.next()
	if _, err := c.expect(tokLParen); err != nil {
		return nil, err
	}
	opts := map[string]string{}
	for {
		keyTok, keyIdx := c.peek(), c.i
		var key string
		switch {
		case keyTok.kind == pg_query.Token_SCONST:
			s, err := stringValue(keyTok)
			if err != nil {
				return nil, p.errAt(keyTok.start, sqlerr.SyntaxError, "option name %s: %v", keyTok.text, err)
			}
			c.next()
			key = strings.ToLower(s)
		case keyTok.isLabel():
			var parts []string
			for {
				t := c.peek()
				if !t.isLabel() {
					return nil, c.syntaxError()
				}
				c.next()
				parts = append(parts, strings.ToLower(identValue(t)))
				if !c.accept(tokDot) {
					break
				}
			}
			key = strings.Join(parts, ".")
		default:
			return nil, c.syntaxError()
		}
		if key == "" {
			return nil, p.errAt(keyTok.start, sqlerr.SyntaxError, "option name is empty")
		}
		if hint := p.optionNameHint(c, keyIdx); hint != "" {
			e := c.syntaxError()
			e.Hint = hint
			return nil, e
		}
		if _, err := c.expect(tokEquals); err != nil {
			return nil, err
		}
		val, err := p.optionValue(c)
		if err != nil {
			return nil, err
		}
		if _, dup := opts[key]; dup {
			return nil, p.errAt(keyTok.start, sqlerr.SyntaxError, "option %q specified more than once", key)
		}
		opts[key] = val
		if c.accept(tokRParen) {
			break
		}
		if _, err := c.expect(tokComma); err != nil {
			return nil, err
		}
	}
	p.blank(with.start, c.toks[c.i-1].end)
	return opts, nil
}

func (p *parser) optionValue(c *cursor) (string, error) {
	t := c.peek()
	switch {
	case t.kind == pg_query.Token_SCONST:
		s, err := stringValue(t)
		if err != nil {
			return "", p.errAt(t.start, sqlerr.SyntaxError, "option value %s: %v", t.text, err)
		}
		c.next()
		return s, nil
	case t.kind == tokMinus || t.kind == tokPlus:
		n := c.peekN(1)
		if n.kind != pg_query.Token_ICONST && n.kind != pg_query.Token_FCONST {
			return "", c.syntaxError()
		}
		c.next()
		c.next()
		if t.kind == tokMinus {
			return "-" + n.text, nil
		}
		return n.text, nil
	case t.kind == pg_query.Token_ICONST || t.kind == pg_query.Token_FCONST:
		c.next()
		return t.text, nil
	case t.kind == pg_query.Token_USCONST || t.kind == pg_query.Token_UIDENT:
		return "", p.errAt(t.start, sqlerr.FeatureNotSupported, "Unicode-escaped strings are not supported in options")
	case t.isLabel():
		c.next()
		return identValue(t), nil
	}
	return "", c.syntaxError()
}
