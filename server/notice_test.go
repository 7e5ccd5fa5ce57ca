package server

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestDropIfExistsNotice: DROP ... IF EXISTS of a missing object sends
// PostgreSQL's NOTICE (00000, `table "nope" does not exist, skipping`)
// in both protocols and drops the names that exist.
func TestDropIfExistsNotice(t *testing.T) {
	c, notices := noticeConn(t, false)
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
			*notices = nil
			if _, err := c.Exec(context.Background(), tc.sql, mode); err != nil {
				t.Fatalf("%s: %v", tc.sql, err)
			}
			if !slices.Equal(*notices, tc.want) {
				t.Errorf("%s (mode %v): notices %q, want %q", tc.sql, mode, *notices, tc.want)
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

// TestCreateIfNotExistsAndCascadeNotices: CREATE ... IF NOT EXISTS of an
// existing relation and DROP ... CASCADE send PostgreSQL's notices:
// `relation "t" already exists, skipping`, `drop cascades to materialized
// view v2`, and for several `drop cascades to 2 other objects` with a
// DETAIL line each.
func TestCreateIfNotExistsAndCascadeNotices(t *testing.T) {
	c, notices := noticeConn(t, true)
	for _, tc := range []struct {
		sql  string
		want []string
	}{
		{"CREATE TABLE IF NOT EXISTS t (a INT)", nil},
		{"CREATE TABLE IF NOT EXISTS t (a INT, b INT)", []string{`NOTICE 00000 relation "t" already exists, skipping`}},
		{"CREATE MATERIALIZED VIEW v1 AS SELECT a, count(*) AS n FROM t GROUP BY a", nil},
		{"CREATE MATERIALIZED VIEW IF NOT EXISTS v1 AS SELECT 1 AS one FROM t", []string{`NOTICE 00000 relation "v1" already exists, skipping`}},
		{"CREATE MATERIALIZED VIEW v2 AS SELECT a FROM v1", nil},
		{"CREATE MATERIALIZED VIEW v3 AS SELECT a FROM t", nil},
		{"DROP MATERIALIZED VIEW v1 CASCADE", []string{`NOTICE 00000 drop cascades to materialized view v2`}},
		{"CREATE MATERIALIZED VIEW v4 AS SELECT a FROM v3", nil},
		{"DROP TABLE t CASCADE", []string{"NOTICE 00000 drop cascades to 2 other objects | drop cascades to materialized view v3\ndrop cascades to materialized view v4"}},
	} {
		*notices = nil
		if _, err := c.Exec(context.Background(), tc.sql); err != nil {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if !slices.Equal(*notices, tc.want) {
			t.Errorf("%s: notices %q, want %q", tc.sql, *notices, tc.want)
		}
	}
	if got := rowsText(t, c, "SHOW TABLES"); got != "" {
		t.Errorf("tables after the DROPs: %q", got)
	}
}

// noticeConn starts a server and connects to it, collecting the notices
// it sends as "SEVERITY CODE message" lines, with " | detail" appended
// when withDetail and the notice has one.
func noticeConn(t *testing.T, withDetail bool) (*pgx.Conn, *[]string) {
	t.Helper()
	s := startTest(t, t.TempDir())
	t.Cleanup(func() { s.Close() })
	cfg, err := pgx.ParseConfig("postgres://root@" + s.Addr().String() + "/dev?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	notices := new([]string)
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		line := n.Severity + " " + n.Code + " " + n.Message
		if withDetail && n.Detail != "" {
			line += " | " + n.Detail
		}
		*notices = append(*notices, line)
	}
	c, err := pgx.ConnectConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	return c, notices
}

// TestLongIdentifierNotice: an identifier longer than 63 bytes is cut to
// 63, as PostgreSQL cuts it, and draws PostgreSQL's notice (42622,
// identifier "..." will be truncated to "...") in both protocols, also
// when the statement then fails; the cut name is the table's.
func TestLongIdentifierNotice(t *testing.T) {
	c, notices := noticeConn(t, false)
	long := strings.Repeat("abcdefghij", 7) // 70 bytes
	cut := long[:63]
	notice := func(full, cut string) string {
		return `NOTICE 42622 identifier "` + full + `" will be truncated to "` + cut + `"`
	}
	// 31 two-byte characters and one more: the cut keeps whole characters.
	wide := strings.Repeat("é", 32)
	for _, tc := range []struct {
		sql     string
		want    []string
		wantErr string
	}{
		{"CREATE TABLE " + strings.ToUpper(long) + " (k BIGINT)", []string{notice(long, cut)}, ""},
		{"INSERT INTO " + long + " VALUES (1)", []string{notice(long, cut)}, ""},
		{"INSERT INTO " + long + "x (k) VALUES (2)", []string{notice(long+"x", cut)}, ""},
		{"INSERT INTO x" + long + " VALUES (1)", []string{notice("x"+long, "x"+long[:62])}, "42P01"},
		{"CREATE TABLE \"" + wide + "\" (k BIGINT)", []string{notice(wide, strings.Repeat("é", 31))}, ""},
		{"SELECT 'a string of more than sixty-three bytes is no identifier at all, is it'", nil, ""},
	} {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
			*notices = nil
			_, err := c.Exec(context.Background(), tc.sql, mode)
			var pe *pgconn.PgError
			if tc.wantErr == "" && err != nil || tc.wantErr != "" && (!errors.As(err, &pe) || pe.Code != tc.wantErr) {
				t.Fatalf("%s (mode %v): %v, want error %q", tc.sql, mode, err, tc.wantErr)
			}
			if !slices.Equal(*notices, tc.want) {
				t.Errorf("%s (mode %v): notices %q, want %q", tc.sql, mode, *notices, tc.want)
			}
			if strings.HasPrefix(tc.sql, "CREATE") {
				// Once: a second CREATE would fail.
				break
			}
		}
	}
	wantRows(t, c, "SELECT count(*) FROM "+cut, "4")
	wantRows(t, c, "SELECT count(*) FROM \""+strings.Repeat("é", 31)+"\"", "0")
}
