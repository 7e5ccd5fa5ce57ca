package types

import (
	"fmt"
	"strings"
)

// RowKind is the change type of a row in a changelog, Flink's RowKind with
// the same byte values: +I insert (0), -U update-before (1), +U update-after
// (2), -D delete (3).
type RowKind uint8

// The four row kinds.
const (
	Insert       RowKind = 0 // +I
	UpdateBefore RowKind = 1 // -U: retracts the previous version of a row
	UpdateAfter  RowKind = 2 // +U: the new version of an updated row
	Delete       RowKind = 3 // -D
)

// String returns the short form: "+I", "-U", "+U" or "-D".
func (k RowKind) String() string {
	switch k {
	case Insert:
		return "+I"
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	}
	return fmt.Sprintf("RowKind(%d)", uint8(k))
}

// IsAdd reports whether the row adds to the relation (+I, +U).
func (k RowKind) IsAdd() bool { return k == Insert || k == UpdateAfter }

// IsRetract reports whether the row removes from the relation (-U, -D).
func (k RowKind) IsRetract() bool { return k == UpdateBefore || k == Delete }

// Valid reports whether k is one of the four row kinds.
func (k RowKind) Valid() bool { return k <= Delete }

// ParseRowKind parses "+I", "-U", "+U" or "-D".
func ParseRowKind(s string) (RowKind, error) {
	switch s {
	case "+I":
		return Insert, nil
	case "-U":
		return UpdateBefore, nil
	case "+U":
		return UpdateAfter, nil
	case "-D":
		return Delete, nil
	}
	return 0, fmt.Errorf("row kind %q is not one of +I, -U, +U, -D", s)
}

// Row is one row's values in column order. Rows do not know their types; a
// schema ([]Type) travels beside them.
type Row []Datum

// String formats the row as "(v1, v2, ...)" with NULL for NULL.
func (r Row) String() string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range r {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.String())
	}
	b.WriteByte(')')
	return b.String()
}

// Copy returns a copy of r that shares no slice with it.
func (r Row) Copy() Row { return append(Row(nil), r...) }

// Project returns the values of r at cols, in that order.
func (r Row) Project(cols []int) Row {
	out := make(Row, len(cols))
	for i, c := range cols {
		out[i] = r[c]
	}
	return out
}
