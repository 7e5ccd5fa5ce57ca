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
