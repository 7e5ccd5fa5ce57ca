package format

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// Change is one row of a record with its row kind.
type Change struct {
	Kind types.RowKind
	Row  types.Row
}

// Decoder turns the bytes of one record into changes of its columns (see
// the package doc for the formats and the invariants decode-atomic and
// decode-pure). A nil or empty value is a tombstone or an empty line and
// gives no change for every format but csv (where it is one record of
// NULLs when the table has one column, and an error otherwise).
// Decoders are not safe for concurrent use.
type Decoder interface {
	// Decode appends the changes of value to dst and returns it. On error
	// dst is returned unchanged.
	Decode(dst []Change, value []byte) ([]Change, error)
}

// Format names a record format.
type Format string

// The formats.
const (
	JSON     Format = "json"
	Debezium Format = "debezium-json"
	CSVFmt   Format = "csv"
	Avro     Format = "avro"
)

// Option names, as a WITH clause gives them.
const (
	OptFormat       = "format"
	OptCSVHeader    = "csv.header"
	OptCSVDelimiter = "csv.delimiter"
	OptCSVQuote     = "csv.quote"
	OptAvroSchema   = "avro.schema"
	OptAvroWire     = "avro.wire"
)

// Options configures a Decoder.
type Options struct {
	Format Format
	// CSVHeader says the first record of each file is a header naming the
	// columns (used by connector/file; a Kafka message has no header).
	CSVHeader bool
	// CSVDelimiter and CSVQuote default to ',' and '"'.
	CSVDelimiter rune
	CSVQuote     rune
	// AvroSchema is the writer schema, JSON.
	AvroSchema string
	// AvroConfluent says values carry the schema registry's 5-byte header.
	AvroConfluent bool
}

// Changelog reports whether records of format f carry updates and
// deletes (a Debezium event's before and after images give -U/+U and -D
// rows) rather than only inserts. A table fed by such a format needs a
// primary key: an append table takes no retractions (the table store
// refuses them), as Flink's upsert and changelog formats need a key.
func (f Format) Changelog() bool { return f == Debezium }

// ParseFormat reads the value of the format option as ParseOptions does
// (case and surrounding spaces do not count); ok is false for a value
// that is not a format.
func ParseFormat(v string) (f Format, ok bool) {
	switch f := Format(strings.ToLower(strings.TrimSpace(v))); f {
	case JSON, Debezium, CSVFmt, Avro:
		return f, true
	}
	return "", false
}

// IsOption reports whether k is an option this package reads, so that a
// connector can refuse the options nobody reads.
func IsOption(k string) bool {
	switch k {
	case OptFormat, OptCSVHeader, OptCSVDelimiter, OptCSVQuote, OptAvroSchema, OptAvroWire:
		return true
	}
	return false
}

// OptionNames lists the options IsOption accepts.
func OptionNames() []string {
	return []string{OptFormat, OptCSVHeader, OptCSVDelimiter, OptCSVQuote, OptAvroSchema, OptAvroWire}
}

// ParseOptions reads the format options among opts (others are left to
// the caller). format is required unless def is not empty. A bad value
// gives an error wrapping base.ErrInvalidArgument that names the option.
func ParseOptions(opts map[string]string, def Format) (Options, error) {
	o := Options{Format: def, CSVDelimiter: ',', CSVQuote: '"'}
	bad := func(k, v, why string) error {
		return fmt.Errorf("option %q: %q %s: %w", k, v, why, base.ErrInvalidArgument)
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := opts[k]
		switch k {
		case OptFormat:
			switch f := Format(strings.ToLower(strings.TrimSpace(v))); f {
			case JSON, Debezium, CSVFmt, Avro:
				o.Format = f
			default:
				return Options{}, bad(k, v, "is not one of json, debezium-json, csv, avro")
			}
		case OptCSVHeader:
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "true", "yes", "on", "1":
				o.CSVHeader = true
			case "false", "no", "off", "0":
				o.CSVHeader = false
			default:
				return Options{}, bad(k, v, "is not true or false")
			}
		case OptCSVDelimiter, OptCSVQuote:
			r, n := utf8.DecodeRuneInString(v)
			if v == `\t` {
				r, n = '\t', len(v)
			}
			if n != len(v) || r == utf8.RuneError || r == '\n' || r == '\r' {
				return Options{}, bad(k, v, "is not one character (other than a line break)")
			}
			if k == OptCSVDelimiter {
				o.CSVDelimiter = r
			} else {
				o.CSVQuote = r
			}
		case OptAvroSchema:
			o.AvroSchema = v
		case OptAvroWire:
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "raw":
				o.AvroConfluent = false
			case "confluent":
				o.AvroConfluent = true
			default:
				return Options{}, bad(k, v, "is not raw or confluent")
			}
		}
	}
	if o.Format == "" {
		return Options{}, fmt.Errorf("format: option %q is required (json, debezium-json, csv or avro): %w", OptFormat, base.ErrInvalidArgument)
	}
	if o.CSVDelimiter == o.CSVQuote {
		return Options{}, bad(OptCSVQuote, string(o.CSVQuote), "is the delimiter too")
	}
	if o.Format == Avro && o.AvroSchema == "" {
		return Options{}, fmt.Errorf("format avro: option %q (the writer schema, JSON) is required: %w", OptAvroSchema, base.ErrInvalidArgument)
	}
	return o, nil
}

// New returns a Decoder of o.Format for cols.
func New(o Options, cols []catalog.Column) (Decoder, error) {
	if len(cols) == 0 {
		return nil, fmt.Errorf("format %s: no columns: %w", o.Format, base.ErrInvalidArgument)
	}
	switch o.Format {
	case JSON:
		return NewJSON(cols), nil
	case Debezium:
		return NewDebezium(cols), nil
	case CSVFmt:
		return NewCSV(cols, o.CSVDelimiter, o.CSVQuote), nil
	case Avro:
		return NewAvro(cols, o.AvroSchema, o.AvroConfluent)
	}
	return nil, fmt.Errorf("format %q is not one of json, debezium-json, csv, avro: %w", o.Format, base.ErrInvalidArgument)
}

// Types returns the column types of cols, the types of the chunks built
// from a Decoder's rows.
func Types(cols []catalog.Column) []types.Type {
	ts := make([]types.Type, len(cols))
	for i, c := range cols {
		ts[i] = c.Type
	}
	return ts
}

// AppendChanges appends changes to c (created for ts when nil) and returns
// it.
func AppendChanges(c *types.Chunk, ts []types.Type, changes []Change) *types.Chunk {
	if c == nil {
		c = types.NewChunk(ts, max(len(changes), 1))
	}
	for _, ch := range changes {
		c.Append(ch.Kind, ch.Row)
	}
	return c
}
