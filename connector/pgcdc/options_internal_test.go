package pgcdc

import (
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestConnString checks that the connection string carries every setting
// intact, quotes and backslashes included, and asks for the output
// formats the decoder reads.
func TestConnString(t *testing.T) {
	o := Options{Hostname: "/tmp/sock dir", Port: 5433, Username: "o'brien", Password: `p\w'd x`, Database: "my db", Slot: "s", Publication: "p"}
	for _, repl := range []bool{false, true} {
		cfg, err := pgconn.ParseConfig(o.connString(repl))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Host != o.Hostname || cfg.Port != 5433 || cfg.User != o.Username || cfg.Password != o.Password || cfg.Database != o.Database {
			t.Fatalf("parsed %s:%d user %q password %q database %q", cfg.Host, cfg.Port, cfg.User, cfg.Password, cfg.Database)
		}
		for k, v := range map[string]string{"timezone": "UTC", "datestyle": "ISO, MDY", "intervalstyle": "postgres", "bytea_output": "hex"} {
			if cfg.RuntimeParams[k] != v {
				t.Fatalf("runtime parameter %s = %q, want %q", k, cfg.RuntimeParams[k], v)
			}
		}
		if got := cfg.RuntimeParams["replication"]; (got == "database") != repl {
			t.Fatalf("replication = %q for replication %v", got, repl)
		}
	}
}
