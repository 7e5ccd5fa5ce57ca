package ddl

import (
	"strings"
	"time"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// watermarkClause is a parsed WATERMARK FOR clause, before its column is
// checked against the column list.
type watermarkClause struct {
	column    string
	columnTok token
	delay     time.Duration
	at        token // the WATERMARK keyword
}

// watermarkClause parses the tokens of one column-list element:
//
//	WATERMARK FOR col AS col [ - INTERVAL 'n' unit | - INTERVAL 'n units' ]
//
// These are the bounded out-of-orderness watermarks of Flink's DDL; other
// expressions are refused with 0A000.
func (p *parser) watermarkClause(toks []token) (*watermarkClause, error) {
	c := &cursor{p: p, toks: append(append([]token(nil), toks...), token{kind: eof, start: toks[len(toks)-1].end, end: toks[len(toks)-1].end})}
	wc := &watermarkClause{at: c.next()}
	c.next() // FOR
	col := c.peek()
	if !col.isColID() {
		return nil, c.syntaxError()
	}
	c.next()
	wc.column, wc.columnTok = identValue(col), col
	if err := c.expectWord("as"); err != nil {
		return nil, err
	}
	ref := c.peek()
	if !ref.isColID() || identValue(ref) != wc.column {
		return nil, p.errAt(ref.start, sqlerr.FeatureNotSupported, "watermark expression must be %s or %s - INTERVAL '...'", col.text, col.text)
	}
	c.next()
	if c.atEnd() {
		return wc, nil
	}
	if _, err := c.expect(tokMinus); err != nil {
		return nil, p.errAt(c.peek().start, sqlerr.FeatureNotSupported, "watermark expression must be %s or %s - INTERVAL '...'", col.text, col.text)
	}
	if err := c.expectWord("interval"); err != nil {
		// Flink's WATERMARK FOR id AS id - 5 on a number.
		e := c.syntaxError()
		e.Hint = "The watermark column must be TIMESTAMP or TIMESTAMPTZ and its delay an INTERVAL: WATERMARK FOR ts AS ts - INTERVAL '5' SECOND, with ts such a column."
		return nil, e
	}
	lit := c.peek()
	if lit.kind != pg_query.Token_SCONST {
		return nil, c.syntaxError()
	}
	c.next()
	text, err := stringValue(lit)
	if err != nil {
		return nil, p.errAt(lit.start, sqlerr.SyntaxError, "%v", err)
	}
	if u := c.peek(); !c.atEnd() {
		unit := u.word()
		switch unit {
		case "year", "month", "day", "hour", "minute", "second":
		default:
			return nil, c.syntaxError()
		}
		c.next()
		// INTERVAL '5' SECOND: a bare number counts in the qualifier's unit.
		if isNumber(strings.TrimSpace(text)) {
			text = strings.TrimSpace(text) + " " + unit
		}
	}
	if !c.atEnd() {
		return nil, c.syntaxError()
	}
	d, err := types.ParseText(types.Interval, text, time.UTC)
	if err != nil {
		return nil, p.errAt(lit.start, sqlerr.InvalidDatetimeFormat, "watermark delay %s: %v", lit.text, err)
	}
	iv := d.Interval()
	if iv.Months != 0 {
		return nil, p.errAt(lit.start, sqlerr.FeatureNotSupported, "watermark delay %s has months or years, which have no fixed length", lit.text)
	}
	micros := int64(iv.Days)*int64(24*time.Hour/time.Microsecond) + iv.Micros
	if micros < 0 {
		return nil, p.errAt(lit.start, sqlerr.InvalidParameterValue, "watermark delay %s is negative", lit.text)
	}
	if micros > int64(time.Duration(1<<63-1)/time.Microsecond) {
		return nil, p.errAt(lit.start, sqlerr.NumericValueOutOfRange, "watermark delay %s is too long", lit.text)
	}
	wc.delay = time.Duration(micros) * time.Microsecond
	return wc, nil
}

func isNumber(s string) bool {
	if s == "" {
		return false
	}
	digits := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' || ((c == '-' || c == '+') && i == 0):
		default:
			return false
		}
	}
	return digits > 0
}

// checkWatermark checks the watermark's column against the column list:
// it exists (42703) and is TIMESTAMP or TIMESTAMPTZ (42804).
func (p *parser) checkWatermark(wc *watermarkClause, cols []ColumnDef) (*Watermark, error) {
	if wc == nil {
		return nil, nil
	}
	for _, c := range cols {
		if c.Name != wc.column {
			continue
		}
		if c.Type.Kind != types.KindTimestamp && c.Type.Kind != types.KindTimestampTZ {
			return nil, p.errAt(wc.columnTok.start, sqlerr.DatatypeMismatch, "watermark column %q must be TIMESTAMP or TIMESTAMPTZ, not %s", c.Name, c.Type)
		}
		return &Watermark{Column: wc.column, Delay: wc.delay, Pos: p.pos(wc.at.start)}, nil
	}
	return nil, p.errAt(wc.columnTok.start, sqlerr.UndefinedColumn, "column %q named in watermark does not exist", wc.column)
}
