package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/tablesink"
	"github.com/stratadb/strata/connector/tablesource"
	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/suggest"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/planner"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/sql/stream"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/scan"
	"github.com/stratadb/strata/topology"
)

// Connector makes the readers of a table's ingest job from the table's
// definition and its connector options (the WITH options that are not the
// table store's): one per source subtask (a Kafka topic's partitions), each
// with positions of its own. It refuses unknown options and bad values
// with an error naming them; it is called once when the table is created
// (to check) and again every time the job starts.
type Connector func(t catalog.Table, options map[string]string) ([]ingest.Reader, error)

// progressCheckpoints is how many checkpoints a job completes after a
// restart before it counts as making progress again (runningJob.failing).
const progressCheckpoints = 2

// runningJob is a job running in this process.
type runningJob struct {
	def    catalog.Job
	cancel context.CancelFunc
	done   chan struct{}

	mu       sync.Mutex
	err      error
	restarts int
	// failing counts the restarts since the job last made progress:
	// since the second checkpoint it completed after a restart, or its
	// first checkpoint when it never restarted (firstFailing reads it:
	// two or more fail reads, readhealth.go). The checkpoint a restored
	// job takes at its first epoch barrier, before it reaches the input
	// that failed it, is not progress.
	failing int
	// sinceRestart counts the checkpoints completed since the last
	// restart.
	sinceRestart int
	// lastCheckpoint is the last completed checkpoint's id, duration and
	// size; progress is the id of the last one that counted as progress
	// (it reset failing).
	lastCheckpoint task.Event
	progress       base.CheckpointID
	probe          task.Probe
}

// JobStatus is what the engine knows about a job running in this process.
type JobStatus struct {
	Name     string
	Kind     catalog.JobKind
	Running  bool
	Err      error
	Restarts int
	// LastCheckpoint is the last completed checkpoint (zero when none).
	LastCheckpoint task.Event
	// QueueFill is, per vertex, how full its input queues are (0 to 1;
	// task.Probe); nil while the job is not running an attempt.
	QueueFill map[string]float64
}

// Jobs reports the jobs of this process, in no particular order.
func (e *Engine) Jobs() []JobStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]JobStatus, 0, len(e.jobs))
	for _, j := range e.jobs {
		j.mu.Lock()
		st := JobStatus{Name: j.def.Name, Kind: j.def.Kind, Err: j.err, Restarts: j.restarts, LastCheckpoint: j.lastCheckpoint}
		j.mu.Unlock()
		st.QueueFill = j.probe.QueueFill()
		select {
		case <-j.done:
		default:
			st.Running = true
		}
		out = append(out, st)
	}
	return out
}

// JobStatusText is the status shown for a job (strata_catalog.jobs, SHOW
// JOBS): the meta service's status, except that an instance opened
// without its jobs (Options.NoJobs, strata start --no-jobs) shows STOPPED
// for a job it does not run, which the meta service would go on calling
// RUNNING until its heartbeats time out.
func (e *Engine) JobStatusText(status meta.JobStatus, local JobStatus) string {
	if e.opts.NoJobs && !local.Running {
		return "STOPPED"
	}
	return string(status)
}

// IngestPosition returns the source position at which ingest job job last
// closed an epoch, and that epoch (zero before the first). For a nexmark
// table the position is the number of events generated.
func (e *Engine) IngestPosition(job string) ingest.Pair {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.closes[job]
}

// IngestJobName returns the name of the ingest job of a table with a
// connector.
func IngestJobName(table catalog.ObjectName) string { return ingestJobName(table) }

func (e *Engine) connector(t catalog.Table, name string, opts map[string]string) ([]ingest.Reader, error) {
	f, ok := e.opts.Connectors[name]
	if !ok {
		known := slices.Sorted(maps.Keys(e.opts.Connectors))
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "table %s: unknown connector %q (connectors of tables: %s; sinks to external systems, with CREATE SINK ... FROM: %s; Flink's print and blackhole are not offered: read a table with SELECT)",
			t.Name.Name, name, strings.Join(known, ", "), externalSinkNames())
	}
	// The connector produces the columns rows carry; the processing-time
	// columns are stamped on its chunks (proctime.go).
	r, err := f(withoutGenerated(t), opts)
	if err != nil {
		se := sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("table %s: connector %s: %w", t.Name.Name, name, err))
		// An option near none of the connector's may be a mistyped
		// option of the table store ('buckets'), which the connector
		// never sees.
		var unknown *suggest.UnknownOptionError
		if se.Hint == "" && errors.As(err, &unknown) {
			se.Hint = storeOptionHint(unknown.Option, t.Columns)
		}
		return nil, se
	}
	return stampReaders(t, r, time.Now), nil
}

// startAll starts every job of the catalog. A job that cannot start (its
// upstream table vanished, its options no longer hold) is logged and left
// stopped: the meta service then reports it FAILED for want of
// heartbeats, and the rest of the instance (and SQL, to DROP or fix what
// it needs) stays available.
func (e *Engine) startAll(ctx context.Context) error {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	for _, def := range cat.Jobs() {
		if err := e.startJob(ctx, cat, def); err != nil {
			if ctx.Err() != nil {
				return err
			}
			e.log.Error("job cannot start", "job", def.Name, "err", err)
		}
	}
	return nil
}

func columnTypes(cols []catalog.Column) []types.Type {
	out := make([]types.Type, len(cols))
	for i, c := range cols {
		out[i] = c.Type
	}
	return out
}

// sidecar is work a job needs beside its dataflow graph while it runs
// (run, until ctx ends) and after it stops (close).
type sidecar struct {
	run   func(ctx context.Context)
	close func() error
}

// buildJob makes the dataflow job of def from the catalog.
func (e *Engine) buildJob(cat *catalog.Catalog, def catalog.Job) (*graph.Job, *sidecar, error) {
	if isCDCJob(def) {
		return e.buildCDCJob(cat, def)
	}
	if isExternalSinkJob(def) {
		g, err := e.buildExternalSinkJob(cat, def)
		return g, nil, err
	}
	var closers []io.Closer
	var g *graph.Job
	var err error
	if isSinkJob(def) {
		g, err = e.buildSinkJob(cat, def, &closers)
	} else {
		g, err = e.buildSingleJob(cat, def, &closers)
	}
	if err != nil || len(closers) == 0 {
		return g, nil, err
	}
	// Readers that hold connections (Kafka clients, open files) are
	// closed when the job stops.
	return g, &sidecar{close: func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c.Close())
		}
		return errors.Join(errs...)
	}}, nil
}

func (e *Engine) buildSingleJob(cat *catalog.Catalog, def catalog.Job, closers *[]io.Closer) (*graph.Job, error) {
	if len(def.Writes) != 1 {
		return nil, fmt.Errorf("job %q writes %d tables; this engine runs jobs that write one: %w", def.Name, len(def.Writes), base.ErrInvalidArgument)
	}
	t, err := cat.Table(def.Writes[0])
	if err != nil {
		return nil, err
	}
	if def.Kind == catalog.JobView {
		return e.buildViewJob(cat, def, t, closers)
	}
	var readers []ingest.Reader
	if def.Name == ingestJobName(t.Name) {
		_, connOpts, connector := splitOptions(t.Options)
		if readers, err = e.connector(t, connector, connOpts); err != nil {
			return nil, err
		}
		var errs []*format.Errors
		for _, r := range readers {
			if c, ok := r.(io.Closer); ok && closers != nil {
				*closers = append(*closers, c)
			}
			if x, ok := r.(interface{ Errors() *format.Errors }); ok && x.Errors() != nil {
				errs = append(errs, x.Errors())
			}
		}
		if closers != nil {
			e.mu.Lock()
			e.skipErrs[t.Name] = errs
			e.mu.Unlock()
		}
	} else {
		l, err := e.dmlLog(t.Name)
		if err != nil {
			return nil, err
		}
		readers = []ingest.Reader{l}
	}
	out, err := e.Table(t.Name)
	if err != nil {
		return nil, err
	}
	start, err := e.meta.CurrentEpoch(e.ctx)
	if err != nil {
		return nil, err
	}
	onClose := func(i int) func(p ingest.Pair) {
		dml, _ := readers[i].(*dmlLog)
		return func(p ingest.Pair) {
			if i == 0 {
				e.mu.Lock()
				e.closes[def.Name] = p
				e.mu.Unlock()
			}
			if dml != nil {
				dml.closed(p)
			}
		}
	}
	edge := graph.Edge{From: "source", To: "sink", Partitioning: graph.Forward}
	if len(readers) > 1 {
		// Several source subtasks into the one sink subtask: by key, so
		// each key's changes keep their order.
		edge.Partitioning = graph.Hash
		for i, c := range t.Columns {
			if len(t.PrimaryKey) == 0 || slices.Contains(t.PrimaryKey, c.Name) {
				edge.KeyColumns = append(edge.KeyColumns, i)
				edge.KeyTypes = append(edge.KeyTypes, c.Type)
			}
		}
	}
	return &graph.Job{Name: def.Name,
		Vertices: []graph.Vertex{
			{Name: "source", Parallelism: len(readers), NewSource: func(i int) operator.Source {
				return ingest.New(ingest.Config{Reader: readers[i], Clock: e.meta, Name: t.Name.String(), StartEpoch: start.Epoch, OnClose: onClose(i)})
			}},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator {
				return tablesink.Sink(out, t.Name, def.Name, e.meta)
			}},
		},
		Edges: []graph.Edge{edge},
	}, nil
}

// viewEndpoints connects a view job to the table store: a table source per
// input, the view's table as the sink.
type viewEndpoints struct {
	e     *Engine
	job   string
	cat   *catalog.Catalog
	out   *table.Table
	name  catalog.ObjectName
	err   error
	errMu sync.Mutex
	// startAfter is tablesource.Config.StartAfter (sinks into tables).
	startAfter base.Epoch
	// sources are the readers of the sources the job reads directly
	// (source.go).
	sources viewSources
}

func (v *viewEndpoints) fail(err error) {
	v.errMu.Lock()
	if v.err == nil {
		v.err = err
	}
	v.errMu.Unlock()
}

func (v *viewEndpoints) Source(rel *plan.Relation, i int) operator.Source {
	if rel.IsSource {
		return v.streamSource(rel, i)
	}
	// The relation is named as the query wrote it: "t" or "db.t".
	t, err := v.e.Table((&relations{db: v.name.Database}).objectName(rel.Name))
	if err != nil {
		v.fail(err)
		return failedSource{err}
	}
	tps := make([]types.Type, len(rel.Columns))
	for i, c := range rel.Columns {
		tps[i] = c.Type
	}
	if rel.Multiset {
		// Each stored row with its multiplicity (plan.Relation.Multiset).
		tps = append(tps, types.Int64)
	}
	return tablesource.New(tablesource.Config{Table: t, Name: rel.Name, Types: tps, Consumer: v.job, ConsumerEvery: consumerEvery, StartAfter: v.startAfter})
}

func (v *viewEndpoints) SourceParallelism(rel *plan.Relation) int {
	if rel.IsSource {
		return v.sourceParallelism(rel)
	}
	return 1
}

func (v *viewEndpoints) Sink(int) operator.Operator {
	return tablesink.Sink(v.out, v.name, v.job, v.e.meta)
}

func (v *viewEndpoints) SinkParallelism() int { return 1 }

// Lookup implements planner.LookupEndpoints: rel's table read by primary
// key at an epoch, for a lookup join (LOOKUP(t) in a view).
func (v *viewEndpoints) Lookup(rel *plan.Relation) (stream.LookupTable, error) {
	name := (&relations{db: v.name.Database}).objectName(rel.Name)
	t, err := v.e.Table(name)
	if err != nil {
		return nil, fmt.Errorf("lookup join: table %s: %w", name, err)
	}
	return &tableLookup{ctx: v.e.ctx, t: t, name: name.String()}, nil
}

// tableLookup reads a table by primary key at an epoch (scan.AtEpoch,
// then scan.Lookup per key) for a lookup join. The table is not an input
// of the job's dataflow, so nothing aligns on its epochs: LookupAt waits,
// polling with a growing pause, until the table has committed the epoch,
// which keeps the view's epoch E a function of its inputs up to E
// (DESIGN.md invariant 1) and a replay of E reading the same version.
// A table that does not get there within lookupWait (its writer stopped
// or failing) fails the attempt, which releases the subtask so that the
// job can be stopped, and the job retries after its restart delay.
type tableLookup struct {
	ctx  context.Context
	t    *table.Table
	name string
}

// consumerEvery is how often a view job's table sources register their
// last completed checkpoint's position with the tables they read
// (tablesource.Config.ConsumerEvery): expiration keeps at most a second's
// more snapshots, and a source does not write and fsync a consumer file
// at every checkpoint.
const consumerEvery = time.Second

// lookupWait bounds how long a lookup waits for its table to commit an
// epoch.
const lookupWait = time.Minute

// LookupAt implements stream.LookupTable.
func (l *tableLookup) LookupAt(ep base.Epoch, keys []types.Row) ([]types.Row, error) {
	pause := 5 * time.Millisecond
	deadline := time.Now().Add(lookupWait)
	for {
		ce, err := l.t.CommittedEpoch()
		if err != nil {
			return nil, fmt.Errorf("lookup in %s: %w", l.name, err)
		}
		if ce >= ep {
			break
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("lookup in %s: epoch %d not committed after %s (committed %d): %w", l.name, ep, lookupWait, ce, base.ErrOutOfRange)
		}
		select {
		case <-l.ctx.Done():
			return nil, fmt.Errorf("lookup in %s at epoch %d (committed %d): %w", l.name, ep, ce, l.ctx.Err())
		case <-time.After(pause):
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
	out := make([]types.Row, len(keys))
	sn, err := scan.AtEpoch(l.t.Store(), ep)
	if err != nil || sn == nil {
		return out, err
	}
	for i, k := range keys {
		if out[i], err = scan.Lookup(l.t.Store(), sn, k); err != nil {
			return nil, fmt.Errorf("lookup in %s at epoch %d: %w", l.name, ep, err)
		}
	}
	return out, nil
}

// failedSource is a source whose table could not be opened: it fails the
// job attempt with the reason.
type failedSource struct{ err error }

func (f failedSource) Open(*operator.Context) error           { return f.err }
func (f failedSource) Next() (operator.Item, error)           { return operator.Item{}, f.err }
func (f failedSource) Snapshot(base.CheckpointID) error       { return nil }
func (f failedSource) NotifyComplete(base.CheckpointID) error { return nil }
func (f failedSource) Close() error                           { return nil }

// buildViewJob compiles a view's query into its job; the readers of the
// sources it reads directly go to closers.
func (e *Engine) buildViewJob(cat *catalog.Catalog, def catalog.Job, t catalog.Table, closers *[]io.Closer) (*graph.Job, error) {
	j, err := e.planViewJob(cat, def, t, closers)
	if err != nil {
		return nil, err
	}
	if len(j.Late) > 0 {
		e.mu.Lock()
		e.late[def.Name] = j.Late
		e.mu.Unlock()
	}
	groupTableSources(j.Graph)
	return j.Graph, nil
}

// groupTableSources makes the table sources of a view job one
// tablesource.Group, so that each closes an epoch only once every input
// table has committed it and every source has given out its changes
// (DESIGN.md "The epoch protocol"; tablesource invariant
// close-with-group). A table source runs with parallelism 1, so its vertex
// names it in the group; the runtime builds every source of an attempt
// before it runs any, so all of them have joined before the first reads.
func groupTableSources(g *graph.Job) {
	group := tablesource.NewGroup()
	for i := range g.Vertices {
		v := &g.Vertices[i]
		if v.NewSource == nil {
			continue
		}
		newSource, member := v.NewSource, v.Name
		v.NewSource = func(subtask int) operator.Source {
			src := newSource(subtask)
			if ts, ok := src.(*tablesource.Source); ok {
				ts.JoinGroup(group, member)
			}
			return src
		}
	}
}

// planViewJob plans a view's query: its job and its changelog mode. The
// readers of the sources the query reads directly are handed to closers,
// to close when the job stops; with closers nil (a plan that is checked,
// not run) they are closed before it returns.
func (e *Engine) planViewJob(cat *catalog.Catalog, def catalog.Job, t catalog.Table, closers *[]io.Closer) (*planner.Job, error) {
	loc := jobZone(def)
	p, _, err := e.viewPlanIn(cat, t.Name.Database, t.Query, loc)
	if err != nil {
		return nil, err
	}
	if c := multisetColumn(t); c != "" {
		p = planner.Multiset(p, c)
	}
	after, _ := strconv.ParseUint(def.Options[jobOptStartAfter], 10, 64)
	ep := &viewEndpoints{e: e, job: def.Name, cat: cat, name: t.Name, startAfter: base.Epoch(after)}
	if out, err := e.Table(t.Name); err == nil {
		ep.out = out
	}
	j, err := planner.Build(def.Name, p, ep, planner.Options{Parallelism: e.jobParallelism(def), Eval: &expr.Context{Loc: loc}})
	if closers == nil || err != nil {
		err = errors.Join(err, ep.closeSources())
	} else {
		ep.sourceClosers(closers)
	}
	if err == nil && ep.err != nil {
		err = ep.err
	}
	return j, err
}

// ExplainView returns the streaming plan of query as a view job would run
// it: the logical plan, then the job's vertices with their parallelism and
// changelog modes.
func (e *Engine) ExplainView(ctx context.Context, db, query string) (string, error) {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return "", err
	}
	p, _, err := e.viewPlan(cat, db, query)
	if err != nil {
		return "", err
	}
	ep := &viewEndpoints{e: e, cat: cat, name: catalog.ObjectName{Database: db}}
	defer ep.closeSources()
	j, err := planner.Build("explain", p, ep, planner.Options{Parallelism: e.opts.Parallelism})
	if err != nil {
		return "", err
	}
	if _, _, _, err := viewColumns(catalog.ObjectName{Database: db}, p); errors.Is(err, errNoKey) && j.Mode != planner.AppendOnly {
		// Stored as a multiset (doc.go, "Multiset views"): the job
		// counts the copies of each row.
		p = planner.Multiset(p, multisetCountColumn)
		if j, err = planner.Build("explain", p, ep, planner.Options{Parallelism: e.opts.Parallelism}); err != nil {
			return "", err
		}
		return plan.Explain(p) + "\n" + j.Explain + "\nstored as a multiset: no unique key and retractions; keyed by all columns, " + multisetCountColumn + " (hidden) counts each row's copies", nil
	}
	return plan.Explain(p) + "\n" + j.Explain, nil
}

// startJob builds def and runs it in the background until the engine
// closes or the job is stopped. A job restarts from its latest checkpoint
// after a failure, without end.
func (e *Engine) startJob(ctx context.Context, cat *catalog.Catalog, def catalog.Job) error {
	g, side, err := e.buildJob(cat, def)
	if err != nil {
		return fmt.Errorf("job %q: %w", def.Name, err)
	}
	if g, side, def, err = e.matchCheckpoint(cat, def, g, side); err != nil {
		return fmt.Errorf("job %q: %w", def.Name, err)
	}
	jctx, cancel := context.WithCancel(e.ctx)
	rj := &runningJob{def: def, cancel: cancel, done: make(chan struct{})}
	e.mu.Lock()
	if old, ok := e.jobs[def.Name]; ok {
		e.mu.Unlock()
		cancel()
		return fmt.Errorf("job %q is running already (%v): %w", def.Name, old.def.Writes, base.ErrConflict)
	}
	e.jobs[def.Name] = rj
	e.mu.Unlock()
	backend, err := e.stateBackend(def)
	if err != nil {
		e.mu.Lock()
		delete(e.jobs, def.Name)
		e.mu.Unlock()
		cancel()
		close(rj.done)
		if side != nil && side.close != nil {
			err = errors.Join(err, side.close())
		}
		return fmt.Errorf("job %q: state backend: %w", def.Name, err)
	}
	opts := task.Options{
		Backend:            backend,
		Policy:             barrier.PolicyAlignedTimeout,
		AlignmentTimeout:   2 * e.opts.CheckpointInterval,
		CheckpointInterval: e.opts.CheckpointInterval,
		// A checkpoint starts right behind an epoch barrier once most of
		// the interval has passed (task.Options.CheckpointOnEpoch), so an
		// epoch waits for the checkpoint that commits it about as long as
		// the barrier takes to cross the job, not half an interval more.
		CheckpointOnEpoch: true,
		TolerableFailures: 3,
		Storage:           e.checkpointStorage(def.Name),
		Restart:           task.RestartStrategy{MaxAttempts: 1 << 30, Delay: time.Second, MaxDelay: 30 * time.Second},
		Probe:             &rj.probe,
		OnEvent: func(ev task.Event) {
			rj.mu.Lock()
			switch ev.Kind {
			case task.CheckpointCompleted:
				rj.lastCheckpoint = ev
				rj.sinceRestart++
				if rj.failing == 0 || rj.sinceRestart >= progressCheckpoints {
					rj.failing = 0
					rj.progress = ev.ID
				}
			case task.Restarting:
				rj.restarts++
				rj.failing++
				rj.sinceRestart = 0
				rj.err = ev.Cause
			}
			rj.mu.Unlock()
			if ev.Kind == task.Restarting {
				e.log.Warn("job restarts", "job", def.Name, "err", ev.Cause)
			}
		},
	}
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer close(rj.done)
		if side != nil {
			sctx, stop := context.WithCancel(jctx)
			var swg sync.WaitGroup
			if side.run != nil {
				swg.Add(1)
				go func() { defer swg.Done(); side.run(sctx) }()
			}
			defer func() {
				stop()
				swg.Wait()
				if side.close != nil {
					if err := side.close(); err != nil {
						e.log.Warn("job cleanup", "job", def.Name, "err", err)
					}
				}
			}()
		}
		err := topology.RunJob(jctx, e.meta, def, g, opts)
		if err != nil && !errors.Is(err, context.Canceled) && jctx.Err() == nil {
			e.log.Error("job failed", "job", def.Name, "err", err)
		}
		rj.mu.Lock()
		if jctx.Err() == nil {
			rj.err = err
		}
		rj.mu.Unlock()
	}()
	return nil
}

// stopJob stops a running job and waits for it.
func (e *Engine) stopJob(name string) {
	e.mu.Lock()
	rj, ok := e.jobs[name]
	delete(e.jobs, name)
	e.mu.Unlock()
	if ok {
		rj.cancel()
		<-rj.done
	}
}
