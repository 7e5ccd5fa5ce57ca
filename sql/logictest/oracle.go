package logictest

import (
	"context"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
)

// oracleSettings make DuckDB answer as Postgres does where a setting can:
// "/" on integers divides as integers (DuckDB's default gives a DOUBLE),
// NULLs sort last ascending and first descending (DuckDB's default puts
// them last both ways; a Top-N over ORDER BY v DESC keeps NULLs first in
// Postgres), and TIMESTAMPTZ values print and convert in UTC, the views'
// zone.
var oracleSettings = []string{
	"SET GLOBAL integer_division = true",
	"SET GLOBAL default_null_order = 'nulls_last_on_asc_first_on_desc'",
	"SET GLOBAL TimeZone = 'UTC'",
}

// OpenOracle opens an in-memory DuckDB with oracleSettings applied.
func OpenOracle() (*duckdb.DB, error) {
	db, err := duckdb.Open("")
	if err != nil {
		return nil, err
	}
	for _, s := range oracleSettings {
		if err := db.Exec(context.Background(), s); err != nil {
			db.Close()
			return nil, fmt.Errorf("logictest: oracle setting %q: %w", s, err)
		}
	}
	return db, nil
}

// duckType is the DuckDB column type holding t's values. DuckDB has no
// unconstrained NUMERIC: it becomes DECIMAL(28,6), enough for the
// generated values (4 fractional digits).
func duckType(t types.Type) string {
	switch t.Kind {
	case types.KindBool:
		return "BOOLEAN"
	case types.KindInt16:
		return "SMALLINT"
	case types.KindInt32:
		return "INTEGER"
	case types.KindInt64:
		return "BIGINT"
	case types.KindFloat32:
		return "FLOAT"
	case types.KindFloat64:
		return "DOUBLE"
	case types.KindNumeric:
		if t.Precision == 0 {
			return "DECIMAL(28,6)"
		}
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	case types.KindChar, types.KindVarchar, types.KindText:
		return "VARCHAR"
	case types.KindUUID:
		return "UUID"
	case types.KindBytea:
		return "BLOB"
	case types.KindDate:
		return "DATE"
	case types.KindTime:
		return "TIME"
	case types.KindTimestamp:
		return "TIMESTAMP"
	case types.KindTimestampTZ:
		return "TIMESTAMPTZ"
	case types.KindInterval:
		return "INTERVAL"
	case types.KindJSONB:
		return "JSON"
	}
	panic("logictest: no DuckDB type for " + t.String())
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// duckLiteral renders d as a DuckDB expression of type t.
func duckLiteral(d types.Datum, t types.Type) string {
	if d.IsNull() {
		return "NULL"
	}
	switch t.Kind {
	case types.KindBool:
		return strconv.FormatBool(d.Bool())
	case types.KindInterval:
		iv := d.Interval()
		return fmt.Sprintf("(to_months(%d) + to_days(%d) + to_microseconds(%d))", iv.Months, iv.Days, iv.Micros)
	case types.KindBytea:
		return "unhex(" + quote(hex.EncodeToString(d.Bytes())) + ")"
	}
	return "CAST(" + quote(types.FormatText(d, time.UTC)) + " AS " + duckType(t) + ")"
}

// loadTables replaces the DuckDB tables of ds with the rows states holds
// (those live at the end of the epoch being checked).
func loadTables(ctx context.Context, db *duckdb.DB, ds *Dataset, states map[string]*liveState) error {
	for _, t := range ds.Tables {
		cols := make([]string, len(t.Rel.Columns))
		for i, c := range t.Rel.Columns {
			cols[i] = `"` + c.Name + `" ` + duckType(c.Type)
		}
		if err := db.Exec(ctx, "CREATE OR REPLACE TABLE "+t.Rel.Name+" ("+strings.Join(cols, ", ")+")"); err != nil {
			return fmt.Errorf("oracle table %s: %w", t.Rel.Name, err)
		}
		rows := states[t.Rel.Name].snapshot()
		if len(rows) == 0 {
			continue
		}
		var b strings.Builder
		b.WriteString("INSERT INTO " + t.Rel.Name + " VALUES ")
		for i, r := range rows {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(")
			for j, d := range r {
				if j > 0 {
					b.WriteString(", ")
				}
				b.WriteString(duckLiteral(d, t.Rel.Columns[j].Type))
			}
			b.WriteString(")")
		}
		if err := db.Exec(ctx, b.String()); err != nil {
			return fmt.Errorf("oracle rows of %s: %w", t.Rel.Name, err)
		}
	}
	return nil
}

// The comparison with DuckDB is by value, not by spelling: the two
// engines agree on values but not always on result types (avg of integers
// is NUMERIC in Postgres and DOUBLE in DuckDB, sum of BIGINT NUMERIC and
// HUGEINT) nor on display (NUMERIC scale, JSON spacing and key order,
// interval units). normRow renders each value so that equal values under
// Postgres's rules render the same:
//
//   - numbers: exact ones (integers, NUMERIC) as their reduced decimal
//     ("2.50" and 2.5 are "2.5"); when either side's column is a float,
//     both as floats to 12 significant digits (6 for REAL), NaN and
//     ±Infinity by name, -0 as 0;
//   - JSON: parsed as jsonb and printed by Strata (keys sorted, Postgres
//     spacing);
//   - intervals: by their span ('1 mon' equals '30 days', as Postgres
//     compares them);
//   - CHAR: without trailing blanks (DuckDB has no CHAR and keeps the
//     blanks it was given);
//   - everything else: Postgres's text output in UTC; a DuckDB value of
//     another type family is first read as text into the view's type.
//
// The exact spelling is checked by the expected rows of a block, which
// are Postgres's output.
func normRow(r types.Row, want []types.Type, inexact []bool) string {
	parts := make([]string, len(r))
	for i, d := range r {
		parts[i] = normValue(d, want[i], inexact[i])
	}
	return strings.Join(parts, "|")
}

func isNumberKind(k types.Kind) bool {
	switch k {
	case types.KindInt16, types.KindInt32, types.KindInt64, types.KindFloat32, types.KindFloat64, types.KindNumeric:
		return true
	}
	return false
}

func normValue(d types.Datum, want types.Type, inexact bool) string {
	if d.IsNull() {
		return "NULL"
	}
	k := d.Kind()
	if isNumberKind(k) && isNumberKind(want.Kind) {
		if inexact {
			var f float64
			switch k {
			case types.KindFloat32, types.KindFloat64:
				f = d.Float64()
			case types.KindNumeric:
				f, _ = d.Decimal().Float64()
				switch d.Decimal().Form {
				case apd.NaN, apd.NaNSignaling:
					f = math.NaN()
				case apd.Infinite:
					f = math.Inf(1)
					if d.Decimal().Negative {
						f = math.Inf(-1)
					}
				}
			default:
				f = float64(d.Int64())
			}
			digits := 12
			if want.Kind == types.KindFloat32 {
				digits = 6
			}
			switch {
			case math.IsNaN(f):
				return "NaN"
			case math.IsInf(f, 1):
				return "Infinity"
			case math.IsInf(f, -1):
				return "-Infinity"
			case f == 0:
				return "0"
			}
			return strconv.FormatFloat(f, 'g', digits, 64)
		}
		switch k {
		case types.KindNumeric:
			var r apd.Decimal
			r.Reduce(d.Decimal())
			if r.IsZero() {
				return "0"
			}
			return r.Text('f')
		case types.KindFloat32, types.KindFloat64:
			return strconv.FormatFloat(d.Float64(), 'g', -1, 64)
		}
		return strconv.FormatInt(d.Int64(), 10)
	}
	if !sameFamily(k, want.Kind) {
		if v, err := types.ParseText(want, types.FormatText(d, time.UTC), time.UTC); err == nil {
			d, k = v, v.Kind()
		}
	}
	switch {
	case k == types.KindInterval:
		hi, lo := d.Interval().Span()
		return fmt.Sprintf("interval(%d,%d)", hi, lo)
	case want.Kind == types.KindChar && sameFamily(k, want.Kind):
		return strings.TrimRight(d.Str(), " ")
	}
	return types.FormatText(d, time.UTC)
}

func sameFamily(a, b types.Kind) bool {
	str := func(k types.Kind) bool {
		return k == types.KindChar || k == types.KindVarchar || k == types.KindText
	}
	return a == b || (str(a) && str(b))
}
