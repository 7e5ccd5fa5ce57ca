package bench

import (
	"context"
	"testing"
	"time"
)

// BenchmarkCheckpoint prints the checkpoint figures of the issue: per mode,
// checkpoint duration p50/p99, channel-state bytes and throughput, under
// full backpressure. Run with -benchtime=1x.
func BenchmarkCheckpoint(b *testing.B) {
	for range b.N {
		r, err := Checkpoint(context.Background(), CheckpointConfig{Dir: b.TempDir(), Duration: 5 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range r.Modes {
			b.ReportMetric(m.P50Ms, m.Mode+"_p50_ms")
			b.ReportMetric(m.P99Ms, m.Mode+"_p99_ms")
			b.ReportMetric(float64(m.ChannelStateBytes), m.Mode+"_channel_state_bytes")
			b.ReportMetric(m.RowsPerSec, m.Mode+"_rows/s")
			b.Logf("%-9s checkpoints=%d aborted=%d p50=%.1fms p99=%.1fms channel-state=%dB rows/s=%.0f",
				m.Mode, m.Checkpoints, m.Aborted, m.P50Ms, m.P99Ms, m.ChannelStateBytes, m.RowsPerSec)
		}
	}
}

// BenchmarkPipeline prints the throughput figures of the issue. Run with
// -benchtime=1x.
func BenchmarkPipeline(b *testing.B) {
	for range b.N {
		r, err := Pipeline(context.Background(), PipelineConfig{Dir: b.TempDir(), Duration: 5 * time.Second})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(r.RowsPerSec, "rows/s")
		b.ReportMetric(r.RowsPerSecNoCheckpoint, "rows/s_no_checkpoint")
		b.ReportMetric(r.GeneratorRowsPerSec, "generator_rows/s")
		b.ReportMetric(r.RowsPerCPUSec, "rows/cpu-s")
		b.ReportMetric(r.RowsPerCPUSecNoCheckpoint, "rows/cpu-s_no_checkpoint")
		b.ReportMetric(r.GeneratorRowsPerCPUSec, "generator_rows/cpu-s")
		b.Logf("%+v", *r)
	}
}

// BenchmarkPipelineRun runs each of Pipeline's jobs alone for three
// seconds, for profiling one of them (-cpuprofile); run with
// -benchtime=1x. The keyed pipeline runs with its default parallelism (one
// source and one counting subtask per core, at least two counting
// subtasks) and, in the cases ending in -p1, with one source subtask.
func BenchmarkPipelineRun(b *testing.B) {
	for _, c := range []struct {
		name         string
		interval     time.Duration
		genOnly      bool
		rowsPerEpoch int64
		parallelism  int
	}{{"generator", 0, false, 0, 0}, {"generator-job", 0, true, 0, 0},
		{"no-checkpoint", 0, false, 0, 0}, {"no-checkpoint-p1", 0, false, 0, 1},
		{"no-checkpoint-epochs-of-1M", 0, false, 1000000, 0},
		{"checkpoint-1s", time.Second, false, 0, 0}, {"checkpoint-1s-p1", time.Second, false, 0, 1}} {
		b.Run(c.name, func(b *testing.B) {
			for range b.N {
				if c.name == "generator" {
					r, err := generatorAlone(context.Background(), pipelineGenerator(PipelineConfig{}), 3*time.Second)
					if err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(r.rowsPerSec, "rows/s")
					b.ReportMetric(r.rowsPerCPUSec, "rows/cpu-s")
					b.ReportMetric(r.cpuSec, "cpu-s")
					b.ReportMetric(r.gcShare, "gc-share")
					continue
				}
				cfg := PipelineConfig{Dir: b.TempDir(), Duration: 3 * time.Second, Parallelism: c.parallelism}
				r, err := runPipeline(context.Background(), cfg,
					pipelineGenerator(PipelineConfig{RowsPerEpoch: c.rowsPerEpoch}), c.interval, c.genOnly)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(r.rowsPerSec, "rows/s")
				b.ReportMetric(r.rowsPerCPUSec, "rows/cpu-s")
				b.ReportMetric(r.cpuSec, "cpu-s")
				b.ReportMetric(r.gcShare, "gc-share")
			}
		})
	}
}

// TestCheckpointBenchRuns runs the checkpoint benchmark briefly and checks
// what it must show whatever the speed: unaligned checkpoints complete
// under full backpressure and store channel state.
func TestCheckpointBenchRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for seconds")
	}
	r, err := Checkpoint(context.Background(), CheckpointConfig{Dir: t.TempDir(), Duration: 1500 * time.Millisecond, Interval: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Modes) != 3 {
		t.Fatalf("%d modes", len(r.Modes))
	}
	u := r.Modes[1]
	if u.Mode != "unaligned" || u.Checkpoints == 0 || u.ChannelStateBytes == 0 || r.UnalignedChannelStateBytes != u.ChannelStateBytes {
		t.Fatalf("unaligned mode under backpressure: %+v", u)
	}
	for _, m := range r.Modes {
		t.Logf("%+v", m)
	}
}

// TestPipelineReportsMediansOfItsRounds runs the pipeline benchmark in
// short rounds and checks the figures it reports are each the median of
// the rounds' own.
func TestPipelineReportsMediansOfItsRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs for seconds")
	}
	var seen []PipelineRound
	r, err := Pipeline(context.Background(), PipelineConfig{Dir: t.TempDir(), Duration: 300 * time.Millisecond,
		Interval: 100 * time.Millisecond, Rounds: 3, RowsPerEpoch: 100000,
		Progress: func(i int, r PipelineRound) {
			if i != len(seen)+1 {
				t.Errorf("progress of round %d after %d rounds", i, len(seen))
			}
			seen = append(seen, r)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Rounds) != 3 || len(seen) != 3 {
		t.Fatalf("%d rounds reported, %d in progress, want 3", len(r.Rounds), len(seen))
	}
	mid := func(f func(PipelineRound) float64) float64 {
		v := []float64{f(r.Rounds[0]), f(r.Rounds[1]), f(r.Rounds[2])}
		return median(v)
	}
	for name, c := range map[string][2]float64{
		"rows_per_sec":               {r.RowsPerSec, mid(func(p PipelineRound) float64 { return p.RowsPerSec })},
		"rows_per_sec_no_checkpoint": {r.RowsPerSecNoCheckpoint, mid(func(p PipelineRound) float64 { return p.RowsPerSecNoCheckpoint })},
		"generator_rows_per_sec":     {r.GeneratorRowsPerSec, mid(func(p PipelineRound) float64 { return p.GeneratorRowsPerSec })},
		"engine_vs_generator":        {r.EngineVsGenerator, mid(func(p PipelineRound) float64 { return p.EngineVsGenerator })},
		"checkpoint_cost":            {r.CheckpointCost, mid(func(p PipelineRound) float64 { return p.CheckpointCost })},
	} {
		if c[0] != c[1] || c[0] == 0 {
			t.Errorf("%s = %v, median of the rounds %v", name, c[0], c[1])
		}
	}
	if r.RowsPerSec <= 0 || r.GeneratorRowsPerSec <= 0 {
		t.Fatalf("no rows: %+v", r)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{-1, 7}, 3}} {
		if got := median(c.in); got != c.want {
			t.Errorf("median(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
