package bench

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
)

// fullTableFS returns a local FS holding the bench table of the full
// workload (DefaultConfig) as it stands after the writes, before any full
// compaction: the table `strata bench table` scans. The table is written
// once into $STRATA_BENCH_TABLE_DIR and reused by later runs; without that
// variable the benchmarks below are skipped (writing 10M upserts takes
// several seconds).
func fullTableFS(b *testing.B) fileio.FS {
	dir := os.Getenv("STRATA_BENCH_TABLE_DIR")
	if dir == "" {
		b.Skip("STRATA_BENCH_TABLE_DIR is not set")
	}
	fs, err := fileio.NewLocal(dir)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, TablePath)); err == nil {
		return fs
	}
	var res Result
	if _, err := Write(fs, fullConfig(), &res); err != nil {
		b.Fatal(err)
	}
	return fs
}

// fullConfig is DefaultConfig, scaled down by $STRATA_BENCH_SCALE (e.g.
// 5: a fifth of the rows, keys and rows per epoch, the same number of
// epochs and files) when set.
func fullConfig() Config {
	c := DefaultConfig()
	if s, err := strconv.Atoi(os.Getenv("STRATA_BENCH_SCALE")); err == nil && s > 1 {
		c.Rows, c.Keys, c.EpochRows = c.Rows/s, c.Keys/s, c.EpochRows/s
	}
	return c
}

// BenchmarkFullScan is the merge-on-read chunk scan of the full workload's
// table (see fullTableFS), on a fresh handle each time, as the table bench
// measures it.
func BenchmarkFullScan(b *testing.B) {
	fs := fullTableFS(b)
	b.ResetTimer()
	cpu0, n := processCPU(), 0
	for range b.N {
		tb, err := table.Open(fs, TablePath)
		if err != nil {
			b.Fatal(err)
		}
		rows, err := scanChunks(tb)
		if err != nil || rows == 0 {
			b.Fatal(err)
		}
		n += rows
	}
	b.ReportMetric(perCPUSecond(n, cpu0), "rows/cpu-s")
}

// BenchmarkWrite measures the write path alone: 2M upserts over 1M keys,
// 8 buckets, on an in-memory FS.
func BenchmarkWrite(b *testing.B) {
	c := DefaultConfig()
	c.Rows = 2_000_000
	var perCPU float64
	for range b.N {
		var res Result
		if _, err := Write(fileio.NewMem(), c, &res); err != nil {
			b.Fatal(err)
		}
		perCPU = res.WriteRowsPerCPUSec
	}
	b.ReportMetric(perCPU, "rows/cpu-s")
}
