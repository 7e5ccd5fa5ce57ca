package format

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// DebeziumDecoder reads Debezium change events (format debezium-json; see
// the package doc for the mapping of ops to row kinds).
type DebeziumDecoder struct {
	cols []catalog.Column
}

// NewDebezium returns the debezium-json Decoder of cols.
func NewDebezium(cols []catalog.Column) *DebeziumDecoder { return &DebeziumDecoder{cols: cols} }

// debeziumUnits maps Debezium's semantic type names of integer temporal
// values to their units.
var debeziumUnits = map[string]unit{
	"io.debezium.time.Date":                   unitDays,
	"io.debezium.time.Timestamp":              unitMillis,
	"io.debezium.time.MicroTimestamp":         unitMicros,
	"io.debezium.time.NanoTimestamp":          unitNanos,
	"org.apache.kafka.connect.data.Date":      unitDays,
	"org.apache.kafka.connect.data.Timestamp": unitMillis,
}

// Decode implements Decoder.
func (d *DebeziumDecoder) Decode(dst []Change, value []byte) ([]Change, error) {
	if len(bytes.TrimSpace(value)) == 0 || string(bytes.TrimSpace(value)) == "null" {
		return dst, nil // tombstone
	}
	obj, err := parseObject(value)
	if err != nil {
		return dst, err
	}
	var hints map[string]hint
	if _, hasOp := obj["op"]; !hasOp {
		payload, ok := obj["payload"]
		if !ok {
			return dst, fmt.Errorf("debezium record has neither op nor payload: %w", base.ErrInvalidArgument)
		}
		if p := bytes.TrimSpace(payload); string(p) == "null" {
			return dst, nil
		}
		if s, ok := obj["schema"]; ok {
			hints = schemaHints(s)
		}
		if obj, err = parseObject(payload); err != nil {
			return dst, fmt.Errorf("debezium payload: %w", err)
		}
	}
	var op string
	if err := json.Unmarshal(obj["op"], &op); err != nil {
		return dst, fmt.Errorf("field \"op\": value %s: not a string: %w", obj["op"], base.ErrInvalidArgument)
	}
	image := func(name string, required bool) (types.Row, error) {
		raw, ok := obj[name]
		if !ok || string(bytes.TrimSpace(raw)) == "null" {
			if required {
				return nil, fmt.Errorf("field %q: missing or null for op %q: %w", name, op, base.ErrInvalidArgument)
			}
			return nil, nil
		}
		fields, err := parseObject(raw)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", name, err)
		}
		row, err := rowOf(d.cols, fields, hints)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return row, nil
	}
	switch op {
	case "c", "r":
		after, err := image("after", true)
		if err != nil {
			return dst, err
		}
		return append(dst, Change{Kind: types.Insert, Row: after}), nil
	case "u":
		before, err := image("before", false)
		if err != nil {
			return dst, err
		}
		after, err := image("after", true)
		if err != nil {
			return dst, err
		}
		if before != nil {
			dst = append(dst, Change{Kind: types.UpdateBefore, Row: before})
		}
		return append(dst, Change{Kind: types.UpdateAfter, Row: after}), nil
	case "d":
		before, err := image("before", true)
		if err != nil {
			return dst, err
		}
		return append(dst, Change{Kind: types.Delete, Row: before}), nil
	}
	return dst, fmt.Errorf("field \"op\": value %q: not a Debezium op this source reads (c, r, u, d): %w", op, base.ErrInvalidArgument)
}

// schemaHints reads the semantic type names of the before and after
// fields from a Debezium envelope's schema: temporal units, and Kafka
// Connect Decimals (Debezium's default decimal.handling.mode 'precise')
// with their scale. A schema it cannot read gives no hints (the defaults
// apply).
func schemaHints(raw json.RawMessage) map[string]hint {
	type field struct {
		Field      string            `json:"field"`
		Name       string            `json:"name"`
		Parameters map[string]string `json:"parameters"`
		Fields     []field           `json:"fields"`
	}
	var s field
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	hints := map[string]hint{}
	for _, img := range s.Fields {
		if img.Field != "before" && img.Field != "after" {
			continue
		}
		for _, f := range img.Fields {
			if u, ok := debeziumUnits[f.Name]; ok {
				hints[f.Field] = hint{unit: u}
			}
			if f.Name == "org.apache.kafka.connect.data.Decimal" {
				if sc, err := strconv.Atoi(f.Parameters["scale"]); err == nil && sc >= 0 && sc <= 1000 {
					hints[f.Field] = hint{decimal: true, scale: sc}
				}
			}
		}
	}
	return hints
}
