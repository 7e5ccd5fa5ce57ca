package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/pgcdc"
	"github.com/stratadb/strata/connector/tablesink"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Change data capture from PostgreSQL.
//
// CREATE SOURCE pg WITH (connector = 'postgres-cdc', hostname = ..., ...)
// records the source; CREATE TABLE t (...) FROM pg TABLE 'public.orders'
// adds a table fed by it. All tables of one source are written by one
// ingest job, "cdc-DB-SOURCE", over one replication stream
// (connector/pgcdc), so a Postgres transaction reaches all of them at one
// epoch. The job's set of tables is fixed while it runs: adding or
// dropping a table of the source replaces the job by one for the new set,
// which starts a fresh slot from an exported snapshot. That snapshot is
// applied as one transaction that also deletes, from the tables the old
// job fed, every row the snapshot no longer holds, so each table moves
// from its last committed state to the snapshot's at one epoch.
//
// CREATE TABLE t (...) FROM pg TABLE '...' WITH (errors = 'skip') sets
// what the job does with t's rows whose values do not fit t's columns:
// fail (the default), skip (counted in strata_catalog.skipped) or
// dead-letter (strata_catalog.dead_letters). The option is the table's,
// not the source's, because whether a value fits is a matter of the
// table's declared types; one table may tolerate what another must not.
// A dropped row is that row only: the rest of its transaction, in every
// table, commits at one epoch.
//
// A table the source cannot follow (a bad value in fail mode, an
// upstream column that no longer fits, a TRUNCATE, the upstream table
// gone) is quarantined (connector/pgcdc, Quarantine) instead of stopping
// the source: it keeps what it committed before the transaction that
// failed, takes nothing after, and the source's other tables go on, as
// Flink CDC and RisingWave keep a source's other tables going. The
// quarantine is recorded in DIR/cdc/JOB/quarantine.json before that
// transaction is handed on, so that a restart keeps it; its error shows
// in strata_catalog.jobs (the job's error) and ends every read of the
// table (SourceTableError, 55000). DROP TABLE and CREATE TABLE of a
// table of the source give the source a new job with a fresh snapshot,
// which ends the quarantines (the file goes with the old job).
//
// quarantine.json, version 1:
//
//	{"version": 1, "tables": [{"table": "a", "from": 30712008, "error": "postgres-cdc source pg: table a column name: ..."}]}
//
// "table" is the Strata table's name, "from" the commit LSN from which
// nothing of it is ingested (pgcdc.Quarantine). It is written whole to a
// temporary file, synced and renamed over the old one.

// Options of a table fed by a source.
const (
	// OptionSource names the source feeding the table.
	OptionSource = "source"
	// OptionSourceTable is the upstream table, "schema.table".
	OptionSourceTable = "source.table"
)

// PostgresCDC is the connector name of PostgreSQL sources.
const PostgresCDC = "postgres-cdc"

func cdcJobName(src catalog.ObjectName) string { return "cdc-" + src.Database + "-" + src.Name }

func isCDCJob(def catalog.Job) bool { return strings.HasPrefix(def.Name, "cdc-") }

// CreateSource records an external source. A postgres-cdc source feeds
// the tables created from it: its options are checked
// (connector/pgcdc.ParseOptions); the replication slot is made when the
// first table is created from it. A source of another connector (nexmark,
// datagen, kafka, file) is read directly by the views that name it
// (source.go): its schema and options are checked as CREATE TABLE's, and
// stored with what the connector chooses at CREATE, as CREATE TABLE's
// (createOptions: a datagen source's random seed when none is given).
func (e *Engine) CreateSource(ctx context.Context, src catalog.Source, ifNotExists bool) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	if _, err := cat.Table(src.Name); err == nil || cat.IsSource(src.Name) {
		if ifNotExists {
			return nil
		}
		return sqlerr.New(sqlerr.DuplicateObject, "relation %q already exists", src.Name.Name)
	}
	if err := checkSchema(cat, src.Name); err != nil {
		return err
	}
	switch {
	case src.Connector == PostgresCDC:
		opts, err := pgcdc.ParseOptions(src.Options)
		if err != nil {
			return sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("source %s: %w", src.Name.Name, err))
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		err = pgcdc.CheckSource(cctx, opts)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			code := sqlerr.InvalidParameterValue
			if !errors.Is(err, base.ErrInvalidArgument) {
				code = sqlerr.UnableToConnect
			}
			return sqlerr.Wrap(code, fmt.Errorf("source %s: %w", src.Name.Name, err))
		}
	case e.streamSource(src.Connector):
		// Read directly by views (source.go).
		src.Options = createOptions(src.Connector, src.Options)
		if err := e.checkStreamSource(src); err != nil {
			return err
		}
	default:
		known := []string{PostgresCDC}
		for c := range e.opts.Connectors {
			if e.streamSource(c) {
				known = append(known, c)
			}
		}
		slices.Sort(known[1:])
		return sqlerr.New(sqlerr.InvalidParameterValue, "source %s: unknown connector %q (sources: %s)", src.Name.Name, src.Connector, strings.Join(known, ", "))
	}
	if err := e.meta.CreateSource(ctx, src); err != nil {
		return sqlerr.Wrap(sqlerr.InvalidObjectDefinition, err)
	}
	return nil
}

// DropSource drops a source that no table, view or sink reads. A
// postgres-cdc source's replication slot, and its publication when the
// source created it, are dropped upstream once the catalog change is
// committed (dropsource.go); when that fails the DROP still succeeds, and
// the notice returned (nil otherwise) tells what to drop by hand.
func (e *Engine) DropSource(ctx context.Context, name catalog.ObjectName, ifExists bool) (*sqlerr.Error, error) {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	if !cat.IsSource(name) {
		if ifExists {
			return nil, nil
		}
		return nil, sqlerr.New(sqlerr.UndefinedObject, "source %q does not exist", name.Name)
	}
	if err := sourceDependents(cat, name); err != nil {
		return nil, err
	}
	if err := sourceDependentsError(cat, name); err != nil {
		return nil, err
	}
	up, err := planUpstreamDrop(cat, name)
	if err != nil {
		return nil, err
	}
	intent := ""
	if up != nil {
		if intent, err = e.writeSourceDropIntent(*up); err != nil {
			return nil, err
		}
	}
	if err := e.meta.DropSource(ctx, name); err != nil {
		if intent != "" {
			_ = os.Remove(intent) // the source stays: nothing to clean
		}
		return nil, sqlerr.Wrap(sqlerr.DependentObjectsStillExist, err)
	}
	if up == nil {
		return nil, nil
	}
	notice := e.dropUpstream(context.WithoutCancel(ctx), *up)
	if err := os.Remove(intent); err != nil {
		e.log.Warn("drop intent left behind", "intent", intent, "err", err)
	}
	return notice, nil
}

// createSourceTable creates table t fed by source src's upstream table
// and replaces the source's job by one that also feeds t. The caller holds
// e.ddl.
func (e *Engine) createSourceTable(ctx context.Context, cat *catalog.Catalog, t catalog.Table, srcName catalog.ObjectName, upstream string) error {
	src, err := cat.Source(srcName)
	if err != nil {
		return sqlerr.New(sqlerr.UndefinedObject, "source %q does not exist", srcName.Name)
	}
	if src.Connector != PostgresCDC {
		return sqlerr.New(sqlerr.WrongObjectType, "source %s (%s) cannot feed tables with FROM ... TABLE", srcName.Name, src.Connector)
	}
	if len(t.PrimaryKey) == 0 {
		return sqlerr.New(sqlerr.InvalidTableDefinition, "table %s from source %s needs a PRIMARY KEY: the upstream table's replica identity", t.Name.Name, srcName.Name)
	}
	if g := generatedColumns(t); len(g) > 0 {
		// A stamp would make every stored row differ from its upstream
		// row, which the snapshot diff on a restart compares (proctime.go).
		return sqlerr.New(sqlerr.FeatureNotSupported, "table %s from source %s: processing-time column %q is not supported on tables fed by postgres-cdc", t.Name.Name, srcName.Name, t.Columns[g[0]].Name)
	}
	for _, o := range cat.Tables() {
		if o.Options[OptionSource] == srcName.String() && strings.EqualFold(o.Options[OptionSourceTable], upstream) {
			return sqlerr.New(sqlerr.DuplicateObject, "table %s already holds %s of source %s", o.Name.Name, upstream, srcName.Name)
		}
	}
	if t.Options == nil {
		t.Options = map[string]string{}
	}
	t.Options[OptionSource] = srcName.String()
	t.Options[OptionSourceTable] = upstream
	storeOpts, connOpts, connector := splitOptions(t.Options)
	// errors is the one option of the table's own: what to do with its
	// rows whose values do not fit its columns (connector/pgcdc, Bad
	// values).
	if v, ok := connOpts[format.OptErrors]; ok {
		if _, err := format.ParseErrorMode(v); err != nil {
			return sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("table %s: %w", t.Name.Name, err))
		}
		delete(connOpts, format.OptErrors)
	}
	if connector != "" || len(connOpts) > 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "table %s is fed by source %s: connector options belong to the source (%q)", t.Name.Name, srcName.Name, firstKey(connOpts))
	}
	// A table the source could not follow is refused here rather than
	// quarantined as soon as its job starts.
	srcOpts, err := pgcdc.ParseOptions(src.Options)
	if err != nil {
		return sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("source %s: %w", srcName.Name, err))
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	err = pgcdc.Check(cctx, srcOpts, pgcdc.Table{Upstream: upstream, Name: t.Name.Name, Columns: t.Columns, PrimaryKey: t.PrimaryKey})
	cancel()
	if err != nil {
		return sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("source %s: %w", srcName.Name, err))
	}
	next, err := cat.CreateTable(t)
	if err != nil {
		return sqlerr.Wrap(sqlerr.InvalidTableDefinition, err)
	}
	if _, err := e.createStorage(t.Name, t.Columns, t.PrimaryKey, storeOpts); err != nil {
		return err
	}
	// t and the source's job that feeds it (which replaces the one that
	// fed the other tables) enter the catalog in one change (invariant
	// meta-change-atomic): a crash never leaves t without a writer.
	name := cdcJobName(srcName)
	def := cdcJobDef(next, srcName)
	change := meta.Change{CreateTables: []catalog.Table{t}, RegisterJobs: []catalog.Job{def}}
	if _, err := cat.Job(name); err == nil {
		change.DropJobs = []string{name}
	}
	err = e.resetCDCJob(srcName)
	if err == nil {
		if err = e.meta.ApplyChange(ctx, change); err != nil {
			err = sqlerr.Wrap(sqlerr.InvalidObjectDefinition, err)
		}
	}
	if err != nil {
		// Nothing changed in the catalog: t's storage goes and the
		// source's old job starts again.
		ctx := context.WithoutCancel(ctx)
		return errors.Join(err, e.dropStorage(t.Name), e.rebuildCDCJob(ctx, srcName))
	}
	if cat, err = e.meta.Catalog(ctx); err == nil {
		err = e.startJob(ctx, cat, def)
	}
	if err != nil {
		// Undo in order: the job that names t, t, its storage; then the
		// source's job for the tables it fed before.
		ctx := context.WithoutCancel(ctx)
		e.stopJob(name)
		undo := []error{e.meta.ApplyChange(ctx, meta.Change{DropJobs: []string{name}, DropTables: []catalog.ObjectName{t.Name}}),
			e.dropStorage(t.Name), e.rebuildCDCJob(ctx, srcName)}
		if u := errors.Join(undo...); u != nil {
			return errors.Join(err, fmt.Errorf("undoing CREATE TABLE %s: %w", t.Name.Name, u))
		}
		return err
	}
	return e.awaitSourceSnapshot(ctx, srcName, t.Name)
}

// cdcJobDef returns the job of source src that feeds the tables catalog
// cat says it feeds (with no Writes when it feeds none).
func cdcJobDef(cat *catalog.Catalog, src catalog.ObjectName) catalog.Job {
	def := catalog.Job{Name: cdcJobName(src), Kind: catalog.JobIngest, Reads: []catalog.ObjectName{src}}
	for _, t := range cat.Tables() {
		if t.Options[OptionSource] == src.String() {
			def.Writes = append(def.Writes, t.Name)
		}
	}
	return def
}

// resetCDCJob stops source src's job and removes its checkpoints,
// quarantines and closed positions: a new set of tables is a new layout,
// to which none of them apply (a job without checkpoints takes a fresh
// snapshot of its tables). The caller holds e.ddl.
func (e *Engine) resetCDCJob(src catalog.ObjectName) error {
	name := cdcJobName(src)
	e.stopJob(name)
	// The old job's positions are of its own replication slot: the new
	// job's snapshot is not read until the new job closes an epoch
	// (awaitSourceSnapshot).
	e.mu.Lock()
	delete(e.closes, name)
	e.mu.Unlock()
	if err := os.RemoveAll(filepath.Join(e.opts.Dir, "checkpoints", name)); err != nil {
		return err
	}
	return os.RemoveAll(e.quarantineDir(name))
}

// rebuildCDCJob replaces source src's job by one for the tables the
// catalog now says it feeds (none: the job goes). The caller holds e.ddl.
func (e *Engine) rebuildCDCJob(ctx context.Context, src catalog.ObjectName) error {
	if err := e.resetCDCJob(src); err != nil {
		return err
	}
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	def := cdcJobDef(cat, src)
	// The old job goes and the new one comes in one change (invariant
	// meta-change-atomic).
	var change meta.Change
	if _, err := cat.Job(def.Name); err == nil {
		change.DropJobs = []string{def.Name}
	}
	if len(def.Writes) > 0 {
		change.RegisterJobs = []catalog.Job{def}
	}
	if len(change.DropJobs)+len(change.RegisterJobs) == 0 {
		return nil
	}
	if err := e.meta.ApplyChange(ctx, change); err != nil {
		return sqlerr.Wrap(sqlerr.InvalidObjectDefinition, err)
	}
	if len(def.Writes) == 0 {
		return nil
	}
	cat, err = e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	return e.startJob(ctx, cat, def)
}

// buildCDCJob builds a source's job: one ingest source over the source's
// replication stream, and per table a route (its rows, without the tag)
// and a table sink.
func (e *Engine) buildCDCJob(cat *catalog.Catalog, def catalog.Job) (*graph.Job, *sidecar, error) {
	if len(def.Reads) != 1 {
		return nil, nil, fmt.Errorf("job %q reads %d sources, want 1: %w", def.Name, len(def.Reads), base.ErrInvalidArgument)
	}
	src, err := cat.Source(def.Reads[0])
	if err != nil {
		return nil, nil, err
	}
	opts, err := pgcdc.ParseOptions(src.Options)
	if err != nil {
		return nil, nil, err
	}
	var tables []pgcdc.Table
	var cts []catalog.Table
	skips := map[catalog.ObjectName][]*format.Errors{}
	for _, w := range def.Writes {
		t, err := cat.Table(w)
		if err != nil {
			return nil, nil, err
		}
		// Each table has its own error mode, counter and dead letters.
		mode, err := format.ParseErrorMode(t.Options[format.OptErrors])
		if err != nil {
			return nil, nil, fmt.Errorf("table %s: %w", t.Name.Name, err)
		}
		errs, err := format.NewErrors(mode, e.deadLetterFunc(t))
		if err != nil {
			return nil, nil, err
		}
		skips[t.Name] = []*format.Errors{errs}
		cts = append(cts, t)
		tables = append(tables, pgcdc.Table{Upstream: t.Options[OptionSourceTable], Name: t.Name.Name, Columns: t.Columns, PrimaryKey: t.PrimaryKey, Errors: errs})
	}
	kept, err := e.loadQuarantines(def.Name)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(e.ctx, 30*time.Second)
	defer cancel()
	stream, err := pgcdc.Open(ctx, pgcdc.Config{Options: opts, Tables: tables, Name: src.Name.Name, Quarantined: kept,
		OnQuarantine: func(q pgcdc.Quarantine) error {
			e.log.Error("table quarantined: its source no longer feeds it", "job", def.Name, "table", q.Table, "err", q.Err)
			return e.saveQuarantine(def.Name, q)
		}})
	if err != nil {
		return nil, nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("source %s: %w", src.Name.Name, err))
	}
	e.mu.Lock()
	maps.Copy(e.skipErrs, skips)
	e.mu.Unlock()
	layout := stream.Layout()
	conf := pgcdc.NewConfirmer(stream)
	reader := &snapshotDiff{e: e, stream: stream, layout: layout, tables: cts}
	start, err := e.meta.CurrentEpoch(e.ctx)
	if err != nil {
		return nil, nil, errors.Join(err, stream.Close())
	}
	g := &graph.Job{Name: def.Name, Vertices: []graph.Vertex{{Name: "source", Parallelism: 1, NewSource: func(int) operator.Source {
		return ingest.New(ingest.Config{Reader: reader, Clock: e.meta, Name: src.Name.String(), StartEpoch: start.Epoch,
			OnClose: func(p ingest.Pair) {
				conf.OnClose(p)
				e.mu.Lock()
				e.closes[def.Name] = p
				e.mu.Unlock()
			}})
	}}}}
	for i, t := range cts {
		out, err := e.Table(t.Name)
		if err != nil {
			return nil, nil, errors.Join(err, stream.Close())
		}
		route, sink := fmt.Sprintf("route-%d", i), fmt.Sprintf("sink-%d", i)
		g.Vertices = append(g.Vertices,
			graph.Vertex{Name: route, Parallelism: 1, NewOperator: func(int) operator.Operator { return pgcdc.Route(layout, i) }},
			graph.Vertex{Name: sink, Parallelism: 1, NewOperator: func(int) operator.Operator {
				return tablesink.Sink(out, t.Name, def.Name, e.meta)
			}})
		g.Edges = append(g.Edges,
			graph.Edge{From: "source", To: route, Partitioning: graph.Forward},
			graph.Edge{From: route, To: sink, Partitioning: graph.Forward})
	}
	side := &sidecar{
		// The slot's confirmed position follows the epoch every table of
		// the source has committed.
		run: func(ctx context.Context) {
			t := time.NewTicker(200 * time.Millisecond)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
				}
				low := base.Epoch(0)
				for i, w := range def.Writes {
					c, err := e.meta.CommittedEpoch(ctx, w)
					if err != nil {
						low = 0
						break
					}
					if i == 0 || c.Epoch < low {
						low = c.Epoch
					}
				}
				if low > 0 {
					conf.Committed(low)
				}
				e.showQuarantines(def.Name, stream.Quarantined())
			}
		},
		close: stream.Close,
	}
	return g, side, nil
}

// snapshotDiff is the reader of a source's job: the replication stream,
// with the initial snapshot turned into a transaction that also deletes
// the rows of each table's last committed state that the snapshot lacks.
type snapshotDiff struct {
	e      *Engine
	stream *pgcdc.Stream
	layout *pgcdc.Layout
	tables []catalog.Table
}

// Next implements ingest.Reader.
func (r *snapshotDiff) Next(pos uint64) (*types.Chunk, uint64, error) {
	c, next, err := r.stream.Next(pos)
	if err != nil || c == nil || pos != 0 {
		return c, next, err
	}
	// Position 0 is the snapshot. Nothing this job wrote is committed
	// before it, so the tables still hold what the previous job (if any)
	// committed; the same deletes come out on every replay. A table
	// quarantined from the snapshot on keeps what it holds.
	skip := map[string]bool{}
	for _, q := range r.stream.Quarantined() {
		if q.From == 0 {
			skip[q.Table] = true
		}
	}
	for i, t := range r.tables {
		if skip[t.Name.Name] {
			continue
		}
		tb, err := r.e.Table(t.Name)
		if err != nil {
			return nil, pos, err
		}
		old, err := tb.ReadLatest()
		if err != nil {
			return nil, pos, err
		}
		if len(old) == 0 {
			continue
		}
		off, width := r.layout.Span(i)
		var keyCols []int
		var keyTypes []types.Type
		for _, k := range t.PrimaryKey {
			for j, col := range t.Columns {
				if col.Name == k {
					keyCols = append(keyCols, j)
					keyTypes = append(keyTypes, col.Type)
				}
			}
		}
		inSnapshot := map[string]bool{}
		row := make(types.Row, 0, width)
		for j := 0; j < c.Len(); j++ {
			full := c.Row(j)
			if int(full[0].Int64()) != i {
				continue
			}
			row = append(row[:0], full[off:off+width]...)
			inSnapshot[string(types.EncodeKey(nil, row, keyCols, keyTypes))] = true
		}
		for _, o := range old {
			if inSnapshot[string(types.EncodeKey(nil, o, keyCols, keyTypes))] {
				continue
			}
			full := make(types.Row, r.layout.Width())
			for j := range full {
				full[j] = types.Null
			}
			full[0] = types.NewInt32(int32(i))
			copy(full[off:off+width], o)
			c.Append(types.Delete, full)
		}
	}
	return c, next, nil
}

// quarantineFile is the name of a source job's quarantine record.
const quarantineFile = "quarantine.json"

// quarantineRecord is quarantine.json (see the top of this file).
type quarantineRecord struct {
	Version int               `json:"version"`
	Tables  []quarantineEntry `json:"tables"`
}

type quarantineEntry struct {
	Table string `json:"table"`
	From  uint64 `json:"from"`
	Error string `json:"error"`
}

// quarantineDir is where job keeps its quarantine record.
func (e *Engine) quarantineDir(job string) string { return filepath.Join(e.opts.Dir, "cdc", job) }

// loadQuarantines reads job's quarantine record (none when it has none).
func (e *Engine) loadQuarantines(job string) ([]pgcdc.Quarantine, error) {
	path := filepath.Join(e.quarantineDir(job), quarantineFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("job %s: read %s: %w", job, path, err)
	}
	var rec quarantineRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Version != 1 {
		return nil, fmt.Errorf("job %s: %s is not a quarantine record of version 1 (%v): %w", job, path, err, base.ErrCorruption)
	}
	out := make([]pgcdc.Quarantine, len(rec.Tables))
	for i, t := range rec.Tables {
		out[i] = pgcdc.Quarantine{Table: t.Table, From: t.From, Err: t.Error}
	}
	return out, nil
}

// saveQuarantine adds q to job's quarantine record (replacing an entry of
// the same table), written whole and atomically: a temporary file,
// synced, renamed over the old one, the directory synced.
func (e *Engine) saveQuarantine(job string, q pgcdc.Quarantine) error {
	old, err := e.loadQuarantines(job)
	if err != nil {
		return err
	}
	rec := quarantineRecord{Version: 1}
	for _, o := range old {
		if o.Table != q.Table {
			rec.Tables = append(rec.Tables, quarantineEntry{Table: o.Table, From: o.From, Error: o.Err})
		}
	}
	rec.Tables = append(rec.Tables, quarantineEntry{Table: q.Table, From: q.From, Error: q.Err})
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	dir := e.quarantineDir(job)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, quarantineFile+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), filepath.Join(dir, quarantineFile))
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return fmt.Errorf("job %s: write %s: %w", job, quarantineFile, err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// showQuarantines makes job's quarantines its error (strata_catalog.jobs)
// while it has no other: the job runs, but these tables no longer follow
// their source.
func (e *Engine) showQuarantines(job string, qs []pgcdc.Quarantine) {
	if len(qs) == 0 {
		return
	}
	e.mu.Lock()
	rj := e.jobs[job]
	e.mu.Unlock()
	if rj == nil {
		return
	}
	rj.mu.Lock()
	defer rj.mu.Unlock()
	if rj.err == nil {
		rj.err = quarantinedError(qs)
	}
}

// quarantinedError is the error of a source job with quarantined tables.
func quarantinedError(qs []pgcdc.Quarantine) error {
	parts := make([]string, len(qs))
	for i, q := range qs {
		parts[i] = fmt.Sprintf("table %s is quarantined (it no longer follows its source): %s", q.Table, q.Err)
	}
	return errors.New(strings.Join(parts, "; "))
}

// SourceTableError returns, for a table fed by a source whose job
// quarantined it (the top of this file), an error (55000) naming the
// table and saying why and what ends it; for a table or view a job of
// whose lineage keeps failing (checkReadable), that error (55000); nil
// otherwise. A read of the table calls it: the table no longer follows
// its source, or its writer does not get past its input, and its
// contents are those before what could not be taken.
func (e *Engine) SourceTableError(ctx context.Context, name catalog.ObjectName) error {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	t, err := cat.Table(name)
	if err != nil || t.Options[OptionSource] == "" {
		return e.failingUpstream(name)
	}
	src, err := cat.Source(ddlSourceName(t.Options[OptionSource], name.Database))
	if err != nil {
		return e.failingUpstream(name)
	}
	qs, err := e.loadQuarantines(cdcJobName(src.Name))
	if err != nil {
		return err
	}
	for _, q := range qs {
		if q.Table == name.Name {
			return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
				"table %s no longer follows source %s, which could not ingest it: %s. Its rows are those before that transaction. Fix the upstream table or the declaration, then DROP TABLE %s and create it again (the source then starts from a fresh snapshot)",
				name.Name, src.Name.Name, q.Err, name.Name)
		}
	}
	return e.failingUpstream(name)
}

// ddlSourceName reads a source table's source option ("db.name").
func ddlSourceName(opt, db string) catalog.ObjectName {
	if d, n, ok := strings.Cut(opt, "."); ok {
		return catalog.Name(d, n)
	}
	return catalog.Name(db, opt)
}
