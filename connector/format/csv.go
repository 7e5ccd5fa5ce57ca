package format

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// CSVDecoder reads delimited records (format csv; see the package doc).
type CSVDecoder struct {
	cols         []catalog.Column
	delim, quote rune
	// index[i] is the field of column i, or -1 when the header lacks it;
	// nil maps columns to fields in order.
	index []int
	// fields is the number of fields a record must have.
	fields int
	quoteB []byte
}

// NewCSV returns the csv Decoder of cols, fields in column order.
func NewCSV(cols []catalog.Column, delim, quote rune) *CSVDecoder {
	return &CSVDecoder{cols: cols, delim: delim, quote: quote, fields: len(cols), quoteB: utf8.AppendRune(nil, quote)}
}

// WithHeader returns a Decoder that maps columns to the fields the header
// record names (exact names first, else ignoring case). A column the
// header lacks is NULL, or an error when it is NOT NULL; a header field
// that names no column is ignored.
func (d *CSVDecoder) WithHeader(header []byte) (*CSVDecoder, error) {
	fs, err := d.split(header)
	if err != nil {
		return nil, fmt.Errorf("csv header: %w", err)
	}
	h := *d
	h.fields = len(fs)
	h.index = make([]int, len(d.cols))
	for i, c := range d.cols {
		h.index[i] = -1
		for j, f := range fs {
			if f.s == c.Name {
				h.index[i] = j
				break
			}
		}
		if h.index[i] < 0 {
			for j, f := range fs {
				if strings.EqualFold(f.s, c.Name) {
					h.index[i] = j
					break
				}
			}
		}
		if h.index[i] < 0 && c.NotNull {
			return nil, fmt.Errorf("csv header: no field %q, and the column is NOT NULL: %w", c.Name, base.ErrInvalidArgument)
		}
	}
	return &h, nil
}

// RecordEnd returns the length of the first record in b, line break
// included, or -1 when b holds no whole record yet (a line break inside
// quotes belongs to the field).
func (d *CSVDecoder) RecordEnd(b []byte) int {
	inQuote := false
	for i := 0; i < len(b); {
		if bytes.HasPrefix(b[i:], d.quoteB) {
			inQuote = !inQuote
			i += len(d.quoteB)
			continue
		}
		if b[i] == '\n' && !inQuote {
			return i + 1
		}
		i++
	}
	return -1
}

type csvField struct {
	s      string
	quoted bool
}

// split cuts one record (without its line break) into fields.
func (d *CSVDecoder) split(b []byte) ([]csvField, error) {
	s := string(trimLineBreak(b))
	var out []csvField
	ql, dl := utf8.RuneLen(d.quote), utf8.RuneLen(d.delim)
	i := 0
	for {
		if strings.HasPrefix(s[i:], string(d.quote)) {
			i += ql
			var sb strings.Builder
			for {
				j := strings.IndexRune(s[i:], d.quote)
				if j < 0 {
					return nil, fmt.Errorf("field %d: unterminated quoted field: %w", len(out)+1, base.ErrInvalidArgument)
				}
				sb.WriteString(s[i : i+j])
				i += j + ql
				if strings.HasPrefix(s[i:], string(d.quote)) {
					sb.WriteRune(d.quote)
					i += ql
					continue
				}
				break
			}
			out = append(out, csvField{s: sb.String(), quoted: true})
			if i == len(s) {
				return out, nil
			}
			if !strings.HasPrefix(s[i:], string(d.delim)) {
				return nil, fmt.Errorf("field %d: text after the closing quote: %w", len(out), base.ErrInvalidArgument)
			}
			i += dl
			continue
		}
		j := strings.IndexRune(s[i:], d.delim)
		if j < 0 {
			return append(out, csvField{s: s[i:]}), nil
		}
		out = append(out, csvField{s: s[i : i+j]})
		i += j + dl
	}
}

func trimLineBreak(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte{'\n'})
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// Decode implements Decoder: one +I row per record.
func (d *CSVDecoder) Decode(dst []Change, value []byte) ([]Change, error) {
	fs, err := d.split(value)
	if err != nil {
		return dst, err
	}
	if len(fs) != d.fields {
		return dst, fmt.Errorf("record has %d fields, want %d: %w", len(fs), d.fields, base.ErrInvalidArgument)
	}
	row := make(types.Row, len(d.cols))
	for i, c := range d.cols {
		k := i
		if d.index != nil {
			k = d.index[i]
		}
		if k < 0 || (fs[k].s == "" && !fs[k].quoted) {
			v, err := nullCheck(c, "(empty)")
			if err != nil {
				return dst, err
			}
			row[i] = v
			continue
		}
		v, err := fromText(c, fs[k].s)
		if err != nil {
			return dst, err
		}
		row[i] = v
	}
	return append(dst, Change{Kind: types.Insert, Row: row}), nil
}
