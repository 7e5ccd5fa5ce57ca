package schema

import (
	"fmt"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// FormatVersion is the "version" member of every schema file this code
// writes and the only one it reads.
const FormatVersion = 1

// ID numbers a table's schemas from 0.
type ID int64

// Field is one column.
type Field struct {
	// ID is the column's stable identity ([field-id-stable]).
	ID int `json:"id"`
	// Name is the column name, unique within the schema.
	Name string `json:"name"`
	// Type is the SQL type, stored as its SQL spelling.
	Type types.Type `json:"type"`
	// Nullable tells whether NULL is allowed.
	Nullable bool `json:"nullable"`
}

// Schema is one version of a table's schema.
type Schema struct {
	// Version is FormatVersion.
	Version int `json:"version"`
	// ID is this schema's number.
	ID ID `json:"id"`
	// Fields are the columns in table order.
	Fields []Field `json:"fields"`
	// PrimaryKey names the key columns in key order; empty for an append
	// table.
	PrimaryKey []string `json:"primaryKey"`
	// Options are the table options (see Options for the keys).
	Options map[string]string `json:"options"`
	// HighestFieldID is the largest field ID ever used.
	HighestFieldID int `json:"highestFieldId"`
	// TimeMillis is when this schema was created (Unix ms).
	TimeMillis int64 `json:"timeMillis"`
}

// New builds schema 0 from columns, a primary key and options, assigning
// field IDs 0..n-1. Key columns are made NOT NULL ([key-not-null]) unless
// options say "primary-key.nullable" = "true" (a materialized view grouped
// by a column that may be NULL keeps NULL as a key value). It
// checks names, types, the key and the options; errors wrap
// base.ErrInvalidArgument.
func New(fields []Field, primaryKey []string, options map[string]string) (*Schema, error) {
	s := &Schema{Version: FormatVersion, PrimaryKey: slices.Clone(primaryKey), Options: map[string]string{}}
	for k, v := range options {
		s.Options[k] = v
	}
	seen := map[string]bool{}
	for i, f := range fields {
		if f.Name == "" || seen[f.Name] {
			return nil, fmt.Errorf("schema: column %d: empty or duplicate name %q: %w", i, f.Name, base.ErrInvalidArgument)
		}
		if err := f.Type.Validate(); err != nil {
			return nil, fmt.Errorf("schema: column %q: %w", f.Name, err)
		}
		if f.Type.Kind == types.KindUnknown {
			return nil, fmt.Errorf("schema: column %q has no type: %w", f.Name, base.ErrInvalidArgument)
		}
		seen[f.Name] = true
		f.ID = i
		s.Fields = append(s.Fields, f)
	}
	if len(s.Fields) == 0 {
		return nil, fmt.Errorf("schema: no columns: %w", base.ErrInvalidArgument)
	}
	s.HighestFieldID = len(s.Fields) - 1
	for _, k := range primaryKey {
		i := s.Index(k)
		if i < 0 {
			return nil, fmt.Errorf("schema: primary key column %q does not exist: %w", k, base.ErrInvalidArgument)
		}
		if options[OptionNullableKey] != "true" {
			s.Fields[i].Nullable = false
		}
	}
	if _, err := ParseOptions(s); err != nil {
		return nil, err
	}
	return s, nil
}

// OptionNullableKey, set to "true", lets primary-key columns hold NULL:
// the key encoding orders NULL first like any other value, so a NULL key is
// one key. Strata sets it on materialized views whose key columns may be
// NULL; Paimon has no such option.
const OptionNullableKey = "primary-key.nullable"

// Index returns the position of column name, or -1.
func (s *Schema) Index(name string) int {
	for i, f := range s.Fields {
		if f.Name == name {
			return i
		}
	}
	return -1
}

// Types returns the column types in table order.
func (s *Schema) Types() []types.Type {
	ts := make([]types.Type, len(s.Fields))
	for i, f := range s.Fields {
		ts[i] = f.Type
	}
	return ts
}

// KeyIndexes returns the positions of the primary-key columns, in key order.
func (s *Schema) KeyIndexes() []int {
	out := make([]int, len(s.PrimaryKey))
	for i, k := range s.PrimaryKey {
		out[i] = s.Index(k)
	}
	return out
}

// KeyTypes returns the types of the primary-key columns, in key order.
func (s *Schema) KeyTypes() []types.Type {
	out := make([]types.Type, len(s.PrimaryKey))
	for i, c := range s.KeyIndexes() {
		out[i] = s.Fields[c].Type
	}
	return out
}

// HasPrimaryKey tells a primary-key table from an append table.
func (s *Schema) HasPrimaryKey() bool { return len(s.PrimaryKey) > 0 }

// AddColumn returns the next schema (ID+1) with a nullable column appended
// ([field-id-stable]). A duplicate name or a bad type gives an error
// wrapping base.ErrInvalidArgument.
func (s *Schema) AddColumn(name string, t types.Type) (*Schema, error) {
	if name == "" || s.Index(name) >= 0 {
		return nil, fmt.Errorf("schema %d: column %q: empty or existing name: %w", s.ID, name, base.ErrInvalidArgument)
	}
	if err := t.Validate(); err != nil || t.Kind == types.KindUnknown {
		return nil, fmt.Errorf("schema %d: column %q: bad type %s: %w", s.ID, name, t, base.ErrInvalidArgument)
	}
	n := *s
	n.ID = s.ID + 1
	n.HighestFieldID = s.HighestFieldID + 1
	n.Fields = append(slices.Clone(s.Fields), Field{ID: n.HighestFieldID, Name: name, Type: t, Nullable: true})
	return &n, nil
}

// CheckRow checks that row fits s: its width, the kinds of its values and
// NOT NULL columns. Errors wrap base.ErrInvalidArgument and name the column.
func (s *Schema) CheckRow(row types.Row) error {
	if len(row) != len(s.Fields) {
		return fmt.Errorf("row has %d values, table has %d columns: %w", len(row), len(s.Fields), base.ErrInvalidArgument)
	}
	for i := range row {
		d, f := &row[i], &s.Fields[i]
		if d.IsNull() {
			if !f.Nullable {
				return fmt.Errorf("column %q is NOT NULL: %w", f.Name, base.ErrInvalidArgument)
			}
			continue
		}
		if !sameFamily(d.Kind(), f.Type.Kind) {
			return fmt.Errorf("column %q of type %s got a %s value: %w", f.Name, f.Type, d.Kind(), base.ErrInvalidArgument)
		}
	}
	return nil
}

// CheckChunk checks that every row of c fits s, column by column: the
// width, each column's type and NOT NULL columns. It is CheckRow of each
// row except that a column of another type family is refused even when
// all its values are NULL (CheckRow accepts a NULL of any kind): a chunk
// that passes can be appended to s's vectors slice by slice. Errors wrap
// base.ErrInvalidArgument and name the column.
func (s *Schema) CheckChunk(c *types.Chunk) error {
	if c.Width() != len(s.Fields) {
		return fmt.Errorf("row has %d values, table has %d columns: %w", c.Width(), len(s.Fields), base.ErrInvalidArgument)
	}
	for i := range c.Cols {
		v, f := &c.Cols[i], &s.Fields[i]
		if !f.Nullable && slices.Contains(v.Nulls, true) {
			return fmt.Errorf("column %q is NOT NULL: %w", f.Name, base.ErrInvalidArgument)
		}
		if !sameFamily(v.Type.Kind, f.Type.Kind) {
			return fmt.Errorf("column %q of type %s got a %s value: %w", f.Name, f.Type, v.Type.Kind, base.ErrInvalidArgument)
		}
	}
	return nil
}

func sameFamily(a, b types.Kind) bool {
	if a == b {
		return true
	}
	str := func(k types.Kind) bool {
		return k == types.KindChar || k == types.KindVarchar || k == types.KindText
	}
	return str(a) && str(b)
}
