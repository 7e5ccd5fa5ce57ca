package file

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/suggest"
)

// ConnectorName is the value of the connector option that selects this
// package.
const ConnectorName = "file"

// Option names, as a WITH clause gives them (see doc.go, Options).
const (
	OptConnector = "connector"
	OptPath      = "path"
	OptWatch     = "watch"
	OptChunkRows = "chunk.rows"
	OptErrors    = format.OptErrors
)

// Options is what a file source's WITH clause configures.
type Options struct {
	// Path is a file or a directory.
	Path string
	// Format is csv, json (JSON lines) or debezium-json (one event a
	// line).
	Format format.Options
	// Watch keeps reading a directory as files appear in it; otherwise
	// the source reads the files there at its first read and finishes.
	Watch bool
	// ChunkRows is the most records one transaction holds (default 1024).
	ChunkRows int
	Errors    format.ErrorMode
}

// Formats lists the values of the format option a file source takes: the
// line formats of connector/format (one record a line, or a CSV record).
func Formats() []string {
	return []string{string(format.CSVFmt), string(format.JSON), string(format.Debezium)}
}

// ParseOptions reads the options of a file source, as
// WITH (connector='file', path='/data/in', format='csv', csv.header='true',
// watch='true') gives them. path and format are required. An unknown
// option or a bad value gives an error wrapping base.ErrInvalidArgument
// that names the option.
func ParseOptions(opts map[string]string) (Options, error) {
	o := Options{ChunkRows: 1024, Errors: format.Fail}
	bad := func(k, v, why string) error {
		return fmt.Errorf("option %q: %q %s: %w", k, v, why, base.ErrInvalidArgument)
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := opts[k]
		switch k {
		case OptConnector:
			if v != ConnectorName {
				return Options{}, bad(k, v, "is not "+ConnectorName)
			}
		case OptPath:
			o.Path = v
		case OptWatch:
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return Options{}, bad(k, v, "is not true or false")
			}
			o.Watch = b
		case OptChunkRows:
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil || n <= 0 {
				return Options{}, bad(k, v, "is not a whole number >= 1")
			}
			o.ChunkRows = int(n)
		case OptErrors:
			m, err := format.ParseErrorMode(v)
			if err != nil {
				return Options{}, err
			}
			o.Errors = m
		default:
			if !format.IsOption(k) {
				known := append([]string{OptConnector, OptPath, OptWatch, OptChunkRows, OptErrors}, format.OptionNames()...)
				return Options{}, suggest.UnknownOption("", k, known)
			}
		}
	}
	if o.Path == "" {
		return Options{}, fmt.Errorf("option %q is required: %w", OptPath, base.ErrInvalidArgument)
	}
	if v, ok := opts[format.OptFormat]; ok {
		switch format.Format(strings.ToLower(strings.TrimSpace(v))) {
		case format.CSVFmt, format.JSON, format.Debezium:
		default:
			// Avro has no line framing: a file of it is not a stream of
			// records this source can split.
			return Options{}, bad(format.OptFormat, v, "is not one of "+strings.Join(Formats(), ", "))
		}
	}
	f, err := format.ParseOptions(opts, "")
	if err != nil {
		return Options{}, err
	}
	o.Format = f
	return o, nil
}
