package olap

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	duck "github.com/duckdb/duckdb-go/v2"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table/schema"
)

// maxDecimalWidth is DuckDB's largest DECIMAL precision.
const maxDecimalWidth = 38

// duckColumn is one column of a loaded DuckDB table: its name, the Strata
// type of the table's schema and the DuckDB type it is stored as.
type duckColumn struct {
	name  string
	typ   types.Type
	duck  string // DuckDB DDL type
	width int    // DECIMAL precision, for NUMERIC
	scale int    // DECIMAL scale, for NUMERIC
}

// duckColumns chooses the DuckDB column types for schema sc holding rows
// ([type-map] in doc.go). Unconstrained NUMERIC and NUMERIC wider than 38
// digits are stored as DECIMAL(38, s) with s the largest scale in rows, if
// every value fits; otherwise the table cannot be loaded and the error
// (0A000) names the column.
func duckColumns(tableName string, sc *schema.Schema, rows []types.Row) ([]duckColumn, error) {
	cols := make([]duckColumn, len(sc.Fields))
	for i, f := range sc.Fields {
		c := duckColumn{name: f.Name, typ: f.Type}
		switch f.Type.Kind {
		case types.KindBool:
			c.duck = "BOOLEAN"
		case types.KindInt16:
			c.duck = "SMALLINT"
		case types.KindInt32:
			c.duck = "INTEGER"
		case types.KindInt64:
			c.duck = "BIGINT"
		case types.KindFloat32:
			c.duck = "FLOAT"
		case types.KindFloat64:
			c.duck = "DOUBLE"
		case types.KindNumeric:
			if f.Type.Precision > 0 && f.Type.Precision <= maxDecimalWidth {
				c.width, c.scale = int(f.Type.Precision), int(f.Type.Scale)
			} else {
				intDigits, scale := 1, 0
				for _, r := range rows {
					if i >= len(r) || r[i].IsNull() {
						continue
					}
					d := r[i].Decimal()
					if d.Form != apd.Finite {
						return nil, sqlerr.New(sqlerr.FeatureNotSupported, "table %s column %s: NUMERIC value %s cannot be queried by the OLAP engine", tableName, f.Name, d)
					}
					s := max(0, -int(d.Exponent))
					n := int(d.NumDigits()) + int(d.Exponent) // digits left of the point
					scale = max(scale, s)
					intDigits = max(intDigits, n)
				}
				if intDigits+scale > maxDecimalWidth {
					return nil, sqlerr.New(sqlerr.FeatureNotSupported, "table %s column %s: NUMERIC values need %d digits, more than the %d the OLAP engine holds", tableName, f.Name, intDigits+scale, maxDecimalWidth)
				}
				c.width, c.scale = maxDecimalWidth, scale
			}
			c.duck = fmt.Sprintf("DECIMAL(%d,%d)", c.width, c.scale)
		case types.KindChar, types.KindVarchar, types.KindText:
			c.duck = "VARCHAR"
		case types.KindUUID:
			c.duck = "UUID"
		case types.KindBytea:
			c.duck = "BLOB"
		case types.KindDate:
			c.duck = "DATE"
		case types.KindTime:
			c.duck = "TIME"
		case types.KindTimestamp:
			c.duck = "TIMESTAMP"
		case types.KindTimestampTZ:
			c.duck = "TIMESTAMPTZ"
		case types.KindInterval:
			c.duck = "INTERVAL"
		case types.KindJSONB:
			c.duck = "JSON"
		default:
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "table %s column %s: type %s cannot be queried by the OLAP engine", tableName, f.Name, f.Type)
		}
		cols[i] = c
	}
	return cols, nil
}

// createSQL is the CREATE TABLE statement for a loaded table.
func createSQL(qualified string, cols []duckColumn) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE ")
	b.WriteString(qualified)
	b.WriteString(" (")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteIdent(c.name))
		b.WriteByte(' ')
		b.WriteString(c.duck)
	}
	b.WriteString(")")
	return b.String()
}

var bigTen = big.NewInt(10)

// driverValue converts d, a value of column c, to what the DuckDB appender
// takes for c's DuckDB type.
func driverValue(d types.Datum, c *duckColumn) (driver.Value, error) {
	if d.IsNull() {
		return nil, nil
	}
	switch c.typ.Kind {
	case types.KindBool:
		return d.Bool(), nil
	case types.KindInt16:
		return int16(d.Int64()), nil
	case types.KindInt32:
		return int32(d.Int64()), nil
	case types.KindInt64:
		return d.Int64(), nil
	case types.KindFloat32:
		return float32(d.Float64()), nil
	case types.KindFloat64:
		return d.Float64(), nil
	case types.KindNumeric:
		return unscaled(d.Decimal(), c)
	case types.KindChar, types.KindVarchar, types.KindText:
		return d.Str(), nil
	case types.KindUUID:
		return duck.UUID(d.UUID()), nil
	case types.KindBytea:
		return d.Bytes(), nil
	case types.KindDate:
		return time.Unix(int64(d.Date())*86400, 0).UTC(), nil
	case types.KindTime:
		return time.UnixMicro(d.Micros()).UTC(), nil
	case types.KindTimestamp, types.KindTimestampTZ:
		return time.UnixMicro(d.Micros()).UTC(), nil
	case types.KindInterval:
		iv := d.Interval()
		return duck.Interval{Months: iv.Months, Days: iv.Days, Micros: iv.Micros}, nil
	case types.KindJSONB:
		return json.RawMessage(d.JSONB()), nil
	}
	return nil, fmt.Errorf("column %s: type %s: %w", c.name, c.typ, base.ErrInvalidArgument)
}

// unscaled returns v's coefficient at c's scale: an int64 for DECIMAL
// widths up to 18 (stored in 64 bits), a *big.Int above.
func unscaled(v *apd.Decimal, c *duckColumn) (driver.Value, error) {
	if v.Form != apd.Finite {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "column %s: NUMERIC value %s cannot be queried by the OLAP engine", c.name, v)
	}
	coef := v.Coeff.MathBigInt()
	shift := int(v.Exponent) + c.scale
	switch {
	case shift > 0:
		coef.Mul(coef, new(big.Int).Exp(bigTen, big.NewInt(int64(shift)), nil))
	case shift < 0:
		// More fractional digits than the column's scale: only zeros
		// may be dropped (NUMERIC(p,s) values are already rounded).
		var rem big.Int
		coef.QuoRem(coef, new(big.Int).Exp(bigTen, big.NewInt(int64(-shift)), nil), &rem)
		if rem.Sign() != 0 {
			return nil, fmt.Errorf("column %s: value %s has more than %d fractional digits: %w", c.name, v, c.scale, base.ErrCorruption)
		}
	}
	if v.Negative {
		coef.Neg(coef)
	}
	if c.width <= 18 {
		return coef.Int64(), nil
	}
	return coef, nil
}

// appendRows loads rows into the DuckDB table schemaName.tableName through
// the appender on conn. Rows holding an infinite DATE or TIMESTAMP (which
// the appender cannot take) are inserted afterwards with SQL literals.
func appendRows(ctx context.Context, conn *sql.Conn, schemaName, tableName string, cols []duckColumn, rows []types.Row) error {
	var special []types.Row
	err := conn.Raw(func(dc any) error {
		a, err := duck.NewAppender(dc.(driver.Conn), "", schemaName, tableName)
		if err != nil {
			return err
		}
		vals := make([]driver.Value, len(cols))
		for n, r := range rows {
			if n%4096 == 0 && ctx.Err() != nil {
				a.Close()
				return ctx.Err()
			}
			if hasInfinity(r, cols) {
				special = append(special, r)
				continue
			}
			for i := range cols {
				if vals[i], err = driverValue(r[i], &cols[i]); err != nil {
					a.Close()
					return err
				}
			}
			if err := a.AppendRow(vals...); err != nil {
				a.Close()
				return err
			}
		}
		return a.Close()
	})
	if err != nil {
		return err
	}
	for _, r := range special {
		var b strings.Builder
		var args []any
		b.WriteString("INSERT INTO " + quoteIdent(schemaName) + "." + quoteIdent(tableName) + " VALUES (")
		for i := range cols {
			if i > 0 {
				b.WriteString(", ")
			}
			if lit, ok := infinityLiteral(r[i], &cols[i]); ok {
				b.WriteString(lit)
				continue
			}
			if k := cols[i].typ.Kind; !r[i].IsNull() && (k == types.KindUUID || k == types.KindJSONB || k == types.KindNumeric) {
				// The driver binds neither UUID nor JSON as a parameter,
				// and driverValue gives NUMERIC's unscaled coefficient.
				b.WriteString(quoteString(types.FormatText(r[i], nil)) + "::" + cols[i].duck)
				continue
			}
			v, err := driverValue(r[i], &cols[i])
			if err != nil {
				return err
			}
			args = append(args, v)
			b.WriteString("?")
		}
		b.WriteString(")")
		if _, err := conn.ExecContext(ctx, b.String(), args...); err != nil {
			return err
		}
	}
	return nil
}

// hasInfinity reports whether r holds an infinite DATE or TIMESTAMP.
func hasInfinity(r types.Row, cols []duckColumn) bool {
	for i := range cols {
		if _, ok := infinityLiteral(r[i], &cols[i]); ok {
			return true
		}
	}
	return false
}

// infinityLiteral returns the DuckDB literal of an infinite DATE or
// TIMESTAMP value d of column c.
func infinityLiteral(d types.Datum, c *duckColumn) (string, bool) {
	if d.IsNull() {
		return "", false
	}
	switch c.typ.Kind {
	case types.KindDate:
		switch d.Date() {
		case types.DateInfinity:
			return "'infinity'::DATE", true
		case types.DateNegInfinity:
			return "'-infinity'::DATE", true
		}
	case types.KindTimestamp, types.KindTimestampTZ:
		switch d.Micros() {
		case types.TimestampInfinity:
			return "'infinity'::" + c.duck, true
		case types.TimestampNegInfinity:
			return "'-infinity'::" + c.duck, true
		}
	}
	return "", false
}

// paramValue converts a query parameter to a value the DuckDB driver binds.
func paramValue(d types.Datum) (driver.Value, error) {
	if d.IsNull() {
		return nil, nil
	}
	switch d.Kind() {
	case types.KindNumeric:
		// DuckDB casts the text to the DECIMAL the statement expects.
		return types.FormatText(d, nil), nil
	case types.KindJSONB:
		return d.JSONB(), nil
	case types.KindTime:
		return types.FormatText(d, nil), nil
	case types.KindDate, types.KindTimestamp, types.KindTimestampTZ:
		c := duckColumn{typ: types.Type{Kind: d.Kind()}, duck: map[types.Kind]string{types.KindDate: "DATE", types.KindTimestamp: "TIMESTAMP", types.KindTimestampTZ: "TIMESTAMPTZ"}[d.Kind()]}
		if _, ok := infinityLiteral(d, &c); ok {
			return types.FormatText(d, nil), nil // 'infinity' text; DuckDB casts it
		}
	}
	c := duckColumn{name: "parameter", typ: types.Type{Kind: d.Kind()}}
	return driverValue(d, &c)
}
