package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/olap"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// olapEngine returns the instance's embedded DuckDB engine, opening it on
// first use.
func (e *Engine) olapEngine() (*olap.Engine, error) {
	e.olapOnce.Do(func() {
		// A bounded cache: a table that changes every epoch is loaded
		// again for each new snapshot, and old loads must not pile up.
		opts := olap.Options{CacheTables: 8, CacheRows: 2 << 20}
		if local, ok := e.fs.(*fileio.Local); ok {
			// DuckDB reads append tables straight from their Parquet files.
			if root, err := filepath.Abs(local.Path(".")); err == nil {
				opts.ParquetDirs = []string{root}
			}
		}
		e.olap, e.olapErr = olap.Open(opts)
	})
	return e.olap, e.olapErr
}

// OLAPQuery is a SELECT run by the embedded OLAP engine (DuckDB) over
// tables and views read at one version: the full SQL of a query engine
// (joins, aggregates, window functions, CTEs, subqueries) where the
// built-in batch executor has less.
type OLAPQuery struct {
	// Tables are the catalog objects the query reads.
	Tables []catalog.ObjectName
	olap   *olap.Engine
	names  []string
	// multiset[i] tells whether Tables[i] is a multiset view.
	multiset []bool
}

// PlanOLAP finds the tables text reads (as DuckDB's parser sees its FROM
// clauses) and resolves them in database db. ok is false when the query
// reads no table of the catalog and calls no generate_series in FROM, or
// when it reads a system table: the batch executor answers those. A
// series runs on DuckDB, which streams it through the query in bounded
// memory and stops when the statement is canceled; the batch executor
// would hold all of its rows (and of a join over it) at once.
func (e *Engine) PlanOLAP(ctx context.Context, db, text string) (q *OLAPQuery, ok bool, err error) {
	oe, err := e.olapEngine()
	if err != nil {
		return nil, false, err
	}
	names, funcs, err := oe.References(ctx, text)
	if err != nil {
		return nil, false, err
	}
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return nil, false, err
	}
	q = &OLAPQuery{olap: oe}
	rels := &relations{cat: cat, db: db}
	for _, n := range names {
		if strings.HasPrefix(n, SystemSchema+".") {
			return nil, false, nil
		}
		on := rels.objectName(n)
		t, err := cat.Table(on)
		if err != nil {
			if cat.IsSource(on) {
				return nil, false, sourceNotStored(n)
			}
			return nil, false, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", n)
		}
		q.Tables = append(q.Tables, on)
		q.names = append(q.names, n)
		q.multiset = append(q.multiset, multisetColumn(t) != "")
	}
	return q, len(q.Tables) > 0 || slices.Contains(funcs, "generate_series"), nil
}

// inputs names every table for DuckDB at its epoch.
func (e *Engine) olapInputs(q *OLAPQuery, epochs map[catalog.ObjectName]base.Epoch) ([]olap.Input, error) {
	var in []olap.Input
	for i, n := range q.Tables {
		t, err := e.Table(n)
		if err != nil {
			return nil, err
		}
		in = append(in, olap.Input{Name: q.names[i], Table: t, Epoch: epochs[n], Multiset: q.multiset[i]})
	}
	return in, nil
}

// Describe returns the result columns and parameter types of q, with every
// table at its committed epoch.
func (e *Engine) DescribeOLAP(ctx context.Context, q *OLAPQuery, text string) ([]olap.Column, []types.Type, error) {
	epochs := map[catalog.ObjectName]base.Epoch{}
	for _, n := range q.Tables {
		t, err := e.Table(n)
		if err != nil {
			return nil, nil, err
		}
		if epochs[n], err = t.CommittedEpoch(); err != nil {
			return nil, nil, err
		}
	}
	in, err := e.olapInputs(q, epochs)
	if err != nil {
		return nil, nil, err
	}
	return q.olap.Describe(ctx, in, text)
}

// RunOLAP runs q (its text) over its tables read at one version chosen by
// spec, with parameter values params, and returns the result and the
// epochs read. A consistent version is pinned while the query runs.
func (e *Engine) RunOLAP(ctx context.Context, q *OLAPQuery, text string, spec ReadSpec, loc *time.Location, params []types.Datum) (*olap.Result, map[catalog.ObjectName]base.Epoch, error) {
	epochs := map[catalog.ObjectName]base.Epoch{}
	switch {
	case spec.AtEpoch != nil:
		for _, n := range q.Tables {
			t, err := e.Table(n)
			if err != nil {
				return nil, nil, err
			}
			c, err := t.CommittedEpoch()
			if err != nil {
				return nil, nil, err
			}
			if c < *spec.AtEpoch {
				return nil, nil, sqlerr.New(sqlerr.ObjectNotInPrerequisiteState, "relation %q has committed epoch %d, not yet %d", n.Name, c, *spec.AtEpoch)
			}
			epochs[n] = *spec.AtEpoch
		}
	case len(q.Tables) == 0:
		// Nothing to read at a version: a query over generate_series.
	default:
		if spec.After != 0 {
			for _, n := range q.Tables {
				if err := e.waitCommitted(ctx, n, spec.After); err != nil {
					return nil, nil, fmt.Errorf("waiting for %s to commit epoch %d, which holds this session's last write: %w", n.Name, spec.After, err)
				}
			}
		}
		v, err := e.meta.AcquireVersion(ctx, meta.VersionRequest{Tables: q.Tables, Mode: spec.Mode, Holder: "query"})
		if err != nil {
			return nil, nil, sqlerr.Wrap(sqlerr.SerializationFailure, err)
		}
		defer func() { _ = e.meta.ReleasePin(context.WithoutCancel(ctx), v.Pin) }()
		epochs = v.Epochs
	}
	in, err := e.olapInputs(q, epochs)
	if err != nil {
		return nil, nil, err
	}
	res, err := q.olap.Query(ctx, in, text, olap.QueryOptions{Location: loc, Params: params})
	if err != nil {
		return nil, nil, err
	}
	return res, epochs, nil
}

// KeyMayBeNull reports whether a column of table t's key may hold NULL: a
// view's key derived from nullable columns (a FULL JOIN's, a GROUP BY key
// with NULLs), stored with the table store's nullable-key option, where
// NULL keys form one group. Such a key is unique but not a primary key.
func KeyMayBeNull(t catalog.Table) bool { return t.Options[schema.OptionNullableKey] == "true" }

// CatalogObjects describes every table and view of database db for the
// emulated pg_catalog (psql's \dt and \d).
func (e *Engine) CatalogObjects(ctx context.Context, db string) ([]olap.TableInfo, error) {
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		return nil, err
	}
	var out []olap.TableInfo
	for _, t := range cat.Tables() {
		if t.Name.Database != db {
			continue
		}
		ti := olap.TableInfo{Name: t.Name.Name, Kind: olap.KindTable, PrimaryKey: t.PrimaryKey, Database: db}
		if t.Options[OptionMultiset] != "" {
			// Keyed by all its columns only to store copies with a
			// count: its rows may repeat, it has no unique key to show.
			ti.PrimaryKey = nil
		}
		if t.Kind == catalog.KindView {
			ti.Kind, ti.ViewDef = olap.KindMaterializedView, t.Query
			ti.NullableKey = KeyMayBeNull(t)
		}
		for _, c := range t.Columns {
			ti.Columns = append(ti.Columns, olap.ColumnInfo{Name: c.Name, Type: c.Type, NotNull: c.NotNull})
		}
		out = append(out, ti)
	}
	return append(out, sourceObjects(cat, db)...), nil
}

// CatalogQuery answers a query on pg_catalog or information_schema over
// database db's objects.
func (e *Engine) CatalogQuery(ctx context.Context, db, text string) (*olap.Result, error) {
	oe, err := e.olapEngine()
	if err != nil {
		return nil, err
	}
	objs, err := e.CatalogObjects(ctx, db)
	if err != nil {
		return nil, err
	}
	if strings.Contains(strings.ToLower(text), "_size(") {
		// pg_table_size, pg_total_relation_size, pg_relation_size (psql's
		// \dt+): the data files of each table's latest snapshot.
		for i := range objs {
			if objs[i].Kind == olap.KindTable || objs[i].Kind == olap.KindMaterializedView {
				objs[i].SizeBytes = e.dataBytes(catalog.Name(db, objs[i].Name))
			}
		}
	}
	return oe.CatalogQuery(ctx, objs, text)
}

// dataBytes returns the bytes of the data files live in table name's
// latest snapshot (its manifests are cached once read); 0 when it has
// none or cannot be read, as a size is only shown.
func (e *Engine) dataBytes(name catalog.ObjectName) int64 {
	t, err := e.Table(name)
	if err != nil {
		return 0
	}
	sn, err := t.Latest()
	if err != nil || sn == nil {
		return 0
	}
	live, err := t.Store().LiveFiles(sn)
	if err != nil {
		return 0
	}
	var n int64
	for _, f := range live {
		n += f.File.Size
	}
	return n
}

// BeyondOLAP reports whether err is DuckDB refusing values it cannot hold
// (NUMERIC NaN or infinities, more than 38 digits, a sum overflowing its
// 128-bit integers): the batch executor, exact over NUMERIC, can answer
// such a query instead.
func BeyondOLAP(err error) bool { return olap.BeyondEngine(err) }
