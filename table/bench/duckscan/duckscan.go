package duckscan

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver

	"github.com/stratadb/strata/table/bench"
	"github.com/stratadb/strata/table/format/parquet"
)

// Scan reads every row and column of the Parquet files at paths (local
// files, fully compacted: no retractions left) with DuckDB and returns the
// live row count, rows per second and rows per second of process CPU time
// (DuckDB runs inside the process). aggregates are SQL aggregates over the
// columns (e.g. "sum(v)", "sum(length(pad))") so that DuckDB decodes every
// value our scan decodes; a bare count would let it skip the data. The
// query runs runs times (at least once); the fastest run is reported.
func Scan(paths []string, aggregates []string, runs int) (rows int64, rowsPerSec, rowsPerCPUSec float64, err error) {
	db, err := sql.Open("duckdb", "?autoinstall_known_extensions=false&autoload_known_extensions=false")
	if err != nil {
		return 0, 0, 0, err
	}
	defer db.Close()
	quoted := make([]string, len(paths))
	for i, p := range paths {
		quoted[i] = "'" + strings.ReplaceAll(p, "'", "''") + "'"
	}
	aggs := append([]string{"count(*)"}, aggregates...)
	q := fmt.Sprintf("SELECT %s FROM read_parquet([%s]) WHERE %s IN (0, 2)",
		strings.Join(aggs, ", "), strings.Join(quoted, ", "), parquet.KindColumn)
	out := make([]any, len(aggs))
	vals := make([]any, len(aggs))
	for i := range out {
		out[i] = &vals[i]
	}
	for range max(runs, 1) {
		start, cpu0 := time.Now(), bench.ProcessCPU()
		if err := db.QueryRow(q).Scan(out...); err != nil {
			return 0, 0, 0, fmt.Errorf("duckdb scan of %d files: %w", len(paths), err)
		}
		wall, cpu := time.Since(start), bench.ProcessCPU()-cpu0
		n, ok := vals[0].(int64)
		if !ok {
			return 0, 0, 0, fmt.Errorf("duckdb count is a %T", vals[0])
		}
		rows = n
		rowsPerSec = max(rowsPerSec, float64(n)/wall.Seconds())
		if cpu > 0 {
			rowsPerCPUSec = max(rowsPerCPUSec, float64(n)/cpu.Seconds())
		}
	}
	return rows, rowsPerSec, rowsPerCPUSec, nil
}
