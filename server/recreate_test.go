package server

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// columnNames runs q and returns its result's column names joined by "|".
func columnNames(t *testing.T, c *pgx.Conn, q string) string {
	t.Helper()
	rows, err := c.Query(context.Background(), q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var names []string
	for _, f := range rows.FieldDescriptions() {
		names = append(names, f.Name)
	}
	for rows.Next() {
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(names, "|")
}

// TestRecreatedTableReadsItsOwnSchema: a table dropped and created again
// under its name, with other columns, is read with its new columns at
// once, empty or not, also when the drop cascaded to a view; the old
// table's loaded rows never answer for it ([cache-identity] in
// sql/olap).
func TestRecreatedTableReadsItsOwnSchema(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE q3 (id INT PRIMARY KEY, v TEXT)")
	if got := columnNames(t, c, "SELECT * FROM q3"); got != "id|v" {
		t.Fatalf("first table's columns: %s", got)
	}
	exec(t, c, "DROP TABLE q3")
	exec(t, c, "CREATE TABLE q3 (id INT PRIMARY KEY, w INT)")
	if got := columnNames(t, c, "SELECT * FROM q3"); got != "id|w" {
		t.Fatalf("re-created table's columns: %s, want id|w", got)
	}
	wantRows(t, c, "SELECT w FROM q3", "")
	exec(t, c, "INSERT INTO q3 VALUES (1, 10)")
	wantRows(t, c, "SELECT id, w FROM q3", "1|10")

	// With rows and a view that the drop cascades to.
	exec(t, c, "CREATE TABLE r4 (id INT PRIMARY KEY, v TEXT)")
	exec(t, c, "INSERT INTO r4 VALUES (1, 'a')")
	exec(t, c, "CREATE MATERIALIZED VIEW r4v AS SELECT id, v FROM r4")
	wantRows(t, c, "SELECT * FROM r4", "1|a")
	exec(t, c, "DROP TABLE r4 CASCADE")
	exec(t, c, "CREATE TABLE r4 (id INT PRIMARY KEY, w INT)")
	if got := columnNames(t, c, "SELECT * FROM r4"); got != "id|w" {
		t.Fatalf("re-created table's columns after CASCADE: %s, want id|w", got)
	}
	wantRows(t, c, "SELECT * FROM r4", "")
	exec(t, c, "INSERT INTO r4 VALUES (2, 20)")
	wantRows(t, c, "SELECT * FROM r4", "2|20")
}
