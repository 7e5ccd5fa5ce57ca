package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestSourceStatements runs CREATE SOURCE of the nexmark connector through
// the wire protocol: a view with an event-time window over it (the
// source's WATERMARK), what SHOW SOURCES, strata_catalog.tables and
// pg_class show, and the refusals: a PRIMARY KEY, a SELECT of the source
// (42809), verify of the view, DROP SOURCE while the view reads it.
func TestSourceStatements(t *testing.T) {
	s, c := startConn(t)
	exec(t, c, `CREATE SOURCE bid (auction BIGINT, bidder BIGINT, price BIGINT, channel VARCHAR, url VARCHAR,
		date_time TIMESTAMP(3), extra VARCHAR, WATERMARK FOR date_time AS date_time - INTERVAL '1' SECOND)
		WITH (connector = 'nexmark', nexmark.table = 'bid', events = '5000', seed = '3')`)
	exec(t, c, `CREATE MATERIALIZED VIEW per_window AS SELECT window_start, count(*) AS n
		FROM TUMBLE(bid, date_time, INTERVAL '10' SECOND) GROUP BY window_start`)
	// 5000 events with the generator's default event rate, of which 92%
	// are bids: the windows' counts add up to every bid.
	waitFor(t, 30*time.Second, func() (bool, string) {
		got := rowsText(t, c, "SELECT sum(n) FROM per_window")
		return got == "4600", "sum(n) = " + got
	})
	wantRows(t, c, "SHOW SOURCES", "bid")
	wantRows(t, c, "SELECT kind, writer IS NULL FROM strata_catalog.tables WHERE name = 'bid'", "source|t")
	wantRows(t, c, "SELECT relkind, relnatts FROM pg_catalog.pg_class WHERE relname = 'bid'", "v|7")
	wantErr(t, c, "SELECT count(*) FROM bid", "42809", `source "bid" stores nothing`)
	wantErr(t, c, `CREATE SOURCE person2 (id BIGINT, name VARCHAR, PRIMARY KEY (id)) WITH (connector = 'datagen')`,
		"CREATE SOURCE person2", "cannot have a PRIMARY KEY")
	res := Verify(t.Context(), s.Engine, "per_window", 0)
	if res.OK || !strings.Contains(res.Error, "cannot be recomputed") || !strings.Contains(res.Error, "stores nothing") {
		t.Errorf("verify of a view over a source: %+v", res)
	}
	wantErr(t, c, "DROP SOURCE bid", "2BP01", "materialized view per_window reads it")
	exec(t, c, "DROP MATERIALIZED VIEW per_window")
	exec(t, c, "DROP SOURCE bid")
	wantRows(t, c, "SHOW SOURCES", "")
}

// TestKafkaSource reads a three-partition Kafka topic of JSON records
// directly in a view (one source subtask per partition), refuses a
// debezium-json source, and keeps the view's count exact across a
// restart of the server on the same data directory while records keep
// arriving.
func TestKafkaSource(t *testing.T) {
	brokers := kafkaCluster(t, 3, "clicks")
	dir := t.TempDir()
	s, c := startConnAt(t, dir)
	wantErr(t, c, fmt.Sprintf(`CREATE SOURCE changes (id BIGINT, page TEXT) WITH (connector = 'kafka',
		properties.bootstrap.server = '%s', topic = 'clicks', format = 'debezium-json')`, brokers[0]), "debezium-json", "inserts only")
	exec(t, c, fmt.Sprintf(`CREATE SOURCE clicks (id BIGINT, page TEXT) WITH (connector = 'kafka',
		properties.bootstrap.server = '%s', topic = 'clicks', format = 'json', scan.startup.mode = 'earliest')`, brokers[0]))
	exec(t, c, `CREATE MATERIALIZED VIEW per_page AS SELECT page, count(*) AS n FROM clicks GROUP BY page`)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(from, to int) {
		t.Helper()
		for i := from; i < to; i++ {
			v := fmt.Sprintf(`{"id": %d, "page": "p%d"}`, i, i%3)
			if err := cl.ProduceSync(context.Background(), &kgo.Record{Topic: "clicks", Partition: int32(i % 3), Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(0, 30)
	waitRows(t, c, "SELECT page, n FROM per_page ORDER BY page", "p0|10\np1|10\np2|10", 30*time.Second)
	c.Close(context.Background())
	s.Close()
	produce(30, 60)
	_, c = startConnAt(t, dir)
	waitRows(t, c, "SELECT page, n FROM per_page ORDER BY page", "p0|20\np1|20\np2|20", 30*time.Second)
}
