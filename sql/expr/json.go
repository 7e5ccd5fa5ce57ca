package expr

import (
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// jsonb functions and operators as Postgres 15 has them: -> ->> #> #>>,
// jsonb_extract_path(_text), jsonb_typeof, jsonb_array_length, ? (key
// exists), @> and <@ (containment), jsonb_build_object,
// jsonb_build_array, to_jsonb, jsonb_strip_nulls and jsonb_set.
//
// A JSONB datum holds normalized text (types.NewJSONB); these functions
// parse it into a small tree (jnode), work on the tree and normalize the
// result again. Objects keep the normalized key order, so output matches
// Postgres's.
//
// Path arguments are text[] in Postgres. Without an array type they are
// TEXT here, written as an array literal ('{a,b}', with double quotes for
// elements holding commas, braces or spaces, and NULL for a null
// element), parsed as array_in parses it; a malformed literal is 22P02.
//
// A top-level scalar behaves as in Postgres, as a one-element array for
// -> with an integer and for ? and @>, but not for #>.

// jnode is a parsed JSON value.
type jnode struct {
	kind  byte // 'n' null, 'b' bool, 'u' number, 's' string, 'a' array, 'o' object
	b     bool
	s     string // the string, or the number's text
	elems []jnode
	keys  []string // object keys, parallel to elems
}

// parseJNode parses JSON text. It is a small recursive-descent parser
// rather than encoding/json's token stream, which costs several times
// more per call; -> and ->> parse a document on every row.
func parseJNode(text string) (jnode, error) {
	p := jparser{s: text}
	n, err := p.value()
	if err == nil {
		p.space()
		if p.i != len(p.s) {
			err = errors.New("trailing data")
		}
	}
	if err != nil {
		return jnode{}, errorf(sqlerr.InvalidTextRepresentation, "invalid input syntax for type json")
	}
	return n, nil
}

type jparser struct {
	s string
	i int
}

var errJSONSyntax = errors.New("bad JSON")

func (p *jparser) space() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == '\n' || p.s[p.i] == '\r') {
		p.i++
	}
}

func (p *jparser) value() (jnode, error) {
	p.space()
	if p.i >= len(p.s) {
		return jnode{}, errJSONSyntax
	}
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		n := jnode{kind: 'a'}
		end := byte(']')
		if c == '{' {
			n.kind, end = 'o', '}'
		}
		p.i++
		p.space()
		if p.i < len(p.s) && p.s[p.i] == end {
			p.i++
			return n, nil
		}
		for {
			if n.kind == 'o' {
				p.space()
				k, err := p.str()
				if err != nil {
					return jnode{}, err
				}
				p.space()
				if p.i >= len(p.s) || p.s[p.i] != ':' {
					return jnode{}, errJSONSyntax
				}
				p.i++
				n.keys = append(n.keys, k)
			}
			e, err := p.value()
			if err != nil {
				return jnode{}, err
			}
			n.elems = append(n.elems, e)
			p.space()
			if p.i >= len(p.s) {
				return jnode{}, errJSONSyntax
			}
			if p.s[p.i] == end {
				p.i++
				return n, nil
			}
			if p.s[p.i] != ',' {
				return jnode{}, errJSONSyntax
			}
			p.i++
		}
	case c == '"':
		s, err := p.str()
		return jnode{kind: 's', s: s}, err
	case c == 't' && strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		return jnode{kind: 'b', b: true}, nil
	case c == 'f' && strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		return jnode{kind: 'b'}, nil
	case c == 'n' && strings.HasPrefix(p.s[p.i:], "null"):
		p.i += 4
		return jnode{kind: 'n'}, nil
	case c == '-' || c >= '0' && c <= '9':
		j := p.i
		for j < len(p.s) && strings.IndexByte("+-.eE0123456789", p.s[j]) >= 0 {
			j++
		}
		n := jnode{kind: 'u', s: p.s[p.i:j]}
		p.i = j
		return n, nil
	}
	return jnode{}, errJSONSyntax
}

// str reads a JSON string at p.i, decoding escapes.
func (p *jparser) str() (string, error) {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return "", errJSONSyntax
	}
	p.i++
	start := p.i
	for p.i < len(p.s) && p.s[p.i] != '"' && p.s[p.i] != '\\' {
		p.i++
	}
	if p.i < len(p.s) && p.s[p.i] == '"' { // no escapes: the common case
		p.i++
		return p.s[start : p.i-1], nil
	}
	var b strings.Builder
	b.WriteString(p.s[start:p.i])
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), nil
		case c != '\\':
			b.WriteByte(c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", errJSONSyntax
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '"', '\\', '/':
			b.WriteByte(e)
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
		case 'u':
			r, ok := p.hex4()
			if !ok {
				return "", errJSONSyntax
			}
			if utf16.IsSurrogate(r) {
				if !strings.HasPrefix(p.s[p.i:], "\\u") {
					return "", errJSONSyntax
				}
				p.i += 2
				r2, ok := p.hex4()
				if !ok {
					return "", errJSONSyntax
				}
				r = utf16.DecodeRune(r, r2)
			}
			b.WriteRune(r)
		default:
			return "", errJSONSyntax
		}
	}
	return "", errJSONSyntax
}

func (p *jparser) hex4() (rune, bool) {
	if p.i+4 > len(p.s) {
		return 0, false
	}
	v, err := strconv.ParseUint(p.s[p.i:p.i+4], 16, 16)
	if err != nil {
		return 0, false
	}
	p.i += 4
	return rune(v), true
}

// jsonbNode parses a JSONB datum, which is always valid.
func jsonbNode(d types.Datum) jnode {
	n, err := parseJNode(d.JSONB())
	if err != nil {
		panic("expr: JSONB datum holds invalid JSON: " + d.JSONB())
	}
	return n
}

// appendJNode writes n as Postgres's jsonb_out does.
func appendJNode(dst []byte, n jnode) []byte {
	switch n.kind {
	case 'n':
		return append(dst, "null"...)
	case 'b':
		return strconv.AppendBool(dst, n.b)
	case 'u':
		return append(dst, n.s...)
	case 's':
		return appendJSONQuoted(dst, n.s)
	case 'a':
		dst = append(dst, '[')
		for i, e := range n.elems {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJNode(dst, e)
		}
		return append(dst, ']')
	}
	dst = append(dst, '{')
	for i, k := range n.keys {
		if i > 0 {
			dst = append(dst, ", "...)
		}
		dst = appendJSONQuoted(dst, k)
		dst = append(dst, ": "...)
		dst = appendJNode(dst, n.elems[i])
	}
	return append(dst, '}')
}

// appendJSONQuoted quotes s as Postgres's escape_json.
func appendJSONQuoted(dst []byte, s string) []byte { return types.AppendJSONString(dst, s) }

// jsonbDatum normalizes a tree into a JSONB datum.
func jsonbDatum(n jnode) (types.Datum, error) {
	d, err := types.NewJSONB(string(appendJNode(nil, n)))
	if err != nil {
		return types.Null, sqlerr.Wrap(sqlerr.InvalidTextRepresentation, err)
	}
	return d, nil
}

// jsonText is the ->> form of a value: a string unquoted, JSON null as
// SQL NULL, anything else as JSON text.
func jsonText(n jnode) types.Datum {
	switch n.kind {
	case 'n':
		return types.Null
	case 's':
		return types.NewText(n.s)
	}
	return types.NewText(string(appendJNode(nil, n)))
}

func (n jnode) field(key string) (jnode, bool) {
	if n.kind != 'o' {
		return jnode{}, false
	}
	for i, k := range n.keys {
		if k == key {
			return n.elems[i], true
		}
	}
	return jnode{}, false
}

func (n jnode) index(i int64) (jnode, bool) {
	if n.kind != 'a' {
		return jnode{}, false
	}
	if i < 0 {
		i += int64(len(n.elems))
	}
	if i < 0 || i >= int64(len(n.elems)) {
		return jnode{}, false
	}
	return n.elems[i], true
}

// parseTextArray parses a one-dimensional text[] literal as array_in
// does; a NULL element is reported in nulls.
func parseTextArray(lit string) (elems []string, nulls []bool, err error) {
	bad := func(detail string) error {
		return &sqlerr.Error{Code: sqlerr.InvalidTextRepresentation,
			Message: "malformed array literal: \"" + lit + "\"", Detail: detail}
	}
	s := strings.TrimSpace(lit)
	if !strings.HasPrefix(s, "{") {
		return nil, nil, bad("Array value must start with \"{\" or dimension information.")
	}
	if !strings.HasSuffix(s, "}") || len(s) < 2 {
		return nil, nil, bad("Unexpected end of input.")
	}
	body := s[1 : len(s)-1]
	if strings.TrimSpace(body) == "" {
		return nil, nil, nil
	}
	i := 0
	for {
		for i < len(body) && isArraySpace(body[i]) {
			i++
		}
		var b strings.Builder
		quoted, sawAny := false, false
		for i < len(body) && body[i] != ',' {
			c := body[i]
			switch {
			case c == '"':
				quoted, sawAny = true, true
				i++
				for i < len(body) && body[i] != '"' {
					if body[i] == '\\' && i+1 < len(body) {
						i++
					}
					b.WriteByte(body[i])
					i++
				}
				if i >= len(body) {
					return nil, nil, bad("Unexpected end of input.")
				}
				i++
			case c == '\\' && i+1 < len(body):
				b.WriteByte(body[i+1])
				sawAny = true
				i += 2
			case c == '{' || c == '}':
				return nil, nil, bad("Unexpected \"" + string(c) + "\" character.")
			case quoted && isArraySpace(c):
				i++ // white space after a quoted element
			default:
				b.WriteByte(c)
				sawAny = true
				i++
			}
		}
		e := b.String()
		if !quoted {
			e = strings.TrimRightFunc(e, func(r rune) bool { return r < 128 && isArraySpace(byte(r)) })
		}
		if !sawAny {
			return nil, nil, bad("Unexpected \",\" character.")
		}
		elems = append(elems, e)
		nulls = append(nulls, !quoted && strings.EqualFold(e, "null"))
		if i >= len(body) {
			return elems, nulls, nil
		}
		i++ // the comma
	}
}

func isArraySpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

// jsonPath follows a path (already parsed) into n; ok false means the
// result is NULL.
func jsonPath(n jnode, path []string, nulls []bool) (jnode, bool) {
	for i, p := range path {
		if nulls[i] {
			return jnode{}, false
		}
		switch n.kind {
		case 'o':
			v, ok := n.field(p)
			if !ok {
				return jnode{}, false
			}
			n = v
		case 'a':
			idx, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
			if err != nil {
				return jnode{}, false
			}
			v, ok := n.index(idx)
			if !ok {
				return jnode{}, false
			}
			n = v
		default:
			return jnode{}, false
		}
	}
	return n, true
}

// jsonContains is Postgres's JsonbDeepContains: does a contain b?
func jsonContains(a, b jnode, top bool) bool {
	if top {
		if (a.kind == 'o') != (b.kind == 'o') {
			return false
		}
		// A raw scalar is a one-element array that contains only scalars.
		aScalar, bScalar := a.kind != 'o' && a.kind != 'a', b.kind != 'o' && b.kind != 'a'
		if aScalar && !bScalar {
			return false
		}
		if aScalar {
			a = jnode{kind: 'a', elems: []jnode{a}}
		}
		if bScalar {
			b = jnode{kind: 'a', elems: []jnode{b}}
		}
	}
	switch b.kind {
	case 'o':
		for i, k := range b.keys {
			av, ok := a.field(k)
			if !ok || av.kind != b.elems[i].kind {
				return false
			}
			if av.kind == 'o' || av.kind == 'a' {
				if !jsonContains(av, b.elems[i], false) {
					return false
				}
			} else if !jsonScalarEqual(av, b.elems[i]) {
				return false
			}
		}
		return true
	case 'a':
		for _, bv := range b.elems {
			found := false
			for _, av := range a.elems {
				if av.kind != bv.kind {
					continue
				}
				if bv.kind == 'o' || bv.kind == 'a' {
					found = jsonContains(av, bv, false)
				} else {
					found = jsonScalarEqual(av, bv)
				}
				if found {
					break
				}
			}
			if !found {
				return false
			}
		}
		return true
	}
	return jsonScalarEqual(a, b)
}

func jsonScalarEqual(a, b jnode) bool {
	if a.kind != b.kind {
		return false
	}
	switch a.kind {
	case 'n':
		return true
	case 'b':
		return a.b == b.b
	case 'u':
		x, _, err1 := apd.NewFromString(a.s)
		y, _, err2 := apd.NewFromString(b.s)
		return err1 == nil && err2 == nil && x.Cmp(y) == 0
	}
	return a.s == b.s
}

// jsonExists is the ? operator: a top-level key, or a string element of a
// top-level array (or the scalar string itself).
func jsonExists(n jnode, key string) bool {
	switch n.kind {
	case 'o':
		_, ok := n.field(key)
		return ok
	case 'a':
		for _, e := range n.elems {
			if e.kind == 's' && e.s == key {
				return true
			}
		}
		return false
	case 's':
		return n.s == key
	}
	return false
}

func stripNulls(n jnode) jnode {
	switch n.kind {
	case 'o':
		out := jnode{kind: 'o'}
		for i, k := range n.keys {
			if n.elems[i].kind == 'n' {
				continue
			}
			out.keys = append(out.keys, k)
			out.elems = append(out.elems, stripNulls(n.elems[i]))
		}
		return out
	case 'a':
		out := jnode{kind: 'a', elems: make([]jnode, len(n.elems))}
		for i, e := range n.elems {
			out.elems[i] = stripNulls(e)
		}
		return out
	}
	return n
}

// jsonSet is jsonb_set's setPath: replace (or, with create, add) the value
// at path.
func jsonSet(n jnode, path []string, nulls []bool, val jnode, create bool, level int) (jnode, error) {
	if level == len(path) {
		return val, nil
	}
	if nulls[level] {
		return jnode{}, errorf(sqlerr.NullValueNotAllowed, "path element at position %d is null", level+1)
	}
	p := path[level]
	last := level == len(path)-1
	switch n.kind {
	case 'o':
		out := jnode{kind: 'o', keys: append([]string{}, n.keys...), elems: append([]jnode{}, n.elems...)}
		for i, k := range out.keys {
			if k == p {
				v, err := jsonSet(out.elems[i], path, nulls, val, create, level+1)
				if err != nil {
					return jnode{}, err
				}
				out.elems[i] = v
				return out, nil
			}
		}
		if last && create {
			out.keys = append(out.keys, p)
			out.elems = append(out.elems, val)
		}
		return out, nil
	case 'a':
		idx, err := strconv.ParseInt(strings.TrimSpace(p), 10, 32)
		if err != nil {
			return jnode{}, errorf(sqlerr.InvalidTextRepresentation, "path element at position %d is not an integer: \"%s\"", level+1, p)
		}
		out := jnode{kind: 'a', elems: append([]jnode{}, n.elems...)}
		l := int64(len(out.elems))
		if idx < 0 {
			idx += l
		}
		switch {
		case idx >= 0 && idx < l:
			v, err := jsonSet(out.elems[idx], path, nulls, val, create, level+1)
			if err != nil {
				return jnode{}, err
			}
			out.elems[idx] = v
		case last && create && idx >= l:
			out.elems = append(out.elems, val)
		case last && create && idx < 0:
			out.elems = append([]jnode{val}, out.elems...)
		}
		return out, nil
	}
	return n, nil
}

// toJNode converts a SQL value as to_jsonb does: numbers stay numbers
// (NaN and infinities become strings), dates and timestamps become ISO
// 8601 strings, other values their text.
func toJNode(ctx *Context, d types.Datum) jnode {
	switch d.Kind() {
	case types.KindUnknown:
		return jnode{kind: 'n'}
	case types.KindBool:
		return jnode{kind: 'b', b: d.Bool()}
	case types.KindInt16, types.KindInt32, types.KindInt64:
		return jnode{kind: 'u', s: strconv.FormatInt(d.Int64(), 10)}
	case types.KindNumeric, types.KindFloat32, types.KindFloat64:
		s := types.FormatText(d, nil)
		if s == "NaN" || s == "Infinity" || s == "-Infinity" {
			return jnode{kind: 's', s: s}
		}
		if d.Kind() != types.KindNumeric {
			v, _, err := apd.NewFromString(s)
			if err == nil {
				s = types.FormatText(types.NewNumeric(v), nil)
			}
		}
		return jnode{kind: 'u', s: s}
	case types.KindJSONB:
		return jsonbNode(d)
	case types.KindTimestamp, types.KindTimestampTZ:
		us := d.Micros()
		if isInfTimestamp(us) {
			return jnode{kind: 's', s: types.FormatText(d, nil)}
		}
		return jnode{kind: 's', s: isoTimestamp(us, d.Kind() == types.KindTimestampTZ, ctx.Location())}
	}
	return jnode{kind: 's', s: outputText(ctx, d)}
}

// isoTimestamp prints an instant as Postgres's JSON (XSD) form:
// 2024-02-29T12:00:00.5, with +01:00 for TIMESTAMPTZ.
func isoTimestamp(us int64, withZone bool, loc *time.Location) string {
	off := int64(0)
	if withZone {
		off = zoneOffset(us, loc)
	}
	s := types.FormatText(types.NewTimestamp(us+off*microsPerSecond), nil)
	s = strings.Replace(s, " ", "T", 1)
	if !withZone {
		return s
	}
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	z := []byte{sign}
	z = appendTwo(z, off/3600)
	z = append(z, ':')
	z = appendTwo(z, off%3600/60)
	if off%60 != 0 {
		z = append(z, ':')
		z = appendTwo(z, off%60)
	}
	if i := strings.Index(s, " BC"); i >= 0 {
		return s[:i] + string(z) + s[i:]
	}
	return s + string(z)
}

func appendTwo(dst []byte, v int64) []byte { return append(dst, byte('0'+v/10), byte('0'+v%10)) }

func registerJSON(r *Registry) {
	op := func(name string, p2, res types.Kind, f func(ctx *Context, a []types.Datum) (types.Datum, error)) {
		r.Add(&Func{Name: name, Params: kinds(kJSONB, p2), Infix: true, Strict: true, ResultKind: res, Eval: f})
	}
	// -> and ->> with a key or an index. A top-level scalar answers index
	// 0 and -1, as Postgres's raw-scalar pseudo-array does.
	byKey := func(a []types.Datum) (jnode, bool) { return jsonbNode(a[0]).field(a[1].Str()) }
	byIndex := func(a []types.Datum) (jnode, bool) {
		n := jsonbNode(a[0])
		if n.kind != 'a' && n.kind != 'o' {
			n = jnode{kind: 'a', elems: []jnode{n}}
		}
		return n.index(a[1].Int64())
	}
	for _, get := range []struct {
		p2 types.Kind
		f  func([]types.Datum) (jnode, bool)
	}{{kText, byKey}, {kInt, byIndex}} {
		get := get
		op("->", get.p2, kJSONB, func(_ *Context, a []types.Datum) (types.Datum, error) {
			n, ok := get.f(a)
			if !ok {
				return types.Null, nil
			}
			return jsonbDatum(n)
		})
		op("->>", get.p2, kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
			n, ok := get.f(a)
			if !ok {
				return types.Null, nil
			}
			return jsonText(n), nil
		})
	}
	extract := func(doc types.Datum, path []string, nulls []bool, asText bool) (types.Datum, error) {
		n := jsonbNode(doc)
		if len(path) > 0 && n.kind != 'o' && n.kind != 'a' {
			return types.Null, nil
		}
		v, ok := jsonPath(n, path, nulls)
		switch {
		case !ok:
			return types.Null, nil
		case asText:
			return jsonText(v), nil
		}
		return jsonbDatum(v)
	}
	for _, asText := range []bool{false, true} {
		asText := asText
		name, fn, res := "#>", "jsonb_extract_path", kJSONB
		if asText {
			name, fn, res = "#>>", "jsonb_extract_path_text", kText
		}
		op(name, kText, res, func(_ *Context, a []types.Datum) (types.Datum, error) {
			path, nulls, err := parseTextArray(a[1].Str())
			if err != nil {
				return types.Null, err
			}
			return extract(a[0], path, nulls, asText)
		})
		// jsonb_extract_path(doc, VARIADIC path): a NULL path element
		// makes the result NULL, so the function is not strict.
		r.Add(&Func{Name: fn, Params: kinds(kJSONB, kText), Variadic: true, ResultKind: res,
			Eval: func(_ *Context, a []types.Datum) (types.Datum, error) {
				if a[0].IsNull() {
					return types.Null, nil
				}
				path, nulls := make([]string, len(a)-1), make([]bool, len(a)-1)
				for i, p := range a[1:] {
					if p.IsNull() {
						nulls[i] = true
					} else {
						path[i] = p.Str()
					}
				}
				return extract(a[0], path, nulls, asText)
			}})
	}
	r.Add(strict("jsonb_typeof", kinds(kJSONB), kText, func(_ *Context, a []types.Datum) (types.Datum, error) {
		names := map[byte]string{'n': "null", 'b': "boolean", 'u': "number", 's': "string", 'a': "array", 'o': "object"}
		return text(names[jsonbNode(a[0]).kind])
	}))
	r.Add(strict("jsonb_array_length", kinds(kJSONB), kInt, func(_ *Context, a []types.Datum) (types.Datum, error) {
		n := jsonbNode(a[0])
		switch n.kind {
		case 'a':
			return types.NewInt32(int32(len(n.elems))), nil
		case 'o':
			return types.Null, errorf(sqlerr.InvalidParameterValue, "cannot get array length of a non-array")
		}
		return types.Null, errorf(sqlerr.InvalidParameterValue, "cannot get array length of a scalar")
	}))
	op("?", kText, kBool, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return types.NewBool(jsonExists(jsonbNode(a[0]), a[1].Str())), nil
	})
	op("@>", kJSONB, kBool, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return types.NewBool(jsonContains(jsonbNode(a[0]), jsonbNode(a[1]), true)), nil
	})
	op("<@", kJSONB, kBool, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return types.NewBool(jsonContains(jsonbNode(a[1]), jsonbNode(a[0]), true)), nil
	})
	// jsonb_build_object and jsonb_build_array take VARIADIC "any" in
	// Postgres; registered over TEXT until the registry has an "any"
	// parameter, their Eval accepts values of every kind.
	r.Add(&Func{Name: "jsonb_build_object", Params: kinds(AnyKind), Variadic: true, ResultKind: kJSONB,
		Eval: func(ctx *Context, a []types.Datum) (types.Datum, error) {
			if len(a)%2 != 0 {
				return types.Null, &sqlerr.Error{Code: sqlerr.InvalidParameterValue,
					Message: "argument list must have even number of elements",
					Hint:    "The arguments of jsonb_build_object() must consist of alternating keys and values."}
			}
			obj := jnode{kind: 'o'}
			for i := 0; i < len(a); i += 2 {
				if a[i].IsNull() {
					return types.Null, errorf(sqlerr.InvalidParameterValue, "argument %d: key must not be null", i+1)
				}
				obj.keys = append(obj.keys, outputText(ctx, a[i]))
				obj.elems = append(obj.elems, toJNode(ctx, a[i+1]))
			}
			return jsonbDatum(obj)
		}})
	r.Add(&Func{Name: "jsonb_build_array", Params: kinds(AnyKind), Variadic: true, ResultKind: kJSONB,
		Eval: func(ctx *Context, a []types.Datum) (types.Datum, error) {
			arr := jnode{kind: 'a', elems: make([]jnode, len(a))}
			for i, v := range a {
				arr.elems[i] = toJNode(ctx, v)
			}
			return jsonbDatum(arr)
		}})
	for _, k := range comparable {
		r.Add(strict("to_jsonb", kinds(k), kJSONB, func(ctx *Context, a []types.Datum) (types.Datum, error) {
			return jsonbDatum(toJNode(ctx, a[0]))
		}))
	}
	r.Add(strict("jsonb_strip_nulls", kinds(kJSONB), kJSONB, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return jsonbDatum(stripNulls(jsonbNode(a[0])))
	}))
	set := func(a []types.Datum, create bool) (types.Datum, error) {
		n := jsonbNode(a[0])
		if n.kind != 'o' && n.kind != 'a' {
			return types.Null, errorf(sqlerr.InvalidParameterValue, "cannot set path in scalar")
		}
		if len(n.elems) == 0 && !create {
			return a[0], nil // nothing to replace in an empty container
		}
		path, nulls, err := parseTextArray(a[1].Str())
		if err != nil {
			return types.Null, err
		}
		if len(path) == 0 {
			return a[0], nil
		}
		out, err := jsonSet(n, path, nulls, jsonbNode(a[2]), create, 0)
		if err != nil {
			return types.Null, err
		}
		return jsonbDatum(out)
	}
	r.Add(strict("jsonb_set", kinds(kJSONB, kText, kJSONB), kJSONB, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return set(a, true)
	}))
	r.Add(strict("jsonb_set", kinds(kJSONB, kText, kJSONB, kBool), kJSONB, func(_ *Context, a []types.Datum) (types.Datum, error) {
		return set(a, a[3].Bool())
	}))
}
