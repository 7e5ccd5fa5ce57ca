package duckscan

import (
	"flag"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/table/bench"
	"github.com/stratadb/strata/table/fileio"
)

// DuckDB's scan of the compacted files counts exactly the rows our scan
// returns.
func TestScanMatchesOurs(t *testing.T) {
	dir := t.TempDir()
	fs, err := fileio.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := bench.Config{Rows: 20_000, Keys: 4_000, Buckets: 4, RowBytes: 100, EpochRows: 5_000, Lookups: 10, Seed: 2}
	res, err := bench.Run(fs, c)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, p := range res.CompactedFiles {
		paths = append(paths, filepath.Join(dir, p))
	}
	n, rate, _, err := Scan(paths, []string{"sum(k)", "sum(v)", "sum(length(pad))"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(res.ScannedRows) {
		t.Fatalf("duckdb counts %d rows, our scan %d", n, res.ScannedRows)
	}
	t.Logf("duckdb_scan_rows_per_sec %.0f, ours after compaction %.0f, ours merge-on-read %.0f", rate, res.CompactedScanRowsPerSec, res.ScanRowsPerSec)
}

var full = flag.Bool("full", false, "run BenchmarkTableVsDuckDB at the issue's scale: 10M upserts over 1M keys")

// BenchmarkTableVsDuckDB runs a mid-size workload (with -full the issue's
// workload) on local disk and prints our figures with DuckDB's scan of the
// same compacted files.
func BenchmarkTableVsDuckDB(b *testing.B) {
	for range b.N {
		dir := b.TempDir()
		fs, err := fileio.NewLocal(dir)
		if err != nil {
			b.Fatal(err)
		}
		c := bench.DefaultConfig()
		if !*full {
			c.Rows, c.Keys, c.EpochRows, c.Lookups = 1_000_000, 100_000, 100_000, 2_000
		}
		res, err := bench.Run(fs, c)
		if err != nil {
			b.Fatal(err)
		}
		var paths []string
		for _, p := range res.CompactedFiles {
			paths = append(paths, filepath.Join(dir, p))
		}
		_, rate, _, err := Scan(paths, []string{"sum(k)", "sum(v)", "sum(length(pad))"}, c.ScanRuns)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(res.WriteRowsPerSec, "write_rows/s")
		b.ReportMetric(res.ScanRowsPerSec, "scan_rows/s")
		b.ReportMetric(res.CompactedScanRowsPerSec, "compacted_scan_rows/s")
		b.ReportMetric(rate, "duckdb_scan_rows/s")
		b.ReportMetric(res.PointLookupP99Us, "lookup_p99_us")
	}
}
