package pgcdc

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/pgconnect"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/suggest"
)

// ConnectorName is the value of the connector option that selects this
// package.
const ConnectorName = "postgres-cdc"

// Option names, as CREATE SOURCE ... WITH (...) gives them.
const (
	OptConnector   = "connector"
	OptHostname    = "hostname"
	OptPort        = "port"
	OptUsername    = "username"
	OptPassword    = "password"
	OptDatabase    = "database"
	OptSlot        = "slot"
	OptPublication = "publication"
)

// Options are the connection settings of one source: where the database
// is, and the names of its replication slot and publication.
type Options struct {
	Hostname string // host name, IP address, or a unix socket directory (starts with /)
	Port     int    // default 5432
	Username string
	Password string
	Database string
	// Slot is the logical replication slot the source owns (created on
	// the first start). Publication names the tables streamed; it is
	// created FOR TABLE the source's tables when it does not exist.
	Slot        string
	Publication string
}

// namePattern is what a slot name may be (Postgres: lower-case letters,
// digits and underscores); publications are held to the same so that
// they need no quoting in replication commands.
var namePattern = regexp.MustCompile(`^[a-z0-9_]{1,63}$`)

// ParseOptions reads a WITH clause: hostname, username, database, slot and
// publication are required; port defaults to 5432 and password to none.
// An unknown option, a missing one or a bad value gives an error wrapping
// base.ErrInvalidArgument that names the option.
func ParseOptions(opts map[string]string) (Options, error) {
	o := Options{Port: 5432}
	bad := func(k, v, why string) error {
		return fmt.Errorf("postgres-cdc option %q: %q %s: %w", k, v, why, base.ErrInvalidArgument)
	}
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
		case OptSlot:
			o.Slot = v
		case OptPublication:
			o.Publication = v
		case format.OptErrors:
			// Bad values are a matter of each table's declared types
			// (doc.go, Bad values).
			return Options{}, fmt.Errorf("postgres-cdc: option %q is set per table: CREATE TABLE ... FROM source TABLE 'schema.table' WITH (errors = '%s'): %w", k, v, base.ErrInvalidArgument)
		default:
			return Options{}, suggest.UnknownOption("postgres-cdc: ", k,
				[]string{OptConnector, OptHostname, OptPort, OptUsername, OptPassword, OptDatabase, OptSlot, OptPublication})
		}
	}
	if err := o.Validate(); err != nil {
		return Options{}, err
	}
	return o, nil
}

// Validate checks that the required settings are there and that slot and
// publication are plain names. The error wraps base.ErrInvalidArgument.
func (o Options) Validate() error {
	for _, req := range []struct{ name, v string }{
		{OptHostname, o.Hostname}, {OptUsername, o.Username}, {OptDatabase, o.Database},
		{OptSlot, o.Slot}, {OptPublication, o.Publication},
	} {
		if req.v == "" {
			return fmt.Errorf("postgres-cdc: option %q is required: %w", req.name, base.ErrInvalidArgument)
		}
	}
	if o.Port < 1 || o.Port > 65535 {
		return fmt.Errorf("postgres-cdc option %q: %d is not a port number: %w", OptPort, o.Port, base.ErrInvalidArgument)
	}
	if !namePattern.MatchString(o.Slot) {
		return fmt.Errorf("postgres-cdc option %q: %q must be 1 to 63 lower-case letters, digits or underscores: %w", OptSlot, o.Slot, base.ErrInvalidArgument)
	}
	if !namePattern.MatchString(o.Publication) {
		return fmt.Errorf("postgres-cdc option %q: %q must be 1 to 63 lower-case letters, digits or underscores: %w", OptPublication, o.Publication, base.ErrInvalidArgument)
	}
	return nil
}

// connect opens a connection with o (a replication connection with
// replication); its failure names o's address and the cause, once
// (connector/pgconnect).
func (o Options) connect(ctx context.Context, replication bool) (*pgconn.PgConn, error) {
	conn, err := pgconn.Connect(ctx, o.connString(replication))
	if err != nil {
		return nil, pgconnect.New(o.Hostname, o.Port, err)
	}
	return conn, nil
}

// connString returns a key=value connection string. replication adds
// replication=database (a walsender that also takes SQL). Every
// connection asks for the output formats the decoder reads: UTC,
// ISO dates, postgres intervals, hex bytea and shortest exact floats.
func (o Options) connString(replication bool) string {
	kv := [][2]string{
		{"host", o.Hostname}, {"port", strconv.Itoa(o.Port)}, {"user", o.Username},
		{"dbname", o.Database}, {"sslmode", "prefer"},
		{"timezone", "UTC"}, {"datestyle", "ISO, MDY"}, {"intervalstyle", "postgres"},
		{"bytea_output", "hex"}, {"extra_float_digits", "1"}, {"client_encoding", "UTF8"},
		{"application_name", "strata-postgres-cdc"},
	}
	if o.Password != "" {
		kv = append(kv, [2]string{"password", o.Password})
	}
	if replication {
		kv = append(kv, [2]string{"replication", "database"})
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
