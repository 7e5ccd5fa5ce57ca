package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// JSONDecoder reads one JSON object per record (format json).
type JSONDecoder struct {
	cols []catalog.Column
}

// NewJSON returns the json Decoder of cols.
func NewJSON(cols []catalog.Column) *JSONDecoder { return &JSONDecoder{cols: cols} }

// Decode implements Decoder: one +I row per object; an empty value gives
// none.
func (d *JSONDecoder) Decode(dst []Change, value []byte) ([]Change, error) {
	if len(bytes.TrimSpace(value)) == 0 {
		return dst, nil
	}
	obj, err := parseObject(value)
	if err != nil {
		return dst, err
	}
	row, err := rowOf(d.cols, obj, nil)
	if err != nil {
		return dst, err
	}
	return append(dst, Change{Kind: types.Insert, Row: row}), nil
}

// parseObject reads a JSON object into its raw fields.
func parseObject(value []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(value, &obj); err != nil {
		return nil, fmt.Errorf("record is not a JSON object: %v: %w", err, base.ErrInvalidArgument)
	}
	if obj == nil {
		return nil, fmt.Errorf("record is JSON null, not an object: %w", base.ErrInvalidArgument)
	}
	return obj, nil
}

// lookup finds col's field in obj: by exact name, else the one field
// equal to it ignoring case.
func lookup(obj map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	if v, ok := obj[name]; ok {
		return v, true
	}
	for k, v := range obj {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// rowOf builds a row of cols from obj's fields; hints, when not nil,
// says how to read fields per name (from a Debezium schema).
func rowOf(cols []catalog.Column, obj map[string]json.RawMessage, hints map[string]hint) (types.Row, error) {
	row := make(types.Row, len(cols))
	for i, c := range cols {
		raw, ok := lookup(obj, c.Name)
		if !ok {
			if c.NotNull {
				return nil, fmt.Errorf("field %q: missing, and the column is NOT NULL: %w", c.Name, base.ErrInvalidArgument)
			}
			row[i] = types.Null
			continue
		}
		d, err := fromJSON(c, raw, hints[c.Name])
		if err != nil {
			return nil, err
		}
		row[i] = d
	}
	return row, nil
}
