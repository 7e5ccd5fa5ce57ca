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

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/olap"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Sources read directly (this file).
//
// CREATE SOURCE name (col type, ...) WITH (connector = 'nexmark' |
// 'datagen' | 'kafka' | 'file', ...) records a source with a schema and
// stores nothing: no table, no job, no files. It is RisingWave's CREATE
// SOURCE and Flink's source table. A materialized view (or a sink into a
// table) that names it runs the connector's readers in its own job: in
// place of a table source (tablesource) the view's graph gets one source
// subtask per reader, each an ingest.Source as an ingest job's, so it
// takes its epochs from the meta service's clock and keeps its position
// and (epoch, position) pairs in the view job's checkpoints. A restart
// restores them with the view's operator state and table sink, which is
// exactly-once for the view as it is for an ingest job's table
// (DESIGN.md invariant 3). Nothing of the source is written: the view's
// table is the only thing stored, which is how Flink and RisingWave run
// Nexmark.
//
// Rules, each refused with an error naming the source and the reason:
//
//   - [source-insert-only] A source's changes are inserts: it has no
//     PRIMARY KEY, and a format that carries updates and deletes
//     (debezium-json) is refused; a reader that hands over another row
//     kind anyway fails the view's job. A scan of a source is therefore
//     append-only (planner mode AppendOnly) and the planner's append-only
//     paths apply as for a table without a primary key.
//   - [source-not-stored] A source holds no rows to read at a version: a
//     plain SELECT of it, a LOOKUP of it, and strata verify of a view
//     reading it are refused (verify cannot recompute what was never
//     stored, which says nothing against the view).
//   - [source-dependents] DROP SOURCE is refused while a view or sink
//     reads it, naming them.
//
// Every view job that reads a source starts the source at its first
// position: a new view over a Nexmark source sees every event from the
// first one, as a new table over the same connector would. Its source
// subtasks close epochs from the job's first epoch (start_after + 1, as
// its table sources do), so that a view joining a source and a table
// closes the same epochs on every input.
//
// Options are those of CREATE TABLE ... WITH (connector = ...) and are
// checked by the same connector code (Options.Connectors), with the
// table store's options (bucket, merge-engine, ...) refused: a source
// stores nothing.

// streamSource reports whether connector is one that views may read
// directly (every ingest connector; postgres-cdc sources feed tables).
func (e *Engine) streamSource(connector string) bool {
	_, ok := e.opts.Connectors[connector]
	return ok && connector != PostgresCDC
}

// sourceTable describes source src as a table for its connector, which
// makes readers for a table's columns and options.
func sourceTable(src catalog.Source) catalog.Table {
	opts := maps.Clone(src.Options)
	if opts == nil {
		opts = map[string]string{}
	}
	opts["connector"] = src.Connector
	return catalog.Table{Name: src.Name, Kind: catalog.KindTable, Columns: src.Columns, Options: opts}
}

// checkStreamSource checks a CREATE SOURCE of a connector that views read
// directly: its schema, its options (by opening its readers once, then
// closing them, as CreateTable does) and the rules of this file.
func (e *Engine) checkStreamSource(src catalog.Source) error {
	name := src.Name.Name
	if len(src.PrimaryKey) > 0 {
		return sqlerr.New(sqlerr.InvalidObjectDefinition,
			"CREATE SOURCE %s: a source cannot have a PRIMARY KEY: it stores nothing and its changes are inserts only; to keep one row per key, create a table instead: CREATE TABLE %s (..., PRIMARY KEY (%s)) WITH (connector = '%s', ...)",
			name, name, strings.Join(src.PrimaryKey, ", "), src.Connector)
	}
	if len(src.Columns) == 0 {
		return sqlerr.New(sqlerr.InvalidObjectDefinition, "CREATE SOURCE %s: a %s source needs its columns: CREATE SOURCE %s (col type, ...) WITH (connector = '%s', ...)",
			name, src.Connector, name, src.Connector)
	}
	store, conn, _ := splitOptions(sourceTable(src).Options)
	if len(store) > 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "CREATE SOURCE %s: option %q belongs to the table store, and a source stores nothing (create a table to store the rows)", name, firstKey(store))
	}
	if f := strings.ToLower(strings.TrimSpace(conn[format.OptFormat])); f == string(format.Debezium) {
		return sqlerr.New(sqlerr.InvalidObjectDefinition,
			"CREATE SOURCE %s: format '%s' carries updates and deletes, and a source's changes are inserts only (it has no key to apply them by); create a table with a PRIMARY KEY from it instead: CREATE TABLE %s (..., PRIMARY KEY (...)) WITH (connector = '%s', format = '%s', ...)",
			name, f, name, src.Connector, f)
	}
	readers, err := e.sourceReaders(src)
	if err != nil {
		return err
	}
	closeReaders(readers)
	return nil
}

// sourceReaders opens the readers of source src with its connector: one
// per source subtask.
func (e *Engine) sourceReaders(src catalog.Source) ([]ingest.Reader, error) {
	f, ok := e.opts.Connectors[src.Connector]
	if !ok || !e.streamSource(src.Connector) {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "source %s: connector %q is not one a view reads directly", src.Name.Name, src.Connector)
	}
	_, conn, _ := splitOptions(sourceTable(src).Options)
	rs, err := f(sourceTable(src), conn)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("source %s: connector %s: %w", src.Name.Name, src.Connector, err))
	}
	return rs, nil
}

func closeReaders(rs []ingest.Reader) error {
	var errs []error
	for _, r := range rs {
		if c, ok := r.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// sourceRelation describes source src to the binder: its columns, no key
// ([source-insert-only]), IsSource set, and its event-time watermark when
// its definition has one.
func sourceRelation(src catalog.Source) (*plan.Relation, error) {
	if len(src.Columns) == 0 {
		return nil, sqlerr.New(sqlerr.WrongObjectType, "source %q (%s) is read through the tables created from it (CREATE TABLE ... FROM %s TABLE '...')", src.Name.Name, src.Connector, src.Name.Name)
	}
	rel := relationOf(catalog.Table{Name: src.Name, Kind: catalog.KindTable, Columns: src.Columns, Options: src.Options})
	rel.IsSource = true
	return rel, nil
}

// sourceNotStored is the error of reading source name as if it were
// stored ([source-not-stored]): a plain SELECT, a LOOKUP.
func sourceNotStored(name string) error {
	return sqlerr.New(sqlerr.WrongObjectType,
		"source %q stores nothing, so it cannot be queried: create a table from its connector (CREATE TABLE ... WITH (connector = ...)) or a materialized view over it (CREATE MATERIALIZED VIEW v AS SELECT ... FROM %s), and query that", name, name)
}

// unstoredInputs returns the error of verifying view, whose job reads the
// sources it returns ([source-not-stored]); nil when it reads none.
func unstoredInputs(cat *catalog.Catalog, view catalog.ObjectName) error {
	def, err := cat.Job(viewJobName(view))
	if err != nil {
		return nil
	}
	var srcs []string
	for _, r := range def.Reads {
		if cat.IsSource(r) {
			srcs = append(srcs, r.Name)
		}
	}
	if len(srcs) == 0 {
		return nil
	}
	return sqlerr.New(sqlerr.ObjectNotInPrerequisiteState,
		"materialized view %s cannot be recomputed: it reads source %s, which stores nothing, so its input is not kept to recompute from (this says nothing against the view; a view over tables created from the same connector can be verified)",
		view.Name, strings.Join(srcs, ", "))
}

// sourceDependents refuses to drop source name while jobs read it, naming
// every view and sink that does ([source-dependents]).
func sourceDependents(cat *catalog.Catalog, name catalog.ObjectName) error {
	var deps []string
	for _, j := range cat.Jobs() {
		if !slices.Contains(j.Reads, name) || isCDCJob(j) {
			continue
		}
		switch {
		case isSinkJob(j) || j.Kind == catalog.JobSink:
			deps = append(deps, "sink "+j.Options[jobOptSink])
		case len(j.Writes) > 0:
			deps = append(deps, "materialized view "+j.Writes[0].Name)
		default:
			deps = append(deps, "job "+j.Name)
		}
	}
	if len(deps) == 0 {
		return nil
	}
	slices.Sort(deps)
	verb := "read"
	if len(deps) == 1 {
		verb = "reads"
	}
	return sqlerr.New(sqlerr.DependentObjectsStillExist, "cannot drop source %s because %s %s it (drop them first)", name.Name, strings.Join(deps, ", "), verb)
}

// isSourceName reports whether name is a source of the current catalog.
func (e *Engine) isSourceName(ctx context.Context, name catalog.ObjectName) bool {
	cat, err := e.meta.Catalog(ctx)
	return err == nil && cat.IsSource(name)
}

// viewSources is the part of a view job's endpoints that runs sources
// directly: the readers of each source relation, opened once per build
// of the job (every attempt of the job reuses them, as an ingest job's
// attempts reuse its readers: a Reader reads by position, and the state
// a StatefulReader keeps besides is set again by each restore).
//
// Each scan of a source has readers of its own (a query naming a source
// twice reads it twice, as two ingest jobs would), told apart by the
// scan's relation (the binder makes one per mention).
type viewSources struct {
	mu sync.Mutex
	// readers are the open readers per scan; guarded by mu.
	readers map[*plan.Relation]scanReaders
	// opened lists every reader opened, for close; guarded by mu.
	opened []ingest.Reader
}

// scanReaders are the readers of one scan of a source and the scan's
// number among the job's scans of sources.
type scanReaders struct {
	readers []ingest.Reader
	scan    int
}

// sourceParallelism opens the readers of rel, a source, and returns
// their number (one source subtask each). A failure is kept for the job
// (v.fail) and gives one subtask that fails with it.
func (v *viewEndpoints) sourceParallelism(rel *plan.Relation) int {
	rs, err := v.openSource(rel)
	if err != nil {
		v.fail(err)
		return 1
	}
	return max(len(rs), 1)
}

func (v *viewEndpoints) openSource(rel *plan.Relation) ([]ingest.Reader, error) {
	sr, err := v.scanSource(rel)
	return sr.readers, err
}

func (v *viewEndpoints) scanSource(rel *plan.Relation) (scanReaders, error) {
	vs := &v.sources
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if sr, ok := vs.readers[rel]; ok {
		return sr, nil
	}
	name := (&relations{db: v.name.Database}).objectName(rel.Name)
	src, err := v.cat.Source(name)
	if err != nil {
		return scanReaders{}, err
	}
	rs, err := v.e.sourceReaders(src)
	if err != nil {
		return scanReaders{}, err
	}
	vs.opened = append(vs.opened, rs...)
	wrapped := make([]ingest.Reader, len(rs))
	for i, r := range rs {
		wrapped[i] = insertOnly{r: r, name: name.Name}
	}
	if vs.readers == nil {
		vs.readers = map[*plan.Relation]scanReaders{}
	}
	sr := scanReaders{readers: wrapped, scan: len(vs.readers)}
	vs.readers[rel] = sr
	return sr, nil
}

// streamSource returns subtask i of source relation rel: the reader
// wrapped by ingest as an ingest job's (epochs from the clock, position
// in the job's checkpoints).
func (v *viewEndpoints) streamSource(rel *plan.Relation, i int) operator.Source {
	sr, err := v.scanSource(rel)
	if err != nil {
		return failedSource{err}
	}
	rs := sr.readers
	if i >= len(rs) {
		return failedSource{fmt.Errorf("source %s: subtask %d of %d: %w", rel.Name, i, len(rs), base.ErrInvalidArgument)}
	}
	name := (&relations{db: v.name.Database}).objectName(rel.Name)
	key := sourcePositionKey(v.job, name) + strconv.Itoa(sr.scan)
	e := v.e
	var onClose func(ingest.Pair)
	if i == 0 {
		onClose = func(p ingest.Pair) {
			e.mu.Lock()
			e.closes[key] = p
			e.mu.Unlock()
		}
	}
	return ingest.New(ingest.Config{Reader: rs[i], Clock: e.meta, Name: name.String(), StartEpoch: v.startAfter + 1, OnClose: onClose})
}

// closeSources closes every reader the endpoints opened.
func (v *viewEndpoints) closeSources() error {
	vs := &v.sources
	vs.mu.Lock()
	defer vs.mu.Unlock()
	err := closeReaders(vs.opened)
	vs.opened, vs.readers = nil, nil
	return err
}

// sourceClosers hands the readers the endpoints opened to a job's list of
// things to close when it stops.
func (v *viewEndpoints) sourceClosers(closers *[]io.Closer) {
	vs := &v.sources
	vs.mu.Lock()
	defer vs.mu.Unlock()
	for _, r := range vs.opened {
		if c, ok := r.(io.Closer); ok {
			*closers = append(*closers, c)
		}
	}
}

// sourcePositionKey is the prefix of the keys that name, in
// Engine.closes, the position at which view job job's scans of source src
// (numbered after the prefix) last closed an epoch.
func sourcePositionKey(job string, src catalog.ObjectName) string {
	return job + "/" + src.String() + "#"
}

// SourcePosition returns the position at which view's job last closed an
// epoch while reading source src directly, and that epoch (zero before
// the first, or when the view does not read src). For a nexmark source
// the position is the number of events generated, as IngestPosition's.
// A view that reads src more than once reports its least advanced
// reader's position, with the highest epoch closed there: once the view
// commits that epoch, it holds everything every reader of src took up to
// that position.
func (e *Engine) SourcePosition(view, src catalog.ObjectName) ingest.Pair {
	prefix := sourcePositionKey(viewJobName(view), src)
	e.mu.Lock()
	defer e.mu.Unlock()
	var out ingest.Pair
	found := false
	for k, p := range e.closes {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		switch {
		case !found || p.Position < out.Position:
			out = p
		case p.Position == out.Position:
			out.Epoch = max(out.Epoch, p.Epoch)
		}
		found = true
	}
	return out
}

// insertOnly passes a source's chunks on and fails on a row that is not
// an insert ([source-insert-only]): a view reads a source as append-only,
// and a retraction it was not planned for would corrupt its state.
type insertOnly struct {
	r    ingest.Reader
	name string
}

// Next implements ingest.Reader.
func (s insertOnly) Next(pos uint64) (*types.Chunk, uint64, error) {
	c, next, err := s.r.Next(pos)
	if err != nil || c == nil {
		return c, next, err
	}
	for i, k := range c.Kinds {
		if k != types.Insert {
			return nil, pos, fmt.Errorf("source %s: row %d at position %d is %s, but a source's changes are inserts only (create a table with a PRIMARY KEY from this input to apply updates and deletes): %w",
				s.name, i, pos, k, base.ErrInvalidArgument)
		}
	}
	return c, next, nil
}

var _ ingest.StatefulReader = insertOnly{}

// SnapshotState implements ingest.StatefulReader for the source's reader.
func (s insertOnly) SnapshotState() ([]byte, error) { return ingest.SnapshotState(s.r) }

// RestoreState implements ingest.StatefulReader for the source's reader.
func (s insertOnly) RestoreState(state []byte) error { return ingest.RestoreState(s.r, state) }

// sourceObjects describes the sources of database db that have columns to
// the emulated pg_catalog. PostgreSQL's nearest kind, the foreign table,
// makes psql's \d query pg_foreign_table, which the emulation lacks; a
// source shows as a view instead, whose definition (\d NAME's "View
// definition") is its connector and the note that it stores nothing.
func sourceObjects(cat *catalog.Catalog, db string) []olap.TableInfo {
	var out []olap.TableInfo
	for _, s := range cat.Sources() {
		if s.Name.Database != db || len(s.Columns) == 0 {
			continue
		}
		ti := olap.TableInfo{Name: s.Name.Name, Kind: olap.KindView, Database: db,
			ViewDef: fmt.Sprintf("-- source: connector '%s'; stores nothing, read by materialized views only", s.Connector)}
		for _, c := range s.Columns {
			ti.Columns = append(ti.Columns, olap.ColumnInfo{Name: c.Name, Type: c.Type, NotNull: c.NotNull})
		}
		out = append(out, ti)
	}
	return out
}

// forgetSourcePositions drops what SourcePosition knows of job's readers
// (the job is dropped; a view created again under the same name starts
// its sources anew).
func (e *Engine) forgetSourcePositions(job string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k := range e.closes {
		if strings.HasPrefix(k, job+"/") {
			delete(e.closes, k)
		}
	}
}
