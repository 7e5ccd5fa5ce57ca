package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	dfbench "github.com/stratadb/strata/dataflow/bench"
	"github.com/stratadb/strata/demo"
	"github.com/stratadb/strata/table/bench"
	"github.com/stratadb/strata/table/bench/duckscan"
	"github.com/stratadb/strata/table/fileio"
)

func newBenchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Measure Strata: checkpoints, the streaming pipeline, the table store",
		Args:  cobra.ArbitraryArgs,
		// A mistyped benchmark's flags (bench freshnes --json) are not
		// bench's: the error names the benchmark, not its first flag.
		FParseErrWhitelist: cobra.FParseErrWhitelist{UnknownFlags: true},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				var names []string
				for _, c := range cmd.Commands() {
					if c.IsAvailableCommand() {
						names = append(names, c.Name())
					}
				}
				return fmt.Errorf("unknown benchmark %q: choose one of %s", args[0], strings.Join(names, ", "))
			}
			return cmd.Help()
		},
	}
	cmd.AddCommand(newBenchCheckpointCommand(), newBenchPipelineCommand(), newBenchTableCommand(), newBenchFreshnessCommand(), newBenchNexmarkCommand(), newBenchRecoveryCommand())
	return cmd
}

func printResult(w io.Writer, asJSON bool, v any, text func() string) error {
	if asJSON {
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(w, string(b))
		return err
	}
	_, err := fmt.Fprint(w, text())
	return err
}

// benchContext is cancelled by SIGINT or SIGTERM, so that a benchmark
// stopped either way removes its data directory and stops its children.
func benchContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
}

func newBenchCheckpointCommand() *cobra.Command {
	var asJSON bool
	var cfg dfbench.CheckpointConfig
	cmd := &cobra.Command{
		Use:   "checkpoint",
		Short: "Checkpoint duration per mode (aligned, unaligned, aligned with timeout) under full backpressure",
		Long: `Runs generator -> hash -> keyed aggregation -> throttled sink with full queues, once per
checkpoint mode, and prints checkpoint duration p50/p99, channel-state bytes and throughput.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := benchContext()
			defer cancel()
			fmt.Fprintf(cmd.ErrOrStderr(), "strata bench checkpoint: three modes, %v each...\n", orDefault(cfg.Duration, 5*time.Second))
			res, err := dfbench.Checkpoint(ctx, cfg)
			if err != nil {
				return err
			}
			return printResult(cmd.OutOrStdout(), asJSON, res, func() string {
				s := fmt.Sprintf("%-10s %12s %10s %10s %16s %14s\n", "mode", "checkpoints", "p50 ms", "p99 ms", "channel bytes", "rows/s")
				for _, m := range res.Modes {
					s += fmt.Sprintf("%-10s %12d %10.1f %10.1f %16d %14.0f\n", m.Mode, m.Checkpoints, m.P50Ms, m.P99Ms, m.ChannelStateBytes, m.RowsPerSec)
				}
				return s
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.Flags().DurationVar(&cfg.Duration, "duration", 0, "how long each mode runs (default 5s)")
	cmd.Flags().DurationVar(&cfg.Interval, "interval", 0, "checkpoint interval (default 500ms)")
	return cmd
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

func newBenchPipelineCommand() *cobra.Command {
	var asJSON bool
	var cfg dfbench.PipelineConfig
	cmd := &cobra.Command{
		Use:   "pipeline",
		Short: "Rows per second through generator -> hash -> keyed count, with and without checkpoints",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := benchContext()
			defer cancel()
			d := orDefault(cfg.Duration, 5*time.Second)
			rounds := cfg.Rounds
			if rounds == 0 {
				rounds = dfbench.DefaultRounds
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "strata bench pipeline: %d rounds of three runs (%v, %v, %v), about %v in all...\n",
				rounds, d/2, d, d, (d + time.Duration(rounds)*(d/2+2*d)).Round(time.Second))
			cfg.Progress = func(i int, r dfbench.PipelineRound) {
				fmt.Fprintf(cmd.ErrOrStderr(), "  round %d of %d: generator %.0f rows/s, pipeline %.0f without and %.0f with checkpoints (%.0f%% of the generator, checkpoint cost %.1f%%)\n",
					i, rounds, r.GeneratorRowsPerSec, r.RowsPerSecNoCheckpoint, r.RowsPerSec, 100*r.EngineVsGenerator, 100*r.CheckpointCost)
			}
			res, err := dfbench.Pipeline(ctx, cfg)
			if err != nil {
				return err
			}
			return printResult(cmd.OutOrStdout(), asJSON, res, func() string {
				return fmt.Sprintf("medians over %d rounds\n"+
					"keyed pipeline: generator (parallelism %d, epochs of %d rows) -> hash -> keyed count (parallelism %d) on %d cores\n"+
					"  rows/s with checkpoints every %v (%d completed): %.0f (%.0f per CPU second)\n"+
					"  rows/s without checkpoints: %.0f (%.0f per CPU second); checkpoint cost %.1f%%\n"+
					"generator alone, one goroutine: %.0f rows/s (%.0f per CPU second)\n"+
					"one generator subtask through the engine into a dropping sink: %.0f rows/s (%.0f per CPU second)\n"+
					"pipeline over generator alone: %.0f%% wall clock (all cores against one goroutine), %.0f%% per CPU second\n"+
					"pipeline per core: %.0f rows/s\n",
					len(res.Rounds), res.SourceParallelism, res.RowsPerEpoch, res.CountParallelism, res.Cores,
					orDefault(cfg.Interval, time.Second), res.Checkpoints, res.RowsPerSec, res.RowsPerCPUSec,
					res.RowsPerSecNoCheckpoint, res.RowsPerCPUSecNoCheckpoint, 100*res.CheckpointCost,
					res.GeneratorRowsPerSec, res.GeneratorRowsPerCPUSec,
					res.GeneratorJobRowsPerSec, res.GeneratorJobRowsPerCPUSec,
					100*res.EngineVsGenerator, 100*res.EngineVsGeneratorPerCPU, res.RowsPerSecPerCore)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.Flags().DurationVar(&cfg.Duration, "duration", 0, "how long each run lasts (default 5s)")
	cmd.Flags().DurationVar(&cfg.Interval, "interval", 0, "checkpoint interval of the checkpointed run (default 1s)")
	cmd.Flags().Int64Var(&cfg.RowsPerEpoch, "rows-per-epoch", 0, "rows each source subtask emits per epoch (default 5000000)")
	cmd.Flags().IntVar(&cfg.Parallelism, "parallelism", 0, "source subtasks of the keyed pipeline, and counting subtasks (at least 2) (default: one per core, GOMAXPROCS)")
	cmd.Flags().IntVar(&cfg.Rounds, "rounds", 0, "rounds of the three compared runs; figures are medians over them (default 3)")
	return cmd
}

// tableResult is the table bench's output: the store's figures and DuckDB's
// scan of the same files.
type tableResult struct {
	bench.Result
	DuckDBScanRowsPerSec    float64 `json:"duckdb_scan_rows_per_sec"`
	DuckDBScanRowsPerCPUSec float64 `json:"duckdb_scan_rows_per_cpu_sec"`
}

func newBenchTableCommand() *cobra.Command {
	var asJSON bool
	var dir string
	cfg := bench.DefaultConfig()
	cmd := &cobra.Command{
		Use:   "table",
		Short: "Table store write, scan and point-lookup speed, and DuckDB's scan of the same files",
		Long: `Writes upserts of 100-byte rows into a primary-key table (default: 10M upserts over 1M
keys, 8 buckets), scans it with merge on read, looks up keys, compacts fully, and scans the
compacted Parquet files with DuckDB's read_parquet.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if dir == "" {
				d, err := os.MkdirTemp("", "strata-bench-table-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(d)
				dir = d
			}
			fs, err := fileio.NewLocal(dir)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "strata bench table: %d upserts over %d keys, %d buckets, in %s...\n", cfg.Rows, cfg.Keys, cfg.Buckets, dir)
			res, err := bench.Run(fs, cfg)
			if err != nil {
				return err
			}
			paths := make([]string, len(res.CompactedFiles))
			for i, p := range res.CompactedFiles {
				paths[i] = filepath.Join(dir, p)
			}
			_, duckRate, duckCPU, err := duckscan.Scan(paths, []string{"sum(k)", "sum(v)", "sum(length(pad))"}, cfg.ScanRuns)
			if err != nil {
				return err
			}
			out := tableResult{Result: res, DuckDBScanRowsPerSec: duckRate, DuckDBScanRowsPerCPUSec: duckCPU}
			return printResult(cmd.OutOrStdout(), asJSON, out, func() string {
				return fmt.Sprintf("write: %.0f rows/s (%.0f per CPU second)\nscan (merge on read, chunks): %.0f rows/s (%.0f per CPU second)\nscan (merge on read, rows): %.0f rows/s\nscan after full compaction: %.0f rows/s\nDuckDB read_parquet scan: %.0f rows/s (%.0f per CPU second)\npoint lookup p99: %.1f µs\nsnapshots: %d, data files: %d\n",
					res.WriteRowsPerSec, res.WriteRowsPerCPUSec, res.ScanRowsPerSec, res.ScanRowsPerCPUSec, res.RowScanRowsPerSec, res.CompactedScanRowsPerSec,
					duckRate, duckCPU, res.PointLookupP99Us, res.Snapshots, res.DataFiles)
			})
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.Flags().StringVar(&dir, "dir", "", "directory for the table (a temporary one when empty)")
	cmd.Flags().IntVar(&cfg.Rows, "rows", cfg.Rows, "upserts to write")
	cmd.Flags().IntVar(&cfg.Keys, "keys", cfg.Keys, "distinct keys")
	cmd.Flags().IntVar(&cfg.Buckets, "buckets", cfg.Buckets, "buckets")
	cmd.Flags().IntVar(&cfg.EpochRows, "epoch-rows", cfg.EpochRows, "rows per epoch, one commit each (fewer rows per epoch: more files for merge on read)")
	cmd.Flags().IntVar(&cfg.ScanRuns, "scan-runs", cfg.ScanRuns, "runs of each scan (ours and DuckDB's); the fastest is reported")
	return cmd
}

func newBenchFreshnessCommand() *cobra.Command {
	var asJSON bool
	var chart, chartTitle, series string
	var cfg demo.FreshnessConfig
	cmd := &cobra.Command{
		Use:   "freshness",
		Short: "Freshness of the demo's three-level topology at 100 ms epochs and checkpoints",
		Long: `Runs the demo topology (Nexmark into bid; t1, t2, t3 over it) at a fixed rate with
100 ms epochs and 100 ms checkpoints, and measures for each epoch the time from
its start on the epoch clock to the moment the top view t3 committed it, when
every view can be read at a consistent version that includes it. Prints
freshness_p50_ms and freshness_p99_ms, and the same for every level (bid, t1,
t2, t3). --epoch-interval and --checkpoint-interval change the 100 ms. --chart
draws each measured epoch's freshness at every level over the
run; --series writes those measures as JSON lines.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case cfg.Rate == 0:
				return fmt.Errorf("--rate 0: the rate must be at least 1 event/s")
			case cfg.Duration <= 0:
				return fmt.Errorf("--duration %v: the measured time must be positive", cfg.Duration)
			case cfg.Warmup < 0:
				return fmt.Errorf("--warmup %v: the warm-up cannot be negative", cfg.Warmup)
			case cfg.Engine.EpochInterval <= 0:
				return fmt.Errorf("--epoch-interval %v: must be positive", cfg.Engine.EpochInterval)
			case cfg.Engine.CheckpointInterval <= 0:
				return fmt.Errorf("--checkpoint-interval %v: must be positive", cfg.Engine.CheckpointInterval)
			case cfg.Engine.EpochInterval >= cfg.Duration || cfg.Engine.CheckpointInterval >= cfg.Duration:
				return fmt.Errorf("--epoch-interval %v and --checkpoint-interval %v must be shorter than --duration %v, which measures the epochs that start in it", cfg.Engine.EpochInterval, cfg.Engine.CheckpointInterval, cfg.Duration)
			}
			if chart != "" {
				if err := checkOutputFile("--chart", chart, ".png"); err != nil {
					return err
				}
			} else if chartTitle != "" {
				return fmt.Errorf("--chart-title needs --chart")
			}
			if series != "" && chart != "" && filepath.Clean(series) == filepath.Clean(chart) {
				return fmt.Errorf("--series and --chart name the same file %q", chart)
			}
			if series != "" {
				// Checked now, written after the run: an earlier series
				// in the file stays whole if the run fails.
				if err := checkOutputFile("--series", series, ""); err != nil {
					return err
				}
			}
			ctx, cancel := benchContext()
			defer cancel()
			dir, err := os.MkdirTemp("", "strata-freshness-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(dir)
			cfg.Engine.Dir = dir
			fmt.Fprintf(cmd.ErrOrStderr(), "strata bench freshness: %d events/s, %v warm-up, then %v measured\n", cfg.Rate, cfg.Warmup, cfg.Duration)
			cfg.Progress = cmd.ErrOrStderr()
			res, err := demo.Freshness(ctx, cfg)
			if err != nil && ctx.Err() != nil {
				return fmt.Errorf("interrupted by a signal before an epoch of the measured window was readable: nothing measured")
			}
			if err != nil {
				return err
			}
			// The figures first: a chart or series that fails to write
			// loses none of them.
			if err := printResult(cmd.OutOrStdout(), asJSON, res, func() string {
				var levels []string
				for _, l := range res.Levels {
					levels = append(levels, fmt.Sprintf("%s %.0f/%.0f", l.Table, l.P50Ms, l.P99Ms))
				}
				out := fmt.Sprintf("%d events at %d/s, %d epochs of %.0f ms measured\nfreshness p50 %.0f ms, p99 %.0f ms, max %.0f ms\nper level, p50/p99 ms: %s\n",
					res.Events, res.Rate, res.Epochs, res.EpochIntervalMs, res.P50Ms, res.P99Ms, res.MaxMs, strings.Join(levels, ", "))
				if res.Unfinished > 0 {
					out += fmt.Sprintf("warning: %d epochs that started in the measured window were not readable in t3 10 s after it; they are left out, so the figures are too low (the pipeline did not keep up with the rate)\n", res.Unfinished)
				}
				return out
			}); err != nil {
				return err
			}
			if ctx.Err() != nil {
				return fmt.Errorf("interrupted: the figures above cover only the part of the run before the signal")
			}
			if series != "" {
				f, err := os.Create(series)
				if err != nil {
					return fmt.Errorf("--series: %w", err)
				}
				if err := demo.WriteFreshnessSeries(f, res); err != nil {
					f.Close()
					return fmt.Errorf("--series: %w", err)
				}
				if err := f.Close(); err != nil {
					return fmt.Errorf("--series: %w", err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "series: %s\n", series)
			}
			if chart != "" {
				if err := demo.WriteFreshnessChart(chart, chartTitle, res); err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "chart: %s\n", chart)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object")
	cmd.Flags().Uint64Var(&cfg.Rate, "rate", 10000, "Nexmark events per second")
	cmd.Flags().DurationVar(&cfg.Duration, "duration", 20*time.Second, "how long to measure")
	cmd.Flags().DurationVar(&cfg.Warmup, "warmup", 3*time.Second, "how long to run before measuring")
	cmd.Flags().DurationVar(&cfg.Engine.EpochInterval, "epoch-interval", 100*time.Millisecond, "epoch_interval")
	cmd.Flags().DurationVar(&cfg.Engine.CheckpointInterval, "checkpoint-interval", 100*time.Millisecond, "checkpoint_interval")
	cmd.Flags().StringVar(&chart, "chart", "", "write a PNG chart of every measured epoch's freshness per level to this .png file")
	cmd.Flags().StringVar(&chartTitle, "chart-title", "", "subtitle of the chart (the machine, the run)")
	cmd.Flags().StringVar(&series, "series", "", "write every measured epoch's freshness per level to this file as JSON lines")
	return cmd
}
