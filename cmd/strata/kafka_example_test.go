package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cockroachdb/apd/v3"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/stratadb/strata/examples/kafka-debezium/producer"
)

// TestKafkaDebeziumExample runs examples/kafka-debezium end to end: an
// in-process Kafka, the example's producer writing Debezium change events,
// `strata start` (a child process) running the example's SQL, and two
// kill -9 of Strata while events arrive. Once the producer stops and
// Strata has caught up, the tables equal the state the events describe,
// the views equal the same aggregates computed from that state, and
// `strata verify` passes for every view.
func TestKafkaDebeziumExample(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "shop.customers", "shop.orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	brokers := cluster.ListenAddrs()
	ctx := context.Background()
	dir := t.TempDir()
	wire, httpAddr := freePort(t), freePort(t)
	c := startChild(t, dir, wire, httpAddr)
	conn := c.connect(t)
	script, err := os.ReadFile("../../examples/kafka-debezium/strata.sql")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(script), "'127.0.0.1:9092'", "'"+brokers[0]+"'")
	var out bytes.Buffer
	if err := runSQL(ctx, conn.PgConn(), text, &out); err != nil {
		t.Fatalf("example SQL: %v\n%s", err, out.String())
	}
	conn.Close(ctx)
	pctx, stopProducer := context.WithCancel(ctx)
	defer stopProducer()
	var wg sync.WaitGroup
	var st producer.State
	var perr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		st, perr = producer.Run(pctx, producer.Config{Brokers: brokers, Seed: 5, Rate: 150})
	}()
	for i := range 2 {
		time.Sleep(3 * time.Second)
		c.kill9(t)
		t.Logf("kill -9 number %d", i+1)
		c = startChild(t, dir, wire, httpAddr)
	}
	time.Sleep(2 * time.Second)
	stopProducer()
	wg.Wait()
	if perr != nil {
		t.Fatal(perr)
	}
	if len(st.Orders) < 20 {
		t.Fatalf("the producer did too little: %d orders", len(st.Orders))
	}
	// What the views must hold, computed from the state.
	var custRows, orderRows []string
	for _, cu := range st.Customers {
		custRows = append(custRows, fmt.Sprintf("%d|%s|%s", cu.ID, cu.Name, cu.Country))
	}
	type agg struct {
		n   int
		sum apd.Decimal
	}
	status := map[string]*agg{}
	for _, o := range st.Orders {
		orderRows = append(orderRows, fmt.Sprintf("%d|%d|%s|%s", o.ID, o.CustomerID, o.Amount, o.Status))
		a := status[o.Status]
		if a == nil {
			a = &agg{}
			status[o.Status] = a
		}
		a.n++
		var d apd.Decimal
		if _, _, err := d.SetString(o.Amount); err != nil {
			t.Fatal(err)
		}
		if _, err := apd.BaseContext.Add(&a.sum, &a.sum, &d); err != nil {
			t.Fatal(err)
		}
	}
	var statusRows []string
	for s, a := range status {
		statusRows = append(statusRows, fmt.Sprintf("%s|%d|%s", s, a.n, a.sum.Text('f')))
	}
	sortJoin := func(rows []string) string { sort.Strings(rows); return strings.Join(rows, "\n") }
	conn = c.connect(t)
	defer conn.Close(ctx)
	for _, want := range []struct{ q, rows string }{
		{"SELECT id, name, country FROM customers", sortJoin(custRows)},
		{"SELECT id, customer_id, amount, status FROM orders", sortJoin(orderRows)},
		{"SELECT status, orders, amount FROM status_counts", sortJoin(statusRows)},
	} {
		deadline := time.Now().Add(60 * time.Second)
		for {
			got := strings.Split(canonicalRows(t, conn, want.q), "\n")
			if g := sortJoin(got); g == canonicalize(want.rows) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s:\n%s\nwant\n%s", want.q, sortJoin(got), want.rows)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	cmd := newRootCommand()
	out.Reset()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"verify", "--http", httpAddr, "customer_revenue", "country_revenue", "status_counts"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("verify: %v\n%s", err, out.String())
	}
	t.Logf("%d customers, %d orders\n%s", len(st.Customers), len(st.Orders), out.String())
}

// canonicalize writes numbers of want as canonicalRows does.
func canonicalize(rows string) string {
	var out []string
	for _, line := range strings.Split(rows, "\n") {
		parts := strings.Split(line, "|")
		for i, s := range parts {
			parts[i] = canonNumber(s)
		}
		out = append(out, strings.Join(parts, "|"))
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}
