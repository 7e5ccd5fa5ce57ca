package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/internal/pgtest"
)

// TestPostgresSinkFromView: CREATE SINK ... FROM a view WITH (connector
// = 'postgres') through the wire keeps a PostgreSQL table equal to the
// view as it changes, across a server restart; a target that does not
// fit is refused with a message naming it.
func TestPostgresSinkFromView(t *testing.T) {
	pg, up := upstreamPG(t, "shop", "CREATE TABLE totals (shop text PRIMARY KEY, total bigint)")
	ctx := context.Background()
	dataDir := t.TempDir()
	s := startTest(t, dataDir)
	c := connect(t, s)
	exec(t, c, "CREATE TABLE sales (id INT PRIMARY KEY, shop TEXT NOT NULL, amount INT NOT NULL)")
	exec(t, c, "CREATE MATERIALIZED VIEW totals AS SELECT shop, sum(amount) AS total FROM sales GROUP BY shop")
	exec(t, c, "INSERT INTO sales VALUES (1, 'a', 5), (2, 'b', 7), (3, 'it''s', 1)")
	with := func(table string) string {
		return fmt.Sprintf("WITH (connector = 'postgres', hostname = '%s', port = '%d', username = '%s', database = 'shop', table = '%s')",
			pg.Host, pg.Port, pgtest.Superuser, table)
	}
	_, err := c.Exec(ctx, "CREATE SINK out FROM totals "+with("public.missing"))
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || pgErr.Code != "22023" || !strings.Contains(pgErr.Message, "table public.missing does not exist in database shop") {
		t.Fatalf("sink into a missing table: %v", err)
	}
	exec(t, c, "CREATE SINK out FROM totals "+with("public.totals"))
	exec(t, c, "INSERT INTO sales VALUES (4, 'a', 10)")
	exec(t, c, "DELETE FROM sales WHERE id = 2")
	if want := fmt.Sprintf("out|postgres %s:%d/shop table public.totals", pg.Host, pg.Port); rowsText(t, c, "SHOW SINKS") != want {
		t.Fatalf("SHOW SINKS: %q, want %q", rowsText(t, c, "SHOW SINKS"), want)
	}
	waitEqual := func(c *pgx.Conn) {
		t.Helper()
		waitFor(t, 30*time.Second, func() (bool, string) {
			want := rowsText(t, c, "SELECT shop, total FROM totals ORDER BY shop")
			got := rowsText(t, up, "SELECT shop, total FROM totals ORDER BY shop")
			return got == want, fmt.Sprintf("PostgreSQL:\n%s\nview:\n%s", got, want)
		})
	}
	waitEqual(c)
	c.Close(ctx)
	s.Close()
	s, c = startConnAt(t, dataDir)
	exec(t, c, "UPDATE sales SET amount = amount + 1 WHERE shop = 'a'")
	exec(t, c, "DELETE FROM sales WHERE id = 3")
	exec(t, c, "INSERT INTO sales VALUES (5, 'e', 2)")
	waitEqual(c)
	exec(t, c, "DROP SINK out")
	wantRows(t, c, "SHOW SINKS", "")
}
