package types

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
)

// JSONB follows Postgres's jsonb:
//
//   - Input is normalized: insignificant white space is dropped, object keys
//     are sorted by length and then bytes (Postgres's storage order), and of
//     duplicate keys the last one wins. Numbers are NUMERIC values, printed
//     without exponent ("1e2" becomes 100, "1.50" stays 1.50).
//   - Output separates with ", " and ": " as jsonb_out does.
//   - Ordering (compareJsonbContainers): Object > Array > Boolean > Number >
//     String > Null; an object with more pairs, or an array with more
//     elements, is greater; equal counts compare pair by pair (key, then
//     value) in storage order, element by element for arrays. A top-level
//     scalar counts as a one-element array that sorts before a real
//     one-element array, so (as in Postgres) '[]' < 'null' < '[null]'.
//   - Strings compare bytewise (the C collation), as all of Strata's text.
//   - \u0000 is refused, as Postgres refuses it.

type jsonKind uint8

// Ranks of jsonb value types, lowest first (Postgres's enum jbvType order).
const (
	jsonNull jsonKind = iota + 1
	jsonString
	jsonNumber
	jsonBool
	jsonArray
	jsonObject
)

type jsonValue struct {
	kind  jsonKind
	str   string // string; object keys are in keys
	num   *apd.Decimal
	b     bool
	elems []jsonValue // array elements, or object values
	keys  []string    // object keys, in storage order
}

// NewJSONB parses text as JSON and returns the normalized JSONB datum. A
// malformed document gives an error wrapping base.ErrInvalidArgument that
// quotes the input (shortened) and says what is wrong.
func NewJSONB(text string) (Datum, error) {
	v, err := parseJSON(text)
	if err != nil {
		return Null, err
	}
	return Datum{kind: KindJSONB, s: string(appendJSON(nil, v))}, nil
}

func jsonError(text, what string) error {
	if len(text) > 60 {
		text = text[:60] + "..."
	}
	return fmt.Errorf("invalid input syntax for type json: %q: %s: %w", text, what, base.ErrInvalidArgument)
}

func parseJSON(text string) (jsonValue, error) {
	if !utf8.ValidString(text) {
		return jsonValue{}, jsonError(text, "invalid UTF-8")
	}
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	v, err := readJSON(dec, text)
	if err != nil {
		return jsonValue{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return jsonValue{}, jsonError(text, "trailing data after the document")
	}
	return v, nil
}

func readJSON(dec *json.Decoder, text string) (jsonValue, error) {
	tok, err := dec.Token()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return jsonValue{}, jsonError(text, "unexpected end of input")
		}
		return jsonValue{}, jsonError(text, err.Error())
	}
	switch t := tok.(type) {
	case nil:
		return jsonValue{kind: jsonNull}, nil
	case bool:
		return jsonValue{kind: jsonBool, b: t}, nil
	case string:
		if strings.IndexByte(t, 0) >= 0 {
			return jsonValue{}, jsonError(text, `unsupported Unicode escape sequence \u0000`)
		}
		return jsonValue{kind: jsonString, str: t}, nil
	case json.Number:
		// Postgres reads jsonb numbers with numeric_in, limits included.
		d, err := parseDecimal(string(t))
		if err != nil {
			return jsonValue{}, err
		}
		return jsonValue{kind: jsonNumber, num: d}, nil
	case json.Delim:
		switch t {
		case '[':
			v := jsonValue{kind: jsonArray}
			for dec.More() {
				e, err := readJSON(dec, text)
				if err != nil {
					return jsonValue{}, err
				}
				v.elems = append(v.elems, e)
			}
			if _, err := dec.Token(); err != nil {
				return jsonValue{}, jsonError(text, err.Error())
			}
			return v, nil
		case '{':
			m := map[string]jsonValue{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return jsonValue{}, jsonError(text, err.Error())
				}
				k, ok := kt.(string)
				if !ok {
					return jsonValue{}, jsonError(text, "object key is not a string")
				}
				if strings.IndexByte(k, 0) >= 0 {
					return jsonValue{}, jsonError(text, `unsupported Unicode escape sequence \u0000`)
				}
				e, err := readJSON(dec, text)
				if err != nil {
					return jsonValue{}, err
				}
				m[k] = e // the last duplicate wins
			}
			if _, err := dec.Token(); err != nil {
				return jsonValue{}, jsonError(text, err.Error())
			}
			v := jsonValue{kind: jsonObject, keys: make([]string, 0, len(m))}
			for k := range m {
				v.keys = append(v.keys, k)
			}
			sort.Slice(v.keys, func(i, j int) bool { return jsonKeyLess(v.keys[i], v.keys[j]) })
			for _, k := range v.keys {
				v.elems = append(v.elems, m[k])
			}
			return v, nil
		}
	}
	return jsonValue{}, jsonError(text, fmt.Sprintf("unexpected token %v", tok))
}

// jsonKeyLess is Postgres's storage order of object keys: shorter first,
// then bytewise.
func jsonKeyLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func appendJSON(dst []byte, v jsonValue) []byte {
	switch v.kind {
	case jsonNull:
		return append(dst, "null"...)
	case jsonBool:
		return strconv.AppendBool(dst, v.b)
	case jsonNumber:
		return appendNumeric(dst, Datum{kind: KindNumeric, dec: v.num})
	case jsonString:
		return appendJSONString(dst, v.str)
	case jsonArray:
		dst = append(dst, '[')
		for i, e := range v.elems {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJSON(dst, e)
		}
		return append(dst, ']')
	case jsonObject:
		dst = append(dst, '{')
		for i, k := range v.keys {
			if i > 0 {
				dst = append(dst, ", "...)
			}
			dst = appendJSONString(dst, k)
			dst = append(dst, ": "...)
			dst = appendJSON(dst, v.elems[i])
		}
		return append(dst, '}')
	}
	panic("types: appendJSON: bad kind")
}

// AppendJSONString appends s as a JSON string literal, quoted and escaped
// as Postgres's escape_json does (", \, \b, \f, \n, \r, \t, other control
// characters as \u00XX; everything else as it is).
func AppendJSONString(dst []byte, s string) []byte { return appendJSONString(dst, s) }

// appendJSONString quotes s as Postgres's escape_json does.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			if c < 0x20 {
				dst = append(dst, `\u00`...)
				dst = append(dst, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
			} else {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, '"')
}

// compareJSONB orders two normalized JSONB texts as Postgres does (see the
// comment at the top of this file).
func compareJSONB(a, b string) int {
	if a == b {
		return 0
	}
	va, errA := parseJSON(a)
	vb, errB := parseJSON(b)
	if errA != nil || errB != nil {
		// A JSONB datum is built only by NewJSONB or a checked decoder.
		panic("types: compareJSONB: datum holds invalid JSON")
	}
	return compareJSONTop(va, vb)
}

// compareJSONTop handles Postgres's raw-scalar quirk: a top-level scalar is a
// one-element array flagged raw, which sorts before a real array of one
// element; element counts are compared first.
func compareJSONTop(a, b jsonValue) int {
	if a.kind == jsonObject || b.kind == jsonObject {
		return compareJSON(a, b)
	}
	na, rawA := topCount(a)
	nb, rawB := topCount(b)
	if na != nb {
		return cmpInt(int64(na), int64(nb))
	}
	if rawA != rawB {
		if rawA {
			return -1
		}
		return 1
	}
	if rawA {
		return compareJSON(a, b)
	}
	return compareJSONElems(a.elems, b.elems)
}

func topCount(v jsonValue) (n int, raw bool) {
	if v.kind == jsonArray {
		return len(v.elems), false
	}
	return 1, true
}

func compareJSON(a, b jsonValue) int {
	if a.kind != b.kind {
		return cmpInt(int64(a.kind), int64(b.kind))
	}
	switch a.kind {
	case jsonNull:
		return 0
	case jsonBool:
		return cmpBool(a.b, b.b)
	case jsonString:
		return strings.Compare(a.str, b.str)
	case jsonNumber:
		return compareDecimal(a.num, b.num)
	case jsonArray:
		if len(a.elems) != len(b.elems) {
			return cmpInt(int64(len(a.elems)), int64(len(b.elems)))
		}
		return compareJSONElems(a.elems, b.elems)
	case jsonObject:
		if len(a.keys) != len(b.keys) {
			return cmpInt(int64(len(a.keys)), int64(len(b.keys)))
		}
		for i := range a.keys {
			if c := strings.Compare(a.keys[i], b.keys[i]); c != 0 {
				return c
			}
			if c := compareJSON(a.elems[i], b.elems[i]); c != 0 {
				return c
			}
		}
		return 0
	}
	panic("types: compareJSON: bad kind")
}

func compareJSONElems(a, b []jsonValue) int {
	for i := range a {
		if c := compareJSON(a[i], b[i]); c != 0 {
			return c
		}
	}
	return 0
}

// appendJSONKey appends the memcomparable form of a normalized JSONB text:
// byte order equals compareJSONB order. Layout: a top-level array or scalar
// is [count:4][raw:1] then its elements; an object is [tagObject][count:4]
// then key, value pairs; scalars are [tag][payload]. Counts come first so
// that more elements sort later, as in Postgres.
func appendJSONKey(dst []byte, text string) []byte {
	v, err := parseJSON(text)
	if err != nil {
		panic("types: appendJSONKey: datum holds invalid JSON")
	}
	if v.kind == jsonObject {
		// Objects sort after every top-level array or scalar: mark 0xFF
		// before the object's own encoding.
		dst = append(dst, 0xFF)
		return appendJSONValueKey(dst, v)
	}
	n, raw := topCount(v)
	dst = append(dst, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	if raw {
		dst = append(dst, 0)
		return appendJSONValueKey(dst, v)
	}
	dst = append(dst, 1)
	for _, e := range v.elems {
		dst = appendJSONValueKey(dst, e)
	}
	return dst
}

func appendJSONValueKey(dst []byte, v jsonValue) []byte {
	dst = append(dst, byte(v.kind))
	switch v.kind {
	case jsonNull:
	case jsonBool:
		if v.b {
			dst = append(dst, 1)
		} else {
			dst = append(dst, 0)
		}
	case jsonString:
		dst = appendEscapedKey(dst, v.str)
	case jsonNumber:
		dst = appendDecimalKey(dst, v.num)
	case jsonArray:
		n := len(v.elems)
		dst = append(dst, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		for _, e := range v.elems {
			dst = appendJSONValueKey(dst, e)
		}
	case jsonObject:
		n := len(v.keys)
		dst = append(dst, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
		for i, k := range v.keys {
			dst = appendEscapedKey(dst, k)
			dst = appendJSONValueKey(dst, v.elems[i])
		}
	}
	return dst
}

// decodeJSONKey reads one appendJSONKey encoding from b and returns the
// normalized text and the rest of b.
func decodeJSONKey(b []byte) (string, []byte, error) {
	if len(b) < 1 {
		return "", nil, errShortKey("jsonb")
	}
	if b[0] == 0xFF {
		v, rest, err := decodeJSONValueKey(b[1:])
		if err != nil {
			return "", nil, err
		}
		return string(appendJSON(nil, v)), rest, nil
	}
	if len(b) < 5 {
		return "", nil, errShortKey("jsonb")
	}
	n := int(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
	raw := b[4] == 0
	b = b[5:]
	if raw {
		v, rest, err := decodeJSONValueKey(b)
		if err != nil {
			return "", nil, err
		}
		return string(appendJSON(nil, v)), rest, nil
	}
	arr := jsonValue{kind: jsonArray}
	for range n {
		e, rest, err := decodeJSONValueKey(b)
		if err != nil {
			return "", nil, err
		}
		arr.elems = append(arr.elems, e)
		b = rest
	}
	return string(appendJSON(nil, arr)), b, nil
}

func decodeJSONValueKey(b []byte) (jsonValue, []byte, error) {
	if len(b) < 1 {
		return jsonValue{}, nil, errShortKey("jsonb")
	}
	v := jsonValue{kind: jsonKind(b[0])}
	b = b[1:]
	readCount := func() (int, error) {
		if len(b) < 4 {
			return 0, errShortKey("jsonb")
		}
		n := int(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
		b = b[4:]
		return n, nil
	}
	var err error
	switch v.kind {
	case jsonNull:
	case jsonBool:
		if len(b) < 1 {
			return v, nil, errShortKey("jsonb")
		}
		v.b = b[0] == 1
		b = b[1:]
	case jsonString:
		var s []byte
		s, b, err = decodeEscapedKey(b, nil)
		v.str = string(s)
	case jsonNumber:
		v.num, b, err = decodeDecimalKey(b)
		if err == nil && v.num.Form != apd.Finite {
			err = fmt.Errorf("jsonb key: non-finite number: %w", base.ErrCorruption)
		}
	case jsonArray:
		var n int
		if n, err = readCount(); err != nil {
			return v, nil, err
		}
		for range n {
			var e jsonValue
			if e, b, err = decodeJSONValueKey(b); err != nil {
				return v, nil, err
			}
			v.elems = append(v.elems, e)
		}
	case jsonObject:
		var n int
		if n, err = readCount(); err != nil {
			return v, nil, err
		}
		for range n {
			var k []byte
			if k, b, err = decodeEscapedKey(b, nil); err != nil {
				return v, nil, err
			}
			var e jsonValue
			if e, b, err = decodeJSONValueKey(b); err != nil {
				return v, nil, err
			}
			v.keys = append(v.keys, string(k))
			v.elems = append(v.elems, e)
		}
	default:
		return v, nil, fmt.Errorf("jsonb key: bad tag %d: %w", v.kind, base.ErrCorruption)
	}
	return v, b, err
}

var _ = bytes.Compare
