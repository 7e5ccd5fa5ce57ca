package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/examples/postgres-cdc/workload"
	"github.com/stratadb/strata/internal/pgtest"
)

// exampleViews are the postgres-cdc example's relations and, for each,
// the query that gives the same rows in PostgreSQL.
var exampleViews = []struct{ name, pg string }{
	{"customers", "SELECT id, name, country FROM customers"},
	{"orders", "SELECT id, customer_id, amount, status FROM orders"},
	{"payments", "SELECT id, order_id, amount FROM payments"},
	{"customer_revenue", `SELECT c.id, c.name, c.country, count(o.id) AS orders, coalesce(sum(o.amount), 0) AS revenue
		FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id, c.name, c.country`},
	{"order_payments", `SELECT o.id AS order_id, o.customer_id, o.amount, count(p.id) AS payments, coalesce(sum(p.amount), 0) AS paid
		FROM orders o LEFT JOIN payments p ON p.order_id = o.id GROUP BY o.id, o.customer_id, o.amount`},
	{"country_revenue", `SELECT c.country, count(*) AS customers, sum(x.orders) AS orders, sum(x.revenue) AS revenue FROM
		(SELECT c.id, count(o.id) AS orders, coalesce(sum(o.amount), 0) AS revenue FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id) x
		JOIN customers c ON c.id = x.id GROUP BY c.country`},
	{"amounts_due", `SELECT customer_id, count(*) AS unpaid_orders, sum(amount - paid) AS due FROM
		(SELECT o.id, o.customer_id, o.amount, coalesce(sum(p.amount), 0) AS paid FROM orders o LEFT JOIN payments p ON p.order_id = o.id
		 GROUP BY o.id, o.customer_id, o.amount) op WHERE paid < amount GROUP BY customer_id`},
}

// TestPostgresCDCExample runs examples/postgres-cdc end to end: a private
// PostgreSQL with the shop schema, the shop workload committing
// transactions, `strata start` (a child process) running the example's
// SQL, and two kill -9 of Strata during the workload. Once the workload
// stops and Strata has caught up, every table and view equals the same
// query in PostgreSQL, and `strata verify` passes for every view.
func TestPostgresCDCExample(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL and child processes")
	}
	pg := pgtest.Start(t)
	dsn := pg.CreateDatabase(t, "shop")
	ctx := context.Background()
	schema, err := os.ReadFile("../../examples/postgres-cdc/schema.sql")
	if err != nil {
		t.Fatal(err)
	}
	pc, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pc.Exec(ctx, string(schema)).ReadAll(); err != nil {
		t.Fatal(err)
	}
	pc.Close(ctx)

	wctx, stopWorkload := context.WithCancel(ctx)
	defer stopWorkload()
	var wg sync.WaitGroup
	var stats workload.Stats
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		stats, werr = workload.Run(wctx, workload.Config{DSN: dsn, Seed: 42, Rate: 60, Customers: 20})
	}()

	dir := t.TempDir()
	wire, httpAddr := freePort(t), freePort(t)
	c := startChild(t, dir, wire, httpAddr)
	conn := c.connect(t)
	script, err := os.ReadFile("../../examples/postgres-cdc/strata.sql")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(script), "hostname = '127.0.0.1', port = '5432'", fmt.Sprintf("hostname = '%s', port = '%d'", pg.Host, pg.Port), 1)
	var out bytes.Buffer
	if err := runSQL(ctx, conn.PgConn(), text, &out); err != nil {
		t.Fatalf("example SQL: %v\n%s", err, out.String())
	}
	conn.Close(ctx)
	for i := range 2 {
		time.Sleep(4 * time.Second)
		c.kill9(t)
		t.Logf("kill -9 number %d", i+1)
		c = startChild(t, dir, wire, httpAddr)
	}
	time.Sleep(3 * time.Second)
	stopWorkload()
	wg.Wait()
	if werr != nil {
		t.Fatal(werr)
	}
	t.Logf("workload: %+v", stats)
	if stats.Orders < 20 || stats.Payments < 20 {
		t.Fatalf("the workload did too little: %+v", stats)
	}
	up, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close(ctx)
	conn = c.connect(t)
	defer conn.Close(ctx)
	for _, v := range exampleViews {
		want := canonicalRows(t, up, "SELECT * FROM ("+v.pg+") q ORDER BY 1")
		deadline := time.Now().Add(90 * time.Second)
		for {
			got := canonicalRows(t, conn, "SELECT * FROM "+v.name+" ORDER BY 1")
			if got == want {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s in Strata:\n%s\nin PostgreSQL:\n%s", v.name, got, want)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	cmd := newRootCommand()
	out.Reset()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"verify", "--http", httpAddr, "customer_revenue", "order_payments", "country_revenue", "amounts_due"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("verify: %v\n%s", err, out.String())
	}
	t.Log(out.String())
}

// canonicalRows renders q's rows as text, with numbers in one spelling
// (NUMERIC 12.50 and 12.5 alike).
func canonicalRows(t *testing.T, c *pgx.Conn, q string) string {
	t.Helper()
	rows, err := c.Query(context.Background(), q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	for rows.Next() {
		vals := rows.RawValues()
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = canonNumber(string(v))
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(out, "\n")
}

// canonNumber writes a decimal number without trailing zeros after its
// point (NUMERIC 12.50 and 12.5 alike); other text is returned as is.
func canonNumber(s string) string {
	if strings.Contains(s, ".") && strings.Trim(s, "0123456789.-") == "" {
		return strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
