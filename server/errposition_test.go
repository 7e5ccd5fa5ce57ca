package server

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestSimpleQueryErrorPositions: the ErrorResponse of a syntax error, and
// of an error in a later statement of a Query message holding several,
// carries the 1-based character position of the fault in the whole text
// sent, as PostgreSQL's does (psql and strata sql print LINE n and a
// caret from it).
func TestSimpleQueryErrorPositions(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE t (k BIGINT)")
	for _, tc := range []struct {
		sql, code, msg string
		pos            int32
	}{
		{"SELECT * FORM t;", "42601", `syntax error at or near "FORM"`, 10},
		{"SELECT 1;\nSELECT *\n  FORM t;", "42601", `syntax error at or near "FORM"`, 22},
		{"SELECT 'é' AS a,\n  * FORM t;", "42601", `syntax error at or near "FORM"`, 22},
		{"SELECT 1; SELECT\nnope FROM t;", "42703", `column "nope" does not exist`, 18},
		{"SELECT 'é'; SELECT * FROM orderz;", "42P01", `relation "orderz" does not exist`, 27},
	} {
		err := c.PgConn().Exec(context.Background(), tc.sql).Close()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != tc.code || pe.Message != tc.msg || pe.Position != tc.pos {
			t.Errorf("%q: %v at %d, want %s %q at %d", tc.sql, err, pe.Position, tc.code, tc.msg, tc.pos)
		}
	}
}
