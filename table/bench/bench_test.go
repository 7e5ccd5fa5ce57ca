package bench

import (
	"encoding/json"
	"testing"

	"github.com/stratadb/strata/table/fileio"
)

// TestSmallRun checks the harness on a small workload: the scan returns
// every distinct key written. It prints the figures; it asserts no speed.
func TestSmallRun(t *testing.T) {
	c := Config{Rows: 20_000, Keys: 5_000, Buckets: 4, RowBytes: 100, EpochRows: 5_000, Lookups: 200, Seed: 3}
	res, err := Run(fileio.NewMem(), c)
	if err != nil {
		t.Fatal(err)
	}
	if res.ScannedRows < 4_900 || res.ScannedRows > 5_000 || res.Snapshots < 4 || len(res.CompactedFiles) != 4 || res.CompactedScanRowsPerSec == 0 {
		t.Fatalf("result %+v", res)
	}
	b, _ := json.Marshal(res)
	t.Logf("%s", b)
}

// BenchmarkTable runs a mid-size workload; `strata bench table` runs the
// full one.
func BenchmarkTable(b *testing.B) {
	for range b.N {
		c := DefaultConfig()
		c.Rows, c.Keys, c.EpochRows, c.Lookups = 1_000_000, 100_000, 100_000, 2_000
		res, err := Run(fileio.NewMem(), c)
		if err != nil {
			b.Fatal(err)
		}
		js, _ := json.Marshal(res)
		b.Logf("%s", js)
		b.ReportMetric(res.WriteRowsPerSec, "write_rows/s")
		b.ReportMetric(res.ScanRowsPerSec, "scan_rows/s")
		b.ReportMetric(res.PointLookupP99Us, "lookup_p99_us")
	}
}
