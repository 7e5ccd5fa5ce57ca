package pgcdc

import (
	"fmt"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// pgType is a Postgres built-in type the decoder reads (its text output
// goes through types.ParseText) and the Strata kinds it may feed.
type pgType struct {
	name  string
	kinds []types.Kind
}

var (
	intKinds    = []types.Kind{types.KindInt16, types.KindInt32, types.KindInt64, types.KindNumeric, types.KindFloat32, types.KindFloat64}
	floatKinds  = []types.Kind{types.KindFloat32, types.KindFloat64, types.KindNumeric}
	stringKinds = []types.Kind{types.KindText, types.KindVarchar, types.KindChar}
)

// supported maps the OIDs of the supported Postgres types (pg_type.dat)
// to what they may feed. Every supported type may also feed a string
// column (its text form).
var supported = map[uint32]pgType{
	16:   {"boolean", []types.Kind{types.KindBool}},
	17:   {"bytea", []types.Kind{types.KindBytea}},
	20:   {"bigint", intKinds},
	21:   {"smallint", intKinds},
	23:   {"integer", intKinds},
	25:   {"text", stringKinds},
	114:  {"json", []types.Kind{types.KindJSONB}},
	700:  {"real", floatKinds},
	701:  {"double precision", floatKinds},
	1042: {"character", stringKinds},
	1043: {"character varying", stringKinds},
	1082: {"date", []types.Kind{types.KindDate}},
	1083: {"time without time zone", []types.Kind{types.KindTime}},
	1114: {"timestamp without time zone", []types.Kind{types.KindTimestamp}},
	1184: {"timestamp with time zone", []types.Kind{types.KindTimestampTZ}},
	1186: {"interval", []types.Kind{types.KindInterval}},
	1700: {"numeric", []types.Kind{types.KindNumeric, types.KindFloat32, types.KindFloat64}},
	2950: {"uuid", []types.Kind{types.KindUUID}},
	3802: {"jsonb", []types.Kind{types.KindJSONB}},
}

// checkType reports whether a column of Postgres type oid (named pgName
// by format_type, "" when unknown; isArray from pg_type.typcategory) can
// feed a Strata column of type t. The error wraps base.ErrInvalidArgument
// and names the Strata table and column.
func checkType(table, column string, oid uint32, pgName string, isArray bool, t types.Type) error {
	if pgName == "" {
		pgName = fmt.Sprintf("with OID %d", oid)
	}
	if isArray {
		return fmt.Errorf("postgres-cdc: table %s column %s: array type %s is not supported: %w", table, column, pgName, base.ErrInvalidArgument)
	}
	pt, ok := supported[oid]
	if !ok {
		return fmt.Errorf("postgres-cdc: table %s column %s: Postgres type %s is not supported (supported: numeric, integers, floats, boolean, text, varchar, char, date, time, timestamp, timestamptz, interval, json, jsonb, bytea, uuid): %w",
			table, column, pgName, base.ErrInvalidArgument)
	}
	if slices.Contains(pt.kinds, t.Kind) || slices.Contains(stringKinds, t.Kind) {
		return nil
	}
	return fmt.Errorf("postgres-cdc: table %s column %s: Postgres type %s cannot feed a column of type %s: %w", table, column, pt.name, t, base.ErrInvalidArgument)
}
