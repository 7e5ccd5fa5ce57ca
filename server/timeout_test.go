package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
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
