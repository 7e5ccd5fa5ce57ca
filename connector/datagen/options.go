package datagen

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/suggest"
	"github.com/stratadb/strata/meta/catalog"
)

// ConnectorName is the value of the connector option that selects this
// package.
const ConnectorName = "datagen"

// Option names, Flink's datagen connector's (see doc.go, Options).
const (
	OptConnector    = "connector"
	OptRowsPerSec   = "rows-per-second"
	OptNumberOfRows = "number-of-rows"
	OptSeed         = "seed"
	// Per column: "fields." + column name + "." + one of these.
	OptKind     = "kind"
	OptStart    = "start"
	OptEnd      = "end"
	OptMin      = "min"
	OptMax      = "max"
	OptLength   = "length"
	OptNullRate = "null-rate"
	// OptMaxPast is a Flink Duration ('5 s', '1 min', '500' for 500 ms):
	// how far before its row's generation time a time column's value may
	// lie (Field.MaxPast).
	OptMaxPast = "max-past"
)

// DefaultRowsPerSecond is the rate when the rows-per-second option is
// absent (Flink's default); rows-per-second='0' means unpaced.
const DefaultRowsPerSecond = 10_000

// DefaultSeed is the seed of options without a seed option. It is the
// seed of every relation created before CREATE chose one, and such a
// relation keeps it, so that it generates after an upgrade what it
// generated before (see doc.go, Seed). A new relation gets its own
// random seed instead (WithSeed).
const DefaultSeed = 0

// WithSeed returns the options to store for a new datagen relation: opts
// itself when it has a seed option, otherwise a copy of opts with seed
// set to the decimal text of seed, which the caller draws at random. CREATE
// TABLE and CREATE SOURCE store the result in the catalog, so that two
// relations created without a seed get independent values (Flink's
// datagen seeds each source from a random source) while each relation's
// rows stay a function of its stored options: a restart or a replay
// reads the seed chosen at its CREATE (invariant row-purity), and SHOW
// CREATE shows it. opts is not modified.
func WithSeed(opts map[string]string, seed uint64) map[string]string {
	if _, ok := opts[OptSeed]; ok {
		return opts
	}
	out := maps.Clone(opts)
	if out == nil {
		out = map[string]string{}
	}
	out[OptSeed] = strconv.FormatUint(seed, 10)
	return out
}

// fieldOptions are the options of one column, fields.<column>.<option>.
var fieldOptions = []string{OptKind, OptStart, OptEnd, OptMin, OptMax, OptMaxPast, OptLength, OptNullRate}

// ParseOptions reads a datagen WITH clause for a relation of columns, e.g.
// WITH (connector='datagen', rows-per-second='100', number-of-rows='1000',
// fields.id.kind='sequence', fields.id.start='1', fields.name.length='8',
// fields.ts.max-past='5 s').
// Unknown options, options of columns that do not exist and bad values
// give an error wrapping base.ErrInvalidArgument that names the option;
// the column fields themselves are checked as NewReader checks them.
func ParseOptions(columns []catalog.Column, opts map[string]string) (Config, error) {
	cfg := Config{Columns: columns, Rate: DefaultRowsPerSecond, Seed: DefaultSeed, Fields: map[string]Field{}}
	bad := func(k, v, why string) error {
		return fmt.Errorf("datagen option %q: %q %s: %w", k, v, why, base.ErrInvalidArgument)
	}
	cols := map[string]bool{}
	for _, c := range columns {
		cols[c.Name] = true
	}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := opts[k]
		switch k {
		case OptConnector:
			if v != ConnectorName {
				return Config{}, bad(k, v, "is not "+ConnectorName)
			}
			continue
		case OptRowsPerSec, OptNumberOfRows, OptSeed:
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return Config{}, bad(k, v, "is not a whole number >= 0")
			}
			switch k {
			case OptRowsPerSec:
				cfg.Rate = n
			case OptNumberOfRows:
				cfg.Rows = n
			default:
				cfg.Seed = n
			}
			continue
		}
		rest, ok := strings.CutPrefix(k, "fields.")
		dot := strings.LastIndexByte(rest, '.')
		if !ok || dot <= 0 {
			var fields []string
			for _, c := range columns {
				for _, f := range fieldOptions {
					fields = append(fields, "fields."+c.Name+"."+f)
				}
			}
			return Config{}, suggest.UnknownOption("datagen: ", k,
				[]string{OptConnector, OptRowsPerSec, OptNumberOfRows, OptSeed, "fields.<column>.<" + strings.Join(fieldOptions, "|") + ">"}, fields...)
		}
		col, what := rest[:dot], rest[dot+1:]
		if !cols[col] {
			return Config{}, bad(k, v, fmt.Sprintf("configures column %q, which does not exist (columns: %s)", col, columnNames(columns)))
		}
		f := cfg.Fields[col]
		switch what {
		case OptKind:
			switch kind := Kind(strings.ToLower(strings.TrimSpace(v))); kind {
			case Random, Sequence:
				f.Kind = kind
			default:
				return Config{}, bad(k, v, "is not random or sequence")
			}
		case OptStart:
			f.Start = v
		case OptEnd:
			f.End = v
		case OptMin:
			f.Min = v
		case OptMax:
			f.Max = v
		case OptLength:
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 32)
			if err != nil || n <= 0 {
				return Config{}, bad(k, v, "is not a whole number >= 1")
			}
			f.Length = int(n)
		case OptMaxPast:
			d, err := parseDuration(v)
			if err != nil {
				return Config{}, bad(k, v, err.Error()+" (a duration such as '5 s' or '1 min')")
			}
			f.MaxPast = d
		case OptNullRate:
			x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil || !(x >= 0 && x <= 1) {
				return Config{}, bad(k, v, "is not a number between 0 and 1")
			}
			f.NullRate = x
		default:
			hint := suggest.Nearest(what, fieldOptions)
			if hint != "" {
				hint = suggest.OptionHint("fields." + col + "." + hint)
			}
			return Config{}, suggest.WithHint(bad(k, v, fmt.Sprintf("%q is not one of %s", what, strings.Join(fieldOptions, ", "))), hint)
		}
		cfg.Fields[col] = f
	}
	if _, err := compile(cfg); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

// Open parses opts for columns (ParseOptions) and returns a Reader.
func Open(columns []catalog.Column, opts map[string]string) (*Reader, error) {
	cfg, err := ParseOptions(columns, opts)
	if err != nil {
		return nil, err
	}
	return NewReader(cfg)
}
