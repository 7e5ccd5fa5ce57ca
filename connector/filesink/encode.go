package filesink

import (
	"math"
	"strconv"
	"strings"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// Encoder writes changes as CSV records or JSON lines. It is pure: the
// same changes give the same bytes.
type Encoder struct {
	cols    []catalog.Column
	format  Format
	opField string
}

// NewEncoder returns the Encoder of changes to cols in format f, the row
// kind in field opField.
func NewEncoder(cols []catalog.Column, f Format, opField string) *Encoder {
	return &Encoder{cols: cols, format: f, opField: opField}
}

// Header appends what starts a file: for CSV the record naming the fields
// (opField first, then the columns), nothing for JSON.
func (e *Encoder) Header(b []byte) []byte {
	if e.format != CSV {
		return b
	}
	b = appendCSVField(b, e.opField)
	for _, c := range e.cols {
		b = append(b, ',')
		b = appendCSVField(b, c.Name)
	}
	return append(b, '\n')
}

// Append appends one change: a CSV record (the row kind, then the values
// in Postgres text form, NULL as an empty field) or a JSON object (the row
// kind in opField, then the columns in order, numbers and booleans as
// JSON literals, JSONB as it is, other values as their text form in a
// string), each ending with a line break.
func (e *Encoder) Append(b []byte, kind types.RowKind, row types.Row) []byte {
	if e.format == CSV {
		b = append(b, kind.String()...)
		for _, d := range row {
			b = append(b, ',')
			if d.IsNull() {
				continue
			}
			b = appendCSVField(b, types.FormatText(d, nil))
		}
		return append(b, '\n')
	}
	b = append(b, '{')
	b = types.AppendJSONString(b, e.opField)
	b = append(b, ": "...)
	b = types.AppendJSONString(b, kind.String())
	for i, c := range e.cols {
		b = append(b, ", "...)
		b = types.AppendJSONString(b, c.Name)
		b = append(b, ": "...)
		b = appendJSONValue(b, row[i])
	}
	return append(b, "}\n"...)
}

// appendCSVField quotes a field when it is empty (so that it is not read
// as NULL) or holds a comma, a quote or a line break.
func appendCSVField(b []byte, s string) []byte {
	if s != "" && !strings.ContainsAny(s, ",\"\r\n") {
		return append(b, s...)
	}
	b = append(b, '"')
	b = append(b, strings.ReplaceAll(s, `"`, `""`)...)
	return append(b, '"')
}

// appendJSONValue writes a datum as JSON: numbers and booleans as
// literals (NUMERIC exactly), JSONB as it is, everything else as its
// Postgres text in a string (so that connector/format reads it back with
// the same rules); NaN and infinities as strings.
func appendJSONValue(b []byte, d types.Datum) []byte {
	if d.IsNull() {
		return append(b, "null"...)
	}
	switch d.Kind() {
	case types.KindBool:
		return strconv.AppendBool(b, d.Bool())
	case types.KindInt16, types.KindInt32, types.KindInt64:
		return strconv.AppendInt(b, d.Int64(), 10)
	case types.KindFloat32, types.KindFloat64:
		if f := d.Float64(); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return types.AppendText(b, d, nil)
		}
	case types.KindNumeric:
		if s := types.FormatText(d, nil); s != "NaN" && s != "Infinity" && s != "-Infinity" {
			return append(b, s...)
		}
	case types.KindJSONB:
		return append(b, d.JSONB()...)
	}
	return types.AppendJSONString(b, types.FormatText(d, nil))
}
