package duckdb

import (
	"context"
	"database/sql"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"
	duck "github.com/duckdb/duckdb-go/v2"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// DB is an embedded DuckDB database. It is safe for concurrent use.
type DB struct {
	db *sql.DB
}

// Open opens an in-memory database (path "") or the database file at path.
func Open(path string) (*DB, error) {
	db, err := sql.Open("duckdb", path+"?autoinstall_known_extensions=false&autoload_known_extensions=false")
	if err != nil {
		return nil, fmt.Errorf("duckdb: open %q: %w", path, err)
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("duckdb: open %q: %w", path, err)
	}
	return &DB{db: db}, nil
}

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

// Exec runs statements that return no rows.
func (d *DB) Exec(ctx context.Context, query string, args ...any) error {
	if _, err := d.db.ExecContext(ctx, query, args...); err != nil {
		return fmt.Errorf("duckdb: %w", err)
	}
	return nil
}

// Column is one result column: its name and Strata type.
type Column struct {
	Name string
	Type types.Type
}

// Query runs a query and returns its columns and rows converted to
// Strata's types.
func (d *DB) Query(ctx context.Context, query string, args ...any) ([]Column, []types.Row, error) {
	rows, err := d.db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("duckdb: %w", err)
	}
	defer rows.Close()
	cts, err := rows.ColumnTypes()
	if err != nil {
		return nil, nil, fmt.Errorf("duckdb: %w", err)
	}
	cols := make([]Column, len(cts))
	for i, ct := range cts {
		t, err := strataType(ct.DatabaseTypeName())
		if err != nil {
			return nil, nil, fmt.Errorf("duckdb: column %q: %w", ct.Name(), err)
		}
		cols[i] = Column{Name: ct.Name(), Type: t}
	}
	var out []types.Row
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, fmt.Errorf("duckdb: %w", err)
		}
		row := make(types.Row, len(cols))
		for i, v := range vals {
			if row[i], err = toDatum(v, cols[i].Type); err != nil {
				return nil, nil, fmt.Errorf("duckdb: column %q: %w", cols[i].Name, err)
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("duckdb: %w", err)
	}
	return cols, out, nil
}

// strataType maps a DuckDB type name to a Strata type.
func strataType(name string) (types.Type, error) {
	switch name {
	case "BOOLEAN":
		return types.Bool, nil
	case "TINYINT", "SMALLINT", "UTINYINT":
		return types.Int16, nil
	case "INTEGER", "USMALLINT":
		return types.Int32, nil
	case "BIGINT", "UINTEGER":
		return types.Int64, nil
	case "UBIGINT", "HUGEINT", "UHUGEINT":
		return types.Numeric, nil
	case "FLOAT":
		return types.Float32, nil
	case "DOUBLE":
		return types.Float64, nil
	case "VARCHAR":
		return types.Text, nil
	case "BLOB":
		return types.Bytea, nil
	case "DATE":
		return types.Date, nil
	case "TIME":
		return types.Time, nil
	case "TIMESTAMP", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS":
		return types.Timestamp, nil
	case "TIMESTAMPTZ":
		return types.TimestampTZ, nil
	case "INTERVAL":
		return types.Interval, nil
	case "UUID":
		return types.UUID, nil
	case "JSON":
		return types.JSONB, nil
	}
	if strings.HasPrefix(name, "DECIMAL(") {
		var p, s int
		if _, err := fmt.Sscanf(name, "DECIMAL(%d,%d)", &p, &s); err != nil {
			return types.Type{}, fmt.Errorf("type %s: %w", name, base.ErrInvalidArgument)
		}
		return types.NumericType(p, s)
	}
	return types.Type{}, fmt.Errorf("DuckDB type %s has no Strata equivalent: %w", name, base.ErrInvalidArgument)
}

func toDatum(v any, t types.Type) (types.Datum, error) {
	if v == nil {
		return types.Null, nil
	}
	switch x := v.(type) {
	case bool:
		return types.NewBool(x), nil
	case int8:
		return types.NewInt16(int16(x)), nil
	case uint8:
		return types.NewInt16(int16(x)), nil
	case int16:
		return types.NewInt16(x), nil
	case uint16:
		return types.NewInt32(int32(x)), nil
	case int32:
		return types.NewInt32(x), nil
	case uint32:
		return types.NewInt64(int64(x)), nil
	case int64:
		return types.NewInt64(x), nil
	case uint64:
		return types.NewNumeric(apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(new(big.Int).SetUint64(x)), 0)), nil
	case *big.Int:
		return types.NewNumeric(apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(x), 0)), nil
	case float32:
		return types.NewFloat32(x), nil
	case float64:
		return types.NewFloat64(x), nil
	case duck.Decimal:
		d := apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(x.Value), -int32(x.Scale))
		return types.NewNumeric(d), nil
	case string:
		if t.Kind == types.KindJSONB {
			return types.NewJSONB(x)
		}
		return types.NewText(x), nil
	case []byte:
		if t.Kind == types.KindUUID {
			if len(x) != 16 {
				return types.Null, fmt.Errorf("UUID of %d bytes: %w", len(x), base.ErrCorruption)
			}
			var u [16]byte
			copy(u[:], x)
			return types.NewUUID(u), nil
		}
		return types.NewBytea(x), nil
	case duck.UUID:
		return types.NewUUID(x), nil
	case time.Time:
		switch t.Kind {
		case types.KindDate:
			days := x.Unix() / 86400
			if x.Unix() < 0 && x.Unix()%86400 != 0 {
				days--
			}
			return types.NewDate(int32(days)), nil
		case types.KindTime:
			return types.NewTime(int64(x.Hour())*3_600_000_000 + int64(x.Minute())*60_000_000 + int64(x.Second())*1_000_000 + int64(x.Nanosecond()/1000)), nil
		case types.KindTimestampTZ:
			return types.NewTimestampTZ(x.UnixMicro()), nil
		}
		return types.NewTimestamp(x.UnixMicro()), nil
	case duck.Interval:
		return types.NewInterval(types.IntervalValue{Months: x.Months, Days: x.Days, Micros: x.Micros}), nil
	case map[string]any, []any:
		if t.Kind == types.KindJSONB {
			return types.Null, fmt.Errorf("JSON value of Go type %T: %w", v, base.ErrInvalidArgument)
		}
	}
	return types.Null, fmt.Errorf("value of Go type %T for %s: %w", v, t, base.ErrInvalidArgument)
}

// StrataType maps a DuckDB type name, as database/sql's
// ColumnType.DatabaseTypeName reports it ("BIGINT", "DECIMAL(10,2)",
// "JSON"), to the Strata type a value of it converts to (see the package
// doc). A type without an equivalent gives an error wrapping
// base.ErrInvalidArgument.
func StrataType(name string) (types.Type, error) { return strataType(name) }

// ToDatum converts a value the DuckDB driver returned for a column of
// Strata type t (from StrataType) to a Datum. JSON values arrive from the
// driver already decoded (maps, slices, numbers, strings); callers that
// read JSON columns re-encode them before calling ToDatum.
func ToDatum(v any, t types.Type) (types.Datum, error) { return toDatum(v, t) }
