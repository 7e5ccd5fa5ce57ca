// Package bench measures the table store: write throughput of upserts
// (epochs committed one by one), a full merge-on-read scan, and point
// lookups, and reports the figures `strata bench table --json` prints
// (write_rows_per_sec, scan_rows_per_sec, point_lookup_p99_us). Write and
// scan are also given per second of process CPU time
// (write_rows_per_cpu_sec, scan_rows_per_cpu_sec), which a machine shared
// with other work disturbs far less than wall time. It only measures; the
// CLI wiring lives in cmd/strata.
//
// The workload follows the issue: rows of about RowBytes bytes (a BIGINT
// key, a BIGINT and a TEXT padding column), Rows upserts over Keys
// distinct keys drawn uniformly, Buckets buckets, EpochRows rows per
// epoch, each epoch prepared and committed before the next.
package bench
