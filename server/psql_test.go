package server

import (
	"context"
	"errors"
	"net"
	osexec "os/exec"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/internal/pgtest"
)

// TestPsqlCommands runs Debian's psql against the server: \dx lists no
// extensions, \d strata_catalog.tables describes the system table while
// \dt and \d NAME leave strata_catalog out (it is not on the search
// path), as PostgreSQL 15 prints them.
func TestPsqlCommands(t *testing.T) {
	psql, err := osexec.LookPath("psql")
	if err != nil {
		// Debian's postgresql package brings psql, as the CDC tests
		// install it.
		psql = pgtest.Psql(t)
	}
	s, c := startConn(t)
	exec(t, c, "CREATE TABLE ct (id INT PRIMARY KEY, c CHAR(3))")
	host, port, _ := net.SplitHostPort(s.Addr().String())
	run := func(cmd string) string {
		out, err := osexec.Command(psql, "-X", "-h", host, "-p", port, "-U", "root", "-d", "dev", "-c", cmd).CombinedOutput()
		if err != nil {
			t.Fatalf("psql %s: %v\n%s", cmd, err, out)
		}
		var lines []string
		for _, l := range strings.Split(string(out), "\n") {
			lines = append(lines, strings.TrimRight(l, " "))
		}
		return strings.TrimSpace(strings.Join(lines, "\n"))
	}
	for _, tc := range []struct{ cmd, want string }{
		{`\dx`, `List of installed extensions
 Name | Version | Schema | Description
------+---------+--------+-------------
(0 rows)`},
		{`\d strata_catalog.tables`, `View "strata_catalog.tables"
      Column      |  Type  | Collation | Nullable | Default
------------------+--------+-----------+----------+---------
 name             | text   |           |          |
 kind             | text   |           |          |
 committed_epoch  | bigint |           |          |
 freshness_lag_ms | bigint |           |          |
 snapshot_id      | bigint |           |          |
 total_records    | bigint |           |          |
 writer           | text   |           |          |`},
		{`\dt`, `List of relations
 Schema | Name | Type  | Owner
--------+------+-------+--------
 public | ct   | table | strata
(1 row)`},
		{`SELECT pg_sleep(0.01)`, `pg_sleep
----------

(1 row)`},
	} {
		if got := run(tc.cmd); got != tc.want {
			t.Errorf("psql %s:\n%s\nwant\n%s", tc.cmd, got, tc.want)
		}
	}
	out, err := osexec.Command(psql, "-X", "-h", host, "-p", port, "-U", "root", "-d", "dev", "-c", `\d tables`).CombinedOutput()
	if err == nil || !strings.Contains(string(out), `Did not find any relation named "tables".`) {
		t.Errorf(`psql \d tables: %v %s`, err, out)
	}
}

// TestPgSleep: SELECT pg_sleep(s) waits and returns one empty value named
// pg_sleep; a cancel or statement_timeout ends the wait with 57014.
func TestPgSleep(t *testing.T) {
	_, c := startConn(t)
	start := time.Now()
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
		rows, err := c.Query(context.Background(), "SELECT pg_sleep(0.2), 1 AS one", mode)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for rows.Next() {
			vals := rows.RawValues()
			if vals[0] != nil || string(vals[1]) != "1" {
				t.Fatalf("pg_sleep row: %q", vals)
			}
			if f := rows.FieldDescriptions(); f[0].Name != "pg_sleep" {
				t.Fatalf("column %q, want pg_sleep", f[0].Name)
			}
			n++
		}
		if err := rows.Err(); err != nil || n != 1 {
			t.Fatalf("pg_sleep: %d rows, %v", n, err)
		}
	}
	if d := time.Since(start); d < 400*time.Millisecond {
		t.Fatalf("two pg_sleep(0.2) took %v", d)
	}
	exec(t, c, "SET statement_timeout = '100ms'")
	_, err := c.Exec(context.Background(), "SELECT pg_sleep(30)", pgx.QueryExecModeSimpleProtocol)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" || !strings.Contains(pe.Message, "statement timeout") {
		t.Fatalf("pg_sleep past statement_timeout: %v", err)
	}
}

// TestCharColumnsAsPostgres: a CHAR(n) column read by a SELECT over a
// table drops its padding where PostgreSQL does (||, length, upper,
// comparison, casts to text), as PostgreSQL 15 gives for the same query.
func TestCharColumnsAsPostgres(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE ct (id INT PRIMARY KEY, c CHAR(3))")
	exec(t, c, "INSERT INTO ct VALUES (1, 'a'), (2, 'xyz')")
	// PostgreSQL 15: a|1|t|A|aa|qa|a||a||ab and xyz|3|f|XYZ|xyzxyz|qxyz|xyz||xyz||ab.
	got := rowsText(t, c, "SELECT c || 'b', length(c), c = 'a', upper(c), c || c, 'q' || c, c::text || '|', c::varchar || '|', 'a'::char(3) || 'b' FROM ct ORDER BY id")
	if want := "ab|1|t|A|aa|qa|a||a||ab\nxyzb|3|f|XYZ|xyzxyz|qxyz|xyz||xyz||ab"; got != want {
		t.Fatalf("CHAR(3) column:\n%s\nwant\n%s", got, want)
	}
	wantRows(t, c, "SELECT id FROM ct WHERE c = 'a' AND c || '' = 'a'", "1")
}
