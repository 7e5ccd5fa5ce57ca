// Package bench measures the table store: write throughput of upserts
// (epochs committed one by one), a full merge-on-read scan, and point
// lookups, and reports the figures `strata bench table --json` prints
// (write_rows_per_sec, scan_rows_per_sec, point_lookup_p99_us). Write and
// scan are also given per second of process CPU time
// (write_rows_per_cpu_sec, scan_rows_per_cpu_sec), which a machine shared
// with other work disturbs far less than wall time. It only measures; the
// CLI wiring lives in cmd/strata.
//
// The scan is the batch read as chunks (Table.ReadLatestChunks: merge on
// read, no datum per value), folding every value as DuckDB's scan it is
// compared with does (count, sum of each integer column, sum of the text
// column's lengths); row_scan_rows_per_sec is the same read returning rows
// of datums (Table.ReadLatest). Each scan runs ScanRuns times, each on a
// fresh table handle (nothing cached), and the fastest run counts: on a
// shared machine the slower ones measure the neighbours.
//
// For profiling one part alone, BenchmarkFullScan repeats the
// merge-on-read scan of the full workload's table, written once into
// $STRATA_BENCH_TABLE_DIR and kept there ($STRATA_BENCH_SCALE=5 writes a
// fifth of it), and BenchmarkWrite times the write path on an in-memory
// file system; both report rows per CPU second.
//
// The workload follows the issue: rows of about RowBytes bytes (a BIGINT
// key, a BIGINT and a TEXT padding column), Rows upserts over Keys
// distinct keys drawn uniformly, Buckets buckets, EpochRows rows per
// epoch, each epoch prepared and committed before the next.
package bench
