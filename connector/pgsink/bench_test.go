package pgsink_test

import (
	"fmt"
	"testing"

	"github.com/stratadb/strata/connector/pgsink"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// BenchmarkCommit applies epochs of 20,000 changes over 50,000 keys
// (updates of existing rows after the first epochs, a tenth deletes) to
// a Postgres table, prepare and commit, and reports changes per second.
func BenchmarkCommit(b *testing.B) {
	const n, keys = 20_000, 50_000
	o, conn := db(b, "bench")
	exec(b, conn, "CREATE TABLE out (id bigint PRIMARY KEY, v text, amount numeric)")
	s, err := pgsink.NewSink(pgsink.Config{Options: o, Name: "bench", Columns: cols, Key: []string{"id"}})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if err := s.Connect(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		c := types.NewChunk(colTypes(), n)
		for j := range n {
			k := int64((i*n + j) % keys)
			amount, _ := types.ParseText(types.Numeric, fmt.Sprintf("%d.25", j), nil)
			kind := types.Insert
			if j%10 == 0 {
				kind = types.Delete
			}
			c.Append(kind, types.Row{types.NewInt64(k), types.NewText(fmt.Sprintf("value %d", j)), amount})
		}
		d, err := s.Prepare(0, base.Epoch(i+1), []*types.Chunk{c})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Commit(0, base.Epoch(i+1), d); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "changes/s")
}
