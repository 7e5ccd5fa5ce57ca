package olap

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/scan"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// acquireInput returns the loaded table holding in.Table at in.Epoch,
// loading it if needed ([epoch-exact]).
func (e *Engine) acquireInput(ctx context.Context, in Input) (*entry, error) {
	if in.Table == nil {
		return nil, sqlerr.New(sqlerr.InvalidParameterValue, "input %s has no table", in.Name)
	}
	st := in.Table.Store()
	ce, err := in.Table.CommittedEpoch()
	if err != nil {
		return nil, storeError(fmt.Errorf("table %s: %w", in.Name, err))
	}
	if in.Epoch > ce {
		return nil, sqlerr.Wrap(sqlerr.ObjectNotInPrerequisiteState,
			fmt.Errorf("table %s: epoch %d is above its committed epoch %d: %w", in.Name, in.Epoch, ce, base.ErrOutOfRange))
	}
	sn, err := scan.AtEpoch(st, in.Epoch)
	if err != nil {
		return nil, storeError(fmt.Errorf("table %s at epoch %d: %w", in.Name, in.Epoch, err))
	}
	sc, err := in.Table.Schema()
	if err != nil {
		return nil, storeError(fmt.Errorf("table %s: %w", in.Name, err))
	}
	key := cacheKey{fs: fsKey(st.FS, st), dir: st.Dir, schema: sc.ID, schemaTime: sc.TimeMillis, columns: schemaColumns(sc)}
	if sn != nil {
		key.snapshot, key.snapTime = sn.ID, sn.TimeMillis
	}
	if local, ok := st.FS.(*fileio.Local); ok && sn != nil && parquetReadable(sc) && e.readsParquetIn(local.Path(st.Dir)) {
		return e.cache.acquire(ctx, key, func(name string) (int64, []duckColumn, error) {
			return e.viewFiles(ctx, in.Name, name, local, st, sn, sc)
		}, nil)
	}
	return e.cache.acquire(ctx, key, func(name string) (int64, []duckColumn, error) {
		if sn != nil && streamable(sc) {
			return e.loadFiles(ctx, in.Name, name, st, sn, sc)
		}
		var rows []types.Row
		if sn != nil {
			kvs, err := readKVs(ctx, st, sn, sc)
			if isContextErr(err) {
				return 0, nil, err
			}
			if err != nil {
				return 0, nil, storeError(fmt.Errorf("table %s at epoch %d: %w", in.Name, in.Epoch, err))
			}
			rows = make([]types.Row, len(kvs))
			for i := range kvs {
				rows[i] = kvs[i].Row
			}
		}
		cols, err := e.load(ctx, in.Name, name, sc, rows)
		return int64(len(rows)), cols, err
	}, func(from cacheKey, rows int64, cols []duckColumn, name string) (int64, error) {
		if sn == nil {
			return 0, errNoAdvance
		}
		return e.advance(ctx, in.Name, st, sc, sn, from, rows, cols, name)
	})
}

// advance brings DuckDB table strata_data.name, which holds the rows of
// relation tableName at snapshot from.snapshot (rows of them), forward to
// snapshot to by applying the table's changelog between them
// ([cache-advance]): for a primary-key table, every key the changelog
// touches is deleted and the key's last changelog row, if it is an insert
// or an update's new row, is appended; for an append table the new rows
// are appended. The changelog gives a key's value exactly when it is
// Paimon's lookup changelog (exact -U/+U) or, for the deduplicate merge
// engine, the input rows themselves (the last row of a key is its value);
// other tables, a snapshot that is gone, a changelog longer than half the
// table, or a table re-created under the same directory give errNoAdvance
// with the DuckDB table untouched.
func (e *Engine) advance(ctx context.Context, tableName string, st *store.Store, sc *schema.Schema, to *snapshot.Snapshot, from cacheKey, rows int64, cols []duckColumn, name string) (int64, error) {
	o, err := schema.ParseOptions(sc)
	if err != nil {
		return 0, errNoAdvance
	}
	keyed := sc.HasPrimaryKey()
	if keyed && o.ChangelogProducer != schema.ChangelogLookup &&
		(o.ChangelogProducer != schema.ChangelogInput || o.MergeEngine != schema.Deduplicate) {
		return 0, errNoAdvance
	}
	if latest, err := st.Schemas.Latest(); err != nil || latest.ID != sc.ID {
		return 0, errNoAdvance // the stream reads with the latest schema
	}
	if old, err := st.Snapshots.Get(from.snapshot); err != nil || old.TimeMillis != from.snapTime {
		return 0, errNoAdvance // expired, or another table's snapshot
	}
	for id := from.snapshot + 1; id <= to.ID; id++ {
		sn, err := st.Snapshots.Get(id)
		if err != nil {
			return 0, errNoAdvance
		}
		if keyed && sn.CommitKind == snapshot.Append && sn.ChangelogManifestList.IsZero() {
			return 0, errNoAdvance // no changelog written for this commit
		}
	}
	stream, err := scan.NewStream(st, scan.Position{Snapshot: from.snapshot + 1}, "")
	if err != nil {
		return 0, errNoAdvance
	}
	limit := rows/2 + 10_000
	var changes []scan.Change
	for stream.Position().Snapshot <= to.ID {
		b, ok, err := stream.Next()
		if err != nil {
			return 0, errNoAdvance
		}
		if !ok {
			if stream.Position().Snapshot > to.ID {
				break
			}
			return 0, errNoAdvance
		}
		if b.Snapshot > to.ID {
			break // compactions up to to were skipped; this is past it
		}
		changes = append(changes, b.Changes...)
		if int64(len(changes)) > limit {
			return 0, errNoAdvance // a full load is cheaper
		}
	}
	var upserts []types.Row
	var keys []types.Row
	if keyed {
		idx, kts := sc.KeyIndexes(), sc.KeyTypes()
		last := map[string]int{}
		var order []string
		var buf []byte
		for i, ch := range changes {
			buf = types.EncodeKey(buf[:0], ch.Row, idx, kts)
			if _, seen := last[string(buf)]; !seen {
				order = append(order, string(buf))
			}
			last[string(buf)] = i
		}
		for _, k := range order {
			ch := changes[last[k]]
			key := make(types.Row, len(idx))
			for j, c := range idx {
				key[j] = ch.Row[c]
			}
			keys = append(keys, key)
			if ch.Kind == types.Insert || ch.Kind == types.UpdateAfter {
				upserts = append(upserts, ch.Row)
			}
		}
	} else {
		for _, ch := range changes {
			if ch.Kind != types.Insert {
				return 0, errNoAdvance
			}
			upserts = append(upserts, ch.Row)
		}
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	deleted, err := deleteKeys(ctx, conn, name, sc, cols, keys)
	if err != nil {
		return 0, mapError(fmt.Errorf("table %s: deleting changed keys: %w", tableName, err))
	}
	if err := appendRows(ctx, conn, dataSchema, name, cols, upserts); err != nil {
		return 0, mapError(fmt.Errorf("table %s: appending changed rows: %w", tableName, err))
	}
	return rows - deleted + int64(len(upserts)), nil
}

// deleteKeys deletes from strata_data.name the rows whose primary key is
// one of keys (rows of the key columns, in key order) and returns how many
// it deleted. The keys go through a DuckDB table of their own.
func deleteKeys(ctx context.Context, conn *sql.Conn, name string, sc *schema.Schema, cols []duckColumn, keys []types.Row) (int64, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	idx := sc.KeyIndexes()
	kcols := make([]duckColumn, len(idx))
	var on []string
	for j, c := range idx {
		kcols[j] = cols[c]
		// Key columns may hold NULL (views keyed by all their columns,
		// schema.OptionNullableKey): NULL must match NULL.
		on = append(on, "t."+quoteIdent(cols[c].name)+" IS NOT DISTINCT FROM d."+quoteIdent(cols[c].name))
	}
	dname := name + "_keys"
	qd := dataSchema + "." + quoteIdent(dname)
	if _, err := conn.ExecContext(ctx, "DROP TABLE IF EXISTS "+qd); err != nil {
		return 0, err
	}
	if _, err := conn.ExecContext(ctx, createSQL(qd, kcols)); err != nil {
		return 0, err
	}
	defer conn.ExecContext(context.Background(), "DROP TABLE IF EXISTS "+qd)
	if err := appendRows(ctx, conn, dataSchema, dname, kcols, keys); err != nil {
		return 0, err
	}
	res, err := conn.ExecContext(ctx, "DELETE FROM "+dataSchema+"."+quoteIdent(name)+" AS t USING "+qd+" AS d WHERE "+strings.Join(on, " AND "))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// storeError classifies an error of the table store: corruption is XX001,
// a missing file 42704 (sqlerr.Code's reading of the base markers), any
// other failure 58030 io_error.
func storeError(err error) error {
	code := sqlerr.Code(err)
	if code == sqlerr.InternalError {
		code = sqlerr.IOError
	}
	return sqlerr.Wrap(code, err)
}

// load creates DuckDB table strata_data.name for schema sc and appends rows.
func (e *Engine) load(ctx context.Context, tableName, name string, sc *schema.Schema, rows []types.Row) ([]duckColumn, error) {
	cols, err := duckColumns(tableName, sc, rows)
	if err != nil {
		return nil, err
	}
	if _, err := e.db.ExecContext(ctx, createSQL(dataSchema+"."+quoteIdent(name), cols)); err != nil {
		return nil, mapError(fmt.Errorf("table %s: %w", tableName, err))
	}
	// Large tables load in parallel parts, one appender and connection
	// each: the appender converts values on the calling goroutine, so one
	// appender keeps one core busy.
	parts := min(runtime.GOMAXPROCS(0), len(rows)/loadPartRows+1)
	errs := make([]error, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := len(rows)*p/parts, len(rows)*(p+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			conn, err := e.db.Conn(ctx)
			if err != nil {
				errs[p] = err
				return
			}
			defer conn.Close()
			errs[p] = appendRows(ctx, conn, dataSchema, name, cols, rows[lo:hi])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		e.dropTable(name)
		return nil, mapError(fmt.Errorf("table %s: loading: %w", tableName, err))
	}
	return cols, nil
}

// loadPartRows is the number of rows below which a load uses one appender.
const loadPartRows = 200_000

// streamable reports whether a table's snapshot can be loaded file by
// file: an append table (its rows are the union of its live files, with
// no merge) whose NUMERIC columns all have a declared precision (an
// unconstrained one needs every value first to choose the DECIMAL width).
func streamable(sc *schema.Schema) bool {
	if sc.HasPrimaryKey() {
		return false
	}
	for _, f := range sc.Fields {
		if f.Type.Kind == types.KindNumeric && (f.Type.Precision <= 0 || f.Type.Precision > maxDecimalWidth) {
			return false
		}
	}
	return true
}

// appendFiles returns the DuckDB columns of an append table of schema sc
// and the data files of its snapshot sn: what loadFiles and viewFiles
// start from.
func appendFiles(tableName string, st *store.Store, sn *snapshot.Snapshot, sc *schema.Schema) ([]duckColumn, []manifest.Entry, error) {
	cols, err := duckColumns(tableName, sc, nil)
	if err != nil {
		return nil, nil, err
	}
	live, err := st.LiveFiles(sn)
	if err != nil {
		return nil, nil, storeError(fmt.Errorf("table %s: %w", tableName, err))
	}
	return cols, live, nil
}

// loadFiles loads an append table's snapshot sn into DuckDB table
// strata_data.name one data file at a time, up to GOMAXPROCS files at
// once, each through its own appender, so that memory holds a few
// decoded files rather than the whole table.
func (e *Engine) loadFiles(ctx context.Context, tableName, name string, st *store.Store, sn *snapshot.Snapshot, sc *schema.Schema) (int64, []duckColumn, error) {
	cols, live, err := appendFiles(tableName, st, sn, sc)
	if err != nil {
		return 0, nil, err
	}
	if _, err := e.db.ExecContext(ctx, createSQL(dataSchema+"."+quoteIdent(name), cols)); err != nil {
		return 0, nil, mapError(fmt.Errorf("table %s: %w", tableName, err))
	}
	var total atomic.Int64
	err = eachFile(ctx, live, func(entry manifest.Entry) error {
		kvs, err := st.ReadFile(entry.Bucket, entry.File, sc)
		if err != nil {
			return storeError(fmt.Errorf("table %s at snapshot %d: %w", tableName, sn.ID, err))
		}
		rows := make([]types.Row, len(kvs))
		for i := range kvs {
			rows[i] = kvs[i].Row
		}
		conn, err := e.db.Conn(ctx)
		if err != nil {
			return err
		}
		defer conn.Close()
		if err := appendRows(ctx, conn, dataSchema, name, cols, rows); err != nil {
			return mapError(fmt.Errorf("table %s: loading: %w", tableName, err))
		}
		total.Add(int64(len(rows)))
		return nil
	})
	if err != nil {
		e.dropTable(name)
		return 0, nil, err
	}
	return total.Load(), cols, nil
}

// readsParquetIn reports whether DuckDB may read files under dir
// (Options.ParquetDirs).
func (e *Engine) readsParquetIn(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for _, d := range e.parquetDirs {
		if rel, err := filepath.Rel(d, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return true
		}
	}
	return false
}

// parquetReadable reports whether DuckDB can read a table's data files
// itself and give exactly the rows a load would ([append-parquet]): an
// append table (no merge) whose columns all have a Parquet type DuckDB
// reads as the loaded type, NUMERIC only with a declared precision
// (stored as its decimal text, cast back exactly) and no INTERVAL (stored
// in a 16-byte layout of Strata's own).
func parquetReadable(sc *schema.Schema) bool {
	if sc.HasPrimaryKey() {
		return false
	}
	for _, f := range sc.Fields {
		switch f.Type.Kind {
		case types.KindBool, types.KindInt16, types.KindInt32, types.KindInt64, types.KindFloat32, types.KindFloat64,
			types.KindChar, types.KindVarchar, types.KindText, types.KindUUID, types.KindBytea,
			types.KindDate, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		case types.KindNumeric:
			if f.Type.Precision <= 0 || f.Type.Precision > maxDecimalWidth {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// viewFiles makes strata_data.name a DuckDB view over the Parquet data
// files of append table tableName at snapshot sn, read by DuckDB's own
// parallel Parquet reader rather than decoded and appended row by row
// ([append-parquet]). Each file's size and CRC32C are checked against its
// manifest entry first, as every read of the store does. A file written
// with an older schema (before a column was added) makes it load the
// table instead. It returns the rows it holds in memory: none for a view.
func (e *Engine) viewFiles(ctx context.Context, tableName, name string, local *fileio.Local, st *store.Store, sn *snapshot.Snapshot, sc *schema.Schema) (int64, []duckColumn, error) {
	cols, live, err := appendFiles(tableName, st, sn, sc)
	if err != nil {
		return 0, nil, err
	}
	paths := make([]string, len(live))
	for i, en := range live {
		if en.File.SchemaID != int64(sc.ID) {
			return e.loadFiles(ctx, tableName, name, st, sn, sc)
		}
		if paths[i], err = filepath.Abs(local.Path(st.DataPath(en.Bucket, en.File.Name))); err != nil {
			return 0, nil, storeError(fmt.Errorf("table %s: %w", tableName, err))
		}
	}
	if err := checkFiles(ctx, st, live); err != nil {
		return 0, nil, storeError(fmt.Errorf("table %s at snapshot %d: %w", tableName, sn.ID, err))
	}
	qualified := dataSchema + "." + quoteIdent(name)
	if len(paths) == 0 {
		if _, err := e.db.ExecContext(ctx, createSQL(qualified, cols)); err != nil {
			return 0, nil, mapError(fmt.Errorf("table %s: %w", tableName, err))
		}
		return 0, cols, nil
	}
	var b strings.Builder
	b.WriteString("CREATE VIEW " + qualified + " AS SELECT ")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(parquetColumn(c) + " AS " + quoteIdent(c.name))
	}
	b.WriteString(" FROM read_parquet([")
	for i, p := range paths {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteString(p))
	}
	b.WriteString("])")
	if _, err := e.db.ExecContext(ctx, b.String()); err != nil {
		return 0, nil, mapError(fmt.Errorf("table %s: %w", tableName, err))
	}
	e.views.Store(name, true)
	return 0, cols, nil
}

// parquetColumn is the expression that reads column c from a data file as
// its loaded DuckDB type (a cast: NUMERIC from its decimal text, TIME
// from Parquet's UTC-adjusted TIME); -infinity, which
// Strata stores as the smallest int64 (int32 for DATE) and DuckDB as one
// above it (so Strata's compares below DuckDB's), mapped to DuckDB's.
func parquetColumn(c duckColumn) string {
	q := "CAST(" + quoteIdent(c.name) + " AS " + c.duck + ")"
	switch c.typ.Kind {
	case types.KindTimestamp, types.KindTimestampTZ, types.KindDate:
		inf := "'-infinity'::" + c.duck
		return "CASE WHEN " + q + " < " + inf + " THEN " + inf + " ELSE " + q + " END"
	}
	return q
}

// checkFiles reads every file of live and checks its size and checksum,
// up to GOMAXPROCS files at once.
func checkFiles(ctx context.Context, st *store.Store, live []manifest.Entry) error {
	return eachFile(ctx, live, func(en manifest.Entry) error {
		_, err := fileio.ReadChecked(st.FS, st.DataPath(en.Bucket, en.File.Name), en.File.Size, uint32(en.File.CRC))
		return err
	})
}

// eachFile calls fn for every file of live, up to GOMAXPROCS at once, and
// returns ctx's error if it ended, else the errors of fn joined. It starts
// no call after ctx ends.
func eachFile(ctx context.Context, live []manifest.Entry, fn func(manifest.Entry) error) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, en := range live {
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(en); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return errors.Join(errs...)
}

// readKVs is scan.ReadKVs (the merge on read of a whole snapshot), given up
// as soon as ctx ends: the read takes no context, so a canceled query
// (a cancel request, statement_timeout) returns at once and the read,
// left running, finishes on its own and is dropped.
func readKVs(ctx context.Context, st *store.Store, sn *snapshot.Snapshot, sc *schema.Schema) ([]record.KV, error) {
	type result struct {
		kvs []record.KV
		err error
	}
	done := make(chan result, 1) // never blocks the read
	go func() {
		kvs, err := scan.ReadKVs(st, sn, sc)
		done <- result{kvs, err}
	}()
	select {
	case r := <-done:
		return r.kvs, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
