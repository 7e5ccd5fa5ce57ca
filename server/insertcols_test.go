package server

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestInsertLeavesOutTrailingColumns: as in PostgreSQL, an INSERT
// without a column list may give fewer values than the table has
// columns, and the trailing ones take their defaults (NULL), while a NOT
// NULL or key column so left out is a not-null violation (23502) naming
// it; with a column list every listed column needs a value. The two
// count errors carry PostgreSQL's text and position.
func TestInsertLeavesOutTrailingColumns(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE t (k BIGINT, name TEXT, note TEXT)")
	exec(t, c, "CREATE TABLE p (id BIGINT PRIMARY KEY, a TEXT, b BIGINT NOT NULL)")
	exec(t, c, "INSERT INTO t VALUES (4, 'cat')")
	exec(t, c, "INSERT INTO t VALUES (5), (6)")
	exec(t, c, "INSERT INTO t SELECT 7, 'dog'")
	exec(t, c, "INSERT INTO t (note, k) VALUES ('n', 8)")
	wantRows(t, c, "SELECT k, name, note FROM t ORDER BY k", "4|cat|NULL\n5|NULL|NULL\n6|NULL|NULL\n7|dog|NULL\n8|NULL|n")
	exec(t, c, "INSERT INTO p VALUES (1, 'x', 2)")
	for _, tc := range []struct {
		sql, code, msg string
		pos            int32
	}{
		{"INSERT INTO t (k, name) VALUES (9)", "42601", "INSERT has more target columns than expressions", 19},
		{"INSERT INTO t (k, name) SELECT 9", "42601", "INSERT has more target columns than expressions", 19},
		{"INSERT INTO t VALUES (9, 'a', 'b', 10 + 1)", "42601", "INSERT has more expressions than target columns", 36},
		{"INSERT INTO t (k) VALUES (9, 'a')", "42601", "INSERT has more expressions than target columns", 30},
		{"INSERT INTO t (k) SELECT 9, 'a'", "42601", "INSERT has more expressions than target columns", 29},
		{"INSERT INTO t VALUES (9, 'a'), (10)", "42601", "VALUES lists must all be the same length", 33},
		{"INSERT INTO p VALUES (2, 'y')", "23502", `null value in column "b" of relation "p" violates not-null constraint`, 0},
		{"INSERT INTO p (a, b) VALUES ('y', 3)", "23502", `null value in column "id" of relation "p" violates not-null constraint`, 0},
	} {
		err := c.PgConn().Exec(context.Background(), tc.sql).Close()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != tc.code || pe.Message != tc.msg || pe.Position != tc.pos {
			t.Errorf("%q: %v (at %d), want %s %q at %d", tc.sql, err, position(pe), tc.code, tc.msg, tc.pos)
		}
	}
	wantRows(t, c, "SELECT id, a, b FROM p", "1|x|2")
}

func position(pe *pgconn.PgError) int32 {
	if pe == nil {
		return -1
	}
	return pe.Position
}
