package server

import (
	"context"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestDropIfExistsNotice: DROP ... IF EXISTS of a missing object sends
// PostgreSQL's NOTICE (00000, `table "nope" does not exist, skipping`)
// in both protocols and drops the names that exist.
func TestDropIfExistsNotice(t *testing.T) {
	s := startTest(t, t.TempDir())
	t.Cleanup(func() { s.Close() })
	cfg, err := pgx.ParseConfig("postgres://root@" + s.Addr().String() + "/dev?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	var notices []string
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		notices = append(notices, n.Severity+" "+n.Code+" "+n.Message)
	}
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	exec(t, c, "CREATE TABLE here (a INT)")
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"DROP TABLE IF EXISTS nope", []string{`NOTICE 00000 table "nope" does not exist, skipping`}},
		{"DROP TABLE IF EXISTS nope2, here", []string{`NOTICE 00000 table "nope2" does not exist, skipping`}},
		{"DROP MATERIALIZED VIEW IF EXISTS dev.v", []string{`NOTICE 00000 materialized view "v" does not exist, skipping`}},
		{"DROP VIEW IF EXISTS v", []string{`NOTICE 00000 view "v" does not exist, skipping`}},
		{"DROP SOURCE IF EXISTS s", []string{`NOTICE 00000 source "s" does not exist, skipping`}},
		{"DROP SINK IF EXISTS k", []string{`NOTICE 00000 sink "k" does not exist, skipping`}},
	} {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
			notices = nil
			if _, err := c.Exec(context.Background(), tc.sql, mode); err != nil {
				t.Fatalf("%s: %v", tc.sql, err)
			}
			if !slices.Equal(notices, tc.want) {
				t.Errorf("%s (mode %v): notices %q, want %q", tc.sql, mode, notices, tc.want)
			}
			if tc.sql == "DROP TABLE IF EXISTS nope2, here" {
				tc.want = append(tc.want, `NOTICE 00000 table "here" does not exist, skipping`)
			}
		}
	}
	if got := rowsText(t, c, "SHOW TABLES"); got != "" {
		t.Errorf("tables after the DROPs: %q", got)
	}
}
