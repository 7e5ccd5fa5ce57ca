package ingest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/ingest/ingesttest"
	"github.com/stratadb/strata/connector/tablesink"
	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// txnLog is an input of transactions: transaction i has i%5+1 rows (id,
// txn); it grows as the test runs, like a CDC stream.
type txnLog struct {
	mu    sync.Mutex
	txns  int
	avail int
	// atEnd is true while the latest Next was asked for the position after
	// the last transaction: the current attempt has read everything.
	atEnd bool
}

var rowTypes = []types.Type{types.Int64, types.Int64}

// start returns the first row id of transaction t (the total for t = txns).
func (l *txnLog) start(t int) uint64 {
	var n uint64
	for i := range t {
		n += uint64(i%5 + 1)
	}
	return n
}

func (l *txnLog) Next(pos uint64) (*types.Chunk, uint64, error) {
	l.mu.Lock()
	avail := l.avail
	l.atEnd = avail == l.txns && pos == l.start(l.txns)
	l.mu.Unlock()
	// Find the transaction starting at pos.
	for t := 0; t < avail; t++ {
		if l.start(t) == pos {
			n := uint64(t%5 + 1)
			c := types.NewChunk(rowTypes, int(n))
			for i := range n {
				c.Append(types.Insert, types.Row{types.NewInt64(int64(pos + i)), types.NewInt64(int64(t))})
			}
			return c, pos + n, nil
		}
	}
	return nil, pos, nil
}

// TestTransactionsNeverStraddleEpochs ingests a growing log of
// transactions through epoch-placing sources into a table, under the meta
// service's 2 ms epoch clock and 20 injected failures, then checks at every
// committed epoch that each transaction is in the table whole or not at
// all, and at the end that every row is there once.
func TestTransactionsNeverStraddleEpochs(t *testing.T) {
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Options{Store: store.NewMemory(), EpochInterval: 2 * time.Millisecond, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	name := catalog.Name("dev", "orders")
	if err := svc.CreateDatabase(ctx, catalog.Database{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateTable(ctx, catalog.Table{Name: name, Kind: catalog.KindTable, PrimaryKey: []string{"id"},
		Columns: []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "txn", Type: types.Int64}}}); err != nil {
		t.Fatal(err)
	}
	tb, err := table.Create(fileio.NewMem(), "wh/dev/orders",
		[]schema.Field{{Name: "id", Type: types.Int64}, {Name: "txn", Type: types.Int64, Nullable: true}}, []string{"id"}, map[string]string{"bucket": "2"})
	if err != nil {
		t.Fatal(err)
	}
	const txns = 300
	log := &txnLog{txns: txns}
	go func() { // the input grows over time
		for i := 1; i <= txns; i++ {
			log.mu.Lock()
			log.avail = i
			log.mu.Unlock()
			time.Sleep(200 * time.Microsecond)
		}
	}()
	start, err := svc.CurrentEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	until := start.Epoch + 150
	// The clock stops short of the last epoch until the source has read
	// the whole log: however slow the machine, the last epoch holds every
	// transaction.
	clock := ingesttest.HeldClock{Clock: svc, Until: until, Hold: func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return !log.atEnd
	}}
	in := testkit.NewInjector(3, 20, 30, time.Millisecond, 3*time.Millisecond)
	job := &graph.Job{Name: "ingest",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: 1, NewSource: func(int) operator.Source {
				return ingest.New(ingest.Config{Reader: log, Clock: clock, Name: "orders", StartEpoch: start.Epoch, UntilEpoch: until, Hold: in.Pending})
			}},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator {
				return testkit.Failing{Operator: tablesink.Sink(tb, name, "ingest", svc), In: in, Where: "sink"}
			}},
		},
		Edges: []graph.Edge{{From: "src", To: "sink", Partitioning: graph.Forward}},
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err = task.Run(rctx, job, task.Options{Policy: barrier.PolicyUnaligned, CheckpointInterval: 3 * time.Millisecond,
		TolerableFailures: 1000, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
		Restart: task.RestartStrategy{MaxAttempts: 1000, Delay: time.Millisecond},
		OnEvent: func(e task.Event) {
			if e.Kind == task.CheckpointCompleted {
				in.CheckpointCompleted()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if in.Failed() < 20 {
		t.Fatalf("only %d failures", in.Failed())
	}
	ce, err := tb.CommittedEpoch()
	if err != nil || ce != until {
		t.Fatalf("committed epoch %d (%v), want %d", ce, err, until)
	}
	mc, err := svc.CommittedEpoch(ctx, name)
	if err != nil || mc.Epoch != until {
		t.Fatalf("meta committed epoch %v (%v), want %d", mc.Epoch, err, until)
	}
	withData := 0
	for e := start.Epoch; e <= until; e++ {
		rows, err := tb.ReadAtEpoch(e)
		if err != nil {
			t.Fatal(err)
		}
		per := map[int64]int{}
		for _, r := range rows {
			per[r[1].Int64()]++
		}
		for txn, n := range per {
			if n != int(txn%5+1) {
				t.Fatalf("epoch %d holds %d of the %d rows of transaction %d", e, n, txn%5+1, txn)
			}
		}
		if len(rows) > 0 && len(rows) < int(log.start(txns)) {
			withData++
		}
		if e == until && len(rows) != int(log.start(txns)) {
			t.Fatalf("final table has %d rows, want %d", len(rows), log.start(txns))
		}
	}
	if withData < 3 {
		t.Logf("spread not reached on this machine (its load decides how epochs fall), the exactly-once checks above held: only %d epochs hold part of the input: epochs did not advance while it grew", withData)
	}
	t.Logf("%d failures; %d epochs show a partial input, never a partial transaction", in.Failed(), withData)
}
