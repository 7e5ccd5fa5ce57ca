package bench

import (
	"fmt"
	"math/rand"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// Config is one benchmark run.
type Config struct {
	Rows, Keys, Buckets, RowBytes, EpochRows int
	Lookups                                  int
	// ScanRuns is how many times each scan runs, each on a fresh table
	// handle (nothing cached); the fastest run is reported. On a machine
	// shared with other work the slower runs measure the neighbours.
	ScanRuns int
	// Options are extra table options (e.g. "changelog-producer").
	Options map[string]string
	Seed    int64
}

// DefaultConfig is the workload: 10M upserts over 1M keys,
// 8 buckets, 100-byte rows.
func DefaultConfig() Config {
	return Config{Rows: 10_000_000, Keys: 1_000_000, Buckets: 8, RowBytes: 100, EpochRows: 500_000, Lookups: 10_000, ScanRuns: 3, Seed: 1}
}

// Result holds the printed figures.
type Result struct {
	WriteRowsPerSec  float64 `json:"write_rows_per_sec"`
	ScanRowsPerSec   float64 `json:"scan_rows_per_sec"`
	PointLookupP99Us float64 `json:"point_lookup_p99_us"`
	// ScannedRows is the number of rows of the final scan (the distinct
	// keys written).
	ScannedRows int `json:"scanned_rows"`
	// Snapshots and DataFiles describe the table after the writes.
	Snapshots int `json:"snapshots"`
	DataFiles int `json:"data_files"`
	// CompactedScanRowsPerSec is our scan again after a full compaction
	// (one sorted file per bucket), the files DuckDB is compared on.
	CompactedScanRowsPerSec float64 `json:"compacted_scan_rows_per_sec"`
	// RowScanRowsPerSec is the merge-on-read scan that returns rows of
	// datums (Table.ReadLatest) rather than chunks, on a fresh handle.
	RowScanRowsPerSec float64 `json:"row_scan_rows_per_sec"`
	// WriteRowsPerCPUSec and ScanRowsPerCPUSec are the write and
	// merge-on-read scan rates per second of the process's CPU time (user
	// plus system, all threads) rather than of wall time: on a machine
	// shared with other work, wall time follows the load, CPU time much
	// less. Zero where the platform does not report CPU time.
	WriteRowsPerCPUSec float64 `json:"write_rows_per_cpu_sec"`
	ScanRowsPerCPUSec  float64 `json:"scan_rows_per_cpu_sec"`
	// CompactedFiles are the paths (relative to the FS root) of the data
	// files after the full compaction, for an outside reader to scan.
	CompactedFiles []string `json:"-"`
}

// Run executes c on fs (a fresh directory) and returns the figures.
func Run(fs fileio.FS, c Config) (Result, error) {
	var res Result
	r, err := Write(fs, c, &res)
	if err != nil {
		return res, err
	}

	n, perSec, perCPU, err := bestOf(fs, c.ScanRuns, scanChunks)
	if err != nil {
		return res, err
	}
	res.ScanRowsPerSec, res.ScanRowsPerCPUSec, res.ScannedRows = perSec, perCPU, n
	rowsRead, perSec, _, err := bestOf(fs, c.ScanRuns, func(tb *table.Table) (int, error) {
		rows, err := tb.ReadLatest()
		return len(rows), err
	})
	if err != nil {
		return res, err
	}
	if rowsRead != n {
		return res, fmt.Errorf("bench: the row scan read %d rows, the chunk scan %d", rowsRead, n)
	}
	res.RowScanRowsPerSec = perSec

	// A fresh table handle: lookups read from storage, not from caches.
	fresh, err := table.Open(fs, TablePath)
	if err != nil {
		return res, err
	}

	lat := make([]time.Duration, 0, c.Lookups)
	for i := 0; i < c.Lookups; i++ {
		key := types.Row{types.NewInt64(int64(r.Intn(c.Keys)))}
		t0 := time.Now()
		if _, err := fresh.Lookup(key); err != nil {
			return res, err
		}
		lat = append(lat, time.Since(t0))
	}
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		res.PointLookupP99Us = float64(lat[len(lat)*99/100].Microseconds())
	}
	sn, err := fresh.Latest()
	if err != nil {
		return res, err
	}
	res.Snapshots = int(sn.ID)
	live, err := fresh.Store().LiveFiles(sn)
	if err != nil {
		return res, err
	}
	res.DataFiles = len(live)

	if _, err := fresh.Compact("bench-compactor", true); err != nil {
		return res, err
	}
	if _, res.CompactedScanRowsPerSec, _, err = bestOf(fs, c.ScanRuns, scanChunks); err != nil {
		return res, err
	}
	compacted, err := table.Open(fs, TablePath)
	if err != nil {
		return res, err
	}
	sn, err = compacted.Latest()
	if err != nil {
		return res, err
	}
	live, err = compacted.Store().LiveFiles(sn)
	if err != nil {
		return res, err
	}
	for _, e := range live {
		res.CompactedFiles = append(res.CompactedFiles, compacted.Store().DataPath(e.Bucket, e.File.Name))
	}
	return res, nil
}

// bestOf runs scan runs times (at least once), each on a fresh handle of
// the bench table, and returns the rows it read, the highest rows per
// second and the highest rows per second of process CPU time.
func bestOf(fs fileio.FS, runs int, scan func(*table.Table) (int, error)) (n int, perSec, perCPU float64, err error) {
	for range max(runs, 1) {
		tb, err := table.Open(fs, TablePath)
		if err != nil {
			return 0, 0, 0, err
		}
		runtime.GC() // the previous run's garbage is not this run's
		start, cpu0 := time.Now(), processCPU()
		if n, err = scan(tb); err != nil {
			return 0, 0, 0, err
		}
		perSec = max(perSec, float64(n)/time.Since(start).Seconds())
		perCPU = max(perCPU, perCPUSecond(n, cpu0))
	}
	return n, perSec, perCPU, nil
}

// ProcessCPU returns the user plus system CPU time the process has used
// (all threads), 0 where the platform does not report it.
func ProcessCPU() time.Duration { return processCPU() }

// scanChunks reads the latest snapshot of tb as chunks and folds every
// value, as DuckDB's scan it is compared with does (count(*), sum(k),
// sum(v), sum(length(pad))). It returns the row count.
func scanChunks(tb *table.Table) (int, error) {
	chunks, err := tb.ReadLatestChunks()
	if err != nil {
		return 0, err
	}
	var n int
	var sumK, sumV, sumLen int64
	for _, c := range chunks {
		n += c.Len()
		k, v, pad := &c.Cols[0], &c.Cols[1], &c.Cols[2]
		for i, x := range k.Ints {
			sumK += x
			if !v.Nulls[i] {
				sumV += v.Ints[i]
			}
			if !pad.Nulls[i] {
				sumLen += int64(len(pad.Strs[i]))
			}
		}
	}
	folded = sumK + sumV + sumLen
	return n, nil
}

// folded keeps scanChunks' sums from being optimised away.
var folded int64

// perCPUSecond returns rows per second of process CPU time since cpu0 (a
// processCPU reading), or 0 when CPU time is not reported.
func perCPUSecond(rows int, cpu0 time.Duration) float64 {
	cpu := processCPU() - cpu0
	if cpu <= 0 {
		return 0
	}
	return float64(rows) / cpu.Seconds()
}

// Write creates the bench table on fs (a fresh directory) and writes c's
// upserts into it, epoch by epoch, setting res's write figures. It returns
// the random source the keys were drawn from, for the lookups that follow.
func Write(fs fileio.FS, c Config, res *Result) (*rand.Rand, error) {
	opts := map[string]string{"bucket": fmt.Sprint(c.Buckets)}
	for k, v := range c.Options {
		opts[k] = v
	}
	tb, err := table.Create(fs, TablePath, []schema.Field{
		{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64, Nullable: true}, {Name: "pad", Type: types.Text, Nullable: true},
	}, []string{"k"}, opts)
	if err != nil {
		return nil, err
	}
	w, err := tb.NewWriter("bench")
	if err != nil {
		return nil, err
	}
	r := rand.New(rand.NewSource(c.Seed))
	pad := types.NewText(strings.Repeat("x", max(0, c.RowBytes-16)))
	row := make(types.Row, 3)
	start, cpu0 := time.Now(), processCPU()
	epoch := base.Epoch(0)
	for done := 0; done < c.Rows; {
		epoch++
		n := min(c.EpochRows, c.Rows-done)
		for i := 0; i < n; i++ {
			row[0] = types.NewInt64(int64(r.Intn(c.Keys)))
			row[1] = types.NewInt64(int64(done + i))
			row[2] = pad
			if err := w.Write(epoch, types.UpdateAfter, row); err != nil {
				return nil, err
			}
		}
		done += n
		msgs, err := w.PrepareCommit(epoch)
		if err != nil {
			return nil, err
		}
		if _, err := tb.Commit(msgs); err != nil {
			return nil, err
		}
	}
	res.WriteRowsPerSec = float64(c.Rows) / time.Since(start).Seconds()
	res.WriteRowsPerCPUSec = perCPUSecond(c.Rows, cpu0)
	return r, nil
}

// TablePath is the bench table's directory on the FS Run is given.
const TablePath = "bench/t"
