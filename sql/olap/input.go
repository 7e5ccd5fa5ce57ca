package olap

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
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
	key := cacheKey{fs: fsKey(st.FS, st), dir: st.Dir, schema: sc.ID}
	if sn != nil {
		key.snapshot, key.snapTime = sn.ID, sn.TimeMillis
	}
	return e.cache.acquire(ctx, key, func(name string) (int64, []duckColumn, error) {
		if sn != nil && streamable(sc) {
			return e.loadFiles(ctx, in.Name, name, st, sn, sc)
		}
		var rows []types.Row
		if sn != nil {
			kvs, err := scan.ReadKVs(st, sn, sc)
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
	})
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

// loadFiles loads an append table's snapshot sn into DuckDB table
// strata_data.name one data file at a time, up to GOMAXPROCS files at
// once, each through its own appender, so that memory holds a few
// decoded files rather than the whole table.
func (e *Engine) loadFiles(ctx context.Context, tableName, name string, st *store.Store, sn *snapshot.Snapshot, sc *schema.Schema) (int64, []duckColumn, error) {
	cols, err := duckColumns(tableName, sc, nil)
	if err != nil {
		return 0, nil, err
	}
	live, err := st.LiveFiles(sn)
	if err != nil {
		return 0, nil, storeError(fmt.Errorf("table %s: %w", tableName, err))
	}
	if _, err := e.db.ExecContext(ctx, createSQL(dataSchema+"."+quoteIdent(name), cols)); err != nil {
		return 0, nil, mapError(fmt.Errorf("table %s: %w", tableName, err))
	}
	var (
		mu    sync.Mutex
		total int64
		errs  []error
		wg    sync.WaitGroup
	)
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, entry := range live {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			err := func() error {
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
				mu.Lock()
				total += int64(len(rows))
				mu.Unlock()
				return nil
			}()
			if err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		e.dropTable(name)
		return 0, nil, err
	}
	return total, cols, nil
}
