package server

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestMessagesForNewcomers: the errors a user coming from Flink,
// RisingWave or PostgreSQL meets first carry PostgreSQL's code, message
// and position and a hint (or detail) saying what Strata takes instead,
// in both protocols.
func TestMessagesForNewcomers(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE bid (auction BIGINT, price BIGINT, date_time TIMESTAMP, j JSONB)")
	exec(t, c, "INSERT INTO bid VALUES (1, 2, '2024-01-01 00:00:00', '{}')")
	exec(t, c, "CREATE MATERIALIZED VIEW per_customer AS SELECT auction, count(*) AS n FROM bid GROUP BY auction")
	const tumbleHint = "Flink's group window functions (GROUP BY TUMBLE(...), TUMBLE_START, TUMBLE_END, TUMBLE_ROWTIME) are window table functions in Strata: SELECT window_start, window_end, count(*) FROM TUMBLE(t, ts, INTERVAL '1' MINUTE) GROUP BY window_start, window_end; TUMBLE_START is window_start, TUMBLE_END is window_end and TUMBLE_ROWTIME is window_end - INTERVAL '1' MILLISECOND."
	for _, tc := range []struct {
		sql, code, msg string
		pos            int32
		detail, hint   string
	}{
		{"CREATE VIEW v7 AS SELECT auction FROM bid", "0A000", `statement "CREATE VIEW v7" is not supported`, 0, "",
			"Strata keeps views as materialized views: CREATE MATERIALIZED VIEW v7 AS ... (a plain SELECT answers ad-hoc queries)."},
		{"SELECT TUMBLE_START(date_time, INTERVAL '1' MINUTE), count(*) FROM bid GROUP BY TUMBLE(date_time, INTERVAL '1' MINUTE)", "42883", "function tumble does not exist", 81, "", tumbleHint},
		{"CREATE MATERIALIZED VIEW w1 AS SELECT TUMBLE_START(date_time, INTERVAL '1' MINUTE) AS s, count(*) AS n FROM bid GROUP BY TUMBLE(date_time, INTERVAL '1' MINUTE)", "42883", "function tumble_start(timestamp, interval) does not exist", 39, "", tumbleHint},
		{"SELECT HOP_END(date_time, INTERVAL '1' MINUTE, INTERVAL '5' MINUTE) FROM bid", "42883", "function hop_end does not exist", 8, "",
			"Flink's group window functions (GROUP BY HOP(...), HOP_START, HOP_END, HOP_ROWTIME) are window table functions in Strata: SELECT window_start, window_end, count(*) FROM HOP(t, ts, slide, size) GROUP BY window_start, window_end; HOP_START is window_start, HOP_END is window_end and HOP_ROWTIME is window_end - INTERVAL '1' MILLISECOND."},
		{"CREATE MATERIALIZED VIEW w2 AS SELECT count(*) AS n FROM bid GROUP BY SESSION(date_time, INTERVAL '1' MINUTE)", "42883", "function session(timestamp, interval) does not exist", 71, "",
			"Flink's group window functions (GROUP BY SESSION(...), SESSION_START, SESSION_END, SESSION_ROWTIME) are window table functions in Strata: SELECT window_start, window_end, count(*) FROM SESSION(t, ts, gap) GROUP BY window_start, window_end; SESSION_START is window_start, SESSION_END is window_end and SESSION_ROWTIME is window_end - INTERVAL '1' MILLISECOND."},
		{"CREATE MATERIALIZED VIEW l1 AS SELECT LISTAGG(auction::text, ',') AS s FROM bid", "42883", "function listagg(text, unknown) does not exist", 39, "",
			"Flink's LISTAGG(x [, delimiter]) is PostgreSQL's string_agg(x, delimiter), which views and SELECT both take: write string_agg(x, ',') (the delimiter is required; LISTAGG's default is ',')."},
		{"SELECT * FROM bid MATCH_RECOGNIZE (PARTITION BY auction ORDER BY date_time MEASURES A.price AS p PATTERN (A) DEFINE A AS price > 0)", "42601", `syntax error at or near "BY"`, 46, "",
			"MATCH_RECOGNIZE (Flink's complex event processing, CEP) is not supported in Strata."},
		{"CREATE MATERIALIZED VIEW e1 AS SELECT window_start, count(*) AS n FROM TUMBLE(bid, date_time, INTERVAL '1' MINUTE) GROUP BY window_start EMIT ON WINDOW CLOSE", "42601", `syntax error at or near "EMIT"`, 138, "",
			"Strata has no EMIT ON WINDOW CLOSE; drop the clause. A window view's rows are updated every epoch while their window fills, and over a table with a WATERMARK a window's state is freed once the watermark has passed it, its last row staying in the view."},
		{"CREATE MATERIALIZED VIEW s1 AS SELECT auction FROM bid WHERE price > (SELECT avg(price) FROM bid)", "0A000", "subqueries in expressions are not supported", 70, "",
			"Write it as a join: a view takes [NOT] EXISTS and [NOT] IN subqueries in WHERE and scalar aggregate subqueries in the select list; join any other subquery's result instead, as in FROM t JOIN (SELECT ...) AS s ON ..."},
		{"CREATE TABLE t9 (a INT) WITH (foo='bar')", "22023", `table t9: unknown option "foo" (table options are bucket, merge-engine, ...; connector options need connector = '...')`, 0, "", tableOptionsHint},
		{"SELECT '{bad'::jsonb", "22P02", "invalid input syntax for type json", 8, `Token "bad" is invalid.`, ""},
		{"INSERT INTO bid (auction, j) VALUES (3, '{\"a\" 1}')", "22P02", "invalid input syntax for type json", 41, `Expected ":", but found "1".`, ""},
		{"DROP VIEW per_customer", "42809", `"per_customer" is not a view`, 0, "", "Use DROP MATERIALIZED VIEW to remove a materialized view."},
		{"DROP VIEW bid", "42809", `"bid" is not a view`, 0, "", "Use DROP TABLE to remove a table."},
		{"SELECT auctoin FROM bid", "42703", `column "auctoin" does not exist`, 8, "", `Perhaps you meant to reference the column "bid.auction".`},
		{"CREATE MATERIALIZED VIEW m2 AS SELECT auctoin FROM bid", "42703", `column "auctoin" does not exist`, 39, "", `Perhaps you meant to reference the column "bid.auction".`},
		{"CREATE MATERIALIZED VIEW m3 AS SELECT b.prise FROM bid b", "42703", `column b.prise does not exist`, 39, "", `Perhaps you meant to reference the column "b.price".`},
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
			if !errors.As(err, &pe) {
				t.Errorf("%s (mode %v): %v, want %s %q", tc.sql, mode, err, tc.code, tc.msg)
				continue
			}
			if pe.Code != tc.code || pe.Message != tc.msg || pe.Position != tc.pos || pe.Detail != tc.detail || pe.Hint != tc.hint {
				t.Errorf("%s (mode %v):\n got %s %q at %d, detail %q, hint %q\nwant %s %q at %d, detail %q, hint %q",
					tc.sql, mode, pe.Code, pe.Message, pe.Position, pe.Detail, pe.Hint, tc.code, tc.msg, tc.pos, tc.detail, tc.hint)
			}
		}
	}
}

// TestShowAll: SHOW ALL answers as PostgreSQL's does, columns name,
// setting and description, one row per parameter SHOW knows, ordered by
// name without regard to case, with the session's values.
func TestShowAll(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "SET TIME ZONE 'Europe/Paris'")
	exec(t, c, "SET statement_timeout = '5s'")
	rows, err := c.Query(context.Background(), "SHOW ALL", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	got := map[string][2]string{}
	for rows.Next() {
		var name, setting, desc string
		if err := rows.Scan(&name, &setting, &desc); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
		got[name] = [2]string{setting, desc}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	fd := rows.FieldDescriptions()
	if len(fd) != 3 || fd[0].Name != "name" || fd[1].Name != "setting" || fd[2].Name != "description" {
		t.Fatalf("SHOW ALL columns %v, want name, setting, description", fd)
	}
	known := settingNamesForShow()
	if len(names) != len(known) {
		t.Errorf("SHOW ALL gave %d rows, want one for each of %d parameters: %v", len(names), len(known), names)
	}
	for _, n := range known {
		if settingDescriptions[n] == "" {
			t.Errorf("parameter %s has no description", n)
		}
	}
	for i := 1; i < len(names); i++ {
		if strings.ToLower(names[i-1]) >= strings.ToLower(names[i]) {
			t.Errorf("SHOW ALL rows out of order: %s before %s", names[i-1], names[i])
		}
	}
	for name, want := range map[string][2]string{
		"TimeZone":              {"Europe/Paris", "Sets the time zone for displaying and interpreting time stamps."},
		"statement_timeout":     {"5000ms", "Sets the maximum allowed duration of any statement."},
		"DateStyle":             {"ISO, MDY", "Sets the display format for date and time values."},
		"server_version_num":    {"150000", "Shows the server version as an integer."},
		"consistency":           {"strong", settingDescriptions["consistency"]},
		"transaction_read_only": {"off", "Sets the current transaction's read-only status."},
	} {
		if got[name] != want {
			t.Errorf("SHOW ALL %s = %q, want %q", name, got[name], want)
		}
	}
	// Every row's setting is what SHOW of the parameter gives.
	for _, n := range known {
		if v := rowsText(t, c, "SHOW "+n); v != got[settingName(n)][0] {
			t.Errorf("SHOW %s = %q, SHOW ALL says %q", n, v, got[settingName(n)][0])
		}
	}
}
