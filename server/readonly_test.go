package server

import (
	"context"
	"strings"
	"testing"
)

// TestReadOnlyTransactions: a change in a READ ONLY block (BEGIN READ
// ONLY, SET TRANSACTION READ ONLY) or under default_transaction_read_only
// fails with 25006 naming the command and writes nothing; reads work, and
// READ WRITE or COMMIT lift it.
func TestReadOnlyTransactions(t *testing.T) {
	_, c := startConn(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE ro (k INT PRIMARY KEY)")
	refused := func(q, cmd string) {
		t.Helper()
		_, err := c.Exec(ctx, q)
		if err == nil || !strings.Contains(err.Error(), "25006") || !strings.Contains(err.Error(), "cannot execute "+cmd+" in a read-only transaction") {
			t.Fatalf("%s in a read-only transaction: %v", q, err)
		}
	}
	exec(t, c, "BEGIN READ ONLY")
	refused("INSERT INTO ro VALUES (1)", "INSERT")
	refused("DELETE FROM ro", "DELETE")
	refused("CREATE TABLE ro2 (k INT PRIMARY KEY)", "CREATE TABLE")
	wantRows(t, c, "SELECT count(*) FROM ro", "0")
	exec(t, c, "COMMIT")
	exec(t, c, "INSERT INTO ro VALUES (1)")

	exec(t, c, "BEGIN")
	exec(t, c, "SET TRANSACTION READ ONLY")
	refused("UPDATE ro SET k = 2", "UPDATE")
	exec(t, c, "ROLLBACK")

	exec(t, c, "SET default_transaction_read_only = on")
	refused("INSERT INTO ro VALUES (3)", "INSERT")
	exec(t, c, "START TRANSACTION READ WRITE")
	exec(t, c, "INSERT INTO ro VALUES (4)")
	exec(t, c, "COMMIT")
	exec(t, c, "SET default_transaction_read_only = off")
	exec(t, c, "INSERT INTO ro VALUES (5)")
	wantRows(t, c, "SELECT k FROM ro ORDER BY k", "1\n4\n5")
}
