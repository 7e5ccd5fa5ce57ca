package pgcdc_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/pgcdc"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// BenchmarkStream measures the Stream's throughput: b.N rows committed in
// transactions of 100 rows of (bigint, text, numeric, timestamptz), then
// read from the slot through pgoutput, decoding and ParseText. It reports
// rows/s of the reading only.
func BenchmarkStream(b *testing.B) {
	ctx := context.Background()
	opts, conn := db(b, "bench")
	run(b, conn, `CREATE TABLE ev (id bigint PRIMARY KEY, name text, amount numeric(12,2), at timestamptz);
		ALTER TABLE ev REPLICA IDENTITY FULL`)
	s, err := pgcdc.Open(ctx, pgcdc.Config{Options: opts, Tables: []pgcdc.Table{{Upstream: "ev", Name: "ev", Columns: []catalog.Column{
		{Name: "id", Type: types.Int64, NotNull: true}, {Name: "name", Type: types.Text}, {Name: "amount", Type: types.Numeric}, {Name: "at", Type: types.TimestampTZ}}}}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	_, pos := next(b, s, 0)
	const perTxn = 100
	for i := 0; i < b.N; i += perTxn {
		run(b, conn, fmt.Sprintf(`INSERT INTO ev SELECT g, 'name ' || g, g * 0.01, now() FROM generate_series(%d, %d) g`, i, min(i+perTxn, b.N)-1))
	}
	b.ResetTimer()
	start := time.Now()
	rows := 0
	for rows < b.N {
		c, n := next(b, s, pos)
		rows += c.Len()
		pos = n
	}
	b.StopTimer()
	b.ReportMetric(float64(rows)/time.Since(start).Seconds(), "rows/s")
}
