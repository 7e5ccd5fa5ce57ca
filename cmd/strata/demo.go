package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/stratadb/strata/demo"
)

func newDemoCommand() *cobra.Command {
	var ef engineFlags
	var rate, seed uint64
	var duration time.Duration
	var serve bool
	var listen, httpListen string
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the Nexmark demo: three levels of views kept consistent, checked every epoch",
		Long: `Run the demo topology in an embedded Strata: the Nexmark tables fed by the
generator, and three levels of materialized views (t1 over bid, t2 over t1,
t3 joining t1 and t2). Every epoch a query reads t1, t2 and t3 at one
consistent version and checks an invariant that holds only at a consistent
cut. At the end every view is verified against its query recomputed at one
epoch. The last line reads:
  consistency checks: P passed, V violated; views verified: K of N
A run too short for any check (creating the views waits for their first
epochs) prints a warning line just before it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ef.check(); err != nil {
				return err
			}
			if rate == 0 {
				return fmt.Errorf("--rate must be at least 1 event per second")
			}
			if duration < 0 {
				return fmt.Errorf("--duration %v is negative", duration)
			}
			if !serve && (cmd.Flags().Changed("listen") || cmd.Flags().Changed("http")) {
				return fmt.Errorf("--listen and --http take effect with --serve: add --serve to serve the Postgres wire protocol while the demo runs")
			}
			// The first Ctrl-C (or SIGTERM) ends the run as --duration does:
			// the views are verified and the summary printed. A second one
			// abandons the verification.
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			stopRun := make(chan struct{})
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
			defer signal.Stop(sigs)
			go func() {
				select {
				case <-sigs:
				case <-ctx.Done():
					return
				}
				close(stopRun)
				select {
				case <-sigs:
					cancel()
				case <-ctx.Done():
				}
			}()
			opts := ef.options()
			if opts.Dir == "" {
				dir, err := os.MkdirTemp("", "strata-demo-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(dir)
				opts.Dir = dir
			}
			// A used directory is refused before the banner, so that a
			// refusal is all the run prints.
			if err := demo.CheckFresh(ctx, opts); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			live := false
			if f, ok := out.(*os.File); ok {
				live = term.IsTerminal(int(f.Fd()))
			}
			addr := ""
			if serve {
				addr = listen
			}
			fmt.Fprintf(out, "strata demo: Nexmark at %d events/s into %s; epochs every %v, checkpoints every %v", rate, opts.Dir, opts.EpochInterval, opts.CheckpointInterval)
			if duration > 0 {
				fmt.Fprintf(out, "; stops after %v", duration)
			} else {
				fmt.Fprint(out, "; Ctrl-C stops it and verifies the views")
			}
			fmt.Fprintln(out)
			httpAddr := "-"
			if serve {
				httpAddr = httpListen
			}
			sum, err := demo.Run(ctx, demo.Options{Engine: opts, Rate: rate, Seed: seed, Duration: duration, Serve: addr, HTTP: httpAddr, Stop: stopRun, Out: out, Live: live})
			if err != nil && !(ctx.Err() != nil && sum.Passed+sum.Violated > 0) {
				return err
			}
			ran := fmt.Sprintf("ran %v", sum.Duration.Round(time.Millisecond))
			if duration > 0 {
				ran += fmt.Sprintf(" (--duration %v)", duration)
			}
			fmt.Fprintf(out, "%s: %d events (%.0f/s); final verification took %v\n", ran, sum.Events,
				float64(sum.Events)/max(sum.Duration.Seconds(), 1e-9), sum.Verification.Round(time.Millisecond))
			if sum.Warning != "" {
				fmt.Fprintln(out, sum.Warning)
			}
			fmt.Fprintln(out, sum.Line())
			if sum.Violated > 0 || sum.Verified < sum.Views {
				return demo.ErrViolations
			}
			return nil
		},
	}
	ef.add(cmd, "")
	cmd.Flags().Uint64Var(&rate, "rate", 150000, "Nexmark events per second (150000 uses about one core of two on a quiet 2-core machine; the views keep up at 250000)")
	cmd.Flags().Uint64Var(&seed, "seed", 42, "Nexmark generator seed")
	cmd.Flags().DurationVar(&duration, "duration", 0, "stop after this long (0: run until Ctrl-C)")
	cmd.Flags().BoolVar(&serve, "serve", false, "serve the Postgres wire protocol while the demo runs")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:4566", "address for --serve")
	cmd.Flags().StringVar(&httpListen, "http", "127.0.0.1:8080", `with --serve, HTTP address of /metrics and of the API strata verify uses ("-" for none)`)
	return cmd
}
