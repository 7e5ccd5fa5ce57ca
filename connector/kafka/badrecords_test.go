package kafka_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/kafka"
	"github.com/stratadb/strata/connector/tablesink"
	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// badJob runs the orders topic through an ingest source into a fresh
// table until epoch until (relative to the clock's start), and returns
// the table and the job's error.
func badJob(t *testing.T, brokers []string, errs string, dl format.DeadLetterFunc, until uint64, whileRunning func(tb *table.Table)) (*table.Table, []*kafka.Reader, error) {
	t.Helper()
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Options{Store: store.NewMemory(), EpochInterval: 2 * time.Millisecond, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { svc.Close() })
	name := catalog.Name("dev", "orders")
	if err := svc.CreateDatabase(ctx, catalog.Database{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateTable(ctx, catalog.Table{Name: name, Kind: catalog.KindTable, Columns: orderCols}); err != nil {
		t.Fatal(err)
	}
	tb, err := table.Create(fileio.NewMem(), "wh/dev/orders",
		[]schema.Field{{Name: "id", Type: types.Int64}, {Name: "price", Type: types.Numeric, Nullable: true}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	readers, err := kafka.OpenReaders(ctx, map[string]string{"topic": "orders", "properties.bootstrap.server": brokers[0], "format": "json", "errors": errs}, orderCols, dl)
	if err != nil {
		t.Fatal(err)
	}
	start, err := svc.CurrentEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	job := &graph.Job{Name: "orders",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: 1, NewSource: func(int) operator.Source {
				return ingest.New(ingest.Config{Reader: readers[0], Clock: svc, Name: "orders", StartEpoch: start.Epoch, UntilEpoch: start.Epoch + base.Epoch(until)})
			}},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator { return tablesink.Sink(tb, name, "orders", svc) }},
		},
		Edges: []graph.Edge{{From: "src", To: "sink", Partitioning: graph.Forward}},
	}
	done := make(chan error, 1)
	go func() {
		done <- task.Run(ctx, job, task.Options{Policy: barrier.PolicyAligned, CheckpointInterval: 3 * time.Millisecond,
			Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2), Restart: task.RestartStrategy{MaxAttempts: 2, Delay: time.Millisecond}})
	}()
	if whileRunning != nil {
		whileRunning(tb)
	}
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the job did not end")
	}
	for _, r := range readers {
		r.Close()
	}
	return tb, readers, err
}

func ids(t *testing.T, tb *table.Table) string {
	t.Helper()
	rows, err := tb.ReadLatest()
	if err != nil {
		t.Fatal(err)
	}
	var s []string
	for _, r := range rows {
		s = append(s, types.FormatText(r[0], nil))
	}
	return strings.Join(s, ",")
}

// TestIngestBadRecords runs a bad record through the whole job in each
// error mode. fail: the job stops with an error naming topic, partition,
// offset and field, and what it committed before stays; skip and
// dead-letter: the job goes on and the table holds the good records.
func TestIngestBadRecords(t *testing.T) {
	t.Run("fail", func(t *testing.T) {
		brokers := newCluster(t, 1, "orders")
		produce(t, brokers, "orders", 0, "k", []byte(`{"id": 1}`), []byte(`{"id": 2}`), []byte(`{"id": 3}`))
		tb, _, err := badJob(t, brokers, "fail", nil, 1_000_000, func(tb *table.Table) {
			// Once the good records are committed, the bad one comes.
			for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				if rows, err := tb.ReadLatest(); err == nil && len(rows) == 3 {
					break
				}
			}
			produce(t, brokers, "orders", 0, "k", []byte(`{"id": 4, "price": "twelve"}`))
		})
		want := `kafka topic orders partition 0 offset 3: field "price": value "twelve": invalid input syntax for type numeric`
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("job error %v, want %q", err, want)
		}
		if got := ids(t, tb); got != "1,2,3" {
			t.Fatalf("committed before the failure: %q", got)
		}
	})
	for _, mode := range []string{"skip", "dead-letter"} {
		t.Run(mode, func(t *testing.T) {
			brokers := newCluster(t, 1, "orders")
			produce(t, brokers, "orders", 0, "k", []byte(`{"id": 1}`), []byte(`{"id": "x"}`), []byte(`{"id": 3}`))
			var mu sync.Mutex
			var letters []format.BadRecord
			var dl format.DeadLetterFunc
			if mode == "dead-letter" {
				dl = func(b format.BadRecord) error {
					mu.Lock()
					defer mu.Unlock()
					letters = append(letters, b)
					return nil
				}
			}
			tb, readers, err := badJob(t, brokers, mode, dl, 100, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := ids(t, tb); got != "1,3" {
				t.Fatalf("table %q, want 1,3", got)
			}
			if n := readers[0].Errors().Skipped(); n != 1 {
				t.Fatalf("skipped %d", n)
			}
			if mode == "dead-letter" && (len(letters) != 1 || string(letters[0].Raw) != `{"id": "x"}` || letters[0].Where != "partition 0 offset 1") {
				t.Fatalf("dead letters %+v", letters)
			}
		})
	}
}
