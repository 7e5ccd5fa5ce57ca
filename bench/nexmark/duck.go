package nexmark

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	gen "github.com/stratadb/strata/connector/nexmark"
	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// duckSide is DuckDB over Parquet files of the run's events: one file per
// Nexmark table, read through views named person, auction and bid, and
// the side input's CSV as side_input.
type duckSide struct {
	db *duckdb.DB
}

// openDuckSide writes the events of cfg to DIR/person.parquet,
// auction.parquet and bid.parquet and opens DuckDB with views over them.
func openDuckSide(dir string, cfg gen.Config, sideInput string) (*duckSide, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("nexmark bench: parquet directory %s: %w", dir, err)
	}
	db, err := duckdb.Open("")
	if err != nil {
		return nil, err
	}
	for _, t := range []gen.Table{gen.Person, gen.Auction, gen.Bid} {
		path := filepath.Join(dir, string(t)+".parquet")
		if err := WriteParquet(path, t, cfg); err != nil {
			return nil, errors.Join(err, db.Close())
		}
		q := fmt.Sprintf("CREATE VIEW %s AS SELECT %s FROM read_parquet('%s')", t, columnList(t), strings.ReplaceAll(path, "'", "''"))
		if err := db.Exec(context.Background(), q); err != nil {
			return nil, errors.Join(err, db.Close())
		}
	}
	q := fmt.Sprintf("CREATE VIEW side_input AS SELECT * FROM read_csv('%s', header = false, columns = {'key': 'BIGINT', 'value': 'VARCHAR'})",
		strings.ReplaceAll(sideInput, "'", "''"))
	if err := db.Exec(context.Background(), q); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return &duckSide{db: db}, nil
}

func (d *duckSide) close() error { return d.db.Close() }

// columnList is t's columns in table order, for a SELECT over its Parquet
// file (whose columns are in name order).
func columnList(t gen.Table) string {
	cols := t.Schema().Columns
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	return strings.Join(names, ", ")
}

// WriteParquet writes the rows of Nexmark table t over cfg (which must be
// bounded: Events > 0) to a Parquet file at path, written aside and
// renamed in. Columns keep the table's names, in name order (a Parquet
// group of parquet-go orders its fields so); BIGINT is INT64,
// VARCHAR is a UTF-8 BYTE_ARRAY and TIMESTAMP(3) a microsecond TIMESTAMP
// not adjusted to UTC, which DuckDB reads as TIMESTAMP.
func WriteParquet(path string, t gen.Table, cfg gen.Config) error {
	if cfg.Events == 0 {
		return fmt.Errorf("nexmark bench: parquet of an unbounded event sequence")
	}
	sc := t.Schema()
	group := parquet.Group{}
	for _, c := range sc.Columns {
		switch c.Type.Kind {
		case types.KindInt64:
			group[c.Name] = parquet.Int(64)
		case types.KindVarchar:
			group[c.Name] = parquet.String()
		case types.KindTimestamp:
			group[c.Name] = parquet.TimestampAdjusted(parquet.Microsecond, false)
		default:
			return fmt.Errorf("nexmark bench: table %s column %s: type %s has no Parquet mapping", t, c.Name, c.Type)
		}
	}
	schema := parquet.NewSchema(string(t), group)
	// A Group orders its fields by name; find each column's leaf index.
	leaf := make([]int, len(sc.Columns))
	for i, c := range sc.Columns {
		leaf[i] = -1
		for j, f := range schema.Fields() {
			if f.Name() == c.Name {
				leaf[i] = j
			}
		}
	}
	rd, err := gen.NewReader(t, cfg)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("nexmark bench: %s: %w", path, err)
	}
	defer os.Remove(tmp)
	w := parquet.NewWriter(f, schema)
	var pos uint64
	rows := make([]parquet.Row, 0, types.DefaultChunkSize)
	for {
		c, next, err := rd.Next(pos)
		if err != nil {
			f.Close()
			return err
		}
		if c == nil {
			break
		}
		pos = next
		rows = rows[:0]
		for r := range c.Len() {
			row := make(parquet.Row, len(sc.Columns))
			for i, col := range c.Cols {
				var v parquet.Value
				if sc.Columns[i].Type.Kind == types.KindVarchar {
					v = parquet.ByteArrayValue([]byte(col.Strs[r]))
				} else {
					v = parquet.Int64Value(col.Ints[r])
				}
				row[leaf[i]] = v.Level(0, 0, leaf[i])
			}
			rows = append(rows, row)
		}
		if _, err := w.WriteRows(rows); err != nil {
			f.Close()
			return fmt.Errorf("nexmark bench: %s: %w", path, err)
		}
	}
	if err := errors.Join(w.Close(), f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("nexmark bench: %s: %w", path, err)
	}
	return os.Rename(tmp, path)
}

// loadProcTime writes the (bidder, p_time) rows that bid of engine e
// stores at epoch at to a Parquet file at path and makes it DuckDB's
// bid_proctime (q12's input: the processing-time stamps exist only in the
// table). p_time is a microsecond TIMESTAMP adjusted to UTC, which DuckDB
// reads as TIMESTAMPTZ.
func (d *duckSide) loadProcTime(ctx context.Context, e *engine.Engine, path string, at base.Epoch) error {
	cols, rows, _, err := e.ReadAt(ctx, catalog.Name(engine.DefaultDatabase, string(gen.Bid)), at)
	if err != nil {
		return fmt.Errorf("nexmark bench: bid at epoch %d: %w", at, err)
	}
	bidder, ptime := slices.Index(cols, "bidder"), slices.Index(cols, "p_time")
	if bidder < 0 || ptime < 0 {
		return fmt.Errorf("nexmark bench: bid has columns %v, want bidder and p_time", cols)
	}
	schema := parquet.NewSchema("bid_proctime", parquet.Group{
		"bidder": parquet.Int(64),
		"p_time": parquet.TimestampAdjusted(parquet.Microsecond, true),
	})
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("nexmark bench: %s: %w", path, err)
	}
	defer os.Remove(tmp)
	w := parquet.NewWriter(f, schema)
	out := make([]parquet.Row, 0, len(rows))
	for _, r := range rows {
		// Leaves in name order: bidder 0, p_time 1.
		out = append(out, parquet.Row{
			parquet.Int64Value(r[bidder].Int64()).Level(0, 0, 0),
			parquet.Int64Value(r[ptime].Micros()).Level(0, 0, 1),
		})
	}
	if _, err := w.WriteRows(out); err != nil {
		f.Close()
		return fmt.Errorf("nexmark bench: %s: %w", path, err)
	}
	if err := errors.Join(w.Close(), f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("nexmark bench: %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("nexmark bench: %s: %w", path, err)
	}
	q := fmt.Sprintf("CREATE OR REPLACE VIEW bid_proctime AS SELECT bidder, p_time FROM read_parquet('%s')", strings.ReplaceAll(path, "'", "''"))
	return d.db.Exec(ctx, q)
}

// compare runs q's batch form in DuckDB, timing the query materialized
// into a DuckDB table (CREATE TABLE AS, so that the time is DuckDB's work
// and not the conversion of its rows to Go values), then compares the rows
// with the view's. DuckDB's columns are matched to the view's by name
// (the stored view need not keep the SELECT's column order).
func (r *Runner) compare(ctx context.Context, q Query, viewCols []string, view []types.Row, res *Result) {
	db := r.duck.db
	name := "result_" + q.Name
	if err := db.Exec(ctx, "DROP TABLE IF EXISTS "+name); err != nil {
		res.Status, res.Error = StatusFailed, err.Error()
		return
	}
	start := time.Now()
	if err := db.Exec(ctx, "CREATE TABLE "+name+" AS "+q.DuckDB); err != nil {
		res.Status, res.Error = StatusFailed, fmt.Sprintf("duckdb: %v", err)
		return
	}
	res.DuckDBSeconds = time.Since(start).Seconds()
	if res.DuckDBSeconds > 0 {
		res.StrataOverDuckDB = res.Seconds / res.DuckDBSeconds
	}
	quoted := make([]string, len(viewCols))
	for i, c := range viewCols {
		quoted[i] = `"` + strings.ReplaceAll(c, `"`, `""`) + `"`
	}
	_, want, err := db.Query(ctx, "SELECT "+strings.Join(quoted, ", ")+" FROM "+name)
	if err != nil {
		res.Status, res.Error = StatusFailed, fmt.Sprintf("duckdb: %v", err)
		return
	}
	if err := db.Exec(ctx, "DROP TABLE "+name); err != nil {
		res.Status, res.Error = StatusFailed, err.Error()
		return
	}
	res.DuckDBRows = len(want)
	res.Missing, res.Extra, res.Diff = diffRows(want, view)
	eq := res.Missing == 0 && res.Extra == 0
	res.EqualToDuckDB = &eq
	if !eq {
		res.Status = StatusMismatch
	}
	fmt.Fprintf(r.cfg.Progress, "%s: DuckDB %.3f s, %d rows, equal: %v\n", q.Name, res.DuckDBSeconds, res.DuckDBRows, eq)
}
