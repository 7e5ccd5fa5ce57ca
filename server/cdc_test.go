package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratadb/strata/internal/pgtest"
)

// TestPostgresCDC feeds two Strata tables from a private PostgreSQL
// through one postgres-cdc source, adds the second table while the first
// is fed, keeps a join view over both, restarts Strata in the middle, and
// checks that the tables and the view equal the same queries run in
// PostgreSQL once the writes stop.
func TestPostgresCDC(t *testing.T) {
	pg, up := upstreamPG(t, "shop",
		"CREATE TABLE customers (id INT PRIMARY KEY, name TEXT NOT NULL)",
		"CREATE TABLE orders (id BIGINT PRIMARY KEY, customer INT NOT NULL, amount NUMERIC(10,2))",
		"ALTER TABLE customers REPLICA IDENTITY FULL",
		"ALTER TABLE orders REPLICA IDENTITY FULL",
		"INSERT INTO customers SELECT i, 'c' || i FROM generate_series(1, 5) i",
		"INSERT INTO orders SELECT i, 1 + i % 5, i * 1.25 FROM generate_series(1, 20) i",
	)
	ctx := context.Background()
	dir := t.TempDir()
	s := startTest(t, dir)
	c := connect(t, s)
	exec(t, c, fmt.Sprintf(`CREATE SOURCE pg WITH (connector = 'postgres-cdc', hostname = '%s', port = '%d', username = '%s',
		database = 'shop', slot = 'strata_slot', publication = 'strata_pub')`, pg.Host, pg.Port, pgtest.Superuser))
	exec(t, c, "CREATE TABLE customers (id INT PRIMARY KEY, name TEXT NOT NULL) FROM pg TABLE 'public.customers'")
	// waitEqual waits until strataQ over Strata gives what pgQ gives in
	// PostgreSQL now.
	waitEqual := func(c *pgx.Conn, strataQ, pgQ string) {
		t.Helper()
		waitRows(t, c, strataQ, rowsText(t, up, pgQ), 60*time.Second)
	}
	waitEqual(c, "SELECT id, name FROM customers ORDER BY id", "SELECT id, name FROM customers ORDER BY id")
	// A table of an upstream table that does not exist is refused and
	// leaves nothing behind: the source goes on feeding customers, and
	// the restart below starts.
	wantErr(t, c, "CREATE TABLE ghost (id INT PRIMARY KEY) FROM pg TABLE 'public.nosuch'", "nosuch")
	wantRows(t, c, "SHOW TABLES", "customers")
	// Writes go on while the second table is added.
	writes := func(from, to int) {
		for i := from; i < to; i++ {
			tx, err := up.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, q := range []string{
				fmt.Sprintf("INSERT INTO orders VALUES (%d, %d, %d.50)", 100+i, 1+i%5, i),
				fmt.Sprintf("UPDATE customers SET name = 'c%d-%d' WHERE id = %d", 1+i%5, i, 1+i%5),
				fmt.Sprintf("DELETE FROM orders WHERE id = %d", 1+i%20),
			} {
				if _, err := tx.Exec(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	writes(0, 10)
	exec(t, c, "CREATE TABLE orders (id BIGINT PRIMARY KEY, customer INT NOT NULL, amount NUMERIC(10,2)) FROM pg TABLE 'public.orders'")
	exec(t, c, "CREATE MATERIALIZED VIEW revenue AS SELECT c.name, count(*) AS n, sum(o.amount) AS total FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.name")
	writes(10, 25)
	const revenue = "SELECT c.name, count(*) AS n, sum(o.amount) AS total FROM orders o JOIN customers c ON o.customer = c.id GROUP BY c.name ORDER BY c.name"
	waitEqual(c, "SELECT name, n, total FROM revenue ORDER BY name", revenue)
	wantRows(t, c, "SELECT name FROM strata_catalog.jobs WHERE name LIKE 'cdc%'", "cdc-dev-pg")
	c.Close(ctx)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Writes while Strata is down arrive after the restart.
	writes(25, 35)
	s, c = startConnAt(t, dir)
	writes(35, 40)
	waitEqual(c, "SELECT id, customer, amount FROM orders ORDER BY id", "SELECT id, customer, amount FROM orders ORDER BY id")
	waitEqual(c, "SELECT id, name FROM customers ORDER BY id", "SELECT id, name FROM customers ORDER BY id")
	waitEqual(c, "SELECT name, n, total FROM revenue ORDER BY name", revenue)
	// Dropping the source while tables use it is refused.
	wantErr(t, c, "DROP SOURCE pg", "2BP01")
}

// TestPostgresCDCQuarantine: a value one table of a source cannot hold
// quarantines that table only. Over the wire, a SELECT of it fails with
// 55000 naming the table and column, strata_catalog.jobs shows the
// error, and the source's other table goes on. Dropping the table and
// creating it again with a fitting type ends the quarantine.
func TestPostgresCDCQuarantine(t *testing.T) {
	pg, up := upstreamPG(t, "quar",
		"CREATE TABLE good (id INT PRIMARY KEY, v TEXT)",
		"CREATE TABLE bad (id INT PRIMARY KEY, v VARCHAR(40))",
		"INSERT INTO bad VALUES (1, 'ok')",
	)
	ctx := context.Background()
	_, c := startConn(t)
	exec(t, c, fmt.Sprintf(`CREATE SOURCE pg WITH (connector = 'postgres-cdc', hostname = '%s', port = '%d', username = '%s',
		database = 'quar', slot = 'quar_slot', publication = 'quar_pub')`, pg.Host, pg.Port, pgtest.Superuser))
	exec(t, c, "CREATE TABLE good (id INT PRIMARY KEY, v TEXT) FROM pg TABLE 'public.good'")
	exec(t, c, "CREATE TABLE bad (id INT PRIMARY KEY, v VARCHAR(3)) FROM pg TABLE 'public.bad'")
	wait := func(q, want string) { t.Helper(); waitRows(t, c, q, want, 60*time.Second) }
	wait("SELECT id, v FROM bad", "1|ok")
	if _, err := up.Exec(ctx, "BEGIN; INSERT INTO bad VALUES (2, 'far too long'); INSERT INTO good VALUES (1, 'one'); COMMIT"); err != nil {
		t.Fatal(err)
	}
	wait("SELECT id, v FROM good", "1|one")
	_, err := c.Exec(ctx, "SELECT * FROM bad", pgx.QueryExecModeSimpleProtocol)
	if err == nil || !strings.Contains(err.Error(), "55000") || !strings.Contains(err.Error(), "table bad no longer follows source pg") ||
		!strings.Contains(err.Error(), "table bad column v") || !strings.Contains(err.Error(), "value too long for type character varying(3)") {
		t.Fatalf("SELECT of the quarantined table: %v", err)
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		got := rowsText(t, c, "SELECT error FROM strata_catalog.jobs WHERE name = 'cdc-dev-pg'")
		return strings.Contains(got, "table bad is quarantined"), fmt.Sprintf("strata_catalog.jobs error: %q", got)
	})
	if _, err := up.Exec(ctx, "INSERT INTO good VALUES (2, 'two')"); err != nil {
		t.Fatal(err)
	}
	wait("SELECT id, v FROM good ORDER BY id", "1|one\n2|two")
	// The way out: drop the table and create it with a type that fits.
	exec(t, c, "DROP TABLE bad")
	exec(t, c, "CREATE TABLE bad (id INT PRIMARY KEY, v VARCHAR(40)) FROM pg TABLE 'public.bad'")
	wait("SELECT id, v FROM bad ORDER BY id", "1|ok\n2|far too long")
	wait("SELECT id, v FROM good ORDER BY id", "1|one\n2|two")
}
