package engine

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stratadb/strata/connector/filesink"
	"github.com/stratadb/strata/connector/kafka"
	"github.com/stratadb/strata/connector/pgsink"
	"github.com/stratadb/strata/connector/tablesink"
	"github.com/stratadb/strata/connector/tablesource"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/planner"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/sql/stream"
)

// Sinks into tables.
//
// CREATE SINK k INTO t AS SELECT ... is FLIP-276's ETL job: a continuous
// job, "sink-DB-K", that writes the query's changelog into an existing
// plain table t. The single-writer rule holds: t's DML job stops while the
// sink exists (INSERT, UPDATE and DELETE on t are refused) and comes back
// when the sink is dropped. The job's first epoch is the one after t's
// committed epoch when the sink is created; everything its inputs
// committed up to then is part of that first epoch. Its rows go through
// an UpsertMaterializer keyed by t's primary key (the query's unique key
// may differ), and are cast to t's column types.

// Job options of a sink job.
const (
	jobOptSink       = "sink"
	jobOptQuery      = "query"
	jobOptStartAfter = "start_after"
)

func sinkJobName(n catalog.ObjectName) string { return "sink-" + n.Database + "-" + n.Name }

// isSinkJob reports whether def is the job of a sink, into a table or to
// an external system. Its name tells: a catalog written before sinks into
// tables had kind sink recorded them as ingest jobs.
func isSinkJob(def catalog.Job) bool { return strings.HasPrefix(def.Name, "sink-") }

// isExternalSinkJob reports whether def is the job of a sink to an
// external system: kind sink, writing no table.
func isExternalSinkJob(def catalog.Job) bool {
	return def.Kind == catalog.JobSink && len(def.Writes) == 0
}

// JobKind is the kind of job def as SHOW JOBS and strata_catalog.jobs
// show it: a sink's job is a sink, also one a catalog recorded before
// sinks into tables had their own kind.
func JobKind(def catalog.Job) catalog.JobKind {
	if isSinkJob(def) {
		return catalog.JobSink
	}
	return def.Kind
}

// Sinks lists the sinks of database db: name, and the target table or,
// for a sink to an external system, where it writes ("kafka topic t",
// "postgres host:port/db table s.t", "file /dir (csv)").
func (e *Engine) Sinks(ctx context.Context, db string) ([][2]string, error) {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, j := range cat.Jobs() {
		switch {
		case isSinkJob(j) && len(j.Writes) == 1 && j.Writes[0].Database == db:
			out = append(out, [2]string{j.Options[jobOptSink], j.Writes[0].Name})
		case isExternalSinkJob(j) && len(j.Reads) == 1 && j.Reads[0].Database == db:
			desc := j.Options[jobOptWith+"connector"]
			if conn, ok := externalSinks[desc]; ok {
				desc = conn.describe(withOptions(j))
			}
			out = append(out, [2]string{j.Options[jobOptSink], desc})
		}
	}
	return out, nil
}

// CreateSink creates sink name writing query's changelog into table into.
func (e *Engine) CreateSink(ctx context.Context, name, into catalog.ObjectName, query string, ifNotExists bool) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	jobName := sinkJobName(name)
	if _, err := cat.Job(jobName); err == nil {
		if ifNotExists {
			return nil
		}
		return sqlerr.New(sqlerr.DuplicateObject, "sink %q already exists", name.Name)
	}
	if err := checkSchema(cat, name); err != nil {
		return err
	}
	t, err := cat.Table(into)
	if err != nil {
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", into.Name)
	}
	if t.Kind != catalog.KindTable {
		return sqlerr.New(sqlerr.WrongObjectType, "a sink writes a table; %q is a materialized view", into.Name)
	}
	dml := dmlJobName(into)
	if _, err := cat.Job(dml); err != nil {
		return sqlerr.New(sqlerr.WrongObjectType, "table %q is written by another job (a connector, a source or a sink); a table has one writer", into.Name)
	}
	tb, err := e.Table(into)
	if err != nil {
		return err
	}
	committed, err := tb.CommittedEpoch()
	if err != nil {
		return err
	}
	def := catalog.Job{Name: jobName, Kind: catalog.JobSink, Writes: []catalog.ObjectName{into},
		Options: map[string]string{jobOptSink: name.Name, jobOptQuery: query, jobOptStartAfter: strconv.FormatUint(uint64(committed), 10),
			jobOptParallelism: strconv.Itoa(e.opts.Parallelism)}}
	_, reads, err := e.viewPlan(cat, name.Database, query)
	if err != nil {
		return err
	}
	def.Reads = reads
	if err := e.refuseStoppedInputs(cat, "sink", name, reads); err != nil {
		return err
	}
	for _, r := range reads {
		if r == into || derivedFrom(cat, r, into, map[catalog.ObjectName]bool{}) {
			// Refused before anything changes; the position is the
			// relation's first mention in the query.
			err := sqlerr.New(sqlerr.InvalidObjectDefinition, "sink %s would make a cycle: %s, which it reads, is derived from %s, which it writes", name.Name, r.Name, into.Name)
			if i := relationIndex(query, r.Name); i >= 0 {
				return err.WithPosition(i + 1)
			}
			return err
		}
	}
	if _, err := e.buildSinkJob(cat, def, nil); err != nil {
		return err
	}
	// The sink replaces the table's DML job as its writer. That job
	// commits an epoch at every tick until it stops, so the sink's first
	// epoch is the one after the table's committed epoch once it has
	// stopped (an epoch read before would be behind the table).
	e.stopJob(dml)
	// Until the change below, the DML job is still the table's writer in
	// the catalog: a failure starts it again.
	restart := func(err error) error {
		dmlDef, derr := cat.Job(dml)
		if derr != nil {
			return errors.Join(err, derr)
		}
		return errors.Join(err, e.startJob(context.WithoutCancel(ctx), cat, dmlDef))
	}
	if committed, err = tb.CommittedEpoch(); err != nil {
		return restart(err)
	}
	// Nor does it start behind its inputs' present (inputsPresent): a
	// table created a moment ago has committed nothing, and a sink that
	// started after epoch 0 would close every epoch since, one by one.
	present, err := e.inputsPresent(ctx, reads)
	if err != nil {
		return restart(err)
	}
	committed = max(committed, present)
	def.Options[jobOptStartAfter] = strconv.FormatUint(uint64(committed), 10)
	if err := e.clearJobLeftovers(def.Name); err != nil {
		return restart(err)
	}
	// The table's writer is swapped in one change (invariant
	// meta-change-atomic): a crash never leaves it with neither writer.
	if err := e.meta.ApplyChange(ctx, meta.Change{DropJobs: []string{dml}, RegisterJobs: []catalog.Job{def}}); err != nil {
		return restart(sqlerr.Wrap(sqlerr.InvalidObjectDefinition, err))
	}
	if cat, err = e.meta.Catalog(ctx); err != nil {
		return err
	}
	return e.startJob(ctx, cat, def)
}

// SinkStartEpoch returns the first epoch of sink name INTO a table (the
// one holding its query's history), 0 when there is no such sink.
func (e *Engine) SinkStartEpoch(ctx context.Context, name catalog.ObjectName) base.Epoch {
	return e.jobStartEpoch(ctx, sinkJobName(name))
}

// freshDMLJob returns the DML job that gives table t its DML back after a
// sink wrote it: a fresh job over a fresh log (everything the old log
// held is committed), starting at the current epoch. It clears the old
// job's log and checkpoints; the caller registers the job.
func (e *Engine) freshDMLJob(t catalog.ObjectName) (catalog.Job, error) {
	name := dmlJobName(t)
	e.mu.Lock()
	if l, ok := e.dml[t]; ok {
		_ = l.close()
		delete(e.dml, t)
	}
	e.mu.Unlock()
	if err := os.Remove(dmlPath(e.opts.Dir, t)); err != nil && !os.IsNotExist(err) {
		return catalog.Job{}, err
	}
	if err := e.clearJobLeftovers(name); err != nil {
		return catalog.Job{}, err
	}
	return dmlJobDef(t), nil
}

// dmlJobDef is the DML job of table t.
func dmlJobDef(t catalog.ObjectName) catalog.Job {
	return catalog.Job{Name: dmlJobName(t), Kind: catalog.JobIngest, Writes: []catalog.ObjectName{t}}
}

// sinkEndpoints reads the sink's inputs from their tables and writes the
// target table through an upsert materializer.
type sinkEndpoints struct {
	viewEndpoints
	startAfter base.Epoch
	types      []types.Type
	keyCols    []int
}

func (s *sinkEndpoints) Sink(int) operator.Operator {
	inner := tablesink.Sink(s.out, s.name, s.job, s.e.meta)
	if len(s.keyCols) == 0 {
		return inner
	}
	return &stream.UpsertMaterializer{Inner: inner, Types: s.types, KeyCols: s.keyCols}
}

// buildSinkJob compiles a sink's query, cast to its table's columns. The
// readers of sources it reads directly go to closers (closed before it
// returns when closers is nil), as planViewJob's.
func (e *Engine) buildSinkJob(cat *catalog.Catalog, def catalog.Job, closers *[]io.Closer) (*graph.Job, error) {
	t, err := cat.Table(def.Writes[0])
	if err != nil {
		return nil, err
	}
	p, _, err := e.viewPlan(cat, t.Name.Database, def.Options[jobOptQuery])
	if err != nil {
		return nil, err
	}
	sch := p.Schema()
	if len(sch) != len(t.Columns) {
		return nil, sqlerr.New(sqlerr.DatatypeMismatch, "sink into %s: the query gives %d columns, the table has %d", t.Name.Name, len(sch), len(t.Columns))
	}
	exprs := make([]expr.Expr, len(sch))
	cols := make([]plan.Column, len(sch))
	for i, c := range sch {
		want := t.Columns[i].Type
		var x expr.Expr = &expr.ColumnRef{Index: i, Typ: c.Type, Name: c.Name}
		if c.Type != want {
			if c.Type.Kind != types.KindUnknown && !types.CanCast(c.Type, want, false) {
				return nil, sqlerr.New(sqlerr.DatatypeMismatch, "sink into %s: column %q is %s, but the query gives %s", t.Name.Name, t.Columns[i].Name, want, c.Type)
			}
			x = &expr.Cast{Arg: x, To: want}
		}
		exprs[i] = x
		cols[i] = plan.Column{Name: t.Columns[i].Name, Type: want, NotNull: c.NotNull}
	}
	p = &plan.Project{Input: p, Exprs: exprs, Cols: cols}
	after, _ := strconv.ParseUint(def.Options[jobOptStartAfter], 10, 64)
	ep := &sinkEndpoints{viewEndpoints: viewEndpoints{e: e, job: def.Name, cat: cat, name: t.Name, startAfter: base.Epoch(after)},
		types: columnTypes(t.Columns)}
	for _, k := range t.PrimaryKey {
		for i, c := range t.Columns {
			if c.Name == k {
				ep.keyCols = append(ep.keyCols, i)
			}
		}
	}
	if out, err := e.Table(t.Name); err == nil {
		ep.out = out
	}
	j, err := planner.Build(def.Name, p, ep, planner.Options{Parallelism: e.jobParallelism(def)})
	if closers == nil || err != nil {
		err = errors.Join(err, ep.closeSources())
	} else {
		ep.sourceClosers(closers)
	}
	if err == nil {
		err = ep.err
	}
	if err != nil {
		return nil, err
	}
	if j.Mode != planner.AppendOnly && len(ep.keyCols) == 0 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "sink into %s: the query's changelog has updates and deletes, and %s has no primary key to apply them by", t.Name.Name, t.Name.Name)
	}
	return j.Graph, nil
}

// Sinks to external systems.
//
// CREATE SINK k FROM v WITH (connector = '...', ...) is a job, "sink-DB-K"
// of kind sink, that writes v's changelog to an external system exactly
// once, through a two-phase-commit sink operator (operator.Committer).
// Its first epoch holds v's history up to v's committed epoch when the
// sink is created, as a backfill. The connectors:
//
//   - kafka (connector/kafka): one Kafka transaction per epoch, committed
//     when the checkpoint that covers it completes;
//   - postgres (connector/pgsink): upserts and deletes by v's primary key
//     into an existing Postgres table, each epoch applied in one Postgres
//     transaction with the sink's progress row, so a replay is a no-op;
//   - file (connector/filesink): one CSV or JSON-lines file per epoch,
//     written to a temporary name and renamed on commit.
//
// Each runs with parallelism 1, reading v through a table source.

// jobOptWith prefixes the WITH options of an external sink in its job's
// options.
const jobOptWith = "with."

// externalSink is how the engine runs one connector of external sinks.
type externalSink struct {
	// create completes and checks the options of a new sink (defaults
	// that must stay fixed across restarts are written into opts) and may
	// check the external system; it runs at CREATE SINK only.
	create func(ctx context.Context, def catalog.Job, t catalog.Table, opts map[string]string) error
	// build checks the stored options without touching the external
	// system and returns the sink operator of each subtask attempt.
	build func(def catalog.Job, t catalog.Table, opts map[string]string) (func(subtask int) operator.Operator, error)
	// describe says where the sink writes, for Sinks.
	describe func(opts map[string]string) string
}

// externalSinks are the connectors of CREATE SINK ... FROM, by name.
var externalSinks = map[string]externalSink{
	kafka.ConnectorName: {
		create: func(_ context.Context, def catalog.Job, _ catalog.Table, opts map[string]string) error {
			if _, ok := opts[kafka.OptTxnIDPrefix]; !ok {
				opts[kafka.OptTxnIDPrefix] = "strata-" + strings.TrimPrefix(def.Name, "sink-")
			}
			return nil
		},
		build: func(_ catalog.Job, t catalog.Table, opts map[string]string) (func(int) operator.Operator, error) {
			so, err := kafka.ParseSinkOptions(opts)
			if err != nil {
				return nil, err
			}
			if _, err := kafka.NewSink(so, t.Columns, t.PrimaryKey); err != nil {
				return nil, err
			}
			return func(int) operator.Operator {
				s, err := kafka.NewSink(so, t.Columns, t.PrimaryKey)
				if err != nil {
					return failingOperator{err}
				}
				return kafka.NewSinkOperator(s)
			}, nil
		},
		describe: func(opts map[string]string) string { return "kafka topic " + opts[kafka.OptTopic] },
	},
	pgsink.ConnectorName: {
		create: func(ctx context.Context, def catalog.Job, t catalog.Table, opts map[string]string) error {
			o, err := pgsink.ParseOptions(opts)
			if err != nil {
				return err
			}
			ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			return pgsink.Check(ctx, pgsink.Config{Options: o, Name: def.Name, Columns: t.Columns, Key: t.PrimaryKey})
		},
		build: func(def catalog.Job, t catalog.Table, opts map[string]string) (func(int) operator.Operator, error) {
			o, err := pgsink.ParseOptions(opts)
			if err != nil {
				return nil, err
			}
			cfg := pgsink.Config{Options: o, Name: def.Name, Columns: t.Columns, Key: t.PrimaryKey}
			if _, err := pgsink.NewSink(cfg); err != nil {
				return nil, err
			}
			return func(int) operator.Operator {
				s, err := pgsink.NewSink(cfg)
				if err != nil {
					return failingOperator{err}
				}
				return pgsink.NewSinkOperator(s)
			}, nil
		},
		describe: func(opts map[string]string) string {
			return fmt.Sprintf("postgres %s:%s/%s table %s", opts[pgsink.OptHostname], cmp.Or(opts[pgsink.OptPort], "5432"), opts[pgsink.OptDatabase], opts[pgsink.OptTable])
		},
	},
	filesink.ConnectorName: {
		create: func(_ context.Context, def catalog.Job, t catalog.Table, opts map[string]string) error {
			o, err := filesink.ParseOptions(opts)
			if err != nil {
				return err
			}
			// A relative path is taken from the working directory at
			// CREATE SINK and kept absolute, so that restarts from
			// elsewhere write the same directory.
			abs, err := filepath.Abs(o.Dir)
			if err != nil {
				return fmt.Errorf("file sink: path %q: %w", o.Dir, err)
			}
			opts[filesink.OptPath] = abs
			o.Dir = abs
			return filesink.CreateDir(o)
		},
		build: func(def catalog.Job, t catalog.Table, opts map[string]string) (func(int) operator.Operator, error) {
			o, err := filesink.ParseOptions(opts)
			if err != nil {
				return nil, err
			}
			cfg := filesink.Config{Options: o, Name: def.Options[jobOptSink], Columns: t.Columns}
			if _, err := filesink.NewSink(cfg); err != nil {
				return nil, err
			}
			return func(int) operator.Operator {
				s, err := filesink.NewSink(cfg)
				if err != nil {
					return failingOperator{err}
				}
				return filesink.NewSinkOperator(s)
			}, nil
		},
		describe: func(opts map[string]string) string {
			return fmt.Sprintf("file %s (%s)", opts[filesink.OptPath], cmp.Or(opts[filesink.OptFormat], string(filesink.CSV)))
		},
	},
}

// externalSinkNames lists the connectors of externalSinks, for messages.
func externalSinkNames() string {
	return strings.Join(slices.Sorted(maps.Keys(externalSinks)), ", ")
}

// withOptions returns the WITH options a sink job stored.
func withOptions(def catalog.Job) map[string]string {
	opts := map[string]string{}
	for k, v := range def.Options {
		if rest, ok := strings.CutPrefix(k, jobOptWith); ok {
			opts[rest] = v
		}
	}
	return opts
}

// CreateExternalSink creates sink name writing table or view from to the
// external system that opts name (connector = 'kafka', 'postgres' or
// 'file'; see externalSinks).
func (e *Engine) CreateExternalSink(ctx context.Context, name, from catalog.ObjectName, opts map[string]string, ifNotExists bool) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	jobName := sinkJobName(name)
	if _, err := cat.Job(jobName); err == nil {
		if ifNotExists {
			return nil
		}
		return sqlerr.New(sqlerr.DuplicateObject, "sink %q already exists", name.Name)
	}
	if err := checkSchema(cat, name); err != nil {
		return err
	}
	t, err := cat.Table(from)
	if err != nil {
		if cat.IsSource(from) {
			return sqlerr.New(sqlerr.WrongObjectType, "sink %s: source %s stores nothing to send; CREATE SINK ... FROM reads a table or materialized view: create a view over the source (CREATE MATERIALIZED VIEW v AS SELECT ... FROM %s) and sink that", name.Name, from.Name, from.Name)
		}
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", from.Name)
	}
	conn, ok := externalSinks[opts["connector"]]
	if !ok {
		return sqlerr.New(sqlerr.InvalidParameterValue, "sink %s: unknown connector %q (sinks to external systems: %s; CREATE SINK ... INTO table AS SELECT writes a table)",
			name.Name, opts["connector"], externalSinkNames())
	}
	// The sink starts at the relation's present, like a view
	// (inputsPresent): the rows it has are the sink's first epoch.
	committed, err := e.inputsPresent(ctx, []catalog.ObjectName{from})
	if err != nil {
		return err
	}
	def := catalog.Job{Name: jobName, Kind: catalog.JobSink, Reads: []catalog.ObjectName{from},
		Options: map[string]string{jobOptSink: name.Name, jobOptStartAfter: strconv.FormatUint(uint64(committed), 10)}}
	opts = maps.Clone(opts)
	if err := conn.create(ctx, def, t, opts); err != nil {
		return sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("sink %s: %w", name.Name, err))
	}
	for k, v := range opts {
		def.Options[jobOptWith+k] = v
	}
	if _, err := e.buildExternalSinkJob(cat, def); err != nil {
		return err
	}
	if err := e.clearJobLeftovers(def.Name); err != nil {
		return err
	}
	if err := e.meta.RegisterJob(ctx, def); err != nil {
		return sqlerr.Wrap(sqlerr.InvalidObjectDefinition, err)
	}
	if cat, err = e.meta.Catalog(ctx); err != nil {
		return err
	}
	return e.startJob(ctx, cat, def)
}

// buildExternalSinkJob reads the sink's table or view and writes it to
// its external system.
func (e *Engine) buildExternalSinkJob(cat *catalog.Catalog, def catalog.Job) (*graph.Job, error) {
	t, err := cat.Table(def.Reads[0])
	if err != nil {
		return nil, err
	}
	opts := withOptions(def)
	conn, ok := externalSinks[opts["connector"]]
	if !ok {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "sink %s: unknown connector %q (sinks to external systems: %s)",
			def.Options[jobOptSink], opts["connector"], externalSinkNames())
	}
	newSink, err := conn.build(def, t, opts)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("sink %s: %w", def.Options[jobOptSink], err))
	}
	in, err := e.Table(t.Name)
	if err != nil {
		return nil, err
	}
	after, _ := strconv.ParseUint(def.Options[jobOptStartAfter], 10, 64)
	ts := columnTypes(t.Columns)
	g := &graph.Job{Name: def.Name,
		Vertices: []graph.Vertex{
			{Name: "source", Parallelism: 1, NewSource: func(int) operator.Source {
				return tablesource.New(tablesource.Config{Table: in, Name: t.Name.String(), Types: ts, Consumer: def.Name, ConsumerEvery: consumerEvery, StartAfter: base.Epoch(after)})
			}},
			{Name: "sink", Parallelism: 1, NewOperator: newSink},
		},
		Edges: []graph.Edge{{From: "source", To: "sink", Partitioning: graph.Forward}},
	}
	if multisetColumn(t) != "" {
		// A multiset view's rows with their multiplicities: the sink
		// gets each row as often as it occurs (doc.go, "Multiset views").
		stored := append(slices.Clone(ts), types.Int64)
		g.Vertices[0].NewSource = func(int) operator.Source {
			return tablesource.New(tablesource.Config{Table: in, Name: t.Name.String(), Types: stored, Consumer: def.Name, ConsumerEvery: consumerEvery, StartAfter: base.Epoch(after)})
		}
		g.Vertices = append(g.Vertices, graph.Vertex{Name: "repeat", Parallelism: 1,
			NewOperator: func(int) operator.Operator { return &stream.Repeat{Types: ts} }})
		g.Edges = []graph.Edge{{From: "source", To: "repeat", Partitioning: graph.Forward}, {From: "repeat", To: "sink", Partitioning: graph.Forward}}
	}
	return g, nil
}

// failingOperator fails the job attempt that opens it with err.
type failingOperator struct{ err error }

func (f failingOperator) Open(*operator.Context) error           { return f.err }
func (f failingOperator) Process(int, *types.Chunk) error        { return f.err }
func (f failingOperator) OnEpoch(base.Epoch) error               { return f.err }
func (f failingOperator) Snapshot(base.CheckpointID) error       { return f.err }
func (f failingOperator) NotifyComplete(base.CheckpointID) error { return nil }
func (f failingOperator) Finish() error                          { return nil }
func (f failingOperator) Close() error                           { return nil }

// derivedFrom reports whether table t is computed, through one or more
// jobs, from table src (seen guards against revisiting).
func derivedFrom(cat *catalog.Catalog, t, src catalog.ObjectName, seen map[catalog.ObjectName]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	for _, j := range cat.Jobs() {
		if !slices.Contains(j.Writes, t) {
			continue
		}
		for _, r := range j.Reads {
			if r == src || derivedFrom(cat, r, src, seen) {
				return true
			}
		}
	}
	return false
}

// relationIndex returns the byte offset in query of relation name as a
// whole word, preferring an occurrence right after FROM or JOIN (where a
// relation is named) over one elsewhere (a column of the same name); -1
// if none.
func relationIndex(query, name string) int {
	lt, lw := strings.ToLower(query), strings.ToLower(name)
	isWord := func(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
	first := -1
	for from := 0; from <= len(lt); {
		i := strings.Index(lt[from:], lw)
		if i < 0 {
			break
		}
		i += from
		end := i + len(lw)
		if (i == 0 || !isWord(lt[i-1])) && (end == len(lt) || !isWord(lt[end])) {
			before := strings.TrimRight(lt[:i], " \t\n\r")
			if strings.HasSuffix(before, "from") || strings.HasSuffix(before, "join") {
				return i
			}
			if first < 0 {
				first = i
			}
		}
		from = i + 1
	}
	return first
}
