package olap

import (
	"encoding/json"
	"fmt"
	"strings"

	duck "github.com/duckdb/duckdb-go/v2"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
)

// strataType maps a DuckDB result type name to a Strata type (see
// package internal/duckdb for the table). Strata has no array type: a LIST
// ("INTEGER[]", from array_agg or list literals) is TEXT in PostgreSQL's
// array syntax ({1,2,NULL}).
func strataType(name string) (types.Type, error) {
	if elem, ok := strings.CutSuffix(name, "[]"); ok {
		if _, err := strataType(elem); err != nil {
			return types.Type{}, err
		}
		return types.Text, nil
	}
	return duckdb.StrataType(name)
}

// resultColumn is how one result column converts: its Strata type and,
// for a LIST, the DuckDB type name of its elements.
type resultColumn struct {
	typ  types.Type
	elem string
}

func newResultColumn(duckName string) (resultColumn, error) {
	t, err := strataType(duckName)
	if err != nil {
		return resultColumn{}, err
	}
	elem, _ := strings.CutSuffix(duckName, "[]")
	if elem == duckName {
		elem = ""
	}
	return resultColumn{typ: t, elem: elem}, nil
}

func (c resultColumn) datum(v any) (types.Datum, error) {
	if c.elem == "" || v == nil {
		return toDatum(v, c.typ)
	}
	b, err := appendArray(nil, v, c.elem)
	if err != nil {
		return types.Null, err
	}
	return types.NewText(string(b)), nil
}

// appendArray writes list v, whose elements are of DuckDB type elem, in
// PostgreSQL's array text form.
func appendArray(dst []byte, v any, elem string) ([]byte, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("LIST value of Go type %T: %w", v, base.ErrInvalidArgument)
	}
	inner, nested := strings.CutSuffix(elem, "[]")
	dst = append(dst, '{')
	for i, x := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch {
		case x == nil:
			dst = append(dst, "NULL"...)
		case nested:
			var err error
			if dst, err = appendArray(dst, x, inner); err != nil {
				return nil, err
			}
		default:
			t, err := strataType(elem)
			if err != nil {
				return nil, err
			}
			d, err := toDatum(x, t)
			if err != nil {
				return nil, err
			}
			s := types.FormatText(d, nil)
			if s == "" || strings.ContainsAny(s, "{},\"\\ \t\n") || strings.EqualFold(s, "NULL") {
				s = "\"" + strings.NewReplacer("\\", "\\\\", "\"", "\\\"").Replace(s) + "\""
			}
			dst = append(dst, s...)
		}
	}
	return append(dst, '}'), nil
}

// toDatum converts one DuckDB result value. The driver hands JSON values
// over decoded; they are encoded again (numbers beyond float64's precision
// lose digits on the way: a known gap, see doc.go).
func toDatum(v any, t types.Type) (types.Datum, error) {
	if t.Kind == types.KindJSONB && v != nil {
		b, err := json.Marshal(v)
		if err != nil {
			return types.Null, fmt.Errorf("JSON value: %v: %w", err, base.ErrInvalidArgument)
		}
		return types.NewJSONB(string(b))
	}
	d, err := duckdb.ToDatum(v, t)
	if err != nil || d.IsNull() {
		return d, err
	}
	// DuckDB's -infinity is the negated +infinity, one above Strata's.
	switch t.Kind {
	case types.KindDate:
		if d.Date() == -types.DateInfinity {
			return types.NewDate(types.DateNegInfinity), nil
		}
	case types.KindTimestamp:
		if d.Micros() == -types.TimestampInfinity {
			return types.NewTimestamp(types.TimestampNegInfinity), nil
		}
	case types.KindTimestampTZ:
		if d.Micros() == -types.TimestampInfinity {
			return types.NewTimestampTZ(types.TimestampNegInfinity), nil
		}
	}
	return d, nil
}

// duckTypeNames names DuckDB's type ids as DatabaseTypeName does.
var duckTypeNames = map[duck.Type]string{
	duck.TYPE_BOOLEAN: "BOOLEAN", duck.TYPE_TINYINT: "TINYINT", duck.TYPE_SMALLINT: "SMALLINT",
	duck.TYPE_INTEGER: "INTEGER", duck.TYPE_BIGINT: "BIGINT", duck.TYPE_UTINYINT: "UTINYINT",
	duck.TYPE_USMALLINT: "USMALLINT", duck.TYPE_UINTEGER: "UINTEGER", duck.TYPE_UBIGINT: "UBIGINT",
	duck.TYPE_FLOAT: "FLOAT", duck.TYPE_DOUBLE: "DOUBLE", duck.TYPE_TIMESTAMP: "TIMESTAMP",
	duck.TYPE_DATE: "DATE", duck.TYPE_TIME: "TIME", duck.TYPE_INTERVAL: "INTERVAL",
	duck.TYPE_HUGEINT: "HUGEINT", duck.TYPE_UHUGEINT: "UHUGEINT", duck.TYPE_VARCHAR: "VARCHAR",
	duck.TYPE_BLOB: "BLOB", duck.TYPE_DECIMAL: "DECIMAL", duck.TYPE_TIMESTAMP_S: "TIMESTAMP_S",
	duck.TYPE_TIMESTAMP_MS: "TIMESTAMP_MS", duck.TYPE_TIMESTAMP_NS: "TIMESTAMP_NS",
	duck.TYPE_UUID: "UUID", duck.TYPE_TIMESTAMP_TZ: "TIMESTAMPTZ",
}

// duckTypeName spells a prepared statement's column type the way a
// result's DatabaseTypeName does ("DECIMAL(10,2)", "JSON", "BIGINT[]").
func duckTypeName(ti duck.TypeInfo) string {
	if ti.Alias() == "JSON" {
		return "JSON"
	}
	switch d := ti.Details().(type) {
	case *duck.DecimalDetails:
		return fmt.Sprintf("DECIMAL(%d,%d)", d.Width, d.Scale)
	case *duck.ListDetails:
		return duckTypeName(d.Child) + "[]"
	case *duck.ArrayDetails:
		return fmt.Sprintf("%s[%d]", duckTypeName(d.Child), d.Size)
	case *duck.StructDetails:
		fields := make([]string, len(d.Entries))
		for i, en := range d.Entries {
			fields[i] = quoteIdent(en.Name()) + " " + duckTypeName(en.Info())
		}
		return "STRUCT(" + strings.Join(fields, ", ") + ")"
	case *duck.MapDetails:
		return "MAP(" + duckTypeName(d.Key) + ", " + duckTypeName(d.Value) + ")"
	case *duck.UnionDetails:
		members := make([]string, len(d.Members))
		for i, m := range d.Members {
			members[i] = quoteIdent(m.Name) + " " + duckTypeName(m.Type)
		}
		return "UNION(" + strings.Join(members, ", ") + ")"
	}
	if n, ok := duckTypeNames[ti.InternalType()]; ok {
		return n
	}
	if n, ok := otherDuckTypeNames[ti.InternalType()]; ok {
		return n
	}
	return "UNKNOWN"
}

// otherDuckTypeNames name the DuckDB types Strata has no equivalent for,
// so that a message can say which type a column has.
var otherDuckTypeNames = map[duck.Type]string{
	duck.TYPE_ENUM: "ENUM", duck.TYPE_STRUCT: "STRUCT", duck.TYPE_MAP: "MAP", duck.TYPE_UNION: "UNION",
	duck.TYPE_LIST: "LIST", duck.TYPE_ARRAY: "ARRAY", duck.TYPE_BIT: "BIT", duck.TYPE_TIME_TZ: "TIME WITH TIME ZONE",
	duck.TYPE_BIGNUM: "BIGNUM", duck.TYPE_SQLNULL: "NULL", duck.TYPE_GEOMETRY: "GEOMETRY", duck.TYPE_VARIANT: "VARIANT",
	duck.TYPE_ANY: "ANY",
}
