package datagen

import (
	"testing"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// BenchmarkRows generates rows of (BIGINT sequence, INTEGER, DOUBLE,
// VARCHAR(32), TIMESTAMP) as fast as a Reader gives them and reports
// rows/s.
func BenchmarkRows(b *testing.B) {
	r, err := NewReader(Config{
		Columns: []catalog.Column{{Name: "id", Type: types.Int64}, {Name: "v", Type: types.Int32},
			{Name: "f", Type: types.Float64}, {Name: "s", Type: types.Type{Kind: types.KindVarchar, Length: 32}},
			{Name: "ts", Type: types.Timestamp}},
		Fields: map[string]Field{"id": {Kind: Sequence, Start: "1"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var pos uint64
	for b.Loop() {
		c, next, err := r.Next(pos)
		if err != nil || c == nil {
			b.Fatalf("Next(%d): %v", pos, err)
		}
		pos = next
	}
	b.ReportMetric(float64(pos)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(0, "ns/op")
}
