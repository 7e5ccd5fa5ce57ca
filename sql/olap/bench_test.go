package olap

import (
	"context"

	"fmt"
	"github.com/cockroachdb/apd/v3"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

const benchRows = 1_000_000

var bench struct {
	once sync.Once
	tb   *table.Table
	rows []types.Row
	sc   *schema.Schema
}

// benchTable writes a 1M-row primary-key table (k BIGINT, g INTEGER,
// v NUMERIC(12,2), s TEXT, ts TIMESTAMP) in one epoch, once per process.
func benchTable(b *testing.B) (*table.Table, []types.Row, *schema.Schema) {
	bench.once.Do(func() {
		num, _ := types.NumericType(12, 2)
		tb, err := table.Create(fileio.NewMem(), "wh/dev/big", []schema.Field{
			{Name: "k", Type: types.Int64}, {Name: "g", Type: types.Int32}, {Name: "v", Type: num},
			{Name: "s", Type: types.Text}, {Name: "ts", Type: types.Timestamp},
		}, []string{"k"}, map[string]string{"bucket": "4"})
		if err != nil {
			b.Fatal(err)
		}
		w, _ := tb.NewWriter("bench")
		for i := range benchRows {
			r := types.Row{types.NewInt64(int64(i)), types.NewInt32(int32(i % 100)), num2(int64(i%10000), 2),
				types.NewText(fmt.Sprintf("name-%d", i%5000)), types.NewTimestamp(int64(i) * 1_000_000)}
			if err := w.Write(1, types.Insert, r); err != nil {
				b.Fatal(err)
			}
		}
		msgs, err := w.PrepareCommit(1)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := tb.Commit(msgs); err != nil {
			b.Fatal(err)
		}
		bench.tb = tb
		bench.rows, err = tb.ReadAtEpoch(1)
		if err != nil {
			b.Fatal(err)
		}
		bench.sc, _ = tb.Schema()
	})
	return bench.tb, bench.rows, bench.sc
}

// BenchmarkLoad measures loading 1M merged rows into DuckDB with the
// appender (the rows are read once beforehand) and reports rows/s.
func BenchmarkLoad(b *testing.B) {
	_, rows, sc := benchTable(b)
	e := newEngine(b)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("bench%d", i)
		if _, err := e.load(ctx, "big", name, sc, rows); err != nil {
			b.Fatal(err)
		}
		e.dropTable(name)
	}
	b.ReportMetric(float64(b.N*len(rows))/time.Since(start).Seconds(), "rows/s")
}

// BenchmarkReadAndLoad measures a cold query's preparation: merge-on-read
// of the snapshot plus the load, in rows/s.
func BenchmarkReadAndLoad(b *testing.B) {
	tb, rows, _ := benchTable(b)
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		e, err := Open(Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := e.Query(ctx, []Input{{Name: "big", Table: tb, Epoch: 1}}, "SELECT count(*) FROM big", QueryOptions{}); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		e.Close()
		b.StartTimer()
	}
	b.ReportMetric(float64(b.N*len(rows))/time.Since(start).Seconds(), "rows/s")
}

// BenchmarkQuery1M measures queries over the cached 1M-row table and
// reports input rows/s.
func BenchmarkQuery1M(b *testing.B) {
	tb, rows, _ := benchTable(b)
	e := newEngine(b)
	ctx := context.Background()
	in := []Input{{Name: "big", Table: tb, Epoch: 1}}
	if _, err := e.Query(ctx, in, "SELECT 1", QueryOptions{}); err != nil { // load once
		b.Fatal(err)
	}
	for _, q := range []struct{ name, sql string }{
		{"groupby", "SELECT g, count(*), sum(v), max(ts) FROM big GROUP BY g"},
		{"window", "SELECT max(r) FROM (SELECT row_number() OVER (PARTITION BY g ORDER BY v DESC) AS r FROM big)"},
		{"selfjoin", "SELECT count(*) FROM big a JOIN big b ON a.k = b.k + 1 WHERE a.g < 50"},
	} {
		b.Run(q.name, func(b *testing.B) {
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := e.Query(ctx, in, q.sql, QueryOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(rows))/time.Since(start).Seconds(), "rows/s")
		})
	}
}

func num2(unscaled int64, scale int32) types.Datum {
	return types.NewNumeric(apd.New(unscaled, -scale))
}

// BenchmarkSmallQuery measures a query's fixed cost over a cached
// two-input join (views, time zone, prepare, run, drop views).
func BenchmarkSmallQuery(b *testing.B) {
	e := newEngine(b)
	fs := fileio.NewMem()
	acc := accounts(b, fs, "wh/dev/accounts")
	in := []Input{{Name: "dev.accounts", Table: acc, Epoch: 4}, {Name: "other", Table: acc, Epoch: 1}}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.Query(ctx, in, "SELECT a.name, o.balance FROM accounts a JOIN other o USING (id)", QueryOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkToChar measures to_char and format over the cached 1M-row
// table ([pg-functions]: each row crosses from DuckDB into Go), beside
// DuckDB's own strftime, in input rows/s.
func BenchmarkToChar(b *testing.B) {
	tb, rows, _ := benchTable(b)
	e := newEngine(b)
	ctx := context.Background()
	in := []Input{{Name: "big", Table: tb, Epoch: 1}}
	if _, err := e.Query(ctx, in, "SELECT 1", QueryOptions{}); err != nil { // load once
		b.Fatal(err)
	}
	for _, q := range []struct{ name, sql string }{
		{"strftime", "SELECT max(strftime(ts, '%Y-%m-%d %H:%M:%S')) FROM big"},
		{"to_char_ts", "SELECT max(to_char(ts, 'YYYY-MM-DD HH24:MI:SS')) FROM big"},
		{"to_char_num", "SELECT max(to_char(v, 'FM999,990.00')) FROM big"},
		{"format", "SELECT max(format('%s=%L', s, g)) FROM big"},
	} {
		b.Run(q.name, func(b *testing.B) {
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := e.Query(ctx, in, q.sql, QueryOptions{}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*len(rows))/time.Since(start).Seconds(), "rows/s")
		})
	}
}
