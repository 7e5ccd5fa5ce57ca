package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestDDLSurvivesKill9 runs `strata start` as a child process, creates and
// drops materialized views and tables one statement after another, kills
// the process with SIGKILL in the middle of them, starts it again and
// checks the engine's invariant create-atomic: every table and view has
// its writing job (a view whose job was lost would never fill), every
// view holds what its query gives, and the statement in flight at the
// kill can be run again.
func TestDDLSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	wire, httpAddr := freePort(t), freePort(t)
	c := startChild(t, dir, wire, httpAddr)
	conn := c.connect(t)
	ctx := context.Background()
	execAll(ctx, t, conn,
		"CREATE TABLE t (k BIGINT PRIMARY KEY, v BIGINT)",
		"INSERT INTO t VALUES (1, 10), (2, 20), (3, 30), (4, 40), (5, 50)",
	)
	stmt := func(i int64) string {
		switch i % 4 {
		case 0:
			return fmt.Sprintf("DROP MATERIALIZED VIEW v%d", i-2)
		case 1:
			return fmt.Sprintf("CREATE TABLE t%d (k BIGINT PRIMARY KEY, v BIGINT)", i)
		}
		return fmt.Sprintf("CREATE MATERIALIZED VIEW v%d AS SELECT k %% 2 AS p, sum(v) AS s, count(*) AS n FROM t GROUP BY k %% 2", i)
	}
	last := writeUntilKilled(ctx, t, c, conn, 12, stmt)

	c2 := startChild(t, dir, wire, httpAddr)
	conn2 := c2.connect(t)
	defer conn2.Close(ctx)
	rows, err := conn2.Query(ctx, "SELECT name, kind, writer FROM strata_catalog.tables ORDER BY name")
	if err != nil {
		t.Fatal(err)
	}
	var views []string
	for rows.Next() {
		var name, kind, writer string
		if err := rows.Scan(&name, &kind, &writer); err != nil {
			t.Fatal(err)
		}
		if writer == "" {
			t.Fatalf("after kill -9 at statement %d (%s): %s %s has no writing job", last+1, stmt(last+1), kind, name)
		}
		if kind == "view" {
			views = append(views, name)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	// The statement in flight may or may not have been applied; run
	// again, it makes what it names, or finds it there (or gone).
	if _, err := conn2.Exec(ctx, stmt(last+1)); err != nil && !strings.Contains(err.Error(), "already exists") && !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("%s again after the restart: %v", stmt(last+1), err)
	}
	if n := (last + 1) % 4; n == 2 || n == 3 {
		views = append(views, fmt.Sprintf("v%d", last+1))
	}
	const want = "0|60|2,1|90|3"
	for _, v := range views {
		deadline := time.Now().Add(30 * time.Second)
		for {
			got := queryText(ctx, t, conn2, "SELECT p, s, n FROM "+v+" ORDER BY p")
			if got == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("view %s after the restart = %q, want %q\n%s", v, got, want, c2.out.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// queryText runs q and renders its rows as "a|b,c|d" (values as text).
func queryText(ctx context.Context, t *testing.T, conn *pgx.Conn, q string) string {
	t.Helper()
	rows, err := conn.Query(ctx, q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return "error: " + err.Error()
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var parts []string
		for _, v := range rows.RawValues() {
			parts = append(parts, string(v))
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		return "error: " + err.Error()
	}
	return strings.Join(out, ",")
}
