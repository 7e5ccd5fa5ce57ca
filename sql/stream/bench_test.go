package stream

import (
	"fmt"
	"testing"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/plan"
)

type discard struct{ rows int }

func (d *discard) Emit(c *types.Chunk) error { d.rows += c.Len(); return nil }

func benchContext(out operator.Output) *operator.Context {
	return &operator.Context{Vertex: "bench", Parallelism: 1,
		State: state.NewStore(heap.New(), state.RangeOf(0, 1, maxPar), maxPar), Output: out}
}

// BenchmarkHopExpand: rows a second through a HOP of three windows a row.
func BenchmarkHopExpand(b *testing.B) {
	out := &discard{}
	w := &WindowExpand{Kind: plan.Hop, InTypes: bidTypes, TimeCol: 1, Size: 15 * sec, Slide: 5 * sec}
	if err := w.Open(benchContext(out)); err != nil {
		b.Fatal(err)
	}
	c := types.NewChunk(bidTypes, 1024)
	for i := range 1024 {
		c.Append(types.Insert, bid(int64(i%16), int64(i)))
	}
	b.ResetTimer()
	for range b.N {
		if err := w.Process(0, c); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*c.Len())/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkTopN: rows a second into a top 2 of 100 partitions, inserts
// with one retraction in four, one epoch per chunk.
func BenchmarkTopN(b *testing.B) {
	out := &discard{}
	tn := newTop2()
	if err := tn.Open(benchContext(out)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	n := 0
	for i := range b.N {
		c := topChunk(types.Insert)
		for j := range 256 {
			id := i*256 + j
			c.Append(types.Insert, topRow(int64(id%100), int64(id%37), fmt.Sprint(id)))
		}
		if i > 0 {
			for j := 0; j < 256; j += 4 {
				id := (i-1)*256 + j
				c.Append(types.Delete, topRow(int64(id%100), int64(id%37), fmt.Sprint(id)))
			}
		}
		if err := tn.Process(0, c); err != nil {
			b.Fatal(err)
		}
		if err := tn.OnEpoch(base.Epoch(i + 1)); err != nil {
			b.Fatal(err)
		}
		n += c.Len()
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "rows/s")
}
