package bench

import (
	"testing"

	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
)

// BenchmarkScanOnly measures the merge-on-read scan alone, on a fresh
// table handle each time (no decoded-file cache).
func BenchmarkScanOnly(b *testing.B) {
	fs := fileio.NewMem()
	c := DefaultConfig()
	c.Rows, c.Keys, c.EpochRows, c.Lookups = 400_000, 200_000, 200_000, 10
	if _, err := Run(fs, c); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		tb, _ := table.Open(fs, "bench/t")
		rows, err := tb.ReadLatest()
		if err != nil || len(rows) == 0 {
			b.Fatal(err)
		}
	}
}
