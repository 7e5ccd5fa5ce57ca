package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestFlinkNameHints: Flink's TIMESTAMP_LTZ type and window_time column,
// refused by the DDL, the binder of a view or the OLAP engine, keep
// PostgreSQL's code and message and get a hint with Strata's form, in
// both protocols.
func TestFlinkNameHints(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE bid (auction BIGINT, price BIGINT, date_time TIMESTAMP)")
	exec(t, c, "INSERT INTO bid VALUES (1, 2, '2024-01-01 00:00:00')")
	const ltz, wt = "Strata's TIMESTAMPTZ", "Flink's window_time is window_end - INTERVAL '1' MILLISECOND"
	for _, tc := range []struct {
		sql, code, msg, hint string
	}{
		{"CREATE TABLE l (id INT, ts TIMESTAMP_LTZ(3))", "42704", `column "ts": type "timestamp_ltz(3)" does not exist`, ltz},
		{"SELECT CAST(date_time AS TIMESTAMP_LTZ(3)) FROM bid", "42704", `type "timestamp_ltz" does not exist`, ltz},
		{"CREATE MATERIALIZED VIEW m AS SELECT date_time::timestamp_ltz AS x, auction FROM bid", "42704", `type "timestamp_ltz" does not exist`, ltz},
		{"SELECT window_start, window_time, count(*) FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_start, window_time", "42703", `column "window_time" does not exist`, wt},
		{"CREATE MATERIALIZED VIEW w AS SELECT window_start, window_time, count(*) AS n FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_start, window_time", "42703", `column "window_time" does not exist`, wt},
		{"SET 'execution.checkpointing.interval' = '10s'", "42601", `syntax error at or near "'execution.checkpointing.interval'"`, "strata start --epoch-interval, --checkpoint-interval"},
		{"SHOW VIEWS", "42704", `unrecognized configuration parameter "views"`, "SHOW MATERIALIZED VIEWS"},
		{"SHOW DATABASES", "42704", `unrecognized configuration parameter "databases"`, "one database, dev"},
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
			if !errors.As(err, &pe) || pe.Code != tc.code || pe.Message != tc.msg || !strings.Contains(pe.Hint, tc.hint) {
				t.Errorf("%s (mode %v): %v (hint %q), want %s %q with a hint holding %q", tc.sql, mode, err, hintOf(pe), tc.code, tc.msg, tc.hint)
			}
		}
	}
}

func hintOf(pe *pgconn.PgError) string {
	if pe == nil {
		return ""
	}
	return pe.Hint
}
