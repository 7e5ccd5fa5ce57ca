package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// psql runs Debian's psql binary against a child strata and returns its
// output; it fails the test when psql is missing.
func psql(t *testing.T, addr, script string) string {
	t.Helper()
	bin, err := exec.LookPath("psql")
	if err != nil {
		t.Fatalf("psql is not installed (apt-get install postgresql-client): %v", err)
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-X", "-h", host, "-p", port, "-U", "root", "-d", "dev", "-v", "VERBOSITY=verbose")
	cmd.Stdin = strings.NewReader(script)
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// TestStartWithPsqlAndPgx drives `strata start`, run as a child process,
// with the real psql binary and with pgx: DDL, inserts, a materialized
// view, a consistent join query, \dt, \d view, an error with its SQLSTATE
// and a long query cancelled by the client.
func TestStartWithPsqlAndPgx(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	c := startChild(t, t.TempDir(), freePort(t), freePort(t))
	conn := c.connect(t)
	defer conn.Close(context.Background())
	out := psql(t, c.wire, `
CREATE TABLE customers (id INT PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE orders (id BIGINT PRIMARY KEY, customer INT NOT NULL, amount NUMERIC(10,2));
CREATE MATERIALIZED VIEW revenue AS
  SELECT c.name, sum(o.amount) AS total, count(*) AS orders
  FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.name;
INSERT INTO customers VALUES (1, 'ann'), (2, 'bob');
INSERT INTO orders VALUES (10, 1, 5.50), (11, 2, 12), (12, 1, 7.25);
SELECT name, total, orders FROM revenue ORDER BY name;
SELECT r.name, r.total = s.total AS consistent
  FROM revenue r JOIN (SELECT c.name, sum(o.amount) AS total FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.name) s
  ON r.name = s.name ORDER BY r.name;
\dt
\d revenue
SELECT nope FROM orders;
`)
	for _, want := range []string{
		"CREATE MATERIALIZED VIEW",
		"INSERT 0 3",
		" ann  | 12.75 |      2",
		" bob  | 12.00 |      1",
		" ann  | t",
		" bob  | t",
		" public | customers | table | strata",
		" public | orders    | table | strata",
		`Materialized view "public.revenue"`,
		" total  | numeric |",
		`"revenue_key" UNIQUE CONSTRAINT, btree (name) NULLS NOT DISTINCT`,
		"ERROR:  42703:",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("psql output lacks %q:\n%s", want, out)
		}
	}
	// A long query cancelled by the client: a cross join of 8000-row
	// tables (5e11 rows) stops when the context ends.
	var vals []string
	for i := 0; i < 8000; i++ {
		vals = append(vals, fmt.Sprintf("(%d, %d, 1)", 1000+i, 1+i%2))
	}
	if _, err := conn.Exec(context.Background(), "INSERT INTO orders VALUES "+strings.Join(vals, ", ")); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := conn.Exec(ctx, "SELECT count(*) FROM orders a, orders b, orders c WHERE a.amount + b.amount + c.amount > 0")
	var pe *pgconn.PgError
	if err == nil {
		t.Fatal("a cross join of 5e11 rows finished")
	}
	if errors.As(err, &pe) && pe.Code != "57014" {
		t.Fatalf("cancelled query: %v, want SQLSTATE 57014", err)
	}
	if d := time.Since(start); d > 20*time.Second {
		t.Fatalf("the cancelled query took %v to stop", d)
	}
	// The server still answers.
	conn2 := c.connect(t)
	defer conn2.Close(context.Background())
	var n int64
	if err := conn2.QueryRow(context.Background(), "SELECT count(*) FROM orders").Scan(&n); err != nil || n != 8003 {
		t.Fatalf("after the cancel: %d orders, %v", n, err)
	}
}

// TestStartWithPassword runs `strata start --password-file` and checks
// that a client with the right password gets in (SCRAM-SHA-256) and one
// with a wrong password is refused with 28P01.
func TestStartWithPassword(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	pw := filepath.Join(dir, "passwords")
	if err := os.WriteFile(pw, []byte("# users\nalice:s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wire, httpAddr := freePort(t), freePort(t)
	c := &child{wire: wire, http: httpAddr}
	c.cmd = exec.Command(os.Args[0], "start", "--data", filepath.Join(dir, "data"), "--listen", wire, "--http", httpAddr, "--password-file", pw)
	c.cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN=1")
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.cmd.Process.Kill(); _ = c.cmd.Wait() })
	ctx := context.Background()
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, "postgres://alice:s3cret@"+wire+"/dev?sslmode=disable")
		if err == nil {
			var one int
			if err := conn.QueryRow(ctx, "SELECT 1").Scan(&one); err != nil || one != 1 {
				t.Fatalf("SELECT 1: %d, %v", one, err)
			}
			conn.Close(ctx)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("connect with the right password: %v\n%s", err, c.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	_, err := pgx.Connect(ctx, "postgres://alice:wrong@"+wire+"/dev?sslmode=disable")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "28P01" {
		t.Fatalf("a wrong password: %v, want 28P01", err)
	}
}
