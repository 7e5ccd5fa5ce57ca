package task

import (
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/queue"
	"github.com/stratadb/strata/internal/types"
)

// BenchmarkExchange routes chunks of 1024 (key, value) rows over a hash
// edge to two queues and drains them, the drained chunks dropped (new) or
// given back to the edge's pool (recycled): one op is one chunk.
// cpu-ns/op is the thread's CPU time per op (steady when other processes
// share the cores; ns/op is not).
func BenchmarkExchange(b *testing.B) {
	b.Run("new", func(b *testing.B) { benchmarkExchange(b, false) })
	b.Run("recycled", func(b *testing.B) { benchmarkExchange(b, true) })
}

func benchmarkExchange(b *testing.B, recycle bool) {
	c := &types.Chunk{Kinds: make([]types.RowKind, 1024), Cols: []types.Vector{
		{Type: types.Int64, Nulls: make([]bool, 1024), Ints: make([]int64, 1024)},
		{Type: types.Int64, Nulls: make([]bool, 1024), Ints: make([]int64, 1024)},
	}}
	for i := range 1024 {
		c.Cols[0].Ints[i], c.Cols[1].Ints[i] = int64(i)*7919%100000, int64(i%13+1)
	}
	qs := []*queue.Queue{queue.New("0", 4, 0, nil), queue.New("1", 4, 0, nil)}
	o := &edgeOut{edge: graph.Edge{Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
		queues: qs, maxPar: graph.DefaultMaxParallelism}
	if recycle {
		o.pool = newChunkPool(8)
	}
	b.SetBytes(1024)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu0 := threadCPU()
	for b.Loop() {
		if err := o.emitChunk(c, nil); err != nil {
			b.Fatal(err)
		}
		for _, q := range qs {
			if m, ok := q.Take(false); ok && m.Recyclable {
				o.pool.put(m.Chunk)
			}
		}
	}
	b.ReportMetric(float64(threadCPU()-cpu0)/float64(b.N), "cpu-ns/op")
}

func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
