package kafka

import (
	"bytes"
	"math"
	"strconv"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// Message is one Kafka record a sink writes: a key (nil when the table has
// no primary key) and a value (nil: a tombstone).
type Message struct {
	Key, Value []byte
}

// SinkFormat is how a sink writes changes.
type SinkFormat string

// The sink formats.
const (
	// Upsert writes each key's latest row: +I and +U as the row, -D as a
	// tombstone; a -U followed by a +U of the same key is dropped (the +U
	// overwrites it), a -U without one is a tombstone. Needs a primary
	// key.
	Upsert SinkFormat = "json"
	// DebeziumSink writes Debezium change events: +I as op "c", a -U
	// followed by a +U of the same key as one op "u" with before and
	// after, a lone +U as "u" without before, -D and a lone -U as "d"
	// followed, when keyed, by a tombstone (as Debezium does for log
	// compaction).
	DebeziumSink SinkFormat = "debezium-json"
)

// Encoder turns a changelog into messages (see Upsert and DebeziumSink).
// It is pure: the same changes give the same messages.
type Encoder struct {
	cols   []catalog.Column
	key    []int // primary-key column indexes
	format SinkFormat
}

// NewEncoder returns an Encoder of cols keyed by the columns key.
func NewEncoder(cols []catalog.Column, key []int, f SinkFormat) *Encoder {
	return &Encoder{cols: cols, key: key, format: f}
}

// Encode returns the messages of one epoch's changes, in order.
func (e *Encoder) Encode(chunks []*types.Chunk) []Message {
	type change struct {
		kind types.RowKind
		row  types.Row
	}
	var all []change
	for _, c := range chunks {
		for i := range c.Len() {
			all = append(all, change{c.Kind(i), c.Row(i)})
		}
	}
	var out []Message
	for i := 0; i < len(all); i++ {
		ch := all[i]
		key := e.keyOf(ch.row)
		// A -U directly followed by the +U of the same key is one update.
		paired := ch.kind == types.UpdateBefore && i+1 < len(all) && all[i+1].kind == types.UpdateAfter &&
			(key == nil || bytes.Equal(key, e.keyOf(all[i+1].row)))
		switch e.format {
		case Upsert:
			switch {
			case paired:
				continue
			case ch.kind == types.Insert || ch.kind == types.UpdateAfter:
				out = append(out, Message{Key: key, Value: e.object(nil, ch.row)})
			default:
				out = append(out, Message{Key: key})
			}
		case DebeziumSink:
			switch {
			case paired:
				out = append(out, Message{Key: key, Value: e.envelope("u", ch.row, all[i+1].row)})
				i++
			case ch.kind == types.Insert:
				out = append(out, Message{Key: key, Value: e.envelope("c", nil, ch.row)})
			case ch.kind == types.UpdateAfter:
				out = append(out, Message{Key: key, Value: e.envelope("u", nil, ch.row)})
			default:
				out = append(out, Message{Key: key, Value: e.envelope("d", ch.row, nil)})
				if key != nil {
					out = append(out, Message{Key: key})
				}
			}
		}
	}
	return out
}

// keyOf returns the JSON object of the row's key columns, or nil.
func (e *Encoder) keyOf(row types.Row) []byte {
	if len(e.key) == 0 {
		return nil
	}
	b := []byte{'{'}
	for n, i := range e.key {
		if n > 0 {
			b = append(b, ", "...)
		}
		b = types.AppendJSONString(b, e.cols[i].Name)
		b = append(b, ": "...)
		b = appendJSONValue(b, row[i])
	}
	return append(b, '}')
}

// object appends the JSON object of a row, fields in column order.
func (e *Encoder) object(b []byte, row types.Row) []byte {
	b = append(b, '{')
	for i, c := range e.cols {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = types.AppendJSONString(b, c.Name)
		b = append(b, ": "...)
		b = appendJSONValue(b, row[i])
	}
	return append(b, '}')
}

func (e *Encoder) envelope(op string, before, after types.Row) []byte {
	b := []byte(`{"before": `)
	if before == nil {
		b = append(b, "null"...)
	} else {
		b = e.object(b, before)
	}
	b = append(b, `, "after": `...)
	if after == nil {
		b = append(b, "null"...)
	} else {
		b = e.object(b, after)
	}
	b = append(b, `, "op": "`...)
	b = append(b, op...)
	return append(b, `"}`...)
}

// appendJSONValue writes a datum as JSON: numbers and booleans as JSON
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
		if f := d.Float64(); math.IsNaN(f) || math.IsInf(f, 0) {
			return types.AppendJSONString(b, types.FormatText(d, nil))
		}
		return types.AppendText(b, d, nil)
	case types.KindNumeric:
		if s := types.FormatText(d, nil); s != "NaN" && s != "Infinity" && s != "-Infinity" {
			return append(b, s...)
		}
	case types.KindJSONB:
		return append(b, d.JSONB()...)
	}
	return types.AppendJSONString(b, types.FormatText(d, nil))
}
