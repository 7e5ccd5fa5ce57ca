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

func TestUserMessage(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`schema: option bucket="x": not a non-negative integer: strata: invalid argument`, `schema: option bucket="x": not a non-negative integer`},
		{`table g: connector kafka: option "topic" is required: strata: invalid argument; table h: strata: not found`, `table g: connector kafka: option "topic" is required; table h`},
		{`strata: invalid argument: column c`, `column c`},
		{`strata: invalid argument`, `invalid argument`},
		{`column v: 300 does not fit smallint: strata: value out of range`, `column v: 300 does not fit smallint`},
		{`table t snapshot 3: strata: corruption`, `table t snapshot 3: corrupt data`},
		{`file f: strata: checksum mismatch`, `file f: checksum mismatch`},
		{`source pg: strata: closed`, `source pg: closed`},
		{`commit of t: strata: conflict`, `commit of t`},
		{`nothing to clean`, `nothing to clean`},
	} {
		if got := UserMessage(tc.in); got != tc.want {
			t.Errorf("UserMessage(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

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
	s := startTest(t, t.TempDir())
	defer s.Close()
	c := connect(t, s)
	defer c.Close(context.Background())
	for _, tc := range []struct{ sql, want string }{
		{"CREATE TABLE t1 (id int PRIMARY KEY) WITH (bucket = 'x')", `option bucket="x": not a non-negative integer`},
		{`CREATE TABLE t1 (id int PRIMARY KEY) WITH ("merge-engine" = 'foo')`, `option merge-engine="foo": unknown merge engine`},
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
