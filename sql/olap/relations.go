package olap

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/schema"
)

// Relation is a relation a query reads given by value rather than as a
// table to read at an epoch ([relations] in doc.go): the query server's
// system tables (strata_catalog.tables), whose rows it computes itself.
type Relation struct {
	// Name is the relation as the SQL names it ("strata_catalog.tables"),
	// bound as an Input's name is.
	Name string
	// Columns are its columns' names and types, in order.
	Columns []Column
	// Rows are its rows, each with one datum per column.
	Rows []types.Row
}

// relationSeq numbers the DuckDB tables that hold relations.
var relationSeq atomic.Uint64

// QueryRelations runs sqlText, one SELECT in PostgreSQL syntax, over
// relations given by value, as Query runs one over tables: each relation
// is loaded into a DuckDB table of its own for this query only (it is
// not cached) and dropped when the query ends. Errors are *sqlerr.Error
// values.
func (e *Engine) QueryRelations(ctx context.Context, rels []Relation, sqlText string, opts QueryOptions) (*Result, error) {
	return queryWith(ctx, sqlText, opts, func(sqlText string, fn connFunc) error {
		return e.withRelations(ctx, rels, sqlText, opts.Location, fn)
	})
}

// DescribeRelations prepares sqlText over rels without running it, as
// Describe does over tables.
func (e *Engine) DescribeRelations(ctx context.Context, rels []Relation, sqlText string) ([]Column, []types.Type, error) {
	return describeWith(ctx, func(fn connFunc) error { return e.withRelations(ctx, rels, sqlText, nil, fn) })
}

// withRelations loads rels into DuckDB tables of their own, binds their
// names as withInputs binds inputs' and calls fn; then it drops the
// tables.
func (e *Engine) withRelations(ctx context.Context, rels []Relation, sqlText string, loc *time.Location, fn func(conn *sql.Conn, rewritten string) error) error {
	inputs := make([]Input, len(rels))
	for i, r := range rels {
		inputs[i] = Input{Name: r.Name}
	}
	bindings, rewritten, err := rewriteQuery(inputs, sqlText)
	if err != nil {
		return err
	}
	entries := make([]*entry, len(rels))
	defer func() {
		for _, en := range entries {
			if en != nil {
				e.dropTable(en.name)
			}
		}
	}()
	for i, r := range rels {
		fields := make([]schema.Field, len(r.Columns))
		for j, c := range r.Columns {
			fields[j] = schema.Field{ID: j, Name: c.Name, Type: c.Type, Nullable: true}
		}
		sc := &schema.Schema{Version: schema.FormatVersion, Fields: fields}
		name := fmt.Sprintf("rel%d", relationSeq.Add(1))
		cols, err := e.load(ctx, r.Name, name, sc, r.Rows)
		if err != nil {
			e.dropTable(name)
			return err
		}
		entries[i] = &entry{name: name, cols: cols, rows: int64(len(r.Rows))}
	}
	return e.onConn(ctx, inputs, bindings, entries, rewritten, loc, fn)
}
