package server

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
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
