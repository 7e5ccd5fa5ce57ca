package engine

import (
	"context"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// BenchmarkVerifyHopView verifies a HOP view (5 s slide, 10 s windows,
// GROUP BY the window) over 1M appended bids: the recomputation runs in
// DuckDB over the table's Parquet files, in bounded memory. It reports
// the input rows per second of one verification. Run with
// go test ./engine/ -run '^$' -bench VerifyHopView -benchtime 3x.
func BenchmarkVerifyHopView(b *testing.B) {
	ctx := context.Background()
	e, err := Open(ctx, Options{Dir: b.TempDir(), EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	bid := catalog.Name(DefaultDatabase, "bid")
	cols := []catalog.Column{{Name: "price", Type: types.Int64}, {Name: "date_time", Type: types.Timestamp}}
	if err := e.CreateTable(ctx, catalog.Table{Name: bid, Columns: cols}, false); err != nil {
		b.Fatal(err)
	}
	const rows, batch = 1_000_000, 100_000
	for i := int64(0); i < rows; i += batch {
		c := types.NewChunk([]types.Type{types.Int64, types.Timestamp}, batch)
		for j := i; j < i+batch; j++ {
			c.Append(types.Insert, types.Row{types.NewInt64(j % 1009), types.NewTimestamp(1_700_000_000_000_000 + j*100)})
		}
		if _, err := e.Apply(ctx, bid, c); err != nil {
			b.Fatal(err)
		}
	}
	hv := catalog.Name(DefaultDatabase, "hv")
	if err := e.CreateView(ctx, hv, "SELECT window_start, window_end, count(*) AS n, max(price) AS p FROM HOP(bid, date_time, INTERVAL '5' SECOND, INTERVAL '10' SECOND) GROUP BY window_start, window_end", nil, false); err != nil {
		b.Fatal(err)
	}
	if err := e.WaitCommitted(ctx, hv, e.ViewStartEpoch(ctx, hv)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		v, err := e.Verify(ctx, hv, 0)
		if err != nil {
			b.Fatal(err)
		}
		if !v.OK() || v.By != "duckdb" {
			b.Fatalf("%s (by %s)", v, v.By)
		}
	}
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}
