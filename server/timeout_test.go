package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestStatementTimeout: SET statement_timeout cancels a statement that
// runs longer with 57014, leaves the session usable, and RESET turns it
// off; bad values are refused.
func TestStatementTimeout(t *testing.T) {
	s := startTest(t, t.TempDir())
	defer s.Close()
	c := connect(t, s)
	defer c.Close(context.Background())
	ctx := context.Background()
	exec(t, c, "CREATE TABLE big (id INT PRIMARY KEY)")
	var vals []string
	for i := 1; i <= 3000; i++ {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	exec(t, c, "INSERT INTO big VALUES "+strings.Join(vals, ", "))
	exec(t, c, "SET statement_timeout = '200ms'")
	if got := rowsText(t, c, "SHOW statement_timeout"); got != "200ms" {
		t.Fatalf("SHOW statement_timeout: %q", got)
	}
	start := time.Now()
	_, err := c.Exec(ctx, "SELECT count(*) FROM big a, big b, big c WHERE a.id + b.id + c.id = -1")
	if err == nil || !strings.Contains(err.Error(), "57014") || !strings.Contains(err.Error(), "statement timeout") {
		t.Fatalf("a long statement under a 200ms timeout: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the timeout took %v to cancel the statement", d)
	}
	if got := rowsText(t, c, "SELECT count(*) FROM big"); got != "3000" {
		t.Fatalf("after the timeout: %q", got)
	}
	// A SELECT over generate_series (run by the OLAP engine) and one over
	// VALUES lists (run by the batch executor) stop close to the timeout
	// too, and the session stays usable.
	var many []string
	for i := 1; i <= 30000; i++ {
		many = append(many, fmt.Sprintf("(%d)", i))
	}
	for _, q := range []string{
		"SELECT sum(a.x * b.x % 7) FROM generate_series(1, 1000000) a(x), generate_series(1, 1000000) b(x)",
		"SELECT count(*) FROM (VALUES " + strings.Join(many, ", ") + ") a(x), (VALUES " + strings.Join(many, ", ") + ") b(x) WHERE a.x + b.x = -1",
	} {
		start := time.Now()
		_, err := c.Exec(ctx, q)
		if err == nil || !strings.Contains(err.Error(), "57014") || !strings.Contains(err.Error(), "canceling statement due to statement timeout") {
			t.Fatalf("%.60s... under a 200ms timeout: %v", q, err)
		}
		if d := time.Since(start); d > 15*time.Second {
			t.Fatalf("the timeout took %v to cancel %.60s...", d, q)
		}
		if got := rowsText(t, c, "SELECT 1"); got != "1" {
			t.Fatalf("after the timeout: %q", got)
		}
	}
	// Loading the tables a SELECT reads, before it runs, counts against
	// the timeout too: a first read of a 500k-row table under a 50ms
	// timeout is canceled.
	exec(t, c, "SET statement_timeout = 0")
	exec(t, c, "CREATE TABLE wide (id INT PRIMARY KEY, s TEXT)")
	exec(t, c, "INSERT INTO wide SELECT g, 'row ' || g FROM generate_series(1, 500000) g")
	exec(t, c, "SET statement_timeout = '50ms'")
	if _, err := c.Exec(ctx, "SELECT count(*) FROM wide"); err == nil || !strings.Contains(err.Error(), "57014") || !strings.Contains(err.Error(), "statement timeout") {
		t.Fatalf("a first read of a large table under a 50ms timeout: %v", err)
	}
	exec(t, c, "RESET statement_timeout")
	if got := rowsText(t, c, "SHOW statement_timeout"); got != "0" {
		t.Fatalf("SHOW statement_timeout after RESET: %q", got)
	}
	if _, err := c.Exec(ctx, "SET statement_timeout = 'soon'"); err == nil || !strings.Contains(err.Error(), "22023") {
		t.Fatalf("a bad statement_timeout: %v", err)
	}
}

// TestGenerateSeries: generate_series over integers works without a
// table, in INSERT ... SELECT and joined with a table, as in Postgres.
func TestGenerateSeries(t *testing.T) {
	s := startTest(t, t.TempDir())
	defer s.Close()
	c := connect(t, s)
	defer c.Close(context.Background())
	if got := rowsText(t, c, "SELECT * FROM generate_series(1, 5, 2)"); got != "1\n3\n5" {
		t.Fatalf("generate_series(1, 5, 2): %q", got)
	}
	if got := rowsText(t, c, "SELECT sum(i), count(*) FROM generate_series(10, 1, -1) AS g(i)"); got != "55|10" {
		t.Fatalf("descending series: %q", got)
	}
	// No bound on the rows of a SELECT's series; integer arguments make
	// integers, as in PostgreSQL, and an alias names the column.
	if got := rowsText(t, c, "SELECT count(*), sum(g) FROM generate_series(1, 3000000) g"); got != "3000000|4500001500000" {
		t.Fatalf("a series of 3M rows: %q", got)
	}
	if got := rowsText(t, c, "SELECT pg_typeof(g), g FROM generate_series(1, 2) AS g"); got != "integer|1\ninteger|2" {
		t.Fatalf("the series' type: %q", got)
	}
	if got := rowsText(t, c, "SELECT pg_typeof(g) FROM generate_series(1, 3000000000, 2000000000) g"); got != "bigint\nbigint" {
		t.Fatalf("a bigint series' type: %q", got)
	}
	exec(t, c, "CREATE TABLE sq (n INT PRIMARY KEY, sq BIGINT)")
	exec(t, c, "INSERT INTO sq SELECT i, i * i FROM generate_series(1, 1000) AS g(i)")
	if got := rowsText(t, c, "SELECT count(*), sum(sq) FROM sq"); got != "1000|333833500" {
		t.Fatalf("INSERT ... SELECT from generate_series: %q", got)
	}
	if got := rowsText(t, c, "SELECT count(*) FROM sq JOIN generate_series(1, 10) AS g(i) ON sq.n = g.i"); got != "10" {
		t.Fatalf("a table joined with generate_series: %q", got)
	}
	if _, err := c.Exec(context.Background(), "SELECT * FROM generate_series(1, 5, 0)"); err == nil || !strings.Contains(err.Error(), "22023") {
		t.Fatalf("a zero step: %v", err)
	}
	// INSERT takes at most 1M rows from a series, and says how to do more.
	_, err := c.Exec(context.Background(), "INSERT INTO sq SELECT i, i FROM generate_series(1, 2000000) AS g(i)")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "54000" || !strings.Contains(pe.Hint, "insert the series in parts") {
		t.Fatalf("INSERT of a series of 2M rows: %v", err)
	}
}

// TestSessionFunctions: the functions tools call to learn about the
// session answer as Postgres's do.
func TestSessionFunctions(t *testing.T) {
	s := startTest(t, t.TempDir())
	defer s.Close()
	c := connect(t, s)
	defer c.Close(context.Background())
	got := rowsText(t, c, "SELECT version(), current_database(), current_schema(), current_user, session_user, current_schema")
	if got != "PostgreSQL 15.0 (Strata)|dev|public|root|root|public" {
		t.Fatalf("session functions: %q", got)
	}
}
