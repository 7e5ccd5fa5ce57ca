package filesink

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/suggest"
)

// ConnectorName is the value of the connector option that selects this
// package.
const ConnectorName = "file"

// Option names, as CREATE SINK ... WITH (...) gives them.
const (
	OptConnector = "connector"
	OptPath      = "path"
	OptFormat    = "format"
	OptOpField   = "op.field"
)

// Format is how a sink writes its files.
type Format string

// The formats.
const (
	// CSV writes a header record naming the fields, then one record per
	// change; NULL is an empty field, the empty string a quoted empty
	// field "" (what connector/format's csv decoder reads back).
	CSV Format = "csv"
	// JSON writes one JSON object per line (JSON lines).
	JSON Format = "json"
)

// DefaultOpField is the name of the field that holds a change's row kind.
const DefaultOpField = "op"

// Options are what a file sink's WITH clause configures.
type Options struct {
	// Dir is the directory the files go into; created when missing.
	Dir string
	// Format is csv (the default) or json.
	Format Format
	// OpField names the field holding the row kind (+I, -U, +U, -D);
	// default "op". It must not be the name of a column.
	OpField string
}

// ParseOptions reads a WITH clause: connector, path (required), format
// ('csv', the default, or 'json') and op.field. An unknown option, a
// missing one or a bad value gives an error wrapping
// base.ErrInvalidArgument that names the option.
func ParseOptions(opts map[string]string) (Options, error) {
	o := Options{Format: CSV, OpField: DefaultOpField}
	bad := func(k, v, why string) error {
		return fmt.Errorf("file sink option %q: %q %s: %w", k, v, why, base.ErrInvalidArgument)
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := opts[k]
		switch k {
		case OptConnector:
			if v != ConnectorName {
				return Options{}, bad(k, v, "is not "+ConnectorName)
			}
		case OptPath:
			if o.Dir = strings.TrimSpace(v); o.Dir == "" {
				return Options{}, bad(k, v, "is empty")
			}
		case OptFormat:
			switch f := Format(strings.ToLower(strings.TrimSpace(v))); f {
			case CSV, JSON:
				o.Format = f
			case "json-lines", "jsonl":
				o.Format = JSON
			default:
				return Options{}, bad(k, v, "is not csv or json")
			}
		case OptOpField:
			if o.OpField = strings.TrimSpace(v); o.OpField == "" {
				return Options{}, bad(k, v, "is empty")
			}
		default:
			return Options{}, suggest.UnknownOption("file sink: ", k, []string{OptConnector, OptPath, OptFormat, OptOpField})
		}
	}
	if o.Dir == "" {
		return Options{}, fmt.Errorf("file sink: option %q (the directory to write) is required: %w", OptPath, base.ErrInvalidArgument)
	}
	return o, nil
}
