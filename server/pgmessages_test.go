package server

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestPostgresErrorWords: errors whose words PostgreSQL fixes say them
// as PostgreSQL does, with its SQLSTATE, and create nothing.
func TestPostgresErrorWords(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE t (k BIGINT)")
	for _, tc := range []struct{ sql, code, msg string }{
		{"DROP MATERIALIZED VIEW x", "42P01", `materialized view "x" does not exist`},
		{"DROP TABLE x", "42P01", `table "x" does not exist`},
		// Strata's databases are what a qualified name's schema names.
		{"CREATE TABLE other.sx (k BIGINT)", "3F000", `schema "other" does not exist`},
		{"CREATE MATERIALIZED VIEW other.v AS SELECT k FROM t", "3F000", `schema "other" does not exist`},
		{"CREATE SINK other.k INTO t AS SELECT k FROM t", "3F000", `schema "other" does not exist`},
		{"CREATE SINK other.k FROM t WITH (connector = 'file', path = '" + t.TempDir() + "')", "3F000", `schema "other" does not exist`},
		{"CREATE SOURCE other.s (k BIGINT) WITH (connector = 'datagen')", "3F000", `schema "other" does not exist`},
	} {
		err := c.PgConn().Exec(context.Background(), tc.sql).Close()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != tc.code || pe.Message != tc.msg {
			t.Errorf("%q: %v, want %s %q", tc.sql, err, tc.code, tc.msg)
		}
	}
	wantRows(t, c, "SELECT count(*) FROM strata_catalog.jobs WHERE name LIKE '%other%'", "0")
}
