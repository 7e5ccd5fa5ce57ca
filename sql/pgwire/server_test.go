package pgwire_test

import (
	"context"
	"database/sql"
	"errors"
	"math/big"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/stratadb/strata/sql/pgwire"
	"github.com/stratadb/strata/sql/session"
)

func start(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := pgwire.NewServer(session.Handler{}, nil)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func connString(addr string) string {
	host, port, _ := net.SplitHostPort(addr)
	return "postgres://root@" + host + ":" + port + "/dev?sslmode=disable"
}

func TestPgxExtendedProtocolTypes(t *testing.T) {
	addr := start(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, connString(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)

	var (
		i   int32
		i8  int64
		f   float64
		s   string
		b   bool
		n   pgtype.Numeric
		d   time.Time
		ts  time.Time
		tz  time.Time
		iv  pgtype.Interval
		js  map[string]any
		u   [16]byte
		raw []byte
	)
	err = conn.QueryRow(ctx, `SELECT 1 + 1, 9000000000::bigint, 0.5::float8, 'héllo', true,
		12.345::numeric(10,3), '2024-02-29'::date, '1999-12-31 23:59:59.5'::timestamp,
		'2024-01-01 00:00:00+00'::timestamptz, '1 mon 2 days 03:00:00'::interval,
		'{"a": [1, 2]}'::jsonb, 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'::uuid, '\xdead'::bytea`).
		Scan(&i, &i8, &f, &s, &b, &n, &d, &ts, &tz, &iv, &js, &u, &raw)
	if err != nil {
		t.Fatal(err)
	}
	if i != 2 || i8 != 9000000000 || f != 0.5 || s != "héllo" || !b {
		t.Errorf("scalars: %d %d %v %q %v", i, i8, f, s, b)
	}
	if n.Int.Cmp(big.NewInt(12345)) != 0 || n.Exp != -3 {
		t.Errorf("numeric %v e%d", n.Int, n.Exp)
	}
	if d.Format("2006-01-02") != "2024-02-29" || ts.Format("2006-01-02 15:04:05.0") != "1999-12-31 23:59:59.5" || !tz.Equal(time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("times: %v %v %v", d, ts, tz)
	}
	if iv.Months != 1 || iv.Days != 2 || iv.Microseconds != 3*3600*1e6 {
		t.Errorf("interval %+v", iv)
	}
	if arr, ok := js["a"].([]any); !ok || len(arr) != 2 {
		t.Errorf("jsonb %v", js)
	}
	if u[0] != 0xa0 || u[15] != 0x11 || string(raw) != "\xde\xad" {
		t.Errorf("uuid %x bytea %x", u, raw)
	}
}

func TestErrorsCarrySQLSTATEAndPosition(t *testing.T) {
	addr := start(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, connString(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, tc := range []struct {
		sql, code string
		pos       int32
	}{
		{"SELECT 1/0", "22012", 0}, // Postgres gives no position for run-time errors
		{"SELECT nope", "42703", 8},
		{"SELEC 1", "42601", 1},
		{"SELECT * FROM missing", "42P01", 15},
	} {
		var v any
		err := conn.QueryRow(ctx, tc.sql).Scan(&v)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != tc.code || pe.Position != tc.pos {
			t.Errorf("%s: %v (code %v position %v), want %s at %d", tc.sql, err, pe.Code, pe.Position, tc.code, tc.pos)
		}
	}
	// The connection stays usable after errors.
	var one int
	if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
		t.Fatalf("after errors: %v %d", err, one)
	}
}

func TestDatabaseSQLAndSettings(t *testing.T) {
	addr := start(t)
	db, err := sql.Open("pgx", connString(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("SET TIME ZONE 'Asia/Kolkata'"); err != nil {
		t.Fatal(err)
	}
	var tz, shown string
	if err := db.QueryRow("SHOW timezone").Scan(&tz); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow("SELECT '2024-01-01 00:00:00+00'::timestamptz::text").Scan(&shown); err != nil {
		t.Fatal(err)
	}
	if tz != "Asia/Kolkata" || shown != "2024-01-01 05:30:00+05:30" {
		t.Fatalf("time zone %q, timestamptz as text %q", tz, shown)
	}
	rows, err := db.Query("VALUES (1, 'a'), (2, NULL)")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var got []string
	for rows.Next() {
		var n int
		var s sql.NullString
		if err := rows.Scan(&n, &s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s.String)
	}
	if len(got) != 2 || got[0] != "a" || got[1] != "" {
		t.Fatalf("rows %v", got)
	}
}

func TestUnknownDatabaseIsRefused(t *testing.T) {
	addr := start(t)
	host, port, _ := net.SplitHostPort(addr)
	_, err := pgx.Connect(context.Background(), "postgres://root@"+host+":"+port+"/nope?sslmode=disable")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "3D000" {
		t.Fatalf("connect to an unknown database: %v", err)
	}
}

// TestPsql drives the real psql client through the simple query protocol,
// when it is installed.
func TestPsql(t *testing.T) {
	psql, err := exec.LookPath("psql")
	if err != nil {
		t.Skip("psql is not installed")
	}
	addr := start(t)
	host, port, _ := net.SplitHostPort(addr)
	out, err := exec.Command(psql, "-X", "-A", "-t", "-h", host, "-p", port, "-U", "root", "-d", "dev",
		"-c", "SELECT 40 + 2 AS answer, 'x' || 'y'; SELECT 1/0").CombinedOutput()
	text := string(out)
	if !strings.Contains(text, "42|xy") || !strings.Contains(text, "division by zero") {
		t.Fatalf("psql output:\n%s (err %v)", text, err)
	}
}
