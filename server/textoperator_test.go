package server

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestTextNumberOperatorIs42883: comparing a text column with a number is
// refused as Postgres refuses it (42883, "operator does not exist: text =
// integer", with its hint and the operator's position), in a one-shot
// SELECT as in a view, rather than run by casting the column (which gave
// rows for text that looks like a number and 22P02 on the first that
// does not). A quoted literal and an explicit cast still work.
func TestTextNumberOperatorIs42883(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE tn (id BIGINT PRIMARY KEY, name TEXT, code VARCHAR(8))")
	exec(t, c, "INSERT INTO tn VALUES (1, 'a', '7'), (2, '2', 'x')")
	for _, q := range []struct{ sql, msg string }{
		{"SELECT * FROM tn WHERE name = 1", "operator does not exist: text = integer"},
		{"SELECT * FROM tn WHERE 2 < name", "operator does not exist: integer < text"},
		{"SELECT name + 1 FROM tn", "operator does not exist: text + integer"},
		{"SELECT * FROM tn WHERE code = 7.5", "operator does not exist: character varying = numeric"},
		{"SELECT * FROM tn WHERE id = name", "operator does not exist: bigint = text"},
		{"CREATE MATERIALIZED VIEW tnv AS SELECT * FROM tn WHERE name = 1", "operator does not exist: text = integer"},
	} {
		_, err := c.Exec(context.Background(), q.sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42883" || pe.Message != q.msg || pe.Hint == "" || pe.Position == 0 {
			t.Errorf("%s: %v (%#v), want 42883 %q with a hint and a position", q.sql, err, pe, q.msg)
		}
	}
	wantRows(t, c, "SELECT id FROM tn WHERE name = '2'", "2")
	wantRows(t, c, "SELECT id FROM tn WHERE name::int = 2 AND id = '2'", "2")
	wantRows(t, c, "SELECT id FROM tn WHERE code = '7'", "1")
}
