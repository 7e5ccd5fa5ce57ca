package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

// TestMistypedOptionHints: a WITH option that no connector (nor the table
// store) takes is refused with 22023, and when one option they take is a
// slip of the keyboard away the hint names it, for every connector and
// for the table store's options.
func TestMistypedOptionHints(t *testing.T) {
	_, c := startConn(t)
	for _, tc := range []struct {
		sql, msg, hint string
	}{
		{`CREATE TABLE g1 (k BIGINT) WITH (connector = 'datagen', 'rows-per-secnd' = '5')`,
			`datagen: unknown option "rows-per-secnd"`, `Perhaps you meant the option "rows-per-second".`},
		{`CREATE SOURCE g2 (k BIGINT) WITH (connector = 'datagen', 'numer-of-rows' = '5')`,
			`unknown option "numer-of-rows"`, `Perhaps you meant the option "number-of-rows".`},
		{`CREATE TABLE g3 (k BIGINT) WITH (connector = 'datagen', 'fields.k.kidn' = 'sequence')`,
			`"kidn" is not one of kind`, `Perhaps you meant the option "fields.k.kind".`},
		{`CREATE TABLE g4 (k BIGINT) WITH (connector = 'datagen', 'field.k.kind' = 'sequence')`,
			`unknown option "field.k.kind"`, `Perhaps you meant the option "fields.k.kind".`},
		{`CREATE TABLE g5 (k BIGINT) WITH (connector = 'datagen', buckt = '2')`,
			`unknown option "buckt"`, `Perhaps you meant the option "bucket".`},
		{`CREATE SOURCE pg WITH (connector = 'postgres-cdc', hostnme = 'localhost', username = 'u', database = 'd', slot = 's')`,
			`postgres-cdc: unknown option "hostnme"`, `Perhaps you meant the option "hostname".`},
		{`CREATE TABLE b1 (auction BIGINT) WITH (connector = 'nexmark', 'nexmark.table' = 'bid', evnts = '5')`,
			`nexmark: unknown option "evnts"`, `Perhaps you meant the option "events".`},
		{`CREATE TABLE f1 (a INT) WITH (connector = 'file', pth = '/tmp/x', format = 'csv')`,
			`unknown option "pth"`, `Perhaps you meant the option "path".`},
		{`CREATE TABLE k1 (a INT) WITH (connector = 'kafka', 'properties.bootstrap.server' = 'a:1', topik = 't', format = 'json')`,
			`kafka source: unknown option "topik"`, `Perhaps you meant the option "topic".`},
		{`CREATE TABLE t1 (a INT) WITH (bukcet = '2')`,
			`table t1: unknown option "bukcet"`, `Perhaps you meant the option "bucket". ` + tableOptionsHint},
		{`CREATE TABLE t2 (a INT) WITH (colour = 'red')`,
			`table t2: unknown option "colour"`, tableOptionsHint},
		{`CREATE MATERIALIZED VIEW v1 WITH (timezon = 'UTC') AS SELECT 1 AS x FROM g0`,
			`materialized view v1: unknown option "timezon"`, `Perhaps you meant the option "timezone".`},
		{`CREATE SINK s1 FROM g0 WITH (connector = 'file', path = '/tmp/x', formt = 'csv')`,
			`file sink: unknown option "formt"`, `Perhaps you meant the option "format".`},
	} {
		if strings.Contains(tc.sql, "g0") {
			exec(t, c, "CREATE TABLE IF NOT EXISTS g0 (k BIGINT)")
		}
		_, err := c.Exec(context.Background(), tc.sql)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a refusal", tc.sql, err)
			continue
		}
		if pe.Code != "22023" || !strings.Contains(pe.Message, tc.msg) || pe.Hint != tc.hint {
			t.Errorf("%s:\n got %s %q, hint %q\nwant 22023 %q, hint %q", tc.sql, pe.Code, pe.Message, pe.Hint, tc.msg, tc.hint)
		}
	}
}
