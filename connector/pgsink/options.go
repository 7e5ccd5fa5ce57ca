package pgsink

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/suggest"
)

// ConnectorName is the value of the connector option that selects this
// package.
const ConnectorName = "postgres"

// Option names, as CREATE SINK ... WITH (...) gives them.
const (
	OptConnector = "connector"
	OptHostname  = "hostname"
	OptPort      = "port"
	OptUsername  = "username"
	OptPassword  = "password"
	OptDatabase  = "database"
	OptTable     = "table"
	OptProgress  = "progress.table"
)

// DefaultProgressTable is the name of the progress table, in the target
// table's schema, when option progress.table does not name one.
const DefaultProgressTable = "strata_sink_progress"

// Options are the settings of one Postgres sink: where the database is,
// the target table and the progress table.
type Options struct {
	Hostname string // host name, IP address, or a unix socket directory (starts with /)
	Port     int    // default 5432
	Username string
	Password string
	Database string
	// Schema and Table name the target table (option table, 'schema.table'
	// or 'table' in schema public); names are taken as written, without
	// case folding or quotes.
	Schema, Table string
	// ProgressSchema and ProgressTable name the table that records, per
	// sink and subtask, the last epoch committed (see doc.go).
	ProgressSchema, ProgressTable string
}

// ParseOptions reads a WITH clause: hostname, username, database and
// table are required; port defaults to 5432, password to none and
// progress.table to strata_sink_progress in the target's schema. An
// unknown option, a missing one or a bad value gives an error wrapping
// base.ErrInvalidArgument that names the option.
func ParseOptions(opts map[string]string) (Options, error) {
	o := Options{Port: 5432}
	bad := func(k, v, why string) error {
		return fmt.Errorf("postgres sink option %q: %q %s: %w", k, v, why, base.ErrInvalidArgument)
	}
	var progress string
	for _, k := range slices.Sorted(maps.Keys(opts)) {
		v := opts[k]
		switch k {
		case OptConnector:
			if v != ConnectorName {
				return Options{}, bad(k, v, "is not "+ConnectorName)
			}
		case OptHostname:
			o.Hostname = strings.TrimSpace(v)
		case OptPort:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 1 || n > 65535 {
				return Options{}, bad(k, v, "is not a port number (1..65535)")
			}
			o.Port = n
		case OptUsername:
			o.Username = v
		case OptPassword:
			o.Password = v
		case OptDatabase:
			o.Database = v
		case OptTable:
			var ok bool
			if o.Schema, o.Table, ok = splitName(v); !ok {
				return Options{}, bad(k, v, "is not schema.table or table")
			}
		case OptProgress:
			progress = v
		default:
			return Options{}, suggest.UnknownOption("postgres sink: ", k,
				[]string{OptConnector, OptHostname, OptPort, OptUsername, OptPassword, OptDatabase, OptTable, OptProgress})
		}
	}
	for _, req := range []struct{ name, v string }{
		{OptHostname, o.Hostname}, {OptUsername, o.Username}, {OptDatabase, o.Database}, {OptTable, o.Table},
	} {
		if req.v == "" {
			return Options{}, fmt.Errorf("postgres sink: option %q is required: %w", req.name, base.ErrInvalidArgument)
		}
	}
	o.ProgressSchema, o.ProgressTable = o.Schema, DefaultProgressTable
	if progress != "" {
		var ok bool
		if o.ProgressSchema, o.ProgressTable, ok = splitName(progress); !ok {
			return Options{}, bad(OptProgress, progress, "is not schema.table or table")
		}
	}
	return o, nil
}

// splitName splits "schema.table" or "table" (schema public).
func splitName(v string) (schema, table string, ok bool) {
	v = strings.TrimSpace(v)
	schema, table, found := strings.Cut(v, ".")
	if !found {
		schema, table = "public", v
	}
	if schema == "" || table == "" || strings.Contains(table, ".") {
		return "", "", false
	}
	return schema, table, true
}

// Target returns the target table as schema.table.
func (o Options) Target() string { return o.Schema + "." + o.Table }

// connString returns a key=value connection string. Every connection
// asks for the settings the sink's text values assume: UTC, ISO dates,
// postgres intervals.
func (o Options) connString() string {
	kv := [][2]string{
		{"host", o.Hostname}, {"port", strconv.Itoa(o.Port)}, {"user", o.Username},
		{"dbname", o.Database}, {"sslmode", "prefer"},
		{"timezone", "UTC"}, {"datestyle", "ISO, MDY"}, {"intervalstyle", "postgres"},
		{"client_encoding", "UTF8"}, {"application_name", ApplicationName},
	}
	if o.Password != "" {
		kv = append(kv, [2]string{"password", o.Password})
	}
	var b strings.Builder
	for i, p := range kv {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p[0])
		b.WriteString("='")
		b.WriteString(strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(p[1]))
		b.WriteByte('\'')
	}
	return b.String()
}

// ApplicationName is the application_name of the sink's connections
// (pg_stat_activity shows it).
const ApplicationName = "strata-postgres-sink"
