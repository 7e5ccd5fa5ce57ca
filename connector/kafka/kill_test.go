package kafka_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/ingest/ingesttest"
	"github.com/stratadb/strata/connector/kafka"
	"github.com/stratadb/strata/connector/tablesink"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// killChild tells a child process what to run.
type killChild struct {
	Work    string
	Brokers []string
	Base    time.Time // epoch 1 starts here
	Until   base.Epoch
	// Ends, for the last child, are the partitions' record counts: its
	// clock stays below Until until every subtask has read that far, so
	// that the job ends after the whole stream whatever the machine's
	// speed.
	Ends []uint64
}

const (
	killEnv       = "STRATA_KAFKA_KILL_CHILD"
	killInterval  = 10 * time.Millisecond
	killTable     = "wh/dev/items"
	killSinkTopic = "out"
)

var killCols = []catalog.Column{{Name: "id", Type: types.Int32, NotNull: true}, {Name: "v", Type: types.Text}, {Name: "n", Type: types.Int64}}

// trackedReader remembers the last position its Reader returned.
type trackedReader struct {
	*kafka.Reader
	at atomic.Uint64
}

func (r *trackedReader) Next(pos uint64) (*types.Chunk, uint64, error) {
	c, next, err := r.Reader.Next(pos)
	if err == nil {
		r.at.Store(next)
	}
	return c, next, err
}

// runKillChild runs the job: the Debezium topic's three partitions, one
// ingest source subtask each, into a table on disk and into an upsert
// topic, checkpoints on disk, until the job finishes or the parent kills
// the process. Each source subtask appends the (epoch, position) pairs it
// closes to closes-<i>.log (after a restore a pair may be told again; the
// last telling counts).
func runKillChild(raw string) {
	var c killChild
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		panic(err)
	}
	fail := ingesttest.ChildFail
	fs, err := fileio.NewLocal(c.Work)
	if err != nil {
		fail(err)
	}
	tb, err := table.Open(fs, killTable)
	if err != nil {
		fail(err)
	}
	ctx := context.Background()
	readers, err := kafka.OpenReaders(ctx, map[string]string{"topic": "cdc", "properties.bootstrap.server": strings.Join(c.Brokers, ","),
		"format": string(format.Debezium)}, killCols, nil)
	if err != nil {
		fail(err)
	}
	so, err := kafka.ParseSinkOptions(map[string]string{"topic": killSinkTopic, "properties.bootstrap.server": strings.Join(c.Brokers, ","),
		"transactional.id.prefix": "kill-job-out"})
	if err != nil {
		fail(err)
	}
	onClose := make([]func(ingest.Pair), len(readers))
	for i := range readers {
		if onClose[i], err = ingesttest.CloseLog(filepath.Join(c.Work, fmt.Sprintf("closes-%d.log", i))); err != nil {
			fail(err)
		}
	}
	tracked := make([]*trackedReader, len(readers))
	for i, r := range readers {
		tracked[i] = &trackedReader{Reader: r}
	}
	clock := ingesttest.WallClock{Base: c.Base, Interval: killInterval, Until: c.Until}
	if c.Ends != nil {
		clock.Hold = func() bool {
			for i, r := range tracked {
				if r.at.Load() < c.Ends[i] {
					return true
				}
			}
			return false
		}
	}
	job := &graph.Job{Name: "kill-job",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: len(readers), NewSource: func(i int) operator.Source {
				return ingest.New(ingest.Config{Reader: tracked[i], Clock: clock, Name: fmt.Sprintf("cdc[%d]", i), StartEpoch: 1, UntilEpoch: c.Until,
					OnClose: onClose[i]})
			}},
			{Name: "table", Parallelism: 1, NewOperator: func(int) operator.Operator {
				return tablesink.Sink(tb, catalog.Name("dev", "items"), "kill-job", nil)
			}},
			{Name: "kafka", Parallelism: 1, NewOperator: func(int) operator.Operator {
				s, err := kafka.NewSink(so, killCols, []string{"id"})
				if err != nil {
					panic(err)
				}
				return kafka.NewSinkOperator(s)
			}},
		},
		Edges: []graph.Edge{
			{From: "src", To: "table", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int32}},
			{From: "src", To: "kafka", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int32}},
		},
	}
	err = task.Run(ctx, job, ingesttest.ChildOptions(c.Work))
	if err != nil {
		fail(err)
	}
	os.Exit(0)
}

// TestKillNine is exactly-once across kill -9 for the Kafka source and
// sink: child processes run a job from a Debezium topic (three
// partitions, written while the children run) into a primary-key table
// on disk and an upsert topic, and are killed with SIGKILL at random
// moments, ten times; each child resumes from the newest completed
// checkpoint on disk and re-commits its prepared epochs; a last child
// runs to the job's end. Then the table at every epoch must equal the
// upstream table after each partition's records before the offset where
// its subtask closed that epoch, at the end the whole upstream table, and
// a read_committed consumer of the upsert topic must see each key's
// changes once, in order.
func TestKillNine(t *testing.T) {
	if raw := os.Getenv(killEnv); raw != "" {
		runKillChild(raw)
		return
	}
	if testing.Short() {
		t.Skip("kills child processes")
	}
	const partitions = 3
	brokers := newCluster(t, partitions, "cdc", killSinkTopic)
	stream := cdcStream(17, 60, 900, partitions)
	work := t.TempDir()
	fs, err := fileio.NewLocal(work)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := table.Create(fs, killTable,
		[]schema.Field{{Name: "id", Type: types.Int32}, {Name: "v", Type: types.Text, Nullable: true}, {Name: "n", Type: types.Int64, Nullable: true}},
		[]string{"id"}, map[string]string{"bucket": "2"}); err != nil {
		t.Fatal(err)
	}
	cfg := killChild{Work: work, Brokers: brokers, Base: time.Now(), Until: 1 << 40}

	// The upstream writes ten records per partition every 10 ms while
	// children come and go.
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
				if len(rs) > 0 {
					more = true
					if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
						produced <- err
						return
					}
				}
			}
			if !more {
				produced <- nil
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()

	children := ingesttest.Children{T: t, Test: "TestKillNine", Env: killEnv, Checkpoints: filepath.Join(work, "checkpoints")}
	const kills = 10
	afterKills := children.KillRandomly(rand.New(rand.NewPCG(4, 2)), kills, cfg, nil)
	if err := <-produced; err != nil {
		t.Fatal(err)
	}
	// The last child runs until it has read the whole stream, and 20
	// epochs more.
	cfg.Until = ingesttest.WallClock{Base: cfg.Base, Interval: killInterval}.Now() + 20
	for p := range partitions {
		cfg.Ends = append(cfg.Ends, uint64(len(stream[p])))
	}
	children.Start(cfg).Wait(t, 60*time.Second)

	tb, err := table.Open(fs, killTable)
	if err != nil {
		t.Fatal(err)
	}
	if ce, err := tb.CommittedEpoch(); err != nil || ce != cfg.Until {
		t.Fatalf("committed epoch %d (%v), want %d", ce, err, cfg.Until)
	}
	closes := make([]map[base.Epoch]uint64, partitions)
	for p := range partitions {
		closes[p] = ingesttest.ReadCloses(t, filepath.Join(work, fmt.Sprintf("closes-%d.log", p)))
	}
	partial := 0
	for e := base.Epoch(1); e <= cfg.Until; e++ {
		want := map[int32][2]string{}
		complete := true
		for p := range partitions {
			pos, ok := closes[p][e]
			if !ok {
				t.Fatalf("partition %d: epoch %d was never closed", p, e)
			}
			stateAt(stream[p], pos, want)
			complete = complete && pos == uint64(len(stream[p]))
		}
		rows, err := tb.ReadAtEpoch(e)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != len(want) {
			t.Fatalf("epoch %d: %d rows, want %d", e, len(rows), len(want))
		}
		for _, r := range rows {
			k := int32(r[0].Int64())
			if w := want[k]; r[1].Str() != w[0] || fmt.Sprint(r[2].Int64()) != w[1] {
				t.Fatalf("epoch %d: key %d is (%s, %d), want %v", e, k, r[1].Str(), r[2].Int64(), w)
			}
		}
		if e == cfg.Until && !complete {
			t.Fatalf("the last epoch closed before the end of the stream")
		}
		if !complete && len(rows) > 0 {
			partial++
		}
	}
	if partial < 3 {
		t.Logf("spread not reached on this machine (its load decides how epochs fall), the exactly-once checks above held: only %d epochs hold part of the stream", partial)
	}

	// The upsert topic: each key's messages are the encoding of its
	// changes, in order, once.
	dec := format.NewDebezium(killCols)
	enc := kafka.NewEncoder(killCols, []int{0}, kafka.Upsert)
	want := map[string][]string{}
	n := 0
	for p := range partitions {
		for _, r := range stream[p] {
			chs, err := dec.Decode(nil, r.value)
			if err != nil {
				t.Fatal(err)
			}
			c := format.AppendChanges(nil, format.Types(killCols), chs)
			for _, m := range enc.Encode([]*types.Chunk{c}) {
				want[string(m.Key)] = append(want[string(m.Key)], string(m.Value))
				n++
			}
		}
	}
	got := consumeAll(t, brokers, killSinkTopic, n)
	for k, w := range want {
		if strings.Join(got[k], "\n") != strings.Join(w, "\n") {
			t.Fatalf("topic %s key %s:\n got %q\nwant %q", killSinkTopic, k, got[k], w)
		}
	}
	t.Logf("%d kills; checkpoint %d was the newest after them; %d epochs, %d hold a prefix of the stream; %d upsert messages once each",
		kills, afterKills, cfg.Until, partial, n)
}
