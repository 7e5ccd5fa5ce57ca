package format

import (
	"fmt"
	"strings"

	"github.com/hamba/avro/v2"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// AvroDecoder reads Avro binary records of an inline writer schema
// (format avro; see the package doc).
type AvroDecoder struct {
	cols      []catalog.Column
	schema    avro.Schema
	confluent bool
	// field[i] is the record field of column i, or "" when the schema
	// has none; union[i] says it is a union (decoded as {branch: value}
	// when it is not just null and one type).
	field []string
	union []bool
}

// NewAvro returns the avro Decoder of cols for the writer schema (JSON).
// The schema must be a record; a NOT NULL column it lacks is an error.
func NewAvro(cols []catalog.Column, schema string, confluent bool) (*AvroDecoder, error) {
	s, err := avro.Parse(schema)
	if err != nil {
		return nil, fmt.Errorf("format avro: option %q: %v: %w", OptAvroSchema, err, base.ErrInvalidArgument)
	}
	rs, ok := s.(*avro.RecordSchema)
	if !ok {
		return nil, fmt.Errorf("format avro: option %q: the schema is a %s, not a record: %w", OptAvroSchema, s.Type(), base.ErrInvalidArgument)
	}
	d := &AvroDecoder{cols: cols, schema: s, confluent: confluent, field: make([]string, len(cols)), union: make([]bool, len(cols))}
	for i, c := range cols {
		for _, exact := range []bool{true, false} {
			for _, f := range rs.Fields() {
				if d.field[i] == "" && (f.Name() == c.Name || !exact && strings.EqualFold(f.Name(), c.Name)) {
					d.field[i] = f.Name()
					d.union[i] = f.Type().Type() == avro.Union
				}
			}
		}
		if d.field[i] == "" && c.NotNull {
			return nil, fmt.Errorf("format avro: the schema has no field %q, and the column is NOT NULL: %w", c.Name, base.ErrInvalidArgument)
		}
	}
	return d, nil
}

// Decode implements Decoder: one +I row per record; an empty value gives
// none.
func (d *AvroDecoder) Decode(dst []Change, value []byte) ([]Change, error) {
	if len(value) == 0 {
		return dst, nil
	}
	if d.confluent {
		if len(value) < 5 || value[0] != 0 {
			return dst, fmt.Errorf("avro value does not start with the schema registry header (a zero byte and a 4-byte schema id): %w", base.ErrInvalidArgument)
		}
		value = value[5:]
	}
	var m map[string]any
	if err := avro.Unmarshal(d.schema, value, &m); err != nil {
		return dst, fmt.Errorf("avro record does not decode with the schema: %v: %w", err, base.ErrInvalidArgument)
	}
	row := make(types.Row, len(d.cols))
	for i, c := range d.cols {
		v := m[d.field[i]]
		if d.union[i] {
			if u, ok := v.(map[string]any); ok && len(u) == 1 {
				for _, x := range u {
					v = x
				}
			}
		}
		datum, err := fromGo(c, v)
		if err != nil {
			return dst, err
		}
		row[i] = datum
	}
	return append(dst, Change{Kind: types.Insert, Row: row}), nil
}
