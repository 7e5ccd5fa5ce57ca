package server

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestOLAPErrorPositions: a SELECT over tables that names a missing
// relation or column fails with PostgreSQL's code and the position of
// the name, in both protocols, so that psql marks it.
func TestOLAPErrorPositions(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE bid (auction BIGINT, price BIGINT)")
	for _, tc := range []struct {
		sql, code, msg string
		pos            int32
	}{
		{"SELECT * FROM orderz;", "42P01", `relation "orderz" does not exist`, 15},
		{"SELECT 'nope', nope FROM bid", "42703", `column "nope" does not exist`, 16},
		{"SELECT auction FROM bid JOIN public.missing m ON true", "42P01", `relation "public.missing" does not exist`, 30},
	} {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
			_, err := c.Exec(context.Background(), tc.sql, mode)
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != tc.code || pe.Message != tc.msg || pe.Position != tc.pos {
				t.Errorf("%s (mode %v): %v at %d, want %s %q at %d", tc.sql, mode, err, pe.Position, tc.code, tc.msg, tc.pos)
			}
		}
	}
}

// TestOLAPLiteralErrorPosition: a string literal in a SELECT's WHERE that
// does not convert to its column's type fails with PostgreSQL's 22P02
// and the literal's position, in both protocols.
func TestOLAPLiteralErrorPosition(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE lit (id BIGINT PRIMARY KEY, v TEXT)")
	exec(t, c, "INSERT INTO lit VALUES (1, 'a')")
	for _, tc := range []struct {
		sql, msg string
		pos      int32
	}{
		{"SELECT * FROM lit WHERE id = 'abc'", `invalid input syntax for type bigint: "abc"`, 30},
		{"SELECT v FROM lit WHERE v = 'abc' OR 'x' = id", `invalid input syntax for type bigint: "x"`, 38},
	} {
		for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeSimpleProtocol, pgx.QueryExecModeExec} {
			rows, err := c.Query(context.Background(), tc.sql, mode)
			if err == nil {
				for rows.Next() {
				}
				rows.Close()
				err = rows.Err()
			}
			var pe *pgconn.PgError
			if !errors.As(err, &pe) || pe.Code != "22P02" || pe.Message != tc.msg || pe.Position != tc.pos {
				t.Errorf("%s (mode %v): %v, want 22P02 %q at %d", tc.sql, mode, err, tc.msg, tc.pos)
			}
		}
	}
}
