package server

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestFlinkDDLHints: Flink's and Paimon's statements that Strata refuses
// keep their code, message and position and carry a hint that says what
// Strata does instead, in both protocols, whichever step refuses them.
func TestFlinkDDLHints(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE ev (id BIGINT, ts TIMESTAMP, c BOOLEAN)")
	const alter = "Strata has no ALTER TABLE: a table's columns and options are fixed by its CREATE TABLE, so create a new table WITH the new options and copy the rows with INSERT INTO new SELECT * FROM t."
	const dateFormat = "Flink's DATE_FORMAT(ts, 'yyyy-MM-dd') is PostgreSQL's to_char(ts, 'YYYY-MM-DD'), with PostgreSQL's patterns (YYYY, MM, DD, HH24, MI, SS, MS)."
	for _, tc := range []struct {
		sql, code, msg string
		pos            int32
		hint           string
	}{
		{"SELECT * FROM ev$snapshots", "42P01", `relation "ev$snapshots" does not exist`, 15,
			"Paimon's system tables (t$snapshots, t$schemas, t$options, ...) are Strata's strata_catalog tables: SELECT * FROM strata_catalog.tables WHERE name = 't' gives a table's committed epoch, snapshot_id and total_records, and strata_catalog.jobs, .checkpoints and .lineage describe the jobs that write it."},
		{"SELECT DATE_FORMAT(ts, 'yyyy-MM-dd') FROM ev", "42883", "function date_format does not exist", 8, dateFormat},
		{"CREATE MATERIALIZED VIEW v1 AS SELECT DATE_FORMAT(ts, 'yyyy-MM-dd') AS d FROM ev", "42883", "function date_format(timestamp, unknown) does not exist", 39, dateFormat},
		{"CREATE MATERIALIZED VIEW v2 AS SELECT IF(c, 1, 2) AS d FROM ev", "42883", "function if(boolean, integer, integer) does not exist", 39,
			"Flink's IF(c, a, b) is CASE WHEN c THEN a ELSE b END in Strata, as in PostgreSQL."},
		{"CREATE TABLE t8 (a TINYINT)", "42704", `column "a": type "tinyint" does not exist`, 20, "Strata has no TINYINT: use SMALLINT, its smallest integer type (2 bytes)."},
		{"ALTER TABLE ev ADD COLUMN b INT", "0A000", `statement "ALTER TABLE ev" is not supported`, 0, alter},
		{"ALTER TABLE ev SET ('bucket' = '4')", "42601", `syntax error at or near "'bucket'"`, 21, alter},
		{"CREATE TEMPORARY TABLE g (a INT) WITH ('connector' = 'datagen')", "0A000", `statement "CREATE TEMPORARY TABLE" is not supported`, 8,
			"Strata has no temporary tables: CREATE TABLE t (...) [WITH (...)] stores the rows, and CREATE SOURCE t (...) WITH (connector = '...') reads a connector in the views that name it without storing anything."},
		{"SELECT * FROM ev /*+ OPTIONS('scan.snapshot-id'='1') */", "0A000", "dynamic table options /*+ OPTIONS(...) */ are not supported", 18,
			"Strata takes no per-query table options: to read an older version, end the query with AS OF EPOCH n (strata_catalog.tables gives each table's committed epoch and snapshot_id)."},
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
			if !errors.As(err, &pe) || pe.Code != tc.code || pe.Message != tc.msg || pe.Position != tc.pos || pe.Hint != tc.hint {
				t.Errorf("%s (mode %v): %v at %d (hint %q), want %s %q at %d with hint %q", tc.sql, mode, err, posOf(pe), hintOf(pe), tc.code, tc.msg, tc.pos, tc.hint)
			}
		}
	}
	// The forms next to them still run.
	exec(t, c, "INSERT INTO ev VALUES (1, '2024-01-02 03:04:05', true)")
	var d string
	var n int
	if err := c.QueryRow(context.Background(), "SELECT to_char(ts, 'YYYY-MM-DD'), CASE WHEN c THEN 1 ELSE 2 END FROM ev /* OPTIONS('x'='1') */").Scan(&d, &n); err != nil || d != "2024-01-02" || n != 1 {
		t.Fatalf("to_char and CASE: %q %d %v", d, n, err)
	}
}

func posOf(pe *pgconn.PgError) int32 {
	if pe == nil {
		return 0
	}
	return pe.Position
}

// TestOneShotCopyNotice: an INSERT ... SELECT from a table a connector
// fills copies its rows once and says so in a NOTICE naming CREATE SINK
// ... INTO, the form that keeps copying; one from a plain table says
// nothing.
func TestOneShotCopyNotice(t *testing.T) {
	c, notices := noticeConn(t, false)
	exec(t, c, "CREATE TABLE g (id BIGINT) WITH (connector = 'datagen', 'number-of-rows' = '5', 'fields.id.kind' = 'sequence', 'fields.id.start' = '1')")
	exec(t, c, "CREATE TABLE cp (id BIGINT)")
	exec(t, c, "CREATE TABLE plain (id BIGINT)")
	exec(t, c, "INSERT INTO plain VALUES (1)")
	*notices = nil
	exec(t, c, "INSERT INTO cp SELECT id FROM plain")
	exec(t, c, "INSERT INTO cp VALUES (2)")
	if len(*notices) != 0 {
		t.Fatalf("notices after INSERTs from a plain table and VALUES: %q", *notices)
	}
	for _, sql := range []string{
		"INSERT INTO cp SELECT id FROM g",
		"INSERT INTO cp SELECT p.id FROM plain p JOIN (SELECT id FROM dev.g) x ON x.id = p.id",
	} {
		*notices = nil
		exec(t, c, sql)
		want := "NOTICE 00000 INSERT copied the rows of g once; CREATE SINK name INTO cp AS SELECT ... keeps copying them into cp as g changes"
		if sql != "INSERT INTO cp SELECT id FROM g" {
			want = "NOTICE 00000 INSERT copied the rows of dev.g once; CREATE SINK name INTO cp AS SELECT ... keeps copying them into cp as dev.g changes"
		}
		if len(*notices) != 1 || (*notices)[0] != want {
			t.Fatalf("%s: notices %q, want %q", sql, *notices, want)
		}
	}
}
