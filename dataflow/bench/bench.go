package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/types"
)

// CheckpointConfig configures Checkpoint.
type CheckpointConfig struct {
	// Dir holds the checkpoints (a temporary directory when empty).
	Dir string
	// Duration is how long each mode runs (default 5 s).
	Duration time.Duration
	// Interval is the checkpoint interval (default 500 ms).
	Interval time.Duration
	// AlignmentTimeout is the timeout mode's aligned checkpoint timeout
	// (default 200 ms).
	AlignmentTimeout time.Duration
	// SinkDelay is how long the sink sleeps per chunk (default 1 ms: far
	// below 1% of the generator's speed, so every queue stays full).
	SinkDelay time.Duration
	// QueueCapacity sizes every queue (default 128 chunks: under full
	// backpressure an aligned barrier waits behind all of them).
	QueueCapacity int
}

// ModeResult is one checkpoint mode's figures.
type ModeResult struct {
	Mode              string  `json:"mode"`
	Checkpoints       int     `json:"checkpoints"`
	Aborted           int     `json:"aborted"`
	P50Ms             float64 `json:"p50_ms"`
	P99Ms             float64 `json:"p99_ms"`
	ChannelStateBytes int64   `json:"channel_state_bytes"`
	RowsPerSec        float64 `json:"rows_per_sec"`
}

// CheckpointResult is the outcome of Checkpoint; its JSON form has the
// keys `strata bench checkpoint --json` promises.
type CheckpointResult struct {
	Modes                      []ModeResult `json:"modes"`
	AlignedP50Ms               float64      `json:"aligned_p50_ms"`
	UnalignedP50Ms             float64      `json:"unaligned_p50_ms"`
	TimeoutP50Ms               float64      `json:"timeout_p50_ms"`
	UnalignedChannelStateBytes int64        `json:"unaligned_channel_state_bytes"`
}

// counting counts the rows an operator processes.
type counting struct {
	operator.Operator
	rows *atomic.Int64
}

// BorrowsInput implements operator.InputBorrower for the wrapped operator.
func (c counting) BorrowsInput() bool { return operator.BorrowsInput(c.Operator) }

func (c counting) Process(input int, ch *types.Chunk) error {
	c.rows.Add(int64(ch.Len()))
	return c.Operator.Process(input, ch)
}

func percentile(ds []time.Duration, p float64) float64 {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return float64(s[i]) / float64(time.Millisecond)
}

// Checkpoint runs generator -> hash -> keyed SUM/COUNT -> throttled sink
// with full queues once per checkpoint mode (aligned, unaligned, aligned
// with a timeout) and reports checkpoint durations, channel-state bytes
// and throughput. Checkpoints that do not complete within the run count
// as aborted.
func Checkpoint(ctx context.Context, cfg CheckpointConfig) (*CheckpointResult, error) {
	if cfg.Duration == 0 {
		cfg.Duration = 5 * time.Second
	}
	if cfg.Interval == 0 {
		cfg.Interval = 500 * time.Millisecond
	}
	if cfg.AlignmentTimeout == 0 {
		cfg.AlignmentTimeout = 200 * time.Millisecond
	}
	if cfg.SinkDelay == 0 {
		cfg.SinkDelay = time.Millisecond
	}
	if cfg.QueueCapacity == 0 {
		cfg.QueueCapacity = 128
	}
	res := &CheckpointResult{}
	for _, p := range []barrier.Policy{barrier.PolicyAligned, barrier.PolicyUnaligned, barrier.PolicyAlignedTimeout} {
		dir := cfg.Dir
		if dir == "" {
			d, err := os.MkdirTemp("", "strata-bench-checkpoint-")
			if err != nil {
				return nil, err
			}
			defer os.RemoveAll(d)
			dir = d
		} else {
			dir = fmt.Sprintf("%s/%s", dir, p)
		}
		var rows atomic.Int64
		var durs []time.Duration
		var chBytes int64
		aborted := 0
		g := testkit.GeneratorConfig{RowsPerEpoch: 10000, ChunkSize: 256, Keys: 10000}
		job := &graph.Job{Name: "bench-checkpoint", Vertices: []graph.Vertex{
			{Name: "gen", Parallelism: 1, NewSource: func(int) operator.Source { return testkit.NewGenerator(g) }},
			{Name: "agg", Parallelism: 2, NewOperator: func(int) operator.Operator {
				s := testkit.NewKeyedSum()
				s.Eager = true
				return s
			}},
			{Name: "sink", Parallelism: 2, NewOperator: func(int) operator.Operator {
				return counting{Operator: testkit.Throttle{Operator: testkit.Discard{}, Delay: cfg.SinkDelay}, rows: &rows}
			}},
		}, Edges: []graph.Edge{
			{From: "gen", To: "agg", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
			{From: "agg", To: "sink", Partitioning: graph.Forward},
		}}
		rctx, cancel := context.WithTimeout(ctx, cfg.Duration)
		start := time.Now()
		err := task.Run(rctx, job, task.Options{
			Policy: p, CheckpointInterval: cfg.Interval, CheckpointTimeout: time.Hour,
			AlignmentTimeout: cfg.AlignmentTimeout, QueueCapacity: cfg.QueueCapacity,
			Storage: checkpoint.NewStorage(checkpoint.OSFS{}, dir, 2),
			OnEvent: func(e task.Event) {
				switch e.Kind {
				case task.CheckpointCompleted:
					durs = append(durs, e.Duration)
					chBytes += e.ChannelStateBytes
				case task.CheckpointAborted:
					aborted++
				}
			},
		})
		elapsed := time.Since(start)
		cancel()
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("bench checkpoint %s: %w", p, err)
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		m := ModeResult{Mode: p.String(), Checkpoints: len(durs), Aborted: aborted,
			P50Ms: percentile(durs, 0.5), P99Ms: percentile(durs, 0.99), ChannelStateBytes: chBytes,
			RowsPerSec: float64(rows.Load()) / elapsed.Seconds()}
		if len(durs) == 0 {
			// Nothing completed: the duration is at least the run.
			m.P50Ms = float64(cfg.Duration-cfg.Interval) / float64(time.Millisecond)
			m.P99Ms = m.P50Ms
		}
		res.Modes = append(res.Modes, m)
		switch p {
		case barrier.PolicyAligned:
			res.AlignedP50Ms = m.P50Ms
		case barrier.PolicyUnaligned:
			res.UnalignedP50Ms = m.P50Ms
			res.UnalignedChannelStateBytes = chBytes
		case barrier.PolicyAlignedTimeout:
			res.TimeoutP50Ms = m.P50Ms
		}
	}
	return res, nil
}

// PipelineConfig configures Pipeline.
type PipelineConfig struct {
	// Dir holds the checkpoints (a temporary directory when empty).
	Dir string
	// Duration is how long each run lasts (default 5 s).
	Duration time.Duration
	// Interval is the checkpoint interval of the checkpointed run
	// (default 1 s).
	Interval time.Duration
	// Parallelism is the number of source subtasks of the keyed pipeline,
	// each generating its own rows (testkit.GeneratorConfig.Row of its
	// subtask index), and of counting subtasks (at least 2, so that rows
	// cross a real exchange); default GOMAXPROCS, one source and one
	// counting subtask per core, as Flink runs Nexmark (see doc.go). The
	// generator-only baseline stays one goroutine whatever it is.
	Parallelism int
	// RowsPerEpoch is the number of rows each source subtask emits
	// between epoch barriers (default DefaultRowsPerEpoch).
	RowsPerEpoch int64
	// Rounds is how many times the three compared runs (generator alone,
	// pipeline without and with checkpoints) are repeated, one after the
	// other in each round (default DefaultRounds). Every figure and ratio
	// is the median over the rounds, each ratio taken within its round, so
	// that a machine whose speed drifts between runs (a virtual machine
	// whose host is busy) moves both sides of a ratio alike.
	Rounds int
	// Progress, when set, is called after each round with its number
	// (from 1) and the round's figures.
	Progress func(round int, r PipelineRound)
}

// DefaultRounds is the number of rounds Pipeline runs by default.
const DefaultRounds = 3

// PipelineRound is one round of Pipeline: the generator alone, then the
// keyed pipeline without and with checkpoints, run back to back.
type PipelineRound struct {
	GeneratorRowsPerSec    float64 `json:"generator_rows_per_sec"`
	RowsPerSecNoCheckpoint float64 `json:"rows_per_sec_no_checkpoint"`
	RowsPerSec             float64 `json:"rows_per_sec"`
	// EngineVsGenerator is RowsPerSec / GeneratorRowsPerSec of the round.
	EngineVsGenerator float64 `json:"engine_vs_generator"`
	// CheckpointCost is 1 - RowsPerSec / RowsPerSecNoCheckpoint of the
	// round.
	CheckpointCost float64 `json:"checkpoint_cost"`
	Checkpoints    int     `json:"checkpoints"`
}

// DefaultRowsPerEpoch is the pipeline benchmark's epoch length in rows of
// one source subtask: at the 58 to 75 million rows a second the pipeline
// reached on the quiet 2-core machine (one source, one source per core),
// an epoch of 5 million rows a source lasts 0.09 to 0.13 s, about ten
// times shorter than the epoch clock's default interval (1 s, DESIGN.md)
// and about twice its shortest (50 ms). Each epoch makes every counting
// subtask sort and emit all of its changed keys; epochs of a million rows
// closed every 20 to 35 ms at the rates of the time, more often than the
// epoch clock ever does.
const DefaultRowsPerEpoch = 5000000

// PipelineResult is the outcome of Pipeline; its JSON form has the keys
// `strata bench pipeline --json` promises (rows_per_sec,
// rows_per_sec_no_checkpoint, generator_rows_per_sec). Rates are rows per
// second of wall time over the whole run; the per-CPU-second rates divide
// by the CPU time the process used instead, which is the per-core figure
// and stays steady on a machine whose cores other work shares.
//
// The keyed pipeline runs on all cores (its source, exchange and counting
// subtasks are goroutines the Go scheduler spreads), while the
// generator-only baseline is one goroutine (and the garbage collector's
// work for it): the wall-clock ratio EngineVsGenerator compares the
// engine's throughput on the machine with one generator goroutine's, and
// EngineVsGeneratorPerCPU compares the work per row (how many CPU seconds
// a row costs in each).
type PipelineResult struct {
	// RowsPerSec is the keyed pipeline with checkpoints every Interval.
	RowsPerSec float64 `json:"rows_per_sec"`
	// RowsPerSecNoCheckpoint is the keyed pipeline with checkpoints off.
	RowsPerSecNoCheckpoint float64 `json:"rows_per_sec_no_checkpoint"`
	// GeneratorRowsPerSec is the generator alone in a loop on one
	// goroutine: the same chunks as in the pipeline's sources, built and
	// dropped.
	GeneratorRowsPerSec float64 `json:"generator_rows_per_sec"`
	// GeneratorJobRowsPerSec is one generator subtask through the engine
	// into a sink that drops everything (forward edge, checkpoints off).
	GeneratorJobRowsPerSec float64 `json:"generator_job_rows_per_sec"`
	// EngineVsGenerator is RowsPerSec / GeneratorRowsPerSec (wall clock,
	// all cores against one goroutine); the target is 0.5.
	EngineVsGenerator float64 `json:"engine_vs_generator"`
	// EngineVsGeneratorPerCPU is RowsPerCPUSec / GeneratorRowsPerCPUSec:
	// the generator's CPU cost per row over the pipeline's.
	EngineVsGeneratorPerCPU float64 `json:"engine_vs_generator_per_cpu"`
	// CheckpointCost is 1 - RowsPerSec / RowsPerSecNoCheckpoint.
	CheckpointCost float64 `json:"checkpoint_cost"`
	// RowsPerSecPerCore is RowsPerSec divided by Cores.
	RowsPerSecPerCore float64 `json:"rows_per_sec_per_core"`
	// The same four runs in rows per CPU second of the process.
	RowsPerCPUSec             float64 `json:"rows_per_cpu_sec"`
	RowsPerCPUSecNoCheckpoint float64 `json:"rows_per_cpu_sec_no_checkpoint"`
	GeneratorRowsPerCPUSec    float64 `json:"generator_rows_per_cpu_sec"`
	GeneratorJobRowsPerCPUSec float64 `json:"generator_job_rows_per_cpu_sec"`
	// CPUSec, CPUSecNoCheckpoint and GeneratorCPUSec are the CPU seconds
	// the three main runs used.
	CPUSec             float64 `json:"cpu_sec"`
	CPUSecNoCheckpoint float64 `json:"cpu_sec_no_checkpoint"`
	GeneratorCPUSec    float64 `json:"generator_cpu_sec"`
	// Cores is GOMAXPROCS.
	Cores int `json:"cores"`
	// SourceParallelism and CountParallelism are the keyed pipeline's
	// source and counting subtasks.
	SourceParallelism int `json:"source_parallelism"`
	CountParallelism  int `json:"count_parallelism"`
	// RowsPerEpoch is each source subtask's epoch length in rows.
	RowsPerEpoch int64 `json:"rows_per_epoch"`
	// Checkpoints is the number of checkpoints completed in the
	// checkpointed run (the median over the rounds).
	Checkpoints int `json:"checkpoints"`
	// Rounds holds each round's figures, in the order they ran.
	Rounds []PipelineRound `json:"rounds"`
}

// Pipeline measures one generator subtask through the engine into a
// dropping sink, then cfg.Rounds rounds of: the generator alone in a loop,
// generator -> hash -> keyed count (cfg.Parallelism sources, as many
// counting subtasks but at least two) with checkpoints off, and the same
// with checkpoints every Interval. The result holds the medians over the
// rounds.
func Pipeline(ctx context.Context, cfg PipelineConfig) (*PipelineResult, error) {
	if cfg.Duration == 0 {
		cfg.Duration = 5 * time.Second
	}
	if cfg.Interval == 0 {
		cfg.Interval = time.Second
	}
	if cfg.Rounds == 0 {
		cfg.Rounds = DefaultRounds
	}
	cfg.Parallelism = parallelism(cfg)
	g := pipelineGenerator(cfg)
	res := &PipelineResult{Cores: runtime.GOMAXPROCS(0), SourceParallelism: cfg.Parallelism, CountParallelism: countParallelism(cfg),
		RowsPerEpoch: g.RowsPerEpoch}

	job, err := runPipeline(ctx, cfg, g, 0, true)
	if err != nil {
		return nil, fmt.Errorf("bench pipeline generator job: %w", err)
	}
	res.GeneratorJobRowsPerSec, res.GeneratorJobRowsPerCPUSec = job.rowsPerSec, job.rowsPerCPUSec
	var gens, offs, ons []run
	for i := range max(cfg.Rounds, 1) {
		gen, err := generatorAlone(ctx, g, cfg.Duration/2)
		if err != nil {
			return nil, err
		}
		off, err := runPipeline(ctx, cfg, g, 0, false)
		if err != nil {
			return nil, fmt.Errorf("bench pipeline without checkpoints: %w", err)
		}
		on, err := runPipeline(ctx, cfg, g, cfg.Interval, false)
		if err != nil {
			return nil, fmt.Errorf("bench pipeline with checkpoints: %w", err)
		}
		gens, offs, ons = append(gens, gen), append(offs, off), append(ons, on)
		r := PipelineRound{GeneratorRowsPerSec: gen.rowsPerSec, RowsPerSecNoCheckpoint: off.rowsPerSec, RowsPerSec: on.rowsPerSec,
			EngineVsGenerator: on.rowsPerSec / gen.rowsPerSec, CheckpointCost: 1 - on.rowsPerSec/off.rowsPerSec, Checkpoints: on.checkpoints}
		res.Rounds = append(res.Rounds, r)
		if cfg.Progress != nil {
			cfg.Progress(i+1, r)
		}
	}
	field := func(runs []run, f func(run) float64) float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		return median(v)
	}
	perSec := func(r run) float64 { return r.rowsPerSec }
	perCPU := func(r run) float64 { return r.rowsPerCPUSec }
	cpuSec := func(r run) float64 { return r.cpuSec }
	res.GeneratorRowsPerSec, res.GeneratorRowsPerCPUSec, res.GeneratorCPUSec = field(gens, perSec), field(gens, perCPU), field(gens, cpuSec)
	res.RowsPerSecNoCheckpoint, res.RowsPerCPUSecNoCheckpoint, res.CPUSecNoCheckpoint = field(offs, perSec), field(offs, perCPU), field(offs, cpuSec)
	res.RowsPerSec, res.RowsPerCPUSec, res.CPUSec = field(ons, perSec), field(ons, perCPU), field(ons, cpuSec)
	res.Checkpoints = int(field(ons, func(r run) float64 { return float64(r.checkpoints) }))
	res.RowsPerSecPerCore = res.RowsPerSec / float64(res.Cores)
	ratios := func(f func(i int) float64) float64 {
		v := make([]float64, len(gens))
		for i := range v {
			v[i] = f(i)
		}
		return median(v)
	}
	res.EngineVsGenerator = ratios(func(i int) float64 { return ons[i].rowsPerSec / gens[i].rowsPerSec })
	res.EngineVsGeneratorPerCPU = ratios(func(i int) float64 { return ons[i].rowsPerCPUSec / gens[i].rowsPerCPUSec })
	res.CheckpointCost = ratios(func(i int) float64 { return 1 - ons[i].rowsPerSec/offs[i].rowsPerSec })
	return res, nil
}

// median returns the middle value of v (the mean of the two middle ones
// when len(v) is even); v is sorted in place and must not be empty.
func median(v []float64) float64 {
	slices.Sort(v)
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}

// parallelism is the keyed pipeline's number of source subtasks:
// cfg.Parallelism, by default one per core (GOMAXPROCS).
func parallelism(cfg PipelineConfig) int {
	if cfg.Parallelism > 0 {
		return cfg.Parallelism
	}
	return runtime.GOMAXPROCS(0)
}

// countParallelism is the keyed pipeline's number of counting subtasks.
func countParallelism(cfg PipelineConfig) int { return max(parallelism(cfg), 2) }

// generatorAlone runs one generator subtask in a loop for d: the chunks
// the pipeline's source makes, each built in full and dropped, with the
// epoch barriers in between; nothing is routed or counted.
func generatorAlone(ctx context.Context, g testkit.GeneratorConfig, d time.Duration) (run, error) {
	gen := testkit.NewGenerator(g)
	st := state.NewStore(heap.New(), state.RangeOf(0, 1, graph.DefaultMaxParallelism), graph.DefaultMaxParallelism)
	if err := gen.Open(&operator.Context{Vertex: "gen", Parallelism: 1, State: st}); err != nil {
		return run{}, err
	}
	var n int64
	start, cpu0, gc0 := time.Now(), cpuTime(), gcCPU()
	for time.Since(start) < d && ctx.Err() == nil {
		for range 64 {
			it, err := gen.Next()
			if err != nil {
				return run{}, err
			}
			if it.Chunk != nil {
				n += int64(it.Chunk.Len())
			}
		}
	}
	cpu := (cpuTime() - cpu0).Seconds()
	return run{rowsPerSec: float64(n) / time.Since(start).Seconds(), rowsPerCPUSec: float64(n) / cpu, cpuSec: cpu,
		gcShare: (gcCPU() - gc0) / cpu}, ctx.Err()
}

// pipelineGenerator shapes the pipeline benchmark's sources: epochs of
// cfg.RowsPerEpoch rows (DefaultRowsPerEpoch), chunks of 1024 rows,
// 100,000 keys.
func pipelineGenerator(cfg PipelineConfig) testkit.GeneratorConfig {
	n := cfg.RowsPerEpoch
	if n == 0 {
		n = DefaultRowsPerEpoch
	}
	return testkit.GeneratorConfig{RowsPerEpoch: n, ChunkSize: 1024, Keys: 100000}
}

// runPipeline runs the keyed pipeline (or, with genOnly, one generator
// subtask into a dropping sink over a forward edge) for cfg.Duration with
// checkpoints every interval (none when 0) and returns its rows per second
// and the number of completed checkpoints.
func runPipeline(ctx context.Context, cfg PipelineConfig, g testkit.GeneratorConfig, interval time.Duration, genOnly bool) (run, error) {
	cfg.Parallelism = parallelism(cfg)
	var rows atomic.Int64
	completed := 0
	job := &graph.Job{Name: "bench-pipeline", Vertices: []graph.Vertex{
		{Name: "gen", Parallelism: cfg.Parallelism, NewSource: func(int) operator.Source { return testkit.NewGenerator(g) }},
		{Name: "count", Parallelism: countParallelism(cfg), NewOperator: func(int) operator.Operator {
			return counting{Operator: testkit.NewKeyedSum(), rows: &rows}
		}},
	}, Edges: []graph.Edge{
		{From: "gen", To: "count", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
	}}
	if genOnly {
		job.Vertices[0].Parallelism = 1
		job.Vertices[1] = graph.Vertex{Name: "count", Parallelism: 1, NewOperator: func(int) operator.Operator {
			return counting{Operator: testkit.Discard{}, rows: &rows}
		}}
		job.Edges[0] = graph.Edge{From: "gen", To: "count", Partitioning: graph.Forward}
	}
	opts := task.Options{CheckpointInterval: interval, QueueCapacity: 16,
		OnEvent: func(e task.Event) {
			if e.Kind == task.CheckpointCompleted {
				completed++
			}
		}}
	if interval > 0 {
		dir := cfg.Dir
		if dir == "" {
			d, err := os.MkdirTemp("", "strata-bench-pipeline-")
			if err != nil {
				return run{}, err
			}
			defer os.RemoveAll(d)
			dir = d
		}
		opts.Storage = checkpoint.NewStorage(checkpoint.OSFS{}, dir, 2)
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	start, cpu0, gc0 := time.Now(), cpuTime(), gcCPU()
	err := task.Run(rctx, job, opts)
	if err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return run{}, err
	}
	n, cpu := float64(rows.Load()), (cpuTime() - cpu0).Seconds()
	return run{rowsPerSec: n / time.Since(start).Seconds(), rowsPerCPUSec: n / cpu,
		cpuSec: cpu, gcShare: (gcCPU() - gc0) / cpu, checkpoints: completed}, ctx.Err()
}

// run is the outcome of one runPipeline.
type run struct {
	rowsPerSec, rowsPerCPUSec, cpuSec float64
	// gcShare is the garbage collector's share of the run's CPU time,
	// from the runtime's estimate, which counts the time its workers
	// hold a P: on a loaded machine, where they hold it without running,
	// it overstates (BenchmarkPipelineRun prints it; Pipeline does not).
	gcShare     float64
	checkpoints int
}

// gcCPU returns the runtime's estimate of the CPU seconds the garbage
// collector has used so far (runtime/metrics /cpu/classes/gc/total).
func gcCPU() float64 {
	s := []metrics.Sample{{Name: "/cpu/classes/gc/total:cpu-seconds"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindFloat64 {
		return 0
	}
	return s[0].Value.Float64()
}

// cpuTime returns the CPU time (user and system) the process has used so
// far. On a machine shared with other work, rows per CPU second is the
// steadier figure: wall-clock rates drop whenever others take the cores.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
