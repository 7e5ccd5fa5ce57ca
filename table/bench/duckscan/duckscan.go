package duckscan

import (
	"database/sql"
	"fmt"
	"strings"
	"time"

	_ "github.com/duckdb/duckdb-go/v2" // registers the "duckdb" driver

	"github.com/stratadb/strata/table/format/parquet"
)

// Scan reads every row and column of the Parquet files at paths (local
// files, fully compacted: no retractions left) with DuckDB and returns the
// live row count and rows per second. aggregates are SQL aggregates over
// the columns (e.g. "sum(v)", "sum(length(pad))") so that DuckDB decodes
// every value our scan decodes; a bare count would let it skip the data.
func Scan(paths []string, aggregates []string) (rows int64, rowsPerSec float64, err error) {
	db, err := sql.Open("duckdb", "?autoinstall_known_extensions=false&autoload_known_extensions=false")
	if err != nil {
		return 0, 0, err
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
	start := time.Now()
	if err := db.QueryRow(q).Scan(out...); err != nil {
		return 0, 0, fmt.Errorf("duckdb scan of %d files: %w", len(paths), err)
	}
	n, ok := vals[0].(int64)
	if !ok {
		return 0, 0, fmt.Errorf("duckdb count is a %T", vals[0])
	}
	return n, float64(n) / time.Since(start).Seconds(), nil
}
