package expr

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// format(), quote_ident, quote_literal and quote_nullable, as Postgres's
// varlena.c and quote.c define them.
//
// format(fmt, args...) knows %s (the value's text, NULL as nothing), %I
// (an identifier, quoted when needed; NULL is an error), %L (a literal,
// NULL unquoted) and %%, each with an optional position n$, a flag - and
// a width (a number, or * to take it from the next argument, or *n$).

// nonUnreservedKeywords are the SQL keywords that quote_ident must quote
// (every category but unreserved), as Postgres 15's pg_get_keywords()
// lists them.
var nonUnreservedKeywords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric authorization between
		bigint binary bit boolean both case cast char character check coalesce collate collation column
		concurrently constraint create cross current_catalog current_date current_role current_schema
		current_time current_timestamp current_user dec decimal default deferrable desc distinct do else
		end except exists extract false fetch float for foreign freeze from full grant greatest group
		grouping having ilike in initially inner inout int integer intersect interval into is isnull join
		lateral leading least left like limit localtime localtimestamp national natural nchar none
		normalize not notnull null nullif numeric offset on only or order out outer overlaps overlay
		placing position precision primary real references returning right row select session_user setof
		similar smallint some substring symmetric table tablesample then time timestamp to trailing treat
		trim true union unique user using values varchar variadic verbose when where window with
		xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot
		xmlserialize xmltable`) {
		m[w] = true
	}
	return m
}()

// quoteIdent double-quotes s unless it is a lower-case identifier that is
// not a keyword needing quotes.
func quoteIdent(s string) string {
	safe := s != "" && (s[0] >= 'a' && s[0] <= 'z' || s[0] == '_')
	for i := 0; safe && i < len(s); i++ {
		c := s[i]
		safe = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
	}
	if safe && !nonUnreservedKeywords[s] {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// quoteLiteral single-quotes s, doubling quotes; a backslash makes it an
// E” string with doubled backslashes.
func quoteLiteral(s string) string {
	var b strings.Builder
	if strings.Contains(s, `\`) {
		b.WriteByte('E')
	}
	b.WriteByte('\'')
	for _, r := range s {
		if r == '\'' || r == '\\' {
			b.WriteRune(r)
		}
		b.WriteRune(r)
	}
	b.WriteByte('\'')
	return b.String()
}

func formatError(msg string) error {
	return &sqlerr.Error{Code: sqlerr.InvalidParameterValue, Message: msg, Hint: `For a single "%" use "%%".`}
}

// formatText is format(): args[0] is the format string.
func formatText(ctx *Context, f string, args []types.Datum) (string, error) {
	var b strings.Builder
	next := 0 // index of the next argument to consume
	// readNum reads a decimal number at f[i:]; ok false when none.
	readNum := func(i int) (n, end int, ok bool) {
		j := i
		for j < len(f) && f[j] >= '0' && f[j] <= '9' {
			j++
		}
		if j == i {
			return 0, i, false
		}
		v, err := strconv.Atoi(f[i:j])
		if err != nil || v > 1<<30 {
			return 0, i, false
		}
		return v, j, true
	}
	arg := func(pos int) (types.Datum, error) {
		if pos >= len(args) {
			return types.Null, errorf(sqlerr.InvalidParameterValue, "too few arguments for format()")
		}
		return args[pos], nil
	}
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			b.WriteByte(f[i])
			continue
		}
		i++
		if i >= len(f) {
			return "", formatError("unterminated format() type specifier")
		}
		if f[i] == '%' {
			b.WriteByte('%')
			continue
		}
		// [n$][-][width|*|*n$]type
		pos := -1
		if n, end, ok := readNum(i); ok && end < len(f) && f[end] == '$' {
			if n == 0 {
				return "", errorf(sqlerr.InvalidParameterValue, "format specifies argument 0, but arguments are numbered from 1")
			}
			pos, i = n-1, end+1
		}
		left := false
		if i < len(f) && f[i] == '-' {
			left, i = true, i+1
		}
		width := 0
		if i < len(f) && f[i] == '*' {
			i++
			wpos := next
			if n, end, ok := readNum(i); ok && end < len(f) && f[end] == '$' {
				wpos, i = n-1, end+1
			}
			w, err := arg(wpos)
			if err != nil {
				return "", err
			}
			next = wpos + 1
			if !w.IsNull() {
				switch w.Kind() {
				case types.KindInt16, types.KindInt32, types.KindInt64:
					width = int(w.Int64())
				default:
					return "", errorf(sqlerr.InvalidParameterValue, "width argument must be an integer")
				}
				if width < 0 {
					left, width = true, -width
				}
			}
		} else if n, end, ok := readNum(i); ok {
			width, i = n, end
		}
		if i >= len(f) {
			return "", formatError("unterminated format() type specifier")
		}
		if pos < 0 {
			pos = next
		}
		v, err := arg(pos)
		if err != nil {
			return "", err
		}
		next = pos + 1
		var s string
		switch f[i] {
		case 's':
			if !v.IsNull() {
				s = outputText(ctx, v)
			}
		case 'I':
			if v.IsNull() {
				return "", errorf(sqlerr.NullValueNotAllowed, "null values cannot be formatted as an SQL identifier")
			}
			s = quoteIdent(outputText(ctx, v))
		case 'L':
			if v.IsNull() {
				s = "NULL"
			} else {
				s = quoteLiteral(outputText(ctx, v))
			}
		default:
			r, _ := utf8.DecodeRuneInString(f[i:])
			return "", formatError("unrecognized format() type specifier \"" + string(r) + "\"")
		}
		if pad := width - utf8.RuneCountInString(s); pad > 0 {
			if left {
				s += strings.Repeat(" ", pad)
			} else {
				s = strings.Repeat(" ", pad) + s
			}
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// Format is format(f, args...) with the format string f given: the text,
// or the error PostgreSQL gives (22023 for a bad specifier or too few
// arguments, 22004 for %I of NULL). The OLAP engine calls it so that
// format() in a SELECT is the function views compute.
func Format(ctx *Context, f string, args []types.Datum) (string, error) {
	return formatText(ctx, f, args)
}

func registerFormat(r *Registry) {
	// format(fmt, VARIADIC "any"): registered over TEXT until the registry
	// has an "any" parameter; Eval accepts values of every kind.
	r.Add(&Func{Name: "format", Params: kinds(kText, AnyKind), Variadic: true, ResultKind: kText,
		Eval: func(ctx *Context, a []types.Datum) (types.Datum, error) {
			if a[0].IsNull() {
				return types.Null, nil
			}
			s, err := formatText(ctx, a[0].Str(), a[1:])
			if err != nil {
				return types.Null, err
			}
			return text(s)
		}})
	r.Add(strict("quote_ident", kinds(kText), kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return text(quoteIdent(a[0].Str()))
	}))
	r.Add(strict("quote_literal", kinds(kText), kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return text(quoteLiteral(a[0].Str()))
	}))
	r.Add(&Func{Name: "quote_nullable", Params: kinds(kText), ResultKind: kText,
		Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
			if a[0].IsNull() {
				return text("NULL")
			}
			return text(quoteLiteral(a[0].Str()))
		}})
}
