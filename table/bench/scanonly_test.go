package bench

import (
	"testing"

	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
)

// BenchmarkScanOnly measures the merge-on-read scan alone, on a fresh
// table handle each time (no decoded-file cache): as chunks (the scan the
// table bench reports) and as rows.
func BenchmarkScanOnly(b *testing.B) {
	fs := fileio.NewMem()
	c := DefaultConfig()
	c.Rows, c.Keys, c.EpochRows, c.Lookups = 400_000, 200_000, 200_000, 10
	if _, err := Run(fs, c); err != nil {
		b.Fatal(err)
	}
	b.Run("chunks", func(b *testing.B) {
		cpu0, n := processCPU(), 0
		for range b.N {
			tb, _ := table.Open(fs, TablePath)
			rows, err := scanChunks(tb)
			if err != nil || rows == 0 {
				b.Fatal(err)
			}
			n += rows
		}
		b.ReportMetric(perCPUSecond(n, cpu0), "rows/cpu-s")
	})
	b.Run("rows", func(b *testing.B) {
		cpu0, n := processCPU(), 0
		for range b.N {
			tb, _ := table.Open(fs, TablePath)
			rows, err := tb.ReadLatest()
			if err != nil || len(rows) == 0 {
				b.Fatal(err)
			}
			n += len(rows)
		}
		b.ReportMetric(perCPUSecond(n, cpu0), "rows/cpu-s")
	})
}
