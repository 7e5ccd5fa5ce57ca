package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/stratadb/strata/bench/nexmark"
)

func newBenchNexmarkCommand() *cobra.Command {
	var asJSON, bidKey bool
	var spec, chartDir, chartTitle, fromJSON string
	var cfg nexmark.Config
	cmd := &cobra.Command{
		Use:   "nexmark",
		Short: "Nexmark q0-q22 as materialized views: events per CPU second, peak RSS, checkpoint p99",
		Long: `Runs each Nexmark query as a materialized view over the Nexmark generator bounded to
--events events, each in a fresh engine with epochs every second and checkpoints every 10 s,
and prints per query: events, seconds until the view committed every event, CPU seconds of
the process (user + system), events per CPU second, peak RSS and checkpoint p99. A query
the SQL layer cannot run yet is reported as unsupported with the planner's error.

--vs-duckdb writes the same events to Parquet, runs each query's batch form in DuckDB,
prints strata_seconds / duckdb_seconds and checks that the view equals DuckDB's result.
--bid-key declares a primary key on bid (auction, bidder, date_time, extra), so that the
views that select bid's rows are keyed by it rather than stored as append tables or multisets.

--input table (the default) creates person, auction and bid as tables with the nexmark
connector: ingest jobs write every event to the table store and the view reads the tables'
changelogs. --input source creates them as sources (CREATE SOURCE) that store nothing: the
view's job runs the generator itself, as Flink and RisingWave run Nexmark, and CPU seconds
count the generator, the query and the view's table writes. The ingest baseline has nothing
to measure then and is reported unsupported.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if chartDir != "" {
				if err := checkChartDir("--chart", chartDir); err != nil {
					return err
				}
			} else if chartTitle != "" {
				return fmt.Errorf("--chart-title needs --chart")
			}
			if cmd.Flags().Changed("from-json") {
				if strings.TrimSpace(fromJSON) == "" {
					return fmt.Errorf("--from-json is empty: give the files of earlier --json runs, comma-separated")
				}
				// --from-json runs nothing: flags that shape a run would
				// be ignored, so they are refused.
				var ignored []string
				cmd.Flags().Visit(func(f *pflag.Flag) {
					switch f.Name {
					case "from-json", "chart", "chart-title", "json", "cpuprofile", "memprofile":
					default:
						ignored = append(ignored, "--"+f.Name)
					}
				})
				if len(ignored) > 0 {
					return fmt.Errorf("--from-json runs nothing, so %s would be ignored: leave them out", strings.Join(ignored, ", "))
				}
				return nexmarkFromJSON(cmd, fromJSON, chartDir, chartTitle, asJSON)
			}
			switch {
			case strings.TrimSpace(spec) == "":
				return fmt.Errorf("--query is empty: give all, or a list such as q0,q5,q7")
			case cfg.Events == 0:
				return fmt.Errorf("--events 0: give at least 1 event per query")
			case cfg.Parallelism < 1:
				return fmt.Errorf("--parallelism %d: must be at least 1", cfg.Parallelism)
			case cfg.EpochInterval <= 0:
				return fmt.Errorf("--epoch-interval %v: must be positive", cfg.EpochInterval)
			case cfg.CheckpointInterval <= 0:
				return fmt.Errorf("--checkpoint-interval %v: must be positive", cfg.CheckpointInterval)
			case cfg.Timeout <= 0:
				return fmt.Errorf("--timeout %v: must be positive", cfg.Timeout)
			}
			qs, err := nexmark.Select(spec)
			if err != nil {
				return err
			}
			if cfg.Dir != "" {
				// Each query runs in a directory of its name under --dir,
				// emptied first: refuse to empty one that is there.
				for _, q := range qs {
					if _, err := os.Stat(filepath.Join(cfg.Dir, q.Name)); err == nil {
						return fmt.Errorf("--dir %q: %s exists, and the run of %s would replace it: give a directory without it", cfg.Dir, filepath.Join(cfg.Dir, q.Name), q.Name)
					}
				}
			}
			if bidKey {
				cfg.BidKey = nexmark.BidKeyColumns
			}
			ctx, cancel := benchContext()
			defer cancel()
			cfg.Progress = cmd.ErrOrStderr()
			r, err := nexmark.NewRunner(cfg)
			if err != nil {
				return err
			}
			defer r.Close()
			out := cmd.OutOrStdout()
			var results []nexmark.Result
			if !asJSON {
				printNexmarkHeader(out, cfg.VsDuckDB)
			}
			for _, q := range qs {
				res := r.Query(ctx, q)
				if ctx.Err() != nil {
					if len(results) == 0 {
						return fmt.Errorf("interrupted by a signal during %s: nothing measured", q.Name)
					}
					return fmt.Errorf("interrupted by a signal during %s: the queries above it were measured", q.Name)
				}
				results = append(results, res)
				if asJSON {
					b, err := json.Marshal(res)
					if err != nil {
						return err
					}
					fmt.Fprintln(out, string(b))
				} else {
					printNexmarkRow(out, res, cfg.VsDuckDB)
				}
			}
			if !asJSON {
				printNexmarkNotes(out, results, cfg.Input)
			}
			// A failed query, or a view that differs from DuckDB's
			// result, fails the command once every query has run and the
			// charts are written.
			var bad []string
			for _, r := range results {
				if r.Status == nexmark.StatusFailed || r.Status == nexmark.StatusMismatch {
					bad = append(bad, r.Query+" "+r.Status)
				}
			}
			if chartDir != "" {
				if chartTitle == "" {
					chartTitle = fmt.Sprintf("%d events per query", orDefaultU(cfg.Events, 1_000_000))
				}
				paths, err := nexmark.WriteCharts(chartDir, chartTitle, results)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "charts: %s\n", strings.Join(paths, ", "))
			}
			if len(bad) > 0 {
				return fmt.Errorf("%d of %d queries did not pass: %s", len(bad), len(results), strings.Join(bad, ", "))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per query")
	cmd.Flags().StringVar(&spec, "query", "all", "queries to run: all, or a list such as q0,q5,q7")
	cmd.Flags().Uint64Var(&cfg.Events, "events", 1_000_000, "Nexmark events per query (all three tables together)")
	cmd.Flags().IntVar(&cfg.Parallelism, "parallelism", 1, "parallelism of the views' stateful steps")
	cmd.Flags().Uint64Var(&cfg.Seed, "seed", 0, "generator seed")
	cmd.Flags().BoolVar(&cfg.VsDuckDB, "vs-duckdb", false, "also run each query's batch form in DuckDB over Parquet of the same events and compare")
	cmd.Flags().BoolVar(&bidKey, "bid-key", false, "declare PRIMARY KEY (auction, bidder, date_time, extra) on bid")
	cmd.Flags().StringVar(&cfg.Input, "input", nexmark.InputTable, "how queries read person, auction and bid: table (stored by ingest jobs) or source (read by the view's job, nothing stored)")
	cmd.Flags().DurationVar(&cfg.EpochInterval, "epoch-interval", time.Second, "epoch_interval")
	cmd.Flags().DurationVar(&cfg.CheckpointInterval, "checkpoint-interval", 10*time.Second, "checkpoint_interval")
	cmd.Flags().DurationVar(&cfg.Timeout, "timeout", 30*time.Minute, "time limit of each query")
	cmd.Flags().StringVar(&cfg.Dir, "dir", "", "directory for the runs' data (a temporary one when empty)")
	cmd.Flags().BoolVar(&cfg.Keep, "keep", false, "keep each query's data directory")
	cmd.Flags().StringVar(&chartDir, "chart", "", "directory to write PNG charts of the results into")
	cmd.Flags().StringVar(&fromJSON, "from-json", "", "run nothing: read the results of earlier runs (files of --json output, comma-separated), print them and chart them")
	cmd.Flags().StringVar(&chartTitle, "chart-title", "", "subtitle of the charts (the machine, the run)")
	return cmd
}

// nexmarkFromJSON prints and charts results read from files of --json
// output, in query order; a query measured in several files keeps its
// last result that is not unsupported.
func nexmarkFromJSON(cmd *cobra.Command, files, chartDir, chartTitle string, asJSON bool) error {
	var results []nexmark.Result
	at := map[string]int{}
	for _, name := range strings.Split(files, ",") {
		b, err := os.ReadFile(name)
		if err != nil {
			return fmt.Errorf("--from-json: %w", err)
		}
		read := 0
		for i, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, "{") {
				continue
			}
			var r nexmark.Result
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				return fmt.Errorf("%s line %d: %w", name, i+1, err)
			}
			if r.Query == "" || r.Status == "" {
				return fmt.Errorf("%s line %d: not a result of strata bench nexmark --json (it has no query or status)", name, i+1)
			}
			read++
			if j, ok := at[r.Query]; ok && r.Status != nexmark.StatusUnsupported {
				results[j] = r
				continue
			} else if ok {
				continue
			}
			at[r.Query] = len(results)
			results = append(results, r)
		}
		if read == 0 {
			return fmt.Errorf("--from-json: %s holds no result of strata bench nexmark --json", name)
		}
	}
	// In query order, the ingest baseline first.
	order := func(q string) int {
		n, err := strconv.Atoi(strings.TrimPrefix(q, "q"))
		if err != nil {
			return -1
		}
		return n
	}
	sort.SliceStable(results, func(i, j int) bool { return order(results[i].Query) < order(results[j].Query) })
	out := cmd.OutOrStdout()
	duck := false
	for _, r := range results {
		duck = duck || r.EqualToDuckDB != nil
	}
	if !asJSON {
		printNexmarkHeader(out, duck)
	}
	for _, r := range results {
		if asJSON {
			b, err := json.Marshal(r)
			if err != nil {
				return err
			}
			fmt.Fprintln(out, string(b))
		} else {
			printNexmarkRow(out, r, duck)
		}
	}
	if chartDir == "" {
		return nil
	}
	paths, err := nexmark.WriteCharts(chartDir, chartTitle, results)
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "charts: %s\n", strings.Join(paths, ", "))
	return nil
}

func orDefaultU(v, def uint64) uint64 {
	if v == 0 {
		return def
	}
	return v
}

func printNexmarkHeader(w io.Writer, duck bool) {
	fmt.Fprintf(w, "%-5s %-11s %10s %8s %8s %12s %9s %6s %9s", "query", "status", "events", "seconds", "cpu s", "events/cpu s", "rss MiB", "ckpts", "ckpt p99")
	if duck {
		fmt.Fprintf(w, " %9s %11s %6s", "duckdb s", "strata/duck", "equal")
	}
	fmt.Fprintln(w)
}

func printNexmarkRow(w io.Writer, r nexmark.Result, duck bool) {
	if r.Status == nexmark.StatusUnsupported || r.Status == nexmark.StatusFailed && r.Seconds == 0 {
		fmt.Fprintf(w, "%-5s %-11s %s\n", r.Query, r.Status, r.Error)
		return
	}
	fmt.Fprintf(w, "%-5s %-11s %10d %8.2f %8.2f %12.0f %9.0f %6d %7.0fms", r.Query, r.Status, r.Events, r.Seconds, r.CPUSeconds,
		r.EventsPerCPUSec, float64(r.PeakRSSBytes)/(1<<20), r.Checkpoints, r.CheckpointP99Ms)
	if duck && r.EqualToDuckDB != nil {
		fmt.Fprintf(w, " %9.3f %11.1f %6v", r.DuckDBSeconds, r.StrataOverDuckDB, *r.EqualToDuckDB)
	}
	fmt.Fprintln(w)
	if r.Error != "" {
		fmt.Fprintf(w, "      %s\n", r.Error)
	}
	for _, d := range r.Diff {
		fmt.Fprintf(w, "      %s\n", d)
	}
}

// printNexmarkNotes prints how each run query departs from the reference.
func printNexmarkNotes(w io.Writer, results []nexmark.Result, input string) {
	first := true
	for _, r := range results {
		if r.Note == "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nnotes:")
			first = false
		}
		fmt.Fprintf(w, "  %s: %s\n", r.Query, r.Note)
	}
	if input == nexmark.InputSource {
		fmt.Fprintf(w, "\nCPU seconds are the whole process's (generator and query in the view's job, the view's table, checkpoints; no input is stored) on %d cores.\n", runtime.NumCPU())
		return
	}
	fmt.Fprintf(w, "\nCPU seconds are the whole process's (generator, input tables, views, checkpoints) on %d cores.\n", runtime.NumCPU())
}
