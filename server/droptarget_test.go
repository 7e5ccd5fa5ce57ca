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

// TestDropSinkTarget: a table a sink writes is not dropped from under the
// sink: DROP TABLE is refused (2BP01) naming the sink, and DROP TABLE
// CASCADE drops the sink and then the table.
func TestDropSinkTarget(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE src (id INT PRIMARY KEY, v INT)")
	exec(t, c, "CREATE TABLE tgt (id INT PRIMARY KEY, v INT)")
	exec(t, c, "CREATE SINK s1 INTO tgt AS SELECT id, v FROM src")
	wantErr(t, c, "DROP TABLE tgt", "2BP01", "sink s1")
	wantRows(t, c, "SHOW SINKS", "s1|tgt")
	exec(t, c, "DROP TABLE tgt CASCADE")
	wantRows(t, c, "SHOW SINKS", "")
	wantRows(t, c, "SHOW TABLES", "src")
}

// TestDropViewOfMaterializedView: as in Postgres, DROP VIEW does not drop
// a materialized view (42809, its hint naming DROP MATERIALIZED VIEW), and DROP
// VIEW IF EXISTS of nothing is fine.
func TestDropViewOfMaterializedView(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE base (id INT PRIMARY KEY)")
	exec(t, c, "CREATE MATERIALIZED VIEW mv AS SELECT id FROM base")
	_, err := c.Exec(context.Background(), "DROP VIEW mv")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42809" || pe.Message != `"mv" is not a view` || pe.Hint != "Use DROP MATERIALIZED VIEW to remove a materialized view." {
		t.Fatalf("DROP VIEW mv: %v, want 42809 with the hint to use DROP MATERIALIZED VIEW", err)
	}
	exec(t, c, "DROP VIEW IF EXISTS nothing")
	wantRows(t, c, "SHOW MATERIALIZED VIEWS", "mv")
	exec(t, c, "DROP MATERIALIZED VIEW mv")
}

// TestSinkIntoFillsAndFailingWriter: CREATE SINK ... INTO returns once
// the target holds the query's history, seen by every session; when the
// sink then keeps failing (a value too long for the target), a read in
// the writing session that waits for its write ends with an error naming
// the sink's job instead of waiting forever.
func TestSinkIntoFillsAndFailingWriter(t *testing.T) {
	s, c := startConn(t)
	exec(t, c, "CREATE TABLE users (id INT PRIMARY KEY, email TEXT NOT NULL, name TEXT)")
	exec(t, c, "CREATE TABLE by_email (email TEXT PRIMARY KEY, id INT, name VARCHAR(5))")
	exec(t, c, "INSERT INTO users VALUES (1, 'a@x', 'ann'), (2, 'b@x', 'bob')")
	exec(t, c, "INSERT INTO by_email VALUES ('old', 0, 'x')")
	exec(t, c, "CREATE SINK k INTO by_email AS SELECT email, id, name FROM users")
	c2 := connect(t, s)
	defer c2.Close(context.Background())
	wantRows(t, c2, "SELECT email, id FROM by_email ORDER BY email", "a@x|1\nb@x|2\nold|0")
	exec(t, c, "INSERT INTO users VALUES (3, 'd@x', 'longname')")
	_, err := c.Exec(context.Background(), "SELECT count(*) FROM by_email")
	if err == nil || !strings.Contains(err.Error(), "55000") || !strings.Contains(err.Error(), "sink-dev-k") {
		t.Fatalf("a read waiting on a failing sink: %v", err)
	}
}

// TestReadWaitsEndWhenUpstreamViewFails: a read of a view whose input
// view keeps failing (a division by zero) ends with 55000 naming the
// failing job, not only a read of the failing view itself.
func TestReadWaitsEndWhenUpstreamViewFails(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE d2 (k INT PRIMARY KEY, name TEXT, n INT)")
	exec(t, c, "INSERT INTO d2 VALUES (1, 'a', 1)")
	exec(t, c, "CREATE MATERIALIZED VIEW vdiv AS SELECT k, 10 / n AS x FROM d2")
	exec(t, c, "CREATE MATERIALIZED VIEW vdiv2 AS SELECT sum(x) AS s FROM vdiv")
	exec(t, c, "INSERT INTO d2 VALUES (2, 'b', 0)")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.Exec(ctx, "SELECT * FROM vdiv2")
	if err == nil || !strings.Contains(err.Error(), "55000") || !strings.Contains(err.Error(), "view-dev-vdiv ") || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("a read of vdiv2 while vdiv's job keeps failing: %v", err)
	}
	// The error says what ends the failures.
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || !strings.Contains(pe.Hint, "DROP MATERIALIZED VIEW vdiv,") {
		t.Fatalf("the hint of a read while vdiv's job keeps failing: %v", err)
	}
}

// TestFailedCreateLeavesNothing: a CREATE MATERIALIZED VIEW or CREATE
// SINK INTO whose job keeps failing before its first epoch reports 55000
// and leaves no view, sink or job behind: the name can be used again and
// the sink's target takes INSERTs again.
func TestFailedCreateLeavesNothing(t *testing.T) {
	_, c := startConn(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE d2 (k INT PRIMARY KEY, name TEXT, n INT)")
	exec(t, c, "INSERT INTO d2 VALUES (1, 'longname', 1)")
	_, err := c.Exec(ctx, "CREATE MATERIALIZED VIEW vfail2 AS SELECT k, 10 / (n - n) AS x FROM d2")
	if err == nil || !strings.Contains(err.Error(), "55000") {
		t.Fatalf("a view whose job keeps failing: %v", err)
	}
	if pe := (*pgconn.PgError)(nil); !errors.As(err, &pe) || !strings.Contains(pe.Hint, "was not created") {
		t.Fatalf("the hint of a failed CREATE: %v", err)
	}
	wantRows(t, c, "SHOW MATERIALIZED VIEWS", "")
	wantRows(t, c, "SELECT count(*) FROM strata_catalog.jobs WHERE name LIKE 'view-%'", "0")
	exec(t, c, "CREATE MATERIALIZED VIEW vfail2 AS SELECT k, 10 / n AS x FROM d2")
	wantRows(t, c, "SELECT k, x FROM vfail2", "1|10")

	exec(t, c, "CREATE TABLE short (k INT PRIMARY KEY, name VARCHAR(3))")
	_, err = c.Exec(ctx, "CREATE SINK ks INTO short AS SELECT k, name FROM d2")
	if err == nil || !strings.Contains(err.Error(), "55000") {
		t.Fatalf("a sink whose job keeps failing: %v", err)
	}
	wantRows(t, c, "SHOW SINKS", "")
	exec(t, c, "INSERT INTO short VALUES (7, 'abc')")
	wantRows(t, c, "SELECT k, name FROM short", "7|abc")
}

// TestDropSinkWhileItCatchesUp: DROP SINK from another session while
// CREATE SINK INTO is still catching up over its input's history stops
// the sink at once, and the CREATE reports 57014 rather than success.
func TestDropSinkWhileItCatchesUp(t *testing.T) {
	s, c := startConn(t)
	c2 := connect(t, s)
	defer c2.Close(context.Background())
	exec(t, c, "CREATE TABLE hist (id INT PRIMARY KEY, v INT)")
	exec(t, c, "CREATE TABLE agg (v INT PRIMARY KEY, n BIGINT)")
	for i := range 30 {
		exec(t, c, fmt.Sprintf("INSERT INTO hist SELECT g, g %% 100 FROM generate_series(%d, %d) g", i*10000+1, (i+1)*10000))
	}
	for attempt := range 3 {
		name := fmt.Sprintf("catchup%d", attempt)
		done := make(chan error, 1)
		go func() {
			_, err := c.Exec(context.Background(), "CREATE SINK "+name+" INTO agg AS SELECT id % 1000 AS v, count(*) AS n FROM hist GROUP BY id % 1000")
			done <- err
		}()
		for rowsText(t, c2, "SHOW SINKS") == "" {
			select {
			case err := <-done:
				t.Fatalf("CREATE SINK ended before it was listed: %v", err)
			default:
			}
			time.Sleep(2 * time.Millisecond)
		}
		select {
		case err := <-done:
			// It caught up before the DROP could run: drop it and try
			// again with the next name.
			if err != nil {
				t.Fatal(err)
			}
			exec(t, c2, "DROP SINK "+name)
			continue
		default:
		}
		exec(t, c2, "DROP SINK "+name)
		err := <-done
		if err == nil || !strings.Contains(err.Error(), "57014") || !strings.Contains(err.Error(), "dropped before it wrote its first epoch") {
			t.Fatalf("CREATE SINK whose sink was dropped while it caught up: %v", err)
		}
		wantRows(t, c2, "SHOW SINKS", "")
		return
	}
	t.Fatal("every CREATE SINK caught up before the DROP ran")
}
