package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestShowAnswersAsPostgres: the SHOWs drivers and tools send answer with
// PostgreSQL's values and column names, follow the session's SETs, and an
// unknown parameter is still 42704.
func TestShowAnswersAsPostgres(t *testing.T) {
	_, c := startConn(t)
	show := func(name, wantCol, want string) {
		t.Helper()
		rows, err := c.Query(context.Background(), "SHOW "+name, pgx.QueryExecModeSimpleProtocol)
		if err != nil {
			t.Fatalf("SHOW %s: %v", name, err)
		}
		defer rows.Close()
		if fd := rows.FieldDescriptions(); len(fd) != 1 || fd[0].Name != wantCol {
			t.Errorf("SHOW %s: columns %v, want %s", name, fd, wantCol)
		}
		var got []string
		for rows.Next() {
			got = append(got, string(rows.RawValues()[0]))
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("SHOW %s: %v", name, err)
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("SHOW %s = %q, want %q", name, got, want)
		}
	}
	show("default_transaction_read_only", "default_transaction_read_only", "off")
	show("transaction_read_only", "transaction_read_only", "off")
	show("server_version_num", "server_version_num", "150000")
	show("standard_conforming_strings", "standard_conforming_strings", "on")
	show("integer_datetimes", "integer_datetimes", "on")
	show("DateStyle", "DateStyle", "ISO, MDY")
	show("TimeZone", "TimeZone", "UTC")
	show("search_path", "search_path", `"$user", public`)
	show("client_encoding", "client_encoding", "UTF8")
	show("transaction_isolation", "transaction_isolation", "read committed")

	exec(t, c, "SET default_transaction_read_only = on")
	show("default_transaction_read_only", "default_transaction_read_only", "on")
	show("transaction_read_only", "transaction_read_only", "on")
	exec(t, c, "BEGIN READ WRITE")
	show("transaction_read_only", "transaction_read_only", "off")
	exec(t, c, "COMMIT")
	exec(t, c, "SET default_transaction_read_only = off")
	exec(t, c, "BEGIN READ ONLY")
	show("transaction_read_only", "transaction_read_only", "on")
	exec(t, c, "COMMIT")
	exec(t, c, "SET TIME ZONE 'Europe/Paris'")
	show("timezone", "TimeZone", "Europe/Paris")
	exec(t, c, "SET application_name = 'report'")
	show("application_name", "application_name", "report")
	exec(t, c, "RESET application_name")
	show("application_name", "application_name", "")

	if _, err := c.Exec(context.Background(), "SHOW no_such_parameter", pgx.QueryExecModeSimpleProtocol); err == nil || !strings.Contains(err.Error(), "42704") {
		t.Errorf("SHOW of an unknown parameter: %v", err)
	}
	// current_setting() gives what SHOW gives.
	if got := rowsText(t, c, "SELECT current_setting('server_version_num'), current_setting('TimeZone'), current_setting('transaction_read_only'), current_setting('no_such', true) IS NULL"); got != "150000|Europe/Paris|off|t" {
		t.Errorf("current_setting: %q", got)
	}
	if _, err := c.Exec(context.Background(), "SELECT current_setting('no_such')", pgx.QueryExecModeSimpleProtocol); err == nil || !strings.Contains(err.Error(), "42704") {
		t.Errorf("current_setting of an unknown parameter: %v", err)
	}
}

// TestShowJobsNumbers: SHOW JOBS gives last_checkpoint and restarts as
// numbers (bigint), as strata_catalog.jobs does, in both protocols.
func TestShowJobsNumbers(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE sj (k INT PRIMARY KEY)")
	exec(t, c, "INSERT INTO sj VALUES (1)")
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeDescribeExec} {
		var name string
		var checkpoint, restarts int64
		waitFor(t, 30*time.Second, func() (bool, string) {
			if err := c.QueryRow(context.Background(), "SHOW JOBS", mode).Scan(&name, new(string), new(string), new(string), new(string), &checkpoint, &restarts); err != nil {
				t.Fatalf("SHOW JOBS (mode %v): %v", mode, err)
			}
			return checkpoint >= 1, fmt.Sprintf("last_checkpoint %d", checkpoint)
		})
		rows, err := c.Query(context.Background(), "SHOW JOBS", mode)
		if err != nil {
			t.Fatal(err)
		}
		fd := rows.FieldDescriptions()
		rows.Close()
		if name != "dml-dev-sj" || checkpoint < 1 || restarts != 0 || fd[5].DataTypeOID != 20 || fd[6].DataTypeOID != 20 {
			t.Fatalf("SHOW JOBS (mode %v): %s, checkpoint %d, restarts %d, types %d %d; want dml-dev-sj, a checkpoint, 0 restarts, bigint columns",
				mode, name, checkpoint, restarts, fd[5].DataTypeOID, fd[6].DataTypeOID)
		}
	}
}

// TestShowJobsKinds: SHOW JOBS and strata_catalog.jobs name each job's
// kind: a table's DML job is ingest, a view's job view, and the job of
// CREATE SINK ... INTO and of a sink to an external system sink.
func TestShowJobsKinds(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE ka (k INT PRIMARY KEY, v INT)")
	exec(t, c, "CREATE TABLE kb (k INT PRIMARY KEY, v INT)")
	exec(t, c, "CREATE MATERIALIZED VIEW kv AS SELECT k, v FROM ka")
	exec(t, c, "CREATE SINK kin INTO kb AS SELECT k, v FROM ka")
	exec(t, c, "CREATE SINK kout FROM kv WITH (connector = 'file', path = '"+t.TempDir()+"', format = 'csv')")
	want := "dml-dev-ka|ingest\nsink-dev-kin|sink\nsink-dev-kout|sink\nview-dev-kv|view"
	rows, err := c.Query(context.Background(), "SHOW JOBS", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(v[0])+"|"+fmt.Sprint(v[1]))
	}
	rows.Close()
	if strings.Join(got, "\n") != want {
		t.Fatalf("SHOW JOBS name|kind:\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
	if got := rowsText(t, c, "SELECT name, kind FROM strata_catalog.jobs ORDER BY name"); got != want {
		t.Fatalf("strata_catalog.jobs name, kind = %q, want %q", got, want)
	}
}
