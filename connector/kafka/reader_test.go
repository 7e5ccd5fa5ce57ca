package kafka_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/kafka"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

var _ ingest.Reader = (*kafka.Reader)(nil)

// newCluster starts an in-process Kafka with topic's partitions.
func newCluster(t *testing.T, partitions int32, topics ...string) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// produce writes values (nil is a tombstone) to one partition, in order,
// and returns their offsets.
func produce(t *testing.T, brokers []string, topic string, partition int32, key string, values ...[]byte) []int64 {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var rs []*kgo.Record
	for _, v := range values {
		rs = append(rs, &kgo.Record{Topic: topic, Partition: partition, Key: []byte(key), Value: v})
	}
	res := cl.ProduceSync(context.Background(), rs...)
	if err := res.FirstErr(); err != nil {
		t.Fatal(err)
	}
	var offs []int64
	for _, r := range res {
		offs = append(offs, r.Record.Offset)
	}
	return offs
}

var orderCols = []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "price", Type: types.Numeric}}

// next calls r.Next(pos) until it returns a chunk or an error (10 s at
// most).
func next(t *testing.T, r *kafka.Reader, pos uint64) (*types.Chunk, uint64, error) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		c, n, err := r.Next(pos)
		if err != nil || c != nil {
			return c, n, err
		}
		if n != pos {
			t.Fatalf("Next(%d) moved to %d without a chunk", pos, n)
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("Next(%d): nothing within 10 s", pos)
	return nil, 0, nil
}

func rowsText(c *types.Chunk) string {
	var parts []string
	for i := range c.Len() {
		var f []string
		for _, d := range c.Row(i) {
			if d.IsNull() {
				f = append(f, "NULL")
			} else {
				f = append(f, types.FormatText(d, nil))
			}
		}
		parts = append(parts, c.Kind(i).String()+"["+strings.Join(f, " ")+"]")
	}
	return strings.Join(parts, " ")
}

func newReader(t *testing.T, brokers []string, topic string, f format.Format, startup kafka.StartupMode, errs *format.Errors) *kafka.Reader {
	t.Helper()
	r, err := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: 0, Startup: startup, ReadCommitted: true,
		Columns: orderCols, Format: format.Options{Format: f}, Errors: errs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// TestReaderPositions reads records one transaction each, a tombstone as
// an empty transaction, and re-reads the same records after rewinds.
func TestReaderPositions(t *testing.T) {
	brokers := newCluster(t, 1, "orders")
	produce(t, brokers, "orders", 0, "k", []byte(`{"id": 1, "price": 1.10}`), []byte(`{"id": 2, "price": 2.20}`), nil, []byte(`{"id": 3}`))
	r := newReader(t, brokers, "orders", format.JSON, kafka.Earliest, nil)
	want := []struct {
		rows string
		next uint64
	}{{"+I[1 1.10]", 1}, {"+I[2 2.20]", 2}, {"", 3}, {"+I[3 NULL]", 4}}
	pos := uint64(0)
	for i, w := range want {
		c, n, err := next(t, r, pos)
		if err != nil {
			t.Fatal(err)
		}
		if rowsText(c) != w.rows || n != w.next {
			t.Fatalf("transaction %d at %d: %q -> %d, want %q -> %d", i, pos, rowsText(c), n, w.rows, w.next)
		}
		pos = n
	}
	if c, n, err := r.Next(pos); c != nil || n != pos || err != nil {
		t.Fatalf("past the end: %v %d %v", c, n, err)
	}
	// A rewind (a restore) reads the same transactions again.
	for _, at := range []uint64{1, 0, 3} {
		c, n, err := next(t, r, at)
		if err != nil {
			t.Fatal(err)
		}
		if w := want[at]; rowsText(c) != w.rows || n != w.next {
			t.Fatalf("rewind to %d: %q -> %d, want %q -> %d", at, rowsText(c), n, w.rows, w.next)
		}
	}
	// Records produced later arrive at the position the reader is at.
	produce(t, brokers, "orders", 0, "k", []byte(`{"id": 4, "price": "4"}`))
	if c, n, err := next(t, r, 4); err != nil || rowsText(c) != "+I[4 4]" || n != 5 {
		t.Fatalf("later record: %q %d %v", rowsText(c), n, err)
	}
}

// TestReaderLatest starts at the end of the partition and reads only what
// comes after; a rewind to position 0 in the same process starts there
// again.
func TestReaderLatest(t *testing.T) {
	brokers := newCluster(t, 1, "orders")
	produce(t, brokers, "orders", 0, "k", []byte(`{"id": 1}`), []byte(`{"id": 2}`))
	r := newReader(t, brokers, "orders", format.JSON, kafka.Latest, nil)
	if c, _, err := r.Next(0); c != nil || err != nil {
		t.Fatalf("latest read something old: %v %v", c, err)
	}
	time.Sleep(50 * time.Millisecond) // let the reader resolve the end
	deadline := time.Now().Add(10 * time.Second)
	for {
		// Wait until the end is resolved: produce only then, so that the
		// record is after it.
		if _, _, err := r.Next(0); err != nil {
			t.Fatal(err)
		}
		if kafka.LatestResolved(r) || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond)
	}
	produce(t, brokers, "orders", 0, "k", []byte(`{"id": 3}`))
	c, n, err := next(t, r, 0)
	if err != nil || rowsText(c) != "+I[3 NULL]" || n != 3 {
		t.Fatalf("latest: %q %d %v", rowsText(c), n, err)
	}
	r.Close()
	if c, n, err := next(t, r, 0); err != nil || rowsText(c) != "+I[3 NULL]" || n != 3 {
		t.Fatalf("rewind to 0: %q %d %v", rowsText(c), n, err)
	}
}

// TestReaderSkipsAbortedTransactions reads committed records only.
func TestReaderSkipsAbortedTransactions(t *testing.T) {
	brokers := newCluster(t, 1, "orders")
	ctx := context.Background()
	txn := func(id string, commit bool, vals ...string) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.TransactionalID(id), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		for _, v := range vals {
			if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "orders", Value: []byte(v)}).FirstErr(); err != nil {
				t.Fatal(err)
			}
		}
		if err := cl.EndTransaction(ctx, kgo.TransactionEndTry(commit)); err != nil {
			t.Fatal(err)
		}
	}
	txn("a", true, `{"id": 1}`)
	txn("b", false, `{"id": 2}`, `{"id": 3}`)
	txn("c", true, `{"id": 4}`)
	r := newReader(t, brokers, "orders", format.JSON, kafka.Earliest, nil)
	var got []string
	pos := uint64(0)
	for len(got) < 2 {
		c, n, err := next(t, r, pos)
		if err != nil {
			t.Fatal(err)
		}
		if c.Len() > 0 {
			got = append(got, rowsText(c))
		}
		pos = n
	}
	if strings.Join(got, ",") != "+I[1 NULL],+I[4 NULL]" {
		t.Fatalf("read %v", got)
	}
}

// TestReaderBadRecords checks the three error modes: fail names topic,
// partition, offset and field; skip counts; dead-letter hands over the
// bytes and the error. The record after the bad one is read in the last
// two.
func TestReaderBadRecords(t *testing.T) {
	brokers := newCluster(t, 1, "orders")
	produce(t, brokers, "orders", 0, "k", []byte(`{"id": 1}`), []byte(`{"id": 2, "price": "lots"}`), []byte(`{"id": 3}`))

	fail := newReader(t, brokers, "orders", format.JSON, kafka.Earliest, nil)
	if _, n, err := next(t, fail, 0); err != nil || n != 1 {
		t.Fatal(n, err)
	}
	_, n, err := next(t, fail, 1)
	want := `kafka topic orders partition 0 offset 1: field "price": value "lots": invalid input syntax for type numeric`
	if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, base.ErrInvalidArgument) || n != 1 {
		t.Fatalf("fail mode: %v (position %d), want %q", err, n, want)
	}
	if _, _, err := next(t, fail, 1); err == nil {
		t.Fatal("fail mode: the bad record passed on the second try")
	}

	skip, _ := format.NewErrors(format.Skip, nil)
	var mu sync.Mutex
	var letters []format.BadRecord
	dead, _ := format.NewErrors(format.DeadLetter, func(b format.BadRecord) error {
		mu.Lock()
		defer mu.Unlock()
		letters = append(letters, b)
		return nil
	})
	for _, errs := range []*format.Errors{skip, dead} {
		r := newReader(t, brokers, "orders", format.JSON, kafka.Earliest, errs)
		var got []string
		for pos := uint64(0); pos < 3; {
			c, n, err := next(t, r, pos)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, rowsText(c))
			pos = n
		}
		if fmt.Sprint(got) != "[+I[1 NULL]  +I[3 NULL]]" || errs.Skipped() != 1 {
			t.Fatalf("%s: %q, skipped %d", errs.Mode, got, errs.Skipped())
		}
	}
	if len(letters) != 1 || string(letters[0].Raw) != `{"id": 2, "price": "lots"}` || letters[0].Position != 1 ||
		letters[0].Where != "partition 0 offset 1" || string(letters[0].Key) != "k" || !strings.Contains(letters[0].Err.Error(), `field "price"`) {
		t.Fatalf("dead letters: %+v", letters)
	}
}

func TestSourceOptions(t *testing.T) {
	o, err := kafka.ParseSourceOptions(map[string]string{"connector": "kafka", "topic": "t", "properties.bootstrap.server": "a:1, b:2",
		"format": "debezium-json", "scan.startup.mode": "LATEST", "errors": "skip"})
	if err != nil || o.Topic != "t" || len(o.Brokers) != 2 || o.Startup != kafka.Latest || o.Format.Format != format.Debezium || o.Errors != format.Skip || !o.ReadCommitted {
		t.Fatalf("%+v %v", o, err)
	}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"topic": "t", "format": "json"}, `"properties.bootstrap.server" is required`},
		{map[string]string{"properties.bootstrap.server": "a:1", "format": "json"}, `"topic" is required`},
		{map[string]string{"properties.bootstrap.server": "a:1", "topic": "t"}, `"format" is required`},
		{map[string]string{"properties.bootstrap.server": "a:1", "topic": "t", "format": "json", "scan.startup.mode": "group-offsets"}, `"group-offsets" is not earliest or latest`},
		{map[string]string{"properties.bootstrap.server": "a:1", "topic": "t", "format": "json", "group.id": "g"}, `unknown option "group.id"`},
		{map[string]string{"properties.bootstrap.server": "a:1", "topic": "t", "format": "json", "errors": "ignore"}, `"ignore" is not one of fail, skip, dead-letter`},
		{map[string]string{"properties.bootstrap.server": " , ", "topic": "t", "format": "json"}, `names no broker`},
	} {
		_, err := kafka.ParseSourceOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("%v: %v, want %q", tc.opts, err, tc.want)
		}
	}
	if _, err := kafka.Partitions(context.Background(), newCluster(t, 2, "a"), "missing"); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("unknown topic: %v", err)
	}
}

// TestReaderFormats reads csv and avro (Confluent framing) records.
func TestReaderFormats(t *testing.T) {
	brokers := newCluster(t, 1, "csv", "avro")
	produce(t, brokers, "csv", 0, "k", []byte("5,1.25"), []byte(`6,"7"`))
	schema := `{"type": "record", "name": "order", "fields": [{"name": "id", "type": "long"}, {"name": "price", "type": ["null", "double"]}]}`
	var vals [][]byte
	for _, m := range []map[string]any{{"id": int64(8), "price": 2.5}, {"id": int64(9), "price": nil}} {
		b, err := avro.Marshal(avro.MustParse(schema), m)
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, append([]byte{0, 0, 0, 0, 7}, b...))
	}
	produce(t, brokers, "avro", 0, "k", vals...)
	for _, tc := range []struct {
		topic string
		opts  map[string]string
		want  string
	}{
		{"csv", map[string]string{"format": "csv"}, "+I[5 1.25] +I[6 7]"},
		{"avro", map[string]string{"format": "avro", "avro.schema": schema, "avro.wire": "confluent"}, "+I[8 2.5] +I[9 NULL]"},
	} {
		f, err := format.ParseOptions(tc.opts, "")
		if err != nil {
			t.Fatal(err)
		}
		r, err := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: tc.topic, Columns: orderCols, Format: f})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for pos := uint64(0); pos < 2; {
			c, n, err := next(t, r, pos)
			if err != nil {
				t.Fatal(err)
			}
			got, pos = append(got, rowsText(c)), n
		}
		r.Close()
		if strings.Join(got, " ") != tc.want {
			t.Fatalf("%s: %q, want %q", tc.topic, got, tc.want)
		}
	}
}

func newClusterB(b *testing.B) []string {
	b.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "orders"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	return c.ListenAddrs()
}

// TestReaderOffsetGone fails, naming the partition, when the position is
// below the log's start (retention deleted the records), instead of
// skipping to what is left.
func TestReaderOffsetGone(t *testing.T) {
	brokers := newCluster(t, 1, "orders")
	produce(t, brokers, "orders", 0, "k", []byte(`{"id": 1}`), []byte(`{"id": 2}`), []byte(`{"id": 3}`))
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	req := kmsg.NewPtrDeleteRecordsRequest()
	rt := kmsg.NewDeleteRecordsRequestTopic()
	rt.Topic = "orders"
	rp := kmsg.NewDeleteRecordsRequestTopicPartition()
	rp.Partition, rp.Offset = 0, 2
	rt.Partitions = append(rt.Partitions, rp)
	req.Topics = append(req.Topics, rt)
	resp, err := req.RequestWith(context.Background(), cl)
	if err != nil {
		t.Fatal(err)
	}
	if err := kerr.ErrorForCode(resp.Topics[0].Partitions[0].ErrorCode); err != nil {
		t.Fatal(err)
	}
	r := newReader(t, brokers, "orders", format.JSON, kafka.Earliest, nil)
	_, _, err = next(t, r, 1)
	if err == nil || !strings.Contains(err.Error(), "kafka topic orders partition 0 at offset 1") {
		t.Fatalf("reading a deleted offset: %v", err)
	}
	if c, n, err := next(t, r, 2); err != nil || rowsText(c) != "+I[3 NULL]" || n != 3 {
		t.Fatalf("reading what is left: %q %d %v", rowsText(c), n, err)
	}
}
