package filesink_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/connector/filesink"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// BenchmarkPrepareCommit writes epochs of 100,000 changes, prepare and
// commit, in each format, and reports changes per second.
func BenchmarkPrepareCommit(b *testing.B) {
	const n = 100_000
	c := types.NewChunk(colTypes(), n)
	for i := range n {
		amount, _ := types.ParseText(types.Numeric, fmt.Sprintf("%d.25", i), nil)
		c.Append(types.Insert, types.Row{types.NewInt64(int64(i)), types.NewText(fmt.Sprintf("value %d", i)), amount})
	}
	for _, f := range []filesink.Format{filesink.CSV, filesink.JSON} {
		b.Run(string(f), func(b *testing.B) {
			o := filesink.Options{Dir: filepath.Join(b.TempDir(), "out"), Format: f}
			if err := filesink.CreateDir(o); err != nil {
				b.Fatal(err)
			}
			s, err := filesink.NewSink(filesink.Config{Options: o, Name: "k", Columns: cols})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				d, err := s.Prepare(0, base.Epoch(i+1), []*types.Chunk{c})
				if err != nil {
					b.Fatal(err)
				}
				if err := s.Commit(0, base.Epoch(i+1), d); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "changes/s")
		})
	}
}
