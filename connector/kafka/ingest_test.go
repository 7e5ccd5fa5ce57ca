package kafka_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/ingest/ingesttest"
	"github.com/stratadb/strata/connector/kafka"
	"github.com/stratadb/strata/connector/tablesink"
	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// cdcRecord is one Debezium record of the test stream and its effect on
// the upstream table: the key's row after it, or deleted.
type cdcRecord struct {
	key   int32
	value []byte // nil: tombstone
	row   *[2]string
}

// cdcStream makes a Debezium change stream of keys over partitions
// (key % partitions): a snapshot read of some keys, then creates,
// updates and deletes, each delete followed by a tombstone.
func cdcStream(seed uint64, keys, events, partitions int) [][]cdcRecord {
	rng := rand.New(rand.NewPCG(seed, 7))
	out := make([][]cdcRecord, partitions)
	live := map[int32][2]string{}
	image := func(k int32, r [2]string) string {
		return fmt.Sprintf(`{"id": %d, "v": %q, "n": %s}`, k, r[0], r[1])
	}
	emit := func(k int32, op string, before *[2]string, after *[2]string) {
		b, a := "null", "null"
		if before != nil {
			b = image(k, *before)
		}
		if after != nil {
			a = image(k, *after)
		}
		v := fmt.Sprintf(`{"schema": null, "payload": {"before": %s, "after": %s, "op": %q, "ts_ms": 0}}`, b, a, op)
		p := int(k) % partitions
		out[p] = append(out[p], cdcRecord{key: k, value: []byte(v), row: after})
		if op == "d" {
			out[p] = append(out[p], cdcRecord{key: k}) // tombstone
		}
	}
	for k := range int32(keys / 2) {
		r := [2]string{fmt.Sprintf("snap-%d", k), fmt.Sprint(k)}
		live[k] = r
		emit(k, "r", nil, &r)
	}
	for i := range events {
		k := int32(rng.IntN(keys))
		old, ok := live[k]
		switch {
		case !ok:
			r := [2]string{fmt.Sprintf("new-%d", i), fmt.Sprint(i)}
			live[k] = r
			emit(k, "c", nil, &r)
		case rng.IntN(10) < 7:
			r := [2]string{fmt.Sprintf("upd-%d", i), fmt.Sprint(i)}
			live[k] = r
			emit(k, "u", &old, &r)
		default:
			delete(live, k)
			emit(k, "d", &old, nil)
		}
	}
	return out
}

// stateAt applies the first n records of a partition's stream.
func stateAt(recs []cdcRecord, n uint64, into map[int32][2]string) {
	for _, r := range recs[:min(n, uint64(len(recs)))] {
		switch {
		case r.value == nil: // tombstone
		case r.row == nil:
			delete(into, r.key)
		default:
			into[r.key] = *r.row
		}
	}
}

// TestIngestDebeziumExactlyOnce feeds a Debezium stream over three
// partitions, produced while the job runs, through one ingest source
// subtask per partition into a primary-key table, under the meta service's
// 2 ms epoch clock and 15 injected failures. At every committed epoch the
// table must equal the upstream table after each partition's records
// before the offset where its subtask closed that epoch (DESIGN.md
// invariants 1 and 3: a record lost or applied twice shows as a wrong row
// or a missing or extra key), and at the end the upstream table.
func TestIngestDebeziumExactlyOnce(t *testing.T) {
	const partitions = 3
	brokers := newCluster(t, partitions, "cdc")
	stream := cdcStream(5, 90, 1500, partitions)

	ctx := context.Background()
	svc, err := service.Open(ctx, service.Options{Store: store.NewMemory(), EpochInterval: 2 * time.Millisecond, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	name := catalog.Name("dev", "items")
	cols := []catalog.Column{{Name: "id", Type: types.Int32, NotNull: true}, {Name: "v", Type: types.Text}, {Name: "n", Type: types.Int64}}
	if err := svc.CreateDatabase(ctx, catalog.Database{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateTable(ctx, catalog.Table{Name: name, Kind: catalog.KindTable, Columns: cols, PrimaryKey: []string{"id"}}); err != nil {
		t.Fatal(err)
	}
	tb, err := table.Create(fileio.NewMem(), "wh/dev/items",
		[]schema.Field{{Name: "id", Type: types.Int32}, {Name: "v", Type: types.Text, Nullable: true}, {Name: "n", Type: types.Int64, Nullable: true}},
		[]string{"id"}, map[string]string{"bucket": "2"})
	if err != nil {
		t.Fatal(err)
	}
	readers, err := kafka.OpenReaders(ctx, map[string]string{"connector": "kafka", "topic": "cdc", "properties.bootstrap.server": brokers[0],
		"format": "debezium-json", "scan.startup.mode": "earliest"}, cols, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(readers) != partitions {
		t.Fatalf("%d readers", len(readers))
	}
	tracked := make([]*trackedReader, len(readers))
	for i, r := range readers {
		defer r.Close()
		if r.Partition() != int32(i) {
			t.Fatalf("reader %d reads partition %d", i, r.Partition())
		}
		tracked[i] = &trackedReader{Reader: r}
	}

	// The upstream writes while the job runs, ten records at a time per
	// partition.
	produced := make(chan error, 1)
	go func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			produced <- err
			return
		}
		defer cl.Close()
		for at := 0; ; at += 10 {
			more := false
			for p := range partitions {
				var rs []*kgo.Record
				for _, r := range stream[p][min(at, len(stream[p])):min(at+10, len(stream[p]))] {
					rs = append(rs, &kgo.Record{Topic: "cdc", Partition: int32(p), Key: fmt.Append(nil, r.key), Value: r.value})
				}
				if len(rs) == 0 {
					continue
				}
				more = true
				if err := cl.ProduceSync(ctx, rs...).FirstErr(); err != nil {
					produced <- err
					return
				}
			}
			if !more {
				produced <- nil
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()

	start, err := svc.CurrentEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	until := start.Epoch + 300
	clock := ingesttest.HeldClock{Clock: svc, Until: until, Hold: func() bool {
		for p, r := range tracked {
			if r.at.Load() < uint64(len(stream[p])) {
				return true
			}
		}
		return false
	}}
	var mu sync.Mutex
	closedAt := make([]map[base.Epoch]uint64, partitions)
	for i := range closedAt {
		closedAt[i] = map[base.Epoch]uint64{}
	}
	in := testkit.NewInjector(11, 15, 30, time.Millisecond, 3*time.Millisecond)
	job := &graph.Job{Name: "ingest-cdc",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: partitions, NewSource: func(i int) operator.Source {
				return ingest.New(ingest.Config{Reader: tracked[i], Clock: clock, Name: fmt.Sprintf("cdc[%d]", i), StartEpoch: start.Epoch, UntilEpoch: until, Hold: in.Pending,
					OnClose: func(p ingest.Pair) {
						mu.Lock()
						closedAt[i][p.Epoch] = p.Position
						mu.Unlock()
					}})
			}},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator {
				return testkit.Failing{Operator: tablesink.Sink(tb, name, "ingest-cdc", svc), In: in, Where: "sink"}
			}},
		},
		Edges: []graph.Edge{{From: "src", To: "sink", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int32}}},
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
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	if in.Failed() < 15 {
		t.Fatalf("only %d failures", in.Failed())
	}
	if ce, err := tb.CommittedEpoch(); err != nil || ce != until {
		t.Fatalf("committed epoch %d (%v), want %d", ce, err, until)
	}
	partial := 0
	for e := start.Epoch; e <= until; e++ {
		want := map[int32][2]string{}
		complete := true
		for p := range partitions {
			pos, ok := closedAt[p][e]
			if !ok {
				t.Fatalf("partition %d never closed epoch %d", p, e)
			}
			stateAt(stream[p], pos, want)
			complete = complete && pos == uint64(len(stream[p]))
		}
		rows, err := tb.ReadAtEpoch(e)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int32][2]string{}
		for _, r := range rows {
			k := int32(r[0].Int64())
			if _, dup := got[k]; dup {
				t.Fatalf("epoch %d: key %d twice", e, k)
			}
			got[k] = [2]string{r[1].Str(), fmt.Sprint(r[2].Int64())}
		}
		if len(got) != len(want) {
			t.Fatalf("epoch %d: %d rows, want %d", e, len(got), len(want))
		}
		for k, w := range want {
			if got[k] != w {
				t.Fatalf("epoch %d: key %d is %v, want %v", e, k, got[k], w)
			}
		}
		if e == until && !complete {
			t.Fatalf("the last epoch closed before the end of the stream")
		}
		if !complete && len(rows) > 0 {
			partial++
		}
	}
	if partial < 3 {
		t.Logf("spread not reached on this machine (its load decides how epochs fall), the exactly-once checks above held: only %d epochs hold part of the stream: epochs did not advance while it grew", partial)
	}
	var final []int32
	want := map[int32][2]string{}
	for p := range partitions {
		stateAt(stream[p], uint64(len(stream[p])), want)
	}
	for k := range want {
		final = append(final, k)
	}
	slices.Sort(final)
	t.Logf("%d failures; %d epochs hold a prefix of the stream; %d keys at the end", in.Failed(), partial, len(final))
}
