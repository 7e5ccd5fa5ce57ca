package nexmark

import (
	"testing"
)

// benchmarkTable reads table t through a Reader as fast as it goes and
// reports events/s (all event numbers covered) and rows/s of the table.
func benchmarkTable(b *testing.B, t Table) {
	r, err := NewReader(t, Config{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var pos uint64
	rows := 0
	for b.Loop() {
		c, next, err := r.Next(pos)
		if err != nil || c == nil {
			b.Fatalf("Next(%d) = %v, %v", pos, c, err)
		}
		rows += c.Len()
		pos = next
	}
	s := b.Elapsed().Seconds()
	b.ReportMetric(float64(pos)/s, "events/s")
	b.ReportMetric(float64(rows)/s, "rows/s")
	b.ReportMetric(0, "ns/op")
}

func BenchmarkBid(b *testing.B)     { benchmarkTable(b, Bid) }
func BenchmarkAuction(b *testing.B) { benchmarkTable(b, Auction) }
func BenchmarkPerson(b *testing.B)  { benchmarkTable(b, Person) }
