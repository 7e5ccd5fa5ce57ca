package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/kafka"
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
)

var sinkCols = []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "v", Type: types.Text}, {Name: "amount", Type: types.Numeric}}

func TestEncoder(t *testing.T) {
	c := types.NewChunk([]types.Type{types.Int64, types.Text, types.Numeric}, 4)
	num, _ := types.ParseText(types.Numeric, "1.50", nil)
	c.Append(types.Insert, types.Row{types.NewInt64(1), types.NewText("a\"b"), num})
	c.Append(types.UpdateBefore, types.Row{types.NewInt64(1), types.NewText("a\"b"), num})
	c.Append(types.UpdateAfter, types.Row{types.NewInt64(1), types.NewText("c"), types.Null})
	c.Append(types.UpdateBefore, types.Row{types.NewInt64(2), types.NewText("x"), types.Null})
	c.Append(types.UpdateAfter, types.Row{types.NewInt64(3), types.NewText("y"), types.Null})
	c.Append(types.Delete, types.Row{types.NewInt64(1), types.NewText("c"), types.Null})
	show := func(ms []kafka.Message) string {
		var b strings.Builder
		for _, m := range ms {
			fmt.Fprintf(&b, "%s => %s\n", m.Key, m.Value)
		}
		return b.String()
	}
	up := kafka.NewEncoder(sinkCols, []int{0}, kafka.Upsert).Encode([]*types.Chunk{c})
	want := `{"id": 1} => {"id": 1, "v": "a\"b", "amount": 1.50}
{"id": 1} => {"id": 1, "v": "c", "amount": null}
{"id": 2} => 
{"id": 3} => {"id": 3, "v": "y", "amount": null}
{"id": 1} => 
`
	if show(up) != want {
		t.Fatalf("upsert:\n%s\nwant\n%s", show(up), want)
	}
	dbz := kafka.NewEncoder(sinkCols, []int{0}, kafka.DebeziumSink).Encode([]*types.Chunk{c})
	want = `{"id": 1} => {"before": null, "after": {"id": 1, "v": "a\"b", "amount": 1.50}, "op": "c"}
{"id": 1} => {"before": {"id": 1, "v": "a\"b", "amount": 1.50}, "after": {"id": 1, "v": "c", "amount": null}, "op": "u"}
{"id": 2} => {"before": {"id": 2, "v": "x", "amount": null}, "after": null, "op": "d"}
{"id": 2} => 
{"id": 3} => {"before": null, "after": {"id": 3, "v": "y", "amount": null}, "op": "u"}
{"id": 1} => {"before": {"id": 1, "v": "c", "amount": null}, "after": null, "op": "d"}
{"id": 1} => 
`
	if show(dbz) != want {
		t.Fatalf("debezium:\n%s\nwant\n%s", show(dbz), want)
	}
}

// changeLog is a growing input of transactions of changes to keyed rows:
// inserts, updates (-U and +U in one transaction) and deletes.
type changeLog struct {
	txns  [][]change
	mu    sync.Mutex
	avail int
}

type change struct {
	kind types.RowKind
	row  types.Row
}

func newChangeLog(seed uint64, txns, keys int) *changeLog {
	rng := rand.New(rand.NewPCG(seed, 3))
	live := map[int64]types.Row{}
	l := &changeLog{}
	n := 0
	for range txns {
		var tx []change
		for range 1 + rng.IntN(3) {
			n++
			k := int64(rng.IntN(keys))
			row := types.Row{types.NewInt64(k), types.NewText(fmt.Sprintf("v%d", n)), types.NewInt64(int64(n))}
			old, ok := live[k]
			switch {
			case !ok:
				tx = append(tx, change{types.Insert, row})
				live[k] = row
			case rng.IntN(4) == 0:
				tx = append(tx, change{types.Delete, old})
				delete(live, k)
			default:
				tx = append(tx, change{types.UpdateBefore, old}, change{types.UpdateAfter, row})
				live[k] = row
			}
		}
		l.txns = append(l.txns, tx)
	}
	return l
}

var changeTypes = []types.Type{types.Int64, types.Text, types.Numeric}

// Next implements ingest.Reader: the position is the transaction number.
func (l *changeLog) Next(pos uint64) (*types.Chunk, uint64, error) {
	l.mu.Lock()
	avail := l.avail
	l.mu.Unlock()
	if pos >= uint64(avail) {
		return nil, pos, nil
	}
	tx := l.txns[pos]
	c := types.NewChunk(changeTypes, len(tx))
	for _, ch := range tx {
		num, _ := types.ParseText(types.Numeric, fmt.Sprint(ch.row[2].Int64()), nil)
		c.Append(ch.kind, types.Row{ch.row[0], ch.row[1], num})
	}
	return c, pos + 1, nil
}

// upTo returns the changes of the transactions before position end.
func (l *changeLog) upTo(end uint64) *types.Chunk {
	c := types.NewChunk(changeTypes, 0)
	for i := range min(end, uint64(len(l.txns))) {
		tc, _, _ := l.Next(uint64(i))
		for r := range tc.Len() {
			c.Append(tc.Kind(r), tc.Row(r))
		}
	}
	return c
}

// consumeAll reads topic with read_committed until it has n records, then
// a while longer to catch extras; it returns each key's values in order.
func consumeAll(t *testing.T, brokers []string, topic string, n int) map[string][]string {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.FetchIsolationLevel(kgo.ReadCommitted()),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	got := map[string][]string{}
	count := 0
	deadline := time.Now().Add(20 * time.Second)
	quietUntil := time.Time{}
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		fs := cl.PollFetches(ctx)
		cancel()
		fs.EachRecord(func(r *kgo.Record) {
			got[string(r.Key)] = append(got[string(r.Key)], string(r.Value))
			count++
		})
		now := time.Now()
		if count >= n && quietUntil.IsZero() {
			quietUntil = now.Add(300 * time.Millisecond)
		}
		if (!quietUntil.IsZero() && now.After(quietUntil)) || now.After(deadline) {
			break
		}
	}
	if count != n {
		t.Fatalf("topic %s: %d records, want %d", topic, count, n)
	}
	return got
}

// TestSinkExactlyOnce runs a changelog through an ingest source into two
// Kafka sinks, upsert JSON with two subtasks and Debezium JSON with one,
// under 5 ms epochs, 3 ms checkpoints and 12 injected failures in the
// sinks. A read_committed consumer must then see every change up to the
// position where the source closed the last epoch exactly once and in
// order per key: no more (aborted attempts invisible), no fewer (prepared
// epochs re-committed after restores).
//
// The last epoch's position, not the end of the changelog: the source
// closes epochs by the wall clock, and a restore late in the run may find
// the clock past the last epoch and close it at the restored position
// (connector/ingest), so how much of the input the job reads depends on
// the machine's speed; what it reads must arrive once.
func TestSinkExactlyOnce(t *testing.T) {
	brokers := newCluster(t, 3, "upsert", "cdc")
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Options{Store: store.NewMemory(), EpochInterval: 5 * time.Millisecond, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	log := newChangeLog(9, 400, 50)
	go func() {
		// Ten transactions a millisecond: the input is complete long
		// before the last epoch, which the source must reach having read
		// all of it.
		for i := 1; i <= len(log.txns); i++ {
			log.mu.Lock()
			log.avail = i
			log.mu.Unlock()
			if i%10 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	start, err := svc.CurrentEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	until := start.Epoch + 200
	var lastPos atomic.Uint64
	in := testkit.NewInjector(21, 12, 20, time.Millisecond, 4*time.Millisecond)
	sink := func(topic, f string) func(int) operator.Operator {
		return func(int) operator.Operator {
			o, err := kafka.ParseSinkOptions(map[string]string{"connector": "kafka", "properties.bootstrap.server": strings.Join(brokers, ","),
				"topic": topic, "format": f, "transactional.id.prefix": "job-" + topic, "properties.transaction.timeout.ms": "60000"})
			if err != nil {
				panic(err)
			}
			s, err := kafka.NewSink(o, sinkCols, []string{"id"})
			if err != nil {
				panic(err)
			}
			return testkit.Failing{Operator: kafka.NewSinkOperator(s), In: in, Where: "sink " + topic}
		}
	}
	key := []types.Type{types.Int64}
	job := &graph.Job{Name: "to-kafka",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: 1, NewSource: func(int) operator.Source {
				return ingest.New(ingest.Config{Reader: log, Clock: svc, Name: "changes", StartEpoch: start.Epoch, UntilEpoch: until, Hold: in.Pending,
					OnClose: func(p ingest.Pair) {
						if p.Epoch == until {
							lastPos.Store(p.Position)
						}
					}})
			}},
			{Name: "upsert", Parallelism: 2, NewOperator: sink("upsert", "json")},
			{Name: "cdc", Parallelism: 1, NewOperator: sink("cdc", "debezium-json")},
		},
		Edges: []graph.Edge{
			{From: "src", To: "upsert", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: key},
			{From: "src", To: "cdc", Partitioning: graph.Forward},
		},
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
	if in.Failed() < 12 {
		t.Fatalf("only %d failures", in.Failed())
	}
	end := lastPos.Load()
	if end < 100 {
		t.Fatalf("the source read only %d transactions", end)
	}
	all := []*types.Chunk{log.upTo(end)}
	for _, tc := range []struct {
		topic string
		f     kafka.SinkFormat
	}{{"upsert", kafka.Upsert}, {"cdc", kafka.DebeziumSink}} {
		want := map[string][]string{}
		msgs := kafka.NewEncoder(sinkCols, []int{0}, tc.f).Encode(all)
		for _, m := range msgs {
			want[string(m.Key)] = append(want[string(m.Key)], string(m.Value))
		}
		got := consumeAll(t, brokers, tc.topic, len(msgs))
		for k, w := range want {
			if strings.Join(got[k], "\n") != strings.Join(w, "\n") {
				t.Fatalf("topic %s key %s:\n got %q\nwant %q", tc.topic, k, got[k], w)
			}
		}
		t.Logf("topic %s: %d messages over %d keys, each once", tc.topic, len(msgs), len(want))
	}
	t.Logf("%d failures; %d of %d transactions read", in.Failed(), end, len(log.txns))
}

func chunkOf(kind types.RowKind, ids ...int64) *types.Chunk {
	c := types.NewChunk(changeTypes, len(ids))
	for _, id := range ids {
		c.Append(kind, types.Row{types.NewInt64(id), types.NewText(fmt.Sprint("v", id)), types.Null})
	}
	return c
}

// TestSinkRecoversTransactions walks the sink through a failed attempt by
// hand: attempt 1 prepares epochs 5 to 7 and dies with epoch 5 in a
// completed checkpoint; attempt 2 re-commits epoch 5 (twice, as a second
// restore would), and its first prepare, of epoch 6, aborts what attempt
// 1 left open under epochs 6 and 7, so that a read_committed consumer
// sees epoch 5 once, then attempt 2's epoch 6, and nothing of attempt 1's
// epochs 6 and 7.
func TestSinkRecoversTransactions(t *testing.T) {
	brokers := newCluster(t, 1, "out")
	o, err := kafka.ParseSinkOptions(map[string]string{"properties.bootstrap.server": brokers[0], "topic": "out", "format": "json",
		"transactional.id.prefix": "recover"})
	if err != nil {
		t.Fatal(err)
	}
	attempt := func() *kafka.Sink {
		s, err := kafka.NewSink(o, sinkCols, []string{"id"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	s1 := attempt()
	descs := map[base.Epoch][]byte{}
	for e := base.Epoch(5); e <= 7; e++ {
		d, err := s1.Prepare(0, e, []*types.Chunk{chunkOf(types.Insert, int64(e)*10, int64(e)*10+1)})
		if err != nil {
			t.Fatal(err)
		}
		descs[e] = d
	}
	s1.Close() // attempt 1 dies; its transactions stay open

	s2 := attempt()
	for range 2 {
		if err := s2.Commit(0, 5, descs[5]); err != nil {
			t.Fatalf("re-commit of epoch 5: %v", err)
		}
	}
	d6, err := s2.Prepare(0, 6, []*types.Chunk{chunkOf(types.Insert, 66)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s2.Commit(0, 6, d6); err != nil {
		t.Fatal(err)
	}
	got := consumeAll(t, brokers, "out", 3)
	for k, want := range map[string]string{`{"id": 50}`: "v50", `{"id": 51}`: "v51", `{"id": 66}`: "v66"} {
		if len(got[k]) != 1 || !strings.Contains(got[k][0], want) {
			t.Fatalf("key %s: %q", k, got[k])
		}
	}
	// A descriptor of a transaction that was aborted cannot be committed.
	if err := s2.Commit(0, 7, descs[7]); err == nil || !errors.Is(err, base.ErrConflict) {
		t.Fatalf("commit of an aborted transaction: %v", err)
	}
}

func TestSinkOptions(t *testing.T) {
	o, err := kafka.ParseSinkOptions(map[string]string{"connector": "kafka", "properties.bootstrap.server": "a:1", "topic": "t",
		"format": "debezium-json", "properties.transaction.timeout.ms": "60000", "transactional.id.prefix": "p"})
	if err != nil || o.Format != kafka.DebeziumSink || o.TxnTimeout != time.Minute || o.TxnIDPrefix != "p" {
		t.Fatalf("%+v %v", o, err)
	}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"topic": "t"}, `"properties.bootstrap.server" is required`},
		{map[string]string{"properties.bootstrap.server": "a:1", "topic": "t", "format": "avro"}, `is not json (upsert) or debezium-json`},
		{map[string]string{"properties.bootstrap.server": "a:1", "topic": "t", "properties.transaction.timeout.ms": "-1"}, `is not a whole number of milliseconds`},
		{map[string]string{"properties.bootstrap.server": "a:1", "topic": "t", "errors": "skip"}, `unknown option "errors"`},
	} {
		_, err := kafka.ParseSinkOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("%v: %v, want %q", tc.opts, err, tc.want)
		}
	}
	o.Format = kafka.Upsert
	if _, err := kafka.NewSink(o, sinkCols, nil); err == nil || !strings.Contains(err.Error(), "needs a primary key") {
		t.Fatalf("upsert without a key: %v", err)
	}
	if _, err := kafka.NewSink(o, sinkCols, []string{"nope"}); err == nil || !strings.Contains(err.Error(), `"nope" is not a column`) {
		t.Fatalf("unknown key column: %v", err)
	}
}
