package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/server"
)

// engineFlags are the engine settings `start` and `demo` share.
type engineFlags struct {
	data       string
	epoch      time.Duration
	checkpoint time.Duration
	par        int
}

func (f *engineFlags) add(cmd *cobra.Command, defaultData string) {
	cmd.Flags().StringVar(&f.data, "data", defaultData, "data directory (meta store, warehouse, checkpoints)")
	cmd.Flags().DurationVar(&f.epoch, "epoch-interval", time.Second, "epoch_interval: how often the epoch clock advances")
	cmd.Flags().DurationVar(&f.checkpoint, "checkpoint-interval", time.Second, "checkpoint_interval of every job")
	cmd.Flags().IntVar(&f.par, "parallelism", 1, "parallelism of the stateful steps of view jobs")
}

func (f *engineFlags) options() engine.Options {
	return engine.Options{Dir: f.data, EpochInterval: f.epoch, CheckpointInterval: f.checkpoint, Parallelism: f.par}
}

func newStartCommand() *cobra.Command {
	var ef engineFlags
	var listen, httpAddr, meta, warehouse string
	cmd := &cobra.Command{
		Use:   "start",
		Short: "Run Strata: the meta service, every job of the catalog and the Postgres wire server",
		Long: `Run Strata in this process: the meta service, every job of the catalog
(each resumes from its latest checkpoint) and the servers. Connect with
psql -h 127.0.0.1 -p 4566 -U root -d dev. SIGINT or SIGTERM stops it cleanly.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if meta != "bolt" {
				return fmt.Errorf("--meta %q: only the embedded bolt store is supported by start today", meta)
			}
			if warehouse != "" && !strings.HasPrefix(warehouse, "file://") {
				return fmt.Errorf("--warehouse %q: only file:// warehouses (under --data) are supported by start today", warehouse)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			s, err := server.Start(ctx, server.Options{Engine: ef.options(), Listen: listen, HTTP: httpAddr, Logger: log})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "strata %s: data in %s; Postgres wire on %s (psql -h %s -p %s -U root -d %s)",
				buildVersion(), ef.data, s.Addr(), host(s.Addr().String()), port(s.Addr().String()), engine.DefaultDatabase)
			if a := s.HTTPAddr(); a != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "; metrics on http://%s/metrics", a)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			select {
			case <-ctx.Done():
			case err := <-s.Done():
				_ = s.Close()
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), "stopping: jobs keep their last checkpoint")
			return s.Close()
		},
	}
	ef.add(cmd, "strata-data")
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:4566", "Postgres wire protocol address")
	cmd.Flags().StringVar(&httpAddr, "http", "127.0.0.1:8080", `HTTP address of /metrics and /healthz ("-" for none)`)
	cmd.Flags().StringVar(&meta, "meta", "bolt", "meta store: bolt (embedded, in --data)")
	cmd.Flags().StringVar(&warehouse, "warehouse", "", "warehouse location (default file:// under --data)")
	return cmd
}

func host(addr string) string {
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		return addr
	}
	return strings.Trim(addr[:i], "[]")
}

func port(addr string) string {
	i := strings.LastIndex(addr, ":")
	if i < 0 {
		return ""
	}
	return addr[i+1:]
}
