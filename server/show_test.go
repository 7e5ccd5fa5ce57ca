package server

import (
	"context"
	"strings"
	"testing"

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
