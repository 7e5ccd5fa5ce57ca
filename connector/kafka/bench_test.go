package kafka_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/kafka"
)

// BenchmarkReaderJSON reads JSON records of one partition from an
// in-process Kafka, one record per transaction as an ingest source does,
// and reports records per second.
func BenchmarkReaderJSON(b *testing.B) {
	const n = 50_000
	c := newClusterB(b)
	cl, err := kgo.NewClient(kgo.SeedBrokers(c...), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		b.Fatal(err)
	}
	var rs []*kgo.Record
	for i := range n {
		rs = append(rs, &kgo.Record{Value: fmt.Appendf(nil, `{"id": %d, "price": "%d.50"}`, i, i%1000)})
	}
	if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
		b.Fatal(err)
	}
	cl.Close()
	b.ResetTimer()
	var total time.Duration
	for range b.N {
		r, err := kafka.NewReader(kafka.ReaderConfig{Brokers: c, Topic: "orders", Columns: orderCols, Format: format.Options{Format: format.JSON}})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		rows := 0
		for pos := uint64(0); pos < n; {
			ch, next, err := r.Next(pos)
			if err != nil {
				b.Fatal(err)
			}
			if ch == nil {
				time.Sleep(100 * time.Microsecond)
				continue
			}
			rows += ch.Len()
			pos = next
		}
		total += time.Since(start)
		r.Close()
		if rows != n {
			b.Fatalf("%d rows", rows)
		}
	}
	b.ReportMetric(float64(n*b.N)/total.Seconds(), "records/s")
}
