package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/sql/olap"
	"github.com/stratadb/strata/sql/stream"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
)

// DefaultDatabase is the database every instance has; clients that name
// none use it.
const DefaultDatabase = "dev"

// Options configure Open.
type Options struct {
	// Dir is the data directory (see the package doc); created if missing.
	Dir string
	// EpochInterval is epoch_interval (default 1 s).
	EpochInterval time.Duration
	// CheckpointInterval is checkpoint_interval of every job (default 1 s).
	CheckpointInterval time.Duration
	// Parallelism is the parallelism of the stateful steps of view jobs
	// (default 1).
	Parallelism int
	// Connectors are the ingest connectors by name, added to (and
	// overriding) the built-in ones.
	Connectors map[string]Connector
	// Logger receives job failures and restarts; nil means slog.Default().
	Logger *slog.Logger
	// NoJobs opens the instance without starting its jobs (to inspect or
	// verify a data directory offline).
	NoJobs bool
	// MetaStore, when set, holds the meta service's state instead of
	// DIR/meta.db (an etcd store for a cluster); Close closes it.
	MetaStore store.Store
	// Warehouse, when set, holds the tables instead of DIR/warehouse (an
	// S3 bucket); checkpoints and DML logs stay under Dir.
	Warehouse fileio.FS
}

// Engine is an open Strata instance. Its methods are safe for concurrent
// use.
type Engine struct {
	opts  Options
	store store.Store
	meta  *service.Meta
	fs    fileio.FS
	log   *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// ddl serialises catalog changes with the jobs they start and stop.
	ddl sync.Mutex

	mu     sync.Mutex
	tables map[catalog.ObjectName]*table.Table
	jobs   map[string]*runningJob
	dml    map[catalog.ObjectName]*dmlLog
	deadMu sync.Mutex
	// skipErrs holds, per table, the error counters of its running
	// connector readers (errors = 'skip').
	skipErrs map[catalog.ObjectName][]*format.Errors
	// late holds, per view job, the late-row counters of its inputs'
	// watermarks, by relation name as the query names it.
	late     map[string]map[string]*stream.LateCounter
	olapOnce sync.Once
	olap     *olap.Engine
	olapErr  error

	// closes holds, per ingest job, the last (epoch, position) at which
	// its source closed an epoch.
	closes map[string]ingest.Pair
	// pendingRemovals names the dropped tables whose files wait for their
	// readers' pins, with the sequence number of the removal that waits
	// ([drop-after-readers]); removalSeq numbers them. Guarded by mu.
	pendingRemovals map[catalog.ObjectName]uint64
	removalSeq      uint64

	// crashAt, set by tests only (before the statement it concerns),
	// makes the process die at a step of a DROP (drop.go): a non-nil
	// error ends the statement there with that error, nothing more
	// done, as a kill -9 at that instant would. nil in production.
	crashAt func(step string) error
}

// Open opens (or creates) the instance in opts.Dir, creates the default
// database when missing and starts every job of the catalog, each resuming
// from its latest checkpoint.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Dir == "" {
		return nil, fmt.Errorf("engine: no data directory: %w", base.ErrInvalidArgument)
	}
	if opts.EpochInterval <= 0 {
		opts.EpochInterval = time.Second
	}
	if opts.CheckpointInterval <= 0 {
		opts.CheckpointInterval = time.Second
	}
	if opts.Parallelism < 1 {
		opts.Parallelism = 1
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	for _, d := range []string{"warehouse", "checkpoints", "dml"} {
		if err := os.MkdirAll(filepath.Join(opts.Dir, d), 0o755); err != nil {
			return nil, fmt.Errorf("engine: data directory %s: %w", opts.Dir, err)
		}
	}
	var st store.Store = opts.MetaStore
	if st == nil {
		b, err := store.OpenBolt(filepath.Join(opts.Dir, "meta.db"))
		if err != nil {
			return nil, err
		}
		st = b
	}
	svc, err := service.Open(ctx, service.Options{Store: st, EpochInterval: opts.EpochInterval, Logger: opts.Logger})
	if err != nil {
		return nil, errors.Join(err, st.Close())
	}
	var fs fileio.FS = opts.Warehouse
	if fs == nil {
		local, err := fileio.NewLocal(filepath.Join(opts.Dir, "warehouse"))
		if err != nil {
			return nil, errors.Join(err, svc.Close(), st.Close())
		}
		fs = local
	}
	e := &Engine{opts: opts, store: st, meta: svc, fs: fs, log: opts.Logger,
		tables: map[catalog.ObjectName]*table.Table{}, jobs: map[string]*runningJob{}, dml: map[catalog.ObjectName]*dmlLog{}, closes: map[string]ingest.Pair{}, skipErrs: map[catalog.ObjectName][]*format.Errors{}, late: map[string]map[string]*stream.LateCounter{},
		pendingRemovals: map[catalog.ObjectName]uint64{}}
	e.ctx, e.cancel = context.WithCancel(context.Background())
	conns := e.builtinConnectors()
	for k, v := range opts.Connectors {
		conns[k] = v
	}
	e.opts.Connectors = conns
	cat, err := svc.Catalog(ctx)
	if err != nil {
		return nil, errors.Join(err, e.Close())
	}
	if _, err := cat.Database(DefaultDatabase); errors.Is(err, base.ErrNotFound) {
		if err := svc.CreateDatabase(ctx, catalog.Database{Name: DefaultDatabase}); err != nil {
			return nil, errors.Join(err, e.Close())
		}
	}
	if opts.NoJobs {
		return e, nil
	}
	// A DROP that died after its catalog change left files of objects
	// the catalog no longer holds: they go before anything reads the
	// warehouse ([drop-atomic]). A failure here leaves orphans, which the
	// next start or a CREATE of the name clears; the instance starts.
	if err := e.replayDropIntents(ctx); err != nil {
		e.log.Warn("finishing the cleanup of a DROP cut short", "err", err)
	}
	if err := e.startAll(ctx); err != nil {
		return nil, errors.Join(err, e.Close())
	}
	e.wg.Add(1)
	go e.expireLoop()
	return e, nil
}

// Meta returns the instance's meta service.
func (e *Engine) Meta() meta.Service { return e.meta }

// Dir returns the data directory.
func (e *Engine) Dir() string { return e.opts.Dir }

// EpochInterval returns epoch_interval.
func (e *Engine) EpochInterval() time.Duration { return e.opts.EpochInterval }

// Close stops every job (their last completed checkpoints stay for the
// next Open), then the meta service and its store.
func (e *Engine) Close() error {
	e.cancel()
	e.wg.Wait()
	e.mu.Lock()
	var errs []error
	for _, l := range e.dml {
		errs = append(errs, l.close())
	}
	e.dml = map[catalog.ObjectName]*dmlLog{}
	e.mu.Unlock()
	if e.olap != nil {
		errs = append(errs, e.olap.Close())
	}
	errs = append(errs, e.meta.Close(), e.store.Close())
	return errors.Join(errs...)
}

// tableDir is where the table store keeps name, relative to the warehouse.
func tableDir(name catalog.ObjectName) string { return name.Database + "/" + name.Name }

// Table returns the opened table store table of a table or view.
func (e *Engine) Table(name catalog.ObjectName) (*table.Table, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t, ok := e.tables[name]; ok {
		return t, nil
	}
	t, err := table.Open(e.fs, tableDir(name))
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	e.tables[name] = t
	return t, nil
}

// Catalog returns the current catalog.
func (e *Engine) Catalog(ctx context.Context) (*catalog.Catalog, error) { return e.meta.Catalog(ctx) }
