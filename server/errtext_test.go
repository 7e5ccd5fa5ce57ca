package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestUserErrorKeepsCause: the cleaned error keeps its code, position and
// what it wraps.
func TestUserErrorKeepsCause(t *testing.T) {
	cause := fmt.Errorf("option %q: %w", "bucket", base.ErrInvalidArgument)
	err := userError(sqlerr.Wrap(sqlerr.InvalidParameterValue, cause).WithPosition(7))
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Message != `option "bucket"` || se.Code != sqlerr.InvalidParameterValue || se.Position != 7 {
		t.Fatalf("userError: %#v", err)
	}
	if !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatal("the cleaned error no longer wraps its marker")
	}
	plain := userError(fmt.Errorf("table t: %w", base.ErrNotFound))
	if plain.Error() != "table t" || sqlerr.Code(plain) != sqlerr.UndefinedObject {
		t.Fatalf("userError of a plain error: %q %s", plain, sqlerr.Code(plain))
	}
}

// TestOptionErrorsOverTheWire: errors of bad WITH options name the option
// and its value, and no marker text follows them.
func TestOptionErrorsOverTheWire(t *testing.T) {
	_, c := startConn(t)
	for _, tc := range []struct{ sql, want string }{
		{"CREATE TABLE t1 (id int PRIMARY KEY) WITH (bucket = 'x')", `table t1: option "bucket": "x" is not a whole number >= 1`},
		{`CREATE TABLE t1 (id int PRIMARY KEY) WITH ("merge-engine" = 'foo')`, `table t1: option "merge-engine": "foo" is not one of deduplicate, partial-update, aggregation, first-row`},
		{`CREATE TABLE g (a int) WITH (connector = 'datagen', "rows-per-second" = '-1')`, `datagen option "rows-per-second": "-1" is not a whole number >= 0`},
	} {
		_, err := c.Exec(context.Background(), tc.sql, pgx.QueryExecModeSimpleProtocol)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Fatalf("%s: %v", tc.sql, err)
		}
		if !strings.HasSuffix(pe.Message, tc.want) || strings.Contains(pe.Message, "strata:") {
			t.Errorf("%s: message %q, want it to end in %q without a marker", tc.sql, pe.Message, tc.want)
		}
	}
}
