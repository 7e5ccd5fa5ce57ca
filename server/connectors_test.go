package server

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaAndFileTables creates a table over a Kafka topic of Debezium
// change events (three partitions) and a table over a directory of CSV
// files, with a view joining them, and checks what arrives.
func TestKafkaAndFileTables(t *testing.T) {
	brokers := kafkaCluster(t, 3, "orders")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "customers-1.csv"), []byte("id,name\n1,ann\n2,bob\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, c := startConn(t)
	exec(t, c, fmt.Sprintf(`CREATE TABLE orders (id BIGINT PRIMARY KEY, customer INT, amount NUMERIC(10,2))
		WITH (connector = 'kafka', properties.bootstrap.server = '%s', topic = 'orders', format = 'debezium-json', scan.startup.mode = 'earliest')`, brokers[0]))
	exec(t, c, fmt.Sprintf(`CREATE TABLE customers (id INT, name TEXT)
		WITH (connector = 'file', path = '%s', format = 'csv', csv.header = 'true', watch = 'true')`, dir))
	exec(t, c, `CREATE MATERIALIZED VIEW spend AS SELECT o.customer, count(*) AS n, sum(o.amount) AS total FROM orders o GROUP BY o.customer`)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	events := []struct {
		part int32
		v    string
	}{
		{0, `{"before":null,"after":{"id":1,"customer":1,"amount":"10.50"},"op":"c"}`},
		{1, `{"before":null,"after":{"id":2,"customer":2,"amount":"3.25"},"op":"c"}`},
		{2, `{"before":null,"after":{"id":3,"customer":1,"amount":"1.00"},"op":"r"}`},
		{0, `{"before":{"id":1,"customer":1,"amount":"10.50"},"after":{"id":1,"customer":1,"amount":"11.50"},"op":"u"}`},
		{2, `{"before":{"id":3,"customer":1,"amount":"1.00"},"after":null,"op":"d"}`},
	}
	for _, ev := range events {
		if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "orders", Partition: ev.part, Value: []byte(ev.v)}).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ".tmp"), []byte("id,name\n3,cy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, ".tmp"), filepath.Join(dir, "customers-2.csv")); err != nil {
		t.Fatal(err)
	}
	wait := func(q, want string) { t.Helper(); waitRows(t, c, q, want, 30*time.Second) }
	wait("SELECT id, customer, amount FROM orders ORDER BY id", "1|1|11.50\n2|2|3.25")
	wait("SELECT customer, n, total FROM spend ORDER BY customer", "1|1|11.50\n2|1|3.25")
	wait("SELECT id, name FROM customers ORDER BY id", "1|ann\n2|bob\n3|cy")
	if _, err := c.Exec(context.Background(), "INSERT INTO orders VALUES (9, 9, 9)"); err == nil {
		t.Fatal("INSERT into a Kafka-fed table was accepted")
	}
	// A record that does not parse, with errors = 'dead-letter', is kept
	// in strata_catalog.dead_letters and skipped.
	bad := t.TempDir()
	if err := os.WriteFile(filepath.Join(bad, "a.csv"), []byte("id,name\nx,zed\n4,dee\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exec(t, c, fmt.Sprintf(`CREATE TABLE people (id INT, name TEXT)
		WITH (connector = 'file', path = '%s', format = 'csv', csv.header = 'true', errors = 'dead-letter')`, bad))
	wait("SELECT id, name FROM people", "4|dee")
	wait("SELECT table_name, position > 0, raw FROM strata_catalog.dead_letters", `people|t|\x782c7a65640a`)
	// With errors = 'skip' it is counted in strata_catalog.skipped.
	skip := t.TempDir()
	if err := os.WriteFile(filepath.Join(skip, "a.csv"), []byte("id,name\nx,zed\n5,eve\ny,why\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exec(t, c, fmt.Sprintf(`CREATE TABLE others (id INT, name TEXT)
		WITH (connector = 'file', path = '%s', format = 'csv', csv.header = 'true', errors = 'skip')`, skip))
	wait("SELECT id, name FROM others", "5|eve")
	wait("SELECT skipped FROM strata_catalog.skipped WHERE table_name = 'others'", "2")
	wantRows(t, c, "SELECT count(*) > 0 FROM strata_catalog.checkpoints WHERE job = 'ingest-dev-orders'", "t")
}

// TestKafkaSinkFromView: CREATE SINK ... FROM a view WITH (connector =
// 'kafka') writes the view's changes to a topic exactly once; a
// read_committed consumer applying them as upserts ends with the view.
func TestKafkaSinkFromView(t *testing.T) {
	brokers := kafkaCluster(t, 1, "totals")
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE sales (id INT PRIMARY KEY, shop TEXT NOT NULL, amount INT NOT NULL)")
	exec(t, c, "CREATE MATERIALIZED VIEW totals AS SELECT shop, sum(amount) AS total FROM sales GROUP BY shop")
	exec(t, c, "INSERT INTO sales VALUES (1, 'a', 5), (2, 'b', 7)")
	exec(t, c, fmt.Sprintf("CREATE SINK out FROM totals WITH (connector = 'kafka', properties.bootstrap.server = '%s', topic = 'totals', format = 'json')", brokers[0]))
	exec(t, c, "INSERT INTO sales VALUES (3, 'a', 10)")
	exec(t, c, "DELETE FROM sales WHERE id = 2")
	wantRows(t, c, "SHOW SINKS", "out|kafka topic totals")
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics("totals"), kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	state := map[string]string{}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			if r.Value == nil {
				delete(state, string(r.Key))
			} else {
				state[string(r.Key)] = string(r.Value)
			}
		})
		if len(state) == 1 && strings.Contains(state[firstKeyOf(state)], `"total": 15`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic state %v, want only shop a with total 15", state)
		}
	}
	exec(t, c, "DROP SINK out")
	wantRows(t, c, "SHOW SINKS", "")
}

// kafkaCluster starts an in-process Kafka cluster of one broker with
// topic in the given number of partitions, closed when the test ends
// (after a server started later), and returns its addresses.
func kafkaCluster(t *testing.T, partitions int32, topic string) []string {
	t.Helper()
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	return cluster.ListenAddrs()
}

func firstKeyOf(m map[string]string) string {
	for k := range m {
		return k
	}
	return ""
}
