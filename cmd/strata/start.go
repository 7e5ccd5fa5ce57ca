package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/spf13/cobra"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/stratadb/strata/demo"
	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/meta/store/etcdstore"
	"github.com/stratadb/strata/server"
	"github.com/stratadb/strata/sql/pgwire"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/fileio/s3"
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
	cmd.Flags().IntVar(&f.par, "parallelism", 1, "parallelism of the stateful steps of the views and sinks created from now on (each keeps its own across restarts)")
}

// check refuses intervals and parallelism that cannot run.
func (f *engineFlags) check() error {
	if f.epoch <= 0 {
		return fmt.Errorf("--epoch-interval %v must be positive", f.epoch)
	}
	if f.checkpoint <= 0 {
		return fmt.Errorf("--checkpoint-interval %v must be positive", f.checkpoint)
	}
	if f.par < 1 {
		return fmt.Errorf("--parallelism %d must be at least 1", f.par)
	}
	return nil
}

func (f *engineFlags) options() engine.Options {
	return engine.Options{Dir: f.data, EpochInterval: f.epoch, CheckpointInterval: f.checkpoint, Parallelism: f.par}
}

func newStartCommand() *cobra.Command {
	var ef engineFlags
	var listen, httpAddr, meta, warehouse, tlsCert, tlsKey, passwordFile string
	var requireTLS, noJobs bool
	cmd := &cobra.Command{
		Use: "start",
		// serve is the name other streaming databases give the same
		// command.
		Aliases: []string{"serve"},
		Short:   "Run Strata: the meta service, every job of the catalog and the Postgres wire server",
		Long: `Run Strata in this process: the meta service, every job of the catalog
(each resumes from its latest checkpoint) and the servers. Connect with
psql -h 127.0.0.1 -p 4566 -U root -d dev (with --password-file, as one of
its users, with its password). SIGINT or SIGTERM stops it cleanly:
each connected client gets FATAL 57P01 (terminating connection due to
administrator command), as from PostgreSQL, and a running statement is
cancelled.

With --no-jobs the catalog's jobs stay stopped (tables and views read as
of their last commit): the way back in when one job brings the process
down at every start (a view whose state outgrows memory), to DROP it.
Objects created meanwhile run their jobs; a materialized view or sink
over a stopped job's table is refused (55000).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := ef.check(); err != nil {
				return err
			}
			// Without GOMEMLIMIT, the collector keeps the heap within half
			// the machine (demo.ServerMemoryShare), so that a burst of
			// garbage does not grow the process to twice its live heap.
			limitDesc, restoreLimit := demo.SetMemoryLimit(demo.ServerMemoryShare)
			defer restoreLimit()
			if limitDesc != "" {
				fmt.Fprintln(cmd.OutOrStdout(), limitDesc)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			opts := ef.options()
			opts.NoJobs = noJobs
			var err error
			if opts.MetaStore, err = openMetaStore(ctx, meta); err != nil {
				return err
			}
			if opts.Warehouse, err = openWarehouse(warehouse); err != nil {
				return err
			}
			log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelInfo}))
			sopts := server.Options{Engine: opts, Listen: listen, HTTP: httpAddr, Logger: log, RequireTLS: requireTLS}
			if (tlsCert == "") != (tlsKey == "") {
				return fmt.Errorf("--tls-cert and --tls-key go together")
			}
			if tlsCert != "" {
				pair, err := tls.LoadX509KeyPair(tlsCert, tlsKey)
				if err != nil {
					return fmt.Errorf("--tls-cert/--tls-key: %w", err)
				}
				sopts.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
			}
			var users []string
			if passwordFile != "" {
				if sopts.Auth, err = pgwire.ReadPasswordFile(passwordFile); err != nil {
					return fmt.Errorf("--password-file: %w", err)
				}
				if users, err = readPasswordFileUsers(passwordFile); err != nil {
					return fmt.Errorf("--password-file: %w", err)
				}
			}
			s, err := server.Start(ctx, sopts)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "strata %s: data in %s; Postgres wire on %s (%s)",
				buildVersion(), ef.data, s.Addr(), connectHint(s.Addr(), users))
			if a := s.HTTPAddr(); a != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "; metrics on http://%s/metrics", a)
			}
			fmt.Fprintln(cmd.OutOrStdout())
			if noJobs {
				fmt.Fprintln(cmd.OutOrStdout(), "--no-jobs: the catalog's jobs are not running; DROP what brings the process down, then start again without --no-jobs")
			}
			if tcp, ok := s.Addr().(*net.TCPAddr); ok && !tcp.IP.IsLoopback() && passwordFile == "" {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: %s is reachable beyond this machine and any user name is accepted; use --password-file (and --tls-cert/--tls-key)\n", s.Addr())
			}
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
	cmd.Flags().StringVar(&tlsCert, "tls-cert", "", "certificate (PEM) for TLS on the Postgres port")
	cmd.Flags().StringVar(&tlsKey, "tls-key", "", "private key (PEM) of --tls-cert")
	cmd.Flags().BoolVar(&requireTLS, "require-tls", false, "refuse clients that do not use TLS")
	cmd.Flags().BoolVar(&noJobs, "no-jobs", false, "start without running the catalog's jobs (to DROP one that brings the process down)")
	cmd.Flags().StringVar(&passwordFile, "password-file", "", "users and passwords (user:password or user:SCRAM-SHA-256$... a line); clients then authenticate with SCRAM-SHA-256")
	cmd.Flags().StringVar(&meta, "meta", "bolt", "meta store: bolt (embedded, in --data) or etcd://host:port[,host:port...]/prefix")
	cmd.Flags().StringVar(&warehouse, "warehouse", "", "warehouse: file:///path (default: under --data) or s3://bucket/prefix?endpoint=host:port[&secure=false&region=...], credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
	return cmd
}

// openMetaStore opens the meta store --meta names: nil for bolt (the
// engine opens DIR/meta.db), or an etcd store.
func openMetaStore(ctx context.Context, spec string) (store.Store, error) {
	if spec == "" || spec == "bolt" {
		return nil, nil
	}
	u, err := url.Parse(spec)
	if err != nil || u.Scheme != "etcd" || u.Host == "" {
		return nil, fmt.Errorf("--meta %q: want bolt or etcd://host:port[,host:port...]/prefix", spec)
	}
	var endpoints []string
	for _, h := range strings.Split(u.Host, ",") {
		endpoints = append(endpoints, "http://"+h)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Context: ctx, Logger: zap.NewNop()})
	if err != nil {
		return nil, fmt.Errorf("--meta %q: %w", spec, err)
	}
	prefix := strings.Trim(u.Path, "/")
	if prefix == "" {
		prefix = "strata"
	}
	return &closingStore{Store: etcdstore.New(cli, prefix+"/"), close: cli.Close}, nil
}

// closingStore closes the etcd client with the store.
type closingStore struct {
	store.Store
	close func() error
}

func (c *closingStore) Close() error { return errors.Join(c.Store.Close(), c.close()) }

// openWarehouse opens the warehouse --warehouse names: nil for the
// default (the engine uses DIR/warehouse), a local directory, or an S3
// bucket.
func openWarehouse(spec string) (fileio.FS, error) {
	if spec == "" {
		return nil, nil
	}
	u, err := url.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("--warehouse %q: %w", spec, err)
	}
	switch u.Scheme {
	case "file":
		return fileio.NewLocal(u.Path)
	case "s3":
		q := u.Query()
		endpoint := q.Get("endpoint")
		if endpoint == "" {
			endpoint = "s3.amazonaws.com"
		}
		client, err := minio.New(endpoint, &minio.Options{
			Creds:  credentials.NewStaticV4(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")),
			Secure: q.Get("secure") != "false", Region: q.Get("region"), BucketLookup: minio.BucketLookupPath,
		})
		if err != nil {
			return nil, fmt.Errorf("--warehouse %q: %w", spec, err)
		}
		return s3.New(client, u.Host, strings.Trim(u.Path, "/")), nil
	}
	return nil, fmt.Errorf("--warehouse %q: want file:///path or s3://bucket/prefix?endpoint=host:port", spec)
}

// connectHint is the psql command line the startup line suggests: as
// root without a password file (any user name is accepted then), else as
// the file's first user, saying that psql asks for the password.
func connectHint(addr net.Addr, users []string) string {
	if len(users) == 0 {
		return server.PsqlCommand(addr)
	}
	return server.PsqlCommandAs(addr, users[0]) + "; psql asks for the password, as set for " + users[0] + " in --password-file"
}

// readPasswordFileUsers returns the users of the password file at path,
// in the order of its lines.
func readPasswordFileUsers(path string) ([]string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return pgwire.PasswordFileUsers(data)
}
