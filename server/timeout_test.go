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
	_, c := startConn(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE big (id INT PRIMARY KEY)")
	var vals []string
	for i := 1; i <= 3000; i++ {
		vals = append(vals, fmt.Sprintf("(%d)", i))
	}
	exec(t, c, "INSERT INTO big VALUES "+strings.Join(vals, ", "))
	exec(t, c, "SET statement_timeout = '200ms'")
	wantRows(t, c, "SHOW statement_timeout", "200ms")
	start := time.Now()
	_, err := c.Exec(ctx, "SELECT count(*) FROM big a, big b, big c WHERE a.id + b.id + c.id = -1")
	if err == nil || !strings.Contains(err.Error(), "57014") || !strings.Contains(err.Error(), "statement timeout") {
		t.Fatalf("a long statement under a 200ms timeout: %v", err)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("the timeout took %v to cancel the statement", d)
	}
	wantRows(t, c, "SELECT count(*) FROM big", "3000")
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
		wantRows(t, c, "SELECT 1", "1")
	}
	// Loading the tables a SELECT reads, before it runs, counts against
	// the timeout too: a first read of a 500k-row table under a 50ms
	// timeout is canceled.
	exec(t, c, "SET statement_timeout = 0")
	exec(t, c, "CREATE TABLE wide (id INT PRIMARY KEY, s TEXT)")
	exec(t, c, "INSERT INTO wide SELECT g, 'row ' || g FROM generate_series(1, 500000) g")
	exec(t, c, "SET statement_timeout = '50ms'")
	wantErr(t, c, "SELECT count(*) FROM wide", "57014", "statement timeout")
	exec(t, c, "RESET statement_timeout")
	wantRows(t, c, "SHOW statement_timeout", "0")
	wantErr(t, c, "SET statement_timeout = 'soon'", "22023")
}

// TestGenerateSeries: generate_series over integers works without a
// table, in INSERT ... SELECT and joined with a table, as in Postgres.
func TestGenerateSeries(t *testing.T) {
	_, c := startConn(t)
	wantRows(t, c, "SELECT * FROM generate_series(1, 5, 2)", "1\n3\n5")
	wantRows(t, c, "SELECT sum(i), count(*) FROM generate_series(10, 1, -1) AS g(i)", "55|10")
	// No bound on the rows of a SELECT's series; integer arguments make
	// integers, as in PostgreSQL, and an alias names the column.
	wantRows(t, c, "SELECT count(*), sum(g) FROM generate_series(1, 3000000) g", "3000000|4500001500000")
	wantRows(t, c, "SELECT pg_typeof(g), g FROM generate_series(1, 2) AS g", "integer|1\ninteger|2")
	wantRows(t, c, "SELECT pg_typeof(g) FROM generate_series(1, 3000000000, 2000000000) g", "bigint\nbigint")
	exec(t, c, "CREATE TABLE sq (n INT PRIMARY KEY, sq BIGINT)")
	exec(t, c, "INSERT INTO sq SELECT i, i * i FROM generate_series(1, 1000) AS g(i)")
	wantRows(t, c, "SELECT count(*), sum(sq) FROM sq", "1000|333833500")
	wantRows(t, c, "SELECT count(*) FROM sq JOIN generate_series(1, 10) AS g(i) ON sq.n = g.i", "10")
	wantErr(t, c, "SELECT * FROM generate_series(1, 5, 0)", "22023")
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
	_, c := startConn(t)
	got := rowsText(t, c, "SELECT version(), current_database(), current_schema(), current_user, session_user, current_schema")
	if got != "PostgreSQL 15.0 (Strata)|dev|public|root|root|public" {
		t.Fatalf("session functions: %q", got)
	}
}
