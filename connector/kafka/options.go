package kafka

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/suggest"
)

// ConnectorName is the value of the connector option that selects this
// package.
const ConnectorName = "kafka"

// Option names, as a WITH clause gives them (see doc.go, Options).
const (
	OptConnector      = "connector"
	OptBootstrap      = "properties.bootstrap.server"
	OptBootstrapAlt   = "properties.bootstrap.servers"
	OptTopic          = "topic"
	OptStartupMode    = "scan.startup.mode"
	OptIsolation      = "properties.isolation.level"
	OptTxnTimeout     = "properties.transaction.timeout.ms"
	OptTxnIDPrefix    = "transactional.id.prefix"
	OptSinkFormat     = "format"
	OptErrors         = format.OptErrors
	defaultTxnTimeout = 15 * time.Minute
)

// StartupMode says where a source with no checkpointed position starts.
type StartupMode string

// The startup modes.
const (
	Earliest StartupMode = "earliest"
	Latest   StartupMode = "latest"
)

// SourceOptions is what a source's WITH clause configures.
type SourceOptions struct {
	Brokers []string
	Topic   string
	Startup StartupMode
	// ReadCommitted reads only committed records of transactional
	// producers (the default; properties.isolation.level).
	ReadCommitted bool
	Format        format.Options
	Errors        format.ErrorMode
}

func bad(k, v, why string) error {
	return fmt.Errorf("kafka option %q: %q %s: %w", k, v, why, base.ErrInvalidArgument)
}

func brokers(k, v string) ([]string, error) {
	var out []string
	for _, b := range strings.Split(v, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	if len(out) == 0 {
		return nil, bad(k, v, "names no broker (host:port, comma separated)")
	}
	return out, nil
}

// ParseSourceOptions reads the options of a Kafka source, as
// WITH (connector='kafka', topic='orders', properties.bootstrap.server=
// 'localhost:9092', format='debezium-json', scan.startup.mode='earliest')
// gives them. topic, the bootstrap servers and format are required. An
// unknown option or a bad value gives an error wrapping
// base.ErrInvalidArgument that names the option.
func ParseSourceOptions(opts map[string]string) (SourceOptions, error) {
	o := SourceOptions{Startup: Earliest, ReadCommitted: true, Errors: format.Fail}
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := opts[k]
		var err error
		switch k {
		case OptConnector:
			if v != ConnectorName {
				return SourceOptions{}, bad(k, v, "is not "+ConnectorName)
			}
		case OptBootstrap, OptBootstrapAlt:
			if o.Brokers, err = brokers(k, v); err != nil {
				return SourceOptions{}, err
			}
		case OptTopic:
			if o.Topic = strings.TrimSpace(v); o.Topic == "" {
				return SourceOptions{}, bad(k, v, "is empty")
			}
		case OptStartupMode:
			switch m := StartupMode(strings.ToLower(strings.TrimSpace(v))); m {
			case Earliest, Latest:
				o.Startup = m
			default:
				return SourceOptions{}, bad(k, v, "is not earliest or latest")
			}
		case OptIsolation:
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "read_committed":
				o.ReadCommitted = true
			case "read_uncommitted":
				o.ReadCommitted = false
			default:
				return SourceOptions{}, bad(k, v, "is not read_committed or read_uncommitted")
			}
		case OptErrors:
			if o.Errors, err = format.ParseErrorMode(v); err != nil {
				return SourceOptions{}, fmt.Errorf("kafka: %w", err)
			}
		default:
			if !format.IsOption(k) {
				known := append([]string{OptConnector, OptBootstrap, OptTopic, OptStartupMode, OptIsolation, OptErrors}, format.OptionNames()...)
				return SourceOptions{}, suggest.UnknownOption("kafka source: ", k, known)
			}
		}
	}
	if len(o.Brokers) == 0 {
		return SourceOptions{}, fmt.Errorf("kafka source: option %q is required: %w", OptBootstrap, base.ErrInvalidArgument)
	}
	if o.Topic == "" {
		return SourceOptions{}, fmt.Errorf("kafka source: option %q is required: %w", OptTopic, base.ErrInvalidArgument)
	}
	f, err := format.ParseOptions(opts, "")
	if err != nil {
		return SourceOptions{}, fmt.Errorf("kafka source: %w", err)
	}
	o.Format = f
	return o, nil
}
