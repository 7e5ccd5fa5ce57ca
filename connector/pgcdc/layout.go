package pgcdc

import (
	"fmt"
	"slices"
	"strings"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// Table is one upstream table of a source and the Strata table it feeds
// (CREATE TABLE name (...) FROM source TABLE 'schema.table').
type Table struct {
	// Upstream is the Postgres table, "schema.table" or "table" (schema
	// public); both parts are taken as written (case-sensitive, unquoted).
	Upstream string
	// Name is the Strata table's name, for messages.
	Name string
	// Columns are the Strata table's columns; each must exist upstream
	// under the same name. Upstream columns not listed are not read.
	Columns []catalog.Column
	// PrimaryKey is the Strata table's primary key, or empty. A table
	// whose upstream replica identity is its key (REPLICA IDENTITY
	// DEFAULT or USING INDEX) yields an upsert changelog and needs a
	// primary key made of the identity's columns (doc.go, Row kinds).
	PrimaryKey []string
	// Errors is what the source does with a row image of this table
	// whose value does not fit its column (doc.go, Bad values): the
	// table's errors option, shared with whoever counts its skipped rows.
	// Nil is fail mode: the table is quarantined (doc.go, Quarantine).
	Errors *format.Errors
}

// schemaTable splits Upstream into schema and table.
func (t Table) schemaTable() (string, string) {
	if s, tb, ok := strings.Cut(t.Upstream, "."); ok {
		return s, tb
	}
	return "public", t.Upstream
}

// qualified returns the upstream table as a quoted SQL name.
func (t Table) qualified() string {
	s, tb := t.schemaTable()
	return quoteIdent(s) + "." + quoteIdent(tb)
}

func quoteIdent(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }

// TagType is the type of the tag column.
var TagType = types.Int32

// Layout is the shape of the chunks a Stream emits (doc.go, The union
// layout): column 0 is the tag, the index of the row's table in the
// source's table list (INTEGER, never NULL), followed by the columns of
// every table in list order. A row fills its own table's columns and
// leaves the others NULL.
type Layout struct {
	tables  []Table
	offsets []int // offsets[i]: first column of table i
	types   []types.Type
}

// NewLayout checks tables and returns their layout. Errors wrap
// base.ErrInvalidArgument and name the table: none at all, an upstream
// table listed twice, a table without columns, a repeated column, a
// primary-key column that is not a column.
func NewLayout(tables []Table) (*Layout, error) {
	if len(tables) == 0 {
		return nil, fmt.Errorf("postgres-cdc: a source needs at least one table: %w", base.ErrInvalidArgument)
	}
	l := &Layout{tables: slices.Clone(tables), types: []types.Type{TagType}}
	seen := map[string]bool{}
	for _, t := range tables {
		s, tb := t.schemaTable()
		if s == "" || tb == "" {
			return nil, fmt.Errorf("postgres-cdc: upstream table %q is not schema.table: %w", t.Upstream, base.ErrInvalidArgument)
		}
		key := s + "." + tb
		if seen[key] {
			return nil, fmt.Errorf("postgres-cdc: upstream table %s is listed twice: %w", key, base.ErrInvalidArgument)
		}
		seen[key] = true
		if len(t.Columns) == 0 {
			return nil, fmt.Errorf("postgres-cdc: table %s has no columns: %w", t.Name, base.ErrInvalidArgument)
		}
		cols := map[string]bool{}
		for _, c := range t.Columns {
			if cols[c.Name] {
				return nil, fmt.Errorf("postgres-cdc: table %s: column %s is listed twice: %w", t.Name, c.Name, base.ErrInvalidArgument)
			}
			cols[c.Name] = true
		}
		for _, k := range t.PrimaryKey {
			if !cols[k] {
				return nil, fmt.Errorf("postgres-cdc: table %s: primary-key column %s is not a column: %w", t.Name, k, base.ErrInvalidArgument)
			}
		}
		l.offsets = append(l.offsets, len(l.types))
		for _, c := range t.Columns {
			l.types = append(l.types, c.Type)
		}
	}
	return l, nil
}

// Types returns the column types of the union layout (tag first).
func (l *Layout) Types() []types.Type { return slices.Clone(l.types) }

// Width returns the number of columns of the union layout.
func (l *Layout) Width() int { return len(l.types) }

// Tables returns the number of tables.
func (l *Layout) Tables() int { return len(l.tables) }

// Table returns table i.
func (l *Layout) Table(i int) Table { return l.tables[i] }

// Span returns the first column of table i in the union layout and its
// number of columns.
func (l *Layout) Span(i int) (offset, width int) { return l.offsets[i], len(l.tables[i].Columns) }

// Index returns the index of the table whose Strata name is name.
func (l *Layout) Index(name string) (int, bool) {
	for i, t := range l.tables {
		if t.Name == name {
			return i, true
		}
	}
	return 0, false
}

// Project returns table i's rows of c (a chunk of the union layout) in
// that table's own columns, row kinds kept, or nil when c has none.
func (l *Layout) Project(c *types.Chunk, i int) *types.Chunk {
	off, w := l.Span(i)
	tag := int64(i)
	var sel []int
	tags := c.Cols[0].Ints
	for r := range c.Len() {
		if tags[r] == tag {
			sel = append(sel, r)
		}
	}
	if len(sel) == 0 {
		return nil
	}
	out := &types.Chunk{Kinds: make([]types.RowKind, 0, len(sel)), Cols: make([]types.Vector, w)}
	for col := range w {
		out.Cols[col].Type = l.types[off+col]
		out.Cols[col].Nulls = make([]bool, 0, len(sel))
	}
	for _, r := range sel {
		out.Kinds = append(out.Kinds, c.Kinds[r])
		for col := range w {
			out.Cols[col].Append(c.Cols[off+col].Get(r))
		}
	}
	return out
}
