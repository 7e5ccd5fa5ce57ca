package testkit

import (
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// threadCPU returns the CPU time of the calling thread; with the
// goroutine locked to its thread, cpu-ns/op is the benchmark's own work,
// steady when other processes share the cores (ns/op is not).
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_THREAD, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cpuPerOp locks the goroutine to its thread and returns a function that
// reports the thread's CPU time per op as cpu-ns/op.
func cpuPerOp(b *testing.B) func() {
	runtime.LockOSThread()
	start := threadCPU()
	return func() {
		b.ReportMetric(float64(threadCPU()-start)/float64(b.N), "cpu-ns/op")
		runtime.UnlockOSThread()
	}
}

type dropOutput struct{ rows int }

func (d *dropOutput) Emit(c *types.Chunk) error { d.rows += c.Len(); return nil }

// benchContext is a one-subtask context over a heap backend.
func benchContext(out operator.Output) *operator.Context {
	const maxPar = 128
	return &operator.Context{Vertex: "bench", Parallelism: 1, Output: out,
		State: state.NewStore(heap.New(), state.RangeOf(0, 1, maxPar), maxPar)}
}

// BenchmarkGenerator: one op is one chunk of 1024 rows of the pipeline
// benchmark's generator (100,000 keys).
func BenchmarkGenerator(b *testing.B) {
	g := NewGenerator(GeneratorConfig{RowsPerEpoch: 1000000, ChunkSize: 1024, Keys: 100000})
	if err := g.Open(benchContext(&dropOutput{})); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(1024)
	defer cpuPerOp(b)()
	for b.Loop() {
		if _, err := g.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeyedSum: one op is one chunk of 1024 generator rows, with an
// epoch (sort and emit the changed keys) every million rows and a snapshot
// into keyed state every ten million, over 1,000 keys (the table stays in
// the first-level cache: the per-row work without cache misses), 50,000
// keys (one of the pipeline benchmark's two counting subtasks) and 100,000
// keys.
func BenchmarkKeyedSum(b *testing.B) {
	for _, keys := range []int64{1000, 50000, 100000} {
		b.Run(fmt.Sprintf("keys=%d", keys), func(b *testing.B) { benchmarkKeyedSum(b, keys) })
	}
}

func benchmarkKeyedSum(b *testing.B, keys int64) {
	cfg := GeneratorConfig{RowsPerEpoch: 1000000, ChunkSize: 1024, Keys: keys}
	g := NewGenerator(cfg)
	ctx := benchContext(&dropOutput{})
	if err := g.Open(ctx); err != nil {
		b.Fatal(err)
	}
	var chunks []*types.Chunk
	for len(chunks) < 977 {
		it, err := g.Next()
		if err != nil {
			b.Fatal(err)
		}
		if it.Chunk != nil {
			chunks = append(chunks, it.Chunk)
		}
	}
	s := NewKeyedSum()
	if err := s.Open(benchContext(&dropOutput{})); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(1024)
	defer cpuPerOp(b)()
	i := 0
	for b.Loop() {
		if err := s.Process(0, chunks[i%len(chunks)]); err != nil {
			b.Fatal(err)
		}
		i++
		if i%977 == 0 {
			if err := s.OnEpoch(base.Epoch(i / 977)); err != nil {
				b.Fatal(err)
			}
		}
		if i%9770 == 0 {
			if err := s.Snapshot(base.CheckpointID(i / 9770)); err != nil {
				b.Fatal(err)
			}
		}
	}
}
