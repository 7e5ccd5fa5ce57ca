package engine

import (
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

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/suggest"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/planner"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// Job names: the writer of every stored object is named after it.
func ingestJobName(n catalog.ObjectName) string { return "ingest-" + n.Database + "-" + n.Name }
func dmlJobName(n catalog.ObjectName) string    { return "dml-" + n.Database + "-" + n.Name }
func viewJobName(n catalog.ObjectName) string   { return "view-" + n.Database + "-" + n.Name }

// tableStoreOptions are the table store's options (schema.ParseOptions)
// that a user writes, besides fields.<col>.aggregate-function.
var tableStoreOptions = []string{"bucket", "write-buffer-rows", "target-file-rows", "num-levels", "num-sorted-run.compaction-trigger",
	"compaction.size-ratio", "compaction.max-size-amplification-percent", "snapshot.num-retained.min",
	"snapshot.num-retained.max", "commit.max-retries", "merge-engine", "changelog-producer", "write-only",
	"snapshot.time-retained"}

// tableStoreOption tells the table store's options (schema.ParseOptions)
// from a connector's.
func tableStoreOption(k string) bool {
	if k == schema.OptionNullableKey || slices.Contains(tableStoreOptions, k) {
		return true
	}
	return strings.HasPrefix(k, "fields.") && strings.HasSuffix(k, ".aggregate-function")
}

// storeOptionHint is the hint of the refusal of option k that is none of
// the table store's options nor of the other options more: the one of
// them k most likely stands for (internal/suggest), "" when none is near.
func storeOptionHint(k string, cols []catalog.Column, more ...string) string {
	cands := append(slices.Clone(tableStoreOptions), more...)
	for _, c := range cols {
		cands = append(cands, "fields."+c.Name+".aggregate-function")
	}
	return suggest.OptionHint(suggest.Nearest(k, cands))
}

// Options of a table that belong to neither the table store nor the
// connector: the watermark of WATERMARK FOR col AS col - INTERVAL '...',
// and the mark of a multiset view.
const (
	// OptionMultiset marks a view stored as a multiset (doc.go, "Multiset
	// views"); its value names the hidden multiplicity column, the last
	// of the view's stored columns and absent from its catalog columns.
	OptionMultiset = "multiset.count-column"
	// OptionWatermarkColumn names the event-time column.
	OptionWatermarkColumn = "watermark.column"
	// OptionWatermarkDelay is the delay, in time.Duration's text.
	OptionWatermarkDelay = "watermark.delay"
)

// splitOptions divides a WITH clause into the table store's options and
// the connector's (everything else, "connector" and the watermark
// excluded).
func splitOptions(opts map[string]string) (store, conn map[string]string, connector string) {
	store, conn = map[string]string{}, map[string]string{}
	for k, v := range opts {
		switch {
		case k == OptionWatermarkColumn || k == OptionWatermarkDelay || k == OptionSource || k == OptionSourceTable:
		case k == "connector":
			connector = v
		case tableStoreOption(k):
			store[k] = v
		default:
			conn[k] = v
		}
	}
	return store, conn, connector
}

// multisetCountColumn is the hidden multiplicity column of a multiset
// view: BIGINT, never NULL, at least 1 in every stored row.
const multisetCountColumn = "_strata_count"

// multisetColumn returns the hidden multiplicity column of t, "" when t
// is not a multiset view (only CreateView marks one; the option on a
// table, which a connector's options could carry, means nothing).
func multisetColumn(t catalog.Table) string {
	if t.Kind != catalog.KindView {
		return ""
	}
	return t.Options[OptionMultiset]
}

func fieldsOf(cols []catalog.Column) []schema.Field {
	out := make([]schema.Field, len(cols))
	for i, c := range cols {
		out[i] = schema.Field{Name: c.Name, Type: c.Type, Nullable: !c.NotNull}
	}
	return out
}

// createStorage makes the table store table of name, replacing what a
// failed earlier CREATE may have left (the catalog, checked by the caller,
// is the truth about what exists). [orphans-cleared-by-create] Files of
// a name the catalog does not hold belong to nothing: a CREATE that died
// before its catalog change (createStorage runs before it), or a DROP
// that died after its catalog change and before dropStorage. They are
// cleared here, and the leftovers of the object's writing job by
// clearJobLeftovers, so the object starts empty and its job starts
// without a checkpoint of an older job of the same name. Nothing else
// reads them meanwhile: a start-up opens only what the catalog holds.
func (e *Engine) createStorage(name catalog.ObjectName, cols []catalog.Column, pk []string, opts map[string]string) (*table.Table, error) {
	e.mu.Lock()
	delete(e.pendingRemovals, name) // the new table takes the directory over
	e.mu.Unlock()
	if err := removeTree(e.fs, tableDir(name)); err != nil {
		return nil, fmt.Errorf("table %s: clearing %s: %w", name, tableDir(name), err)
	}
	if err := os.Remove(dmlPath(e.opts.Dir, name)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("table %s: clearing an old DML log: %w", name, err)
	}
	t, err := table.Create(e.fs, tableDir(name), fieldsOf(cols), pk, opts)
	if err != nil {
		return nil, sqlerr.Wrap(sqlerr.InvalidParameterValue, err)
	}
	e.mu.Lock()
	e.tables[name] = t
	e.mu.Unlock()
	return t, nil
}

// dropStorage removes a dropped object's files, directories and
// checkpoints. [drop-after-readers] A query that pinned a version of the
// object before the DROP may still be reading its snapshot's files: while
// a live pin holds it, the table's directory is left in place and removed
// by a background task once no pin does (pins are leased, so the wait is
// bounded), or when the engine closes. A CREATE of the same name before
// then takes the directory over, and the pending removal is dropped.
// The caller holds e.ddl.
func (e *Engine) dropStorage(name catalog.ObjectName, jobs ...string) error {
	e.mu.Lock()
	delete(e.tables, name)
	delete(e.skipErrs, name)
	if l, ok := e.dml[name]; ok {
		_ = l.close()
		delete(e.dml, name)
	}
	e.mu.Unlock()
	var treeErr error
	if _, pinned, err := e.meta.PinnedEpoch(e.ctx, name); err == nil && pinned {
		e.removeWhenUnpinned(name)
	} else {
		treeErr = removeTree(e.fs, tableDir(name))
	}
	errs := []error{treeErr, os.Remove(dmlPath(e.opts.Dir, name))}
	if errs[1] != nil && errors.Is(errs[1], os.ErrNotExist) {
		errs[1] = nil
	}
	for _, j := range jobs {
		errs = append(errs, e.forgetJob(j))
	}
	return errors.Join(errs...)
}

// forgetJob removes what dropped job leaves: its checkpoints, its state
// directory, its sources' closed positions and its late-row counters.
// Removing what is already gone is no error, so a DROP's cleanup can run
// again after a crash (dropintent.go). The caller holds e.ddl.
func (e *Engine) forgetJob(job string) error {
	err := errors.Join(os.RemoveAll(filepath.Join(e.opts.Dir, "checkpoints", job)), os.RemoveAll(e.stateDir(job)))
	e.forgetSourcePositions(job)
	e.mu.Lock()
	delete(e.late, job)
	e.mu.Unlock()
	return err
}

// clearJobLeftovers removes the checkpoints and state directory that a
// job of the same name, dropped by a DROP that died before it removed
// them, may have left ([orphans-cleared-by-create]); a new job must not
// restore them. The caller holds e.ddl and has checked that the catalog
// has no job of that name.
func (e *Engine) clearJobLeftovers(job string) error {
	return errors.Join(os.RemoveAll(filepath.Join(e.opts.Dir, "checkpoints", job)), os.RemoveAll(e.stateDir(job)))
}

// createWithJob creates table t (whose storage the caller made) and
// registers def, its writer, in one meta-service change (invariant
// meta-change-atomic): a crash at any instant leaves both or neither in
// the catalog. On failure the storage goes again. A refusal of t itself
// has code 42P16 (invalid_table_definition), any other refusal jobCode.
func (e *Engine) createWithJob(ctx context.Context, t catalog.Table, def catalog.Job, jobCode string) error {
	cat, err := e.meta.Catalog(ctx)
	if err == nil {
		if _, terr := cat.CreateTable(t); terr != nil {
			err = sqlerr.Wrap(sqlerr.InvalidTableDefinition, terr)
		}
	}
	if err == nil {
		err = e.clearJobLeftovers(def.Name)
	}
	if err == nil {
		err = e.meta.ApplyChange(ctx, meta.Change{CreateTables: []catalog.Table{t}, RegisterJobs: []catalog.Job{def}})
		if err != nil {
			err = sqlerr.Wrap(jobCode, err)
		}
	}
	if err != nil {
		return errors.Join(err, e.dropStorage(t.Name, def.Name))
	}
	return nil
}

// CreateTable creates a stored table and its writing job: the connector's
// ingest job when t.Options name a connector, otherwise the DML job. The
// options are the table store's (bucket, merge-engine, ...) and the
// connector's; an unknown option without a connector is refused. With
// ifNotExists, an existing table of that name is not an error. Nothing is
// left behind when it fails. The options stored are t.Options with what
// the connector chooses at CREATE (createOptions: a datagen table's
// random seed when none is given); t.Options itself is not changed.
func (e *Engine) CreateTable(ctx context.Context, t catalog.Table, ifNotExists bool) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	if _, err := cat.Table(t.Name); err == nil || cat.IsSource(t.Name) {
		if ifNotExists {
			return nil
		}
		return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", t.Name.Name)
	}
	if err := checkSchema(cat, t.Name); err != nil {
		return err
	}
	t.Kind = catalog.KindTable
	for i, c := range t.Columns {
		for _, k := range t.PrimaryKey {
			if c.Name == k {
				t.Columns[i].NotNull = true
			}
		}
	}
	if err := t.Validate(); err != nil {
		return sqlerr.Wrap(sqlerr.InvalidTableDefinition, err)
	}
	if src := t.Options[OptionSource]; src != "" {
		name, err := catalog.ParseObjectName(src)
		if err != nil {
			return sqlerr.Wrap(sqlerr.InvalidParameterValue, err)
		}
		return e.createSourceTable(ctx, cat, t, name, t.Options[OptionSourceTable])
	}
	t.Options = createOptions(t.Options["connector"], t.Options)
	storeOpts, connOpts, connector := splitOptions(t.Options)
	if err := checkTableOptions(t, storeOpts, connOpts); err != nil {
		return err
	}
	def := catalog.Job{Name: dmlJobName(t.Name), Kind: catalog.JobIngest, Writes: []catalog.ObjectName{t.Name}}
	var backlog uint64
	hasBacklog := false
	if connector != "" {
		readers, err := e.connector(t, connector, connOpts)
		if err != nil {
			return err
		}
		backlog, hasBacklog, err = readerBacklog(readers)
		if err != nil {
			err = sqlerr.Wrap(sqlerr.InvalidParameterValue, fmt.Errorf("table %s: connector %s: %w", t.Name.Name, connector, err))
		}
		for _, r := range readers {
			if c, ok := r.(io.Closer); ok {
				_ = c.Close()
			}
		}
		if err != nil {
			return err
		}
		def.Name = ingestJobName(t.Name)
	} else if len(connOpts) > 0 {
		e := sqlerr.New(sqlerr.InvalidParameterValue, "table %s: unknown option %q (table options are bucket, merge-engine, ...; connector options need connector = '...')", t.Name.Name, firstKey(connOpts))
		e.Hint = storeOptionHint(firstKey(connOpts), t.Columns, "connector")
		return e
	}
	if me := storeOpts["merge-engine"]; me != "" && len(t.PrimaryKey) == 0 {
		// Merge engines merge the rows of one key; an append table has
		// none (Paimon refuses them there too).
		return sqlerr.New(sqlerr.InvalidTableDefinition, "table %s: merge-engine %q needs a PRIMARY KEY; a table without one is an append table", t.Name.Name, me)
	}
	if _, err := schema.New(fieldsOf(t.Columns), t.PrimaryKey, storeOpts); err != nil {
		return sqlerr.Wrap(sqlerr.InvalidParameterValue, err)
	} else if sc, _ := schema.New(fieldsOf(t.Columns), t.PrimaryKey, storeOpts); sc != nil {
		if _, err := schema.ParseOptions(sc); err != nil {
			return sqlerr.Wrap(sqlerr.InvalidParameterValue, err)
		}
	}
	if _, err := e.createStorage(t.Name, t.Columns, t.PrimaryKey, storeOpts); err != nil {
		return err
	}
	if err := e.createWithJob(ctx, t, def, sqlerr.InvalidTableDefinition); err != nil {
		return err
	}
	cat, err = e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	if err := e.startJob(ctx, cat, def); err != nil {
		return err
	}
	if hasBacklog {
		return e.awaitBacklog(ctx, t.Name, backlog)
	}
	return nil
}

func firstKey(m map[string]string) string {
	if len(m) == 0 {
		return ""
	}
	return slices.Sorted(maps.Keys(m))[0]
}

// viewPlan binds a view's query against cat and returns its plan and the
// objects it reads.
func (e *Engine) viewPlan(cat *catalog.Catalog, db, query string) (plan.Node, []catalog.ObjectName, error) {
	return e.viewPlanIn(cat, db, query, nil)
}

// viewPlanIn binds a view's query with time zone loc (nil: UTC).
func (e *Engine) viewPlanIn(cat *catalog.Catalog, db, query string, loc *time.Location) (plan.Node, []catalog.ObjectName, error) {
	st, err := parser.ParseOne(query)
	if err != nil {
		return nil, nil, err
	}
	if st.Node.GetSelectStmt() == nil {
		return nil, nil, sqlerr.New(sqlerr.SyntaxError, "a materialized view is defined by one SELECT")
	}
	if at, ok := groupingSetAt(st.Node.ProtoReflect()); ok {
		return nil, nil, sqlerr.New(sqlerr.FeatureNotSupported,
			"ROLLUP, CUBE and GROUPING SETS are not supported in a materialized view or sink (a one-shot SELECT runs them)").WithPosition(int(at) + 1)
	}
	rels := &relations{cat: cat, db: db, streams: true}
	p, err := binder.New(rels, query, &expr.Context{Loc: loc}).BindQuery(st.Node)
	if err != nil {
		return nil, nil, err
	}
	return p, rels.seen, nil
}

// groupingSetAt finds a ROLLUP, CUBE or GROUPING SETS in a parse tree and
// returns its 0-based location. The binder runs them as a UNION ALL of
// one aggregate per set, whose rows no key tells apart and whose grand
// total row a streaming job would not retract correctly, so views and
// sinks refuse them.
func groupingSetAt(m protoreflect.Message) (int32, bool) {
	if gs, ok := m.Interface().(*pg_query.GroupingSet); ok && gs.GetKind() != pg_query.GroupingSetKind_GROUPING_SET_EMPTY && gs.GetKind() != pg_query.GroupingSetKind_GROUPING_SET_SIMPLE {
		return gs.GetLocation(), true
	}
	var at int32
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsList() && fd.Message() != nil:
			l := v.List()
			for i := 0; i < l.Len() && !found; i++ {
				at, found = groupingSetAt(l.Get(i).Message())
			}
		case fd.Message() != nil && !fd.IsMap():
			at, found = groupingSetAt(v.Message())
		}
		return !found
	})
	return at, found
}

// errNoKey marks a view plan without a unique key Strata can infer.
var errNoKey = errors.New("no unique key")

// viewColumns names the columns of a view's plan and chooses its key;
// errNoKey (with the columns) when it has none.
func viewColumns(name catalog.ObjectName, p plan.Node) (cols []catalog.Column, pk []string, nullableKey bool, err error) {
	sch := p.Schema()
	key, ok := uniqueKey(p)
	cols = make([]catalog.Column, len(sch))
	seen := map[string]bool{}
	for i, c := range sch {
		if c.Name == "" || c.Name == "?column?" {
			return nil, nil, false, sqlerr.New(sqlerr.InvalidColumnDefinition, "materialized view %s: column %d has no name; give the expression an alias (AS name)", name.Name, i+1)
		}
		if seen[c.Name] {
			return nil, nil, false, sqlerr.New(sqlerr.DuplicateColumn, "materialized view %s: column %q appears twice; give one an alias", name.Name, c.Name)
		}
		seen[c.Name] = true
		typ := c.Type
		if typ.Kind == types.KindUnknown {
			typ = types.Text
		}
		cols[i] = catalog.Column{Name: c.Name, Type: typ, NotNull: c.NotNull}
	}
	if !ok {
		return cols, nil, false, errNoKey
	}
	if len(key) == 0 {
		// At most one row (a global aggregate): keyed by all of its
		// columns, an update is a delete of the old row and an insert of
		// the new one.
		for i := range cols {
			key = append(key, i)
		}
	}
	pk = nil
	nullable := false
	for _, k := range key {
		pk = append(pk, cols[k].Name)
		nullable = nullable || !cols[k].NotNull
	}
	return cols, pk, nullable, nil
}

// CreateView creates materialized view name, maintained by the view job
// that runs query (one SELECT over tables and views of the catalog), with
// table store options opts (bucket, ...). With ifNotExists an existing
// view of that name is not an error. The job starts before CreateView
// returns; the view fills as its inputs' epochs are processed.
func (e *Engine) CreateView(ctx context.Context, name catalog.ObjectName, query string, opts map[string]string, ifNotExists bool) error {
	e.ddl.Lock()
	defer e.ddl.Unlock()
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	if _, err := cat.Table(name); err == nil || cat.IsSource(name) {
		if ifNotExists {
			return nil
		}
		return sqlerr.New(sqlerr.DuplicateTable, "relation %q already exists", name.Name)
	}
	if err := checkSchema(cat, name); err != nil {
		return err
	}
	// The session's time zone, passed as option timezone, is the view's:
	// its job evaluates date and time functions in it, as the SELECT
	// would in that session.
	opts = maps.Clone(opts)
	tz, loc, err := viewZone(opts[jobOptTimeZone])
	if err != nil {
		e := sqlerr.New(sqlerr.InvalidParameterValue, "materialized view %s: option timezone: %s", name.Name, sqlerr.From(err).Message)
		e.Hint = timeZoneHint
		return e
	}
	delete(opts, jobOptTimeZone)
	backend, err := stateBackendOption(name.Name, opts[jobOptStateBackend])
	if err != nil {
		return err
	}
	delete(opts, jobOptStateBackend)
	p, reads, err := e.viewPlanIn(cat, name.Database, query, loc)
	if err != nil {
		return err
	}
	if err := e.refuseStoppedInputs(cat, "materialized view", name, reads); err != nil {
		return err
	}
	if len(reads) == 0 {
		return sqlerr.New(sqlerr.FeatureNotSupported, "materialized view %s reads no table", name.Name)
	}
	if fn := volatileCall(p); fn != "" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "materialized view %s calls %s(), whose value depends on when a row is processed: a view must be a function of its inputs", name.Name, fn)
	}
	cols, pk, nullableKey, err := viewColumns(name, p)
	appendOnly := errors.Is(err, errNoKey)
	if err != nil && !appendOnly {
		return err
	}
	storeOpts, connOpts, connector := splitOptions(opts)
	if connector != "" || len(connOpts) > 0 {
		e := sqlerr.New(sqlerr.InvalidParameterValue, "materialized view %s: unknown option %q (a view takes the table options bucket, merge-engine, changelog-producer, write-buffer-rows, target-file-rows, the compaction and snapshot options, fields.<col>.aggregate-function, and timezone and state.backend; parallelism is the server's: strata start --parallelism)", name.Name, firstKey(connOpts))
		e.Hint = storeOptionHint(firstKey(connOpts), cols, jobOptTimeZone, jobOptStateBackend)
		return e
	}
	if nullableKey {
		storeOpts[schema.OptionNullableKey] = "true"
	}
	t := catalog.Table{Name: name, Kind: catalog.KindView, Columns: cols, PrimaryKey: pk, Options: storeOpts, Query: query}
	def := catalog.Job{Name: viewJobName(name), Kind: catalog.JobView, Reads: reads, Writes: []catalog.ObjectName{name}}
	startAfter, err := e.inputsPresent(ctx, reads)
	if err != nil {
		return err
	}
	def.Options = map[string]string{jobOptStartAfter: strconv.FormatUint(uint64(startAfter), 10),
		jobOptParallelism: strconv.Itoa(e.opts.Parallelism)}
	if tz != "" {
		def.Options[jobOptTimeZone] = tz
	}
	if backend != "" {
		def.Options[jobOptStateBackend] = backend
	}
	// Build the job once before anything is created: a plan the streaming
	// planner cannot run is refused here.
	j, err := e.planViewJob(withTable(cat, t), def, t, nil)
	if err != nil {
		return err
	}
	storeCols := cols
	if appendOnly && j.Mode != planner.AppendOnly {
		// Without a key, a view whose changelog inserts and never
		// retracts is an append table, like a Flink INSERT INTO a Paimon
		// append table; one that retracts is a multiset (doc.go,
		// "Multiset views"): keyed by all of its columns, with each row's
		// multiplicity in a hidden last column.
		for _, c := range cols {
			if c.Name == multisetCountColumn {
				return sqlerr.New(sqlerr.DuplicateColumn,
					"materialized view %s: column %q is the hidden multiplicity column of a view without a unique key; give the column another name", name.Name, c.Name)
			}
			pk = append(pk, c.Name)
			nullableKey = nullableKey || !c.NotNull
		}
		if nullableKey {
			storeOpts[schema.OptionNullableKey] = "true"
		}
		t.Options = maps.Clone(storeOpts)
		t.Options[OptionMultiset] = multisetCountColumn
		if _, err := e.planViewJob(withTable(cat, t), def, t, nil); err != nil {
			return err
		}
		storeCols = append(slices.Clone(cols), catalog.Column{Name: multisetCountColumn, Type: types.Int64, NotNull: true})
	}
	if _, err := e.createStorage(name, storeCols, pk, storeOpts); err != nil {
		return err
	}
	if err := e.createWithJob(ctx, t, def, sqlerr.InvalidObjectDefinition); err != nil {
		return err
	}
	cat, err = e.meta.Catalog(ctx)
	if err != nil {
		return err
	}
	return e.startJob(ctx, cat, def)
}

// inputsPresent returns the epoch a new job reading reads starts after
// (its start_after option): the lowest epoch its inputs have all
// committed. Each input's history up to that epoch is backfilled into the
// job's first epoch (tablesource.Config.StartAfter), so a new view over
// old tables, or over tables whose long past changed nothing, does not
// replay their epochs one commit at a time (engine doc, invariant
// view-starts-present); this is RisingWave's "a new materialized view
// starts from its inputs' current snapshot".
//
// An input that has committed nothing yet (a table or view created a
// moment ago, whose writer has not closed an epoch) has no history before
// the present, so it counts as committed up to the last epoch the clock
// closed. Counting it as epoch 0 made a view over a new table start near
// the server's first epoch and close every epoch since, one checkpoint
// each, before it caught up. Whatever such an input commits later at an
// epoch up to the returned one is still counted, once, into the job's
// first epoch.
func (e *Engine) inputsPresent(ctx context.Context, reads []catalog.ObjectName) (base.Epoch, error) {
	var present base.Epoch
	for i, r := range reads {
		c := base.NoEpoch
		// A source read directly (source.go) has no history: it counts
		// as committed up to the last epoch the clock closed.
		if tb, err := e.Table(r); err == nil {
			if c, err = tb.CommittedEpoch(); err != nil {
				return 0, err
			}
		} else if !e.isSourceName(ctx, r) {
			return 0, err
		}
		if c == base.NoEpoch {
			cur, err := e.meta.CurrentEpoch(ctx)
			if err != nil {
				return 0, err
			}
			// The open epoch is not committed anywhere yet; the one
			// before it is the last the clock closed.
			c = max(cur.Epoch, 1) - 1
		}
		if i == 0 || c < present {
			present = c
		}
	}
	return present, nil
}

// withTable returns cat with t added, for building a job before t is
// created in the meta service.
func withTable(cat *catalog.Catalog, t catalog.Table) *catalog.Catalog {
	if n, err := cat.CreateTable(t); err == nil {
		return n
	}
	return cat
}

// removeTree deletes every file under dir of fs (a table's directory),
// then the directories themselves, deepest first: a local warehouse keeps
// no empty directory of a dropped table (on object storage directories
// are only prefixes, and deleting one is a no-op).
func removeTree(fs fileio.FS, dir string) error {
	files, err := fs.List(dir)
	if err != nil && !errors.Is(err, base.ErrNotFound) {
		return err
	}
	for _, f := range files {
		if err := fs.Delete(dir + "/" + f.Name); err != nil && !errors.Is(err, base.ErrNotFound) {
			return err
		}
	}
	dirs, err := fs.ListDirs(dir)
	if err != nil && !errors.Is(err, base.ErrNotFound) {
		return err
	}
	for _, d := range dirs {
		if err := removeTree(fs, dir+"/"+d); err != nil {
			return err
		}
	}
	if err := fs.Delete(dir); err != nil && !errors.Is(err, base.ErrNotFound) {
		return fmt.Errorf("directory %s: %w", dir, err)
	}
	return nil
}

// removeWhenUnpinned removes dropped table name's directory once no live
// pin holds it ([drop-after-readers]). The caller holds e.ddl.
func (e *Engine) removeWhenUnpinned(name catalog.ObjectName) {
	e.mu.Lock()
	e.removalSeq++
	seq := e.removalSeq
	e.pendingRemovals[name] = seq
	e.mu.Unlock()
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			if _, pinned, err := e.meta.PinnedEpoch(e.ctx, name); err != nil || !pinned {
				break
			}
			select {
			case <-e.ctx.Done():
			case <-tick.C:
				continue
			}
			break
		}
		e.ddl.Lock()
		defer e.ddl.Unlock()
		e.mu.Lock()
		current := e.pendingRemovals[name] == seq
		if current {
			delete(e.pendingRemovals, name)
		}
		e.mu.Unlock()
		if !current {
			return // re-created meanwhile
		}
		if err := removeTree(e.fs, tableDir(name)); err != nil {
			e.log.Warn("removing a dropped table's files", "table", name.String(), "err", err)
		}
	}()
}

// ViewStartEpoch returns the first epoch view name commits: a read that
// waits for it sees the view with its inputs' history (0 when unknown).
func (e *Engine) ViewStartEpoch(ctx context.Context, name catalog.ObjectName) base.Epoch {
	return e.jobStartEpoch(ctx, viewJobName(name))
}

// jobStartEpoch returns the first epoch job name commits (its start_after
// option plus one), 0 when there is no such job.
func (e *Engine) jobStartEpoch(ctx context.Context, name string) base.Epoch {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return 0
	}
	j, err := cat.Job(name)
	if err != nil {
		return 0
	}
	after, _ := strconv.ParseUint(j.Options[jobOptStartAfter], 10, 64)
	return base.Epoch(after) + 1
}

// jobOptTimeZone is the job option (and CREATE MATERIALIZED VIEW option)
// naming the time zone a view evaluates in; absent means UTC.
const jobOptTimeZone = "timezone"

// timeZoneHint is the hint of an invalid timezone option: the names
// time.LoadLocation takes, which are IANA's, spelled with their case (a
// fixed offset is one of IANA's Etc/GMT zones, whose sign is POSIX's).
const timeZoneHint = "use an IANA name such as 'UTC' or 'Europe/Berlin'; for a fixed offset, an Etc/GMT zone with the sign reversed, such as 'Etc/GMT-2' for +02:00"

// viewZone reads a view's time zone option: "" or UTC is UTC (nil, and
// no option kept).
func viewZone(name string) (string, *time.Location, error) {
	if name == "" || strings.EqualFold(name, "utc") {
		return "", nil, nil
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return "", nil, sqlerr.New(sqlerr.InvalidParameterValue, "invalid time zone %q", name)
	}
	return loc.String(), loc, nil
}

// jobZone is the time zone of job def (nil: UTC).
func jobZone(def catalog.Job) *time.Location {
	_, loc, _ := viewZone(def.Options[jobOptTimeZone])
	return loc
}

// checkSchema refuses (3F000, invalid_schema_name) a new object whose
// name is qualified by a database that does not exist. The statement
// named it as a schema (other.t), so the error says schema, as
// PostgreSQL's does; before this check, a view's query was bound in the
// missing database and failed on its first table instead.
func checkSchema(cat *catalog.Catalog, name catalog.ObjectName) error {
	if _, err := cat.Database(name.Database); err != nil {
		return sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", name.Database)
	}
	return nil
}
