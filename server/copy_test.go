package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestRefusedCopyLeavesTheConnectionUsable: COPY FROM STDIN is refused;
// the CopyData, CopyDone or CopyFail messages pgx's CopyFrom sends after
// the refusal are ignored, as PostgreSQL ignores them outside a COPY, so
// the next queries on the connection work.
func TestRefusedCopyLeavesTheConnectionUsable(t *testing.T) {
	_, c := startConn(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE cp (k INT PRIMARY KEY, v TEXT)")
	var src [][]any
	for i := range 5000 {
		src = append(src, []any{int32(i), "value"})
	}
	for i := range 3 {
		if _, err := c.CopyFrom(ctx, pgx.Identifier{"cp"}, []string{"k", "v"}, pgx.CopyFromRows(src)); err == nil {
			t.Fatalf("COPY %d was not refused", i)
		}
		for range 2 {
			var n int
			if err := c.QueryRow(ctx, "SELECT 1 + 1").Scan(&n); err != nil || n != 2 {
				t.Fatalf("a query after refused COPY %d: %d, %v", i, n, err)
			}
		}
	}
}

// TestCopyRefusalHints: COPY (and psql's \copy, which sends COPY ...
// FROM STDIN or TO STDOUT) is refused with 0A000 and a hint that names
// what to use instead, and the file connector statements the hints show
// run as written.
func TestCopyRefusalHints(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE cp (k INT PRIMARY KEY, v TEXT)")
	for _, tc := range []struct{ sql, hint string }{
		{"COPY cp FROM STDIN", copyFromHint},
		{"COPY cp (k, v) FROM STDIN WITH (FORMAT csv)", copyFromHint},
		{"COPY cp FROM '/tmp/cp.csv'", copyFromHint},
		{"COPY cp TO STDOUT", copyToHint},
		{"COPY (SELECT k FROM cp) TO STDOUT WITH (FORMAT csv)", copyToHint},
	} {
		err := c.PgConn().Exec(context.Background(), tc.sql).Close()
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "0A000" || pe.Hint != tc.hint {
			t.Errorf("%s: %v (hint %q), want 0A000 with hint %q", tc.sql, err, hint(pe), tc.hint)
		}
	}
	for _, h := range []string{copyFromHint, copyToHint} {
		if !strings.Contains(h, "connector = 'file'") {
			t.Fatalf("hint %q names no file connector", h)
		}
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "in.csv"), []byte("k,v\n1,a\n2,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exec(t, c, "CREATE TABLE t2 (k INT PRIMARY KEY, v TEXT) WITH (connector = 'file', path = '"+filepath.Join(dir, "in.csv")+"', format = 'csv', csv.header = 'true')")
	wantRows(t, c, "SELECT k, v FROM t2 ORDER BY k", "1|a\n2|b")
	exec(t, c, "CREATE SINK k FROM t2 WITH (connector = 'file', path = '"+filepath.Join(dir, "out")+"', format = 'csv')")
}

func hint(pe *pgconn.PgError) string {
	if pe == nil {
		return ""
	}
	return pe.Hint
}
