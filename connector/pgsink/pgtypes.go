package pgsink

import (
	"slices"
	"strings"

	"github.com/stratadb/strata/internal/types"
)

// OIDs of the Postgres built-in types a sink writes (pg_type.dat).
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidJSON        = 114
	oidFloat4      = 700
	oidFloat8      = 701
	oidBpchar      = 1042
	oidVarchar     = 1043
	oidDate        = 1082
	oidTime        = 1083
	oidTimestamp   = 1114
	oidTimestampTZ = 1184
	oidInterval    = 1186
	oidNumeric     = 1700
	oidUUID        = 2950
	oidJSONB       = 3802
)

// accepts lists, per Strata kind, the Postgres column types that hold its
// values without loss (the reverse of connector/pgcdc's mapping): wider
// integers and numeric for integers, float8 and numeric for floats,
// numeric alone for NUMERIC, the matching date and time types. Every kind
// may also go into a string column (text, varchar, char) as its Postgres
// text form.
var accepts = map[types.Kind][]uint32{
	types.KindBool:        {oidBool},
	types.KindInt16:       {oidInt2, oidInt4, oidInt8, oidNumeric, oidFloat4, oidFloat8},
	types.KindInt32:       {oidInt4, oidInt8, oidNumeric, oidFloat8},
	types.KindInt64:       {oidInt8, oidNumeric},
	types.KindFloat32:     {oidFloat4, oidFloat8, oidNumeric},
	types.KindFloat64:     {oidFloat8, oidNumeric},
	types.KindNumeric:     {oidNumeric},
	types.KindChar:        {oidBpchar},
	types.KindVarchar:     {oidVarchar},
	types.KindText:        {oidText},
	types.KindUUID:        {oidUUID},
	types.KindBytea:       {oidBytea},
	types.KindDate:        {oidDate, oidTimestamp, oidTimestampTZ},
	types.KindTime:        {oidTime},
	types.KindTimestamp:   {oidTimestamp},
	types.KindTimestampTZ: {oidTimestampTZ},
	types.KindInterval:    {oidInterval},
	types.KindJSONB:       {oidJSONB, oidJSON},
}

var stringOIDs = []uint32{oidText, oidVarchar, oidBpchar}

// Accepts reports whether a Postgres column of type oid (a built-in type,
// or the base type of a domain) holds values of Strata type t.
func Accepts(oid uint32, t types.Type) bool {
	return slices.Contains(accepts[t.Kind], oid) || slices.Contains(stringOIDs, oid)
}

// TypeFor returns the Postgres type that holds values of t exactly, as
// CREATE TABLE spells it: the type's SQL name with its modifiers
// (NUMERIC(10,2), VARCHAR(20), TIMESTAMPTZ(3)).
func TypeFor(t types.Type) string {
	return strings.ToLower(t.String())
}

// acceptedNames spells the types Accepts allows for t, for messages.
func acceptedNames(t types.Type) string {
	names := map[uint32]string{oidBool: "boolean", oidBytea: "bytea", oidInt8: "bigint", oidInt2: "smallint", oidInt4: "integer",
		oidText: "text", oidJSON: "json", oidFloat4: "real", oidFloat8: "double precision", oidBpchar: "character",
		oidVarchar: "character varying", oidDate: "date", oidTime: "time", oidTimestamp: "timestamp", oidTimestampTZ: "timestamptz",
		oidInterval: "interval", oidNumeric: "numeric", oidUUID: "uuid", oidJSONB: "jsonb"}
	var out []string
	for _, o := range append(slices.Clone(accepts[t.Kind]), stringOIDs...) {
		if !slices.Contains(out, names[o]) {
			out = append(out, names[o])
		}
	}
	return strings.Join(out, ", ")
}
