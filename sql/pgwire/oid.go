package pgwire

import (
	"github.com/stratadb/strata/internal/types"
)

// Type OIDs of Postgres's pg_type, which clients use to pick decoders.
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidFloat4      = 700
	oidFloat8      = 701
	oidUnknown     = 705
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

// OID returns the Postgres type OID of t.
func OID(t types.Type) uint32 {
	switch t.Kind {
	case types.KindBool:
		return oidBool
	case types.KindInt16:
		return oidInt2
	case types.KindInt32:
		return oidInt4
	case types.KindInt64:
		return oidInt8
	case types.KindFloat32:
		return oidFloat4
	case types.KindFloat64:
		return oidFloat8
	case types.KindNumeric:
		return oidNumeric
	case types.KindChar:
		return oidBpchar
	case types.KindVarchar:
		return oidVarchar
	case types.KindText:
		return oidText
	case types.KindUUID:
		return oidUUID
	case types.KindBytea:
		return oidBytea
	case types.KindDate:
		return oidDate
	case types.KindTime:
		return oidTime
	case types.KindTimestamp:
		return oidTimestamp
	case types.KindTimestampTZ:
		return oidTimestampTZ
	case types.KindInterval:
		return oidInterval
	case types.KindJSONB:
		return oidJSONB
	}
	return oidUnknown
}

// typeOfOID is OID's inverse for parameter types a client names; 0 and
// unknown OIDs give types.Unknown.
func typeOfOID(oid uint32) types.Type {
	switch oid {
	case oidBool:
		return types.Bool
	case oidInt2:
		return types.Int16
	case oidInt4:
		return types.Int32
	case oidInt8:
		return types.Int64
	case oidFloat4:
		return types.Float32
	case oidFloat8:
		return types.Float64
	case oidNumeric:
		return types.Numeric
	case oidBpchar:
		return types.Type{Kind: types.KindChar, Length: 1}
	case oidVarchar:
		return types.Varchar
	case oidText:
		return types.Text
	case oidUUID:
		return types.UUID
	case oidBytea:
		return types.Bytea
	case oidDate:
		return types.Date
	case oidTime:
		return types.Time
	case oidTimestamp:
		return types.Timestamp
	case oidTimestampTZ:
		return types.TimestampTZ
	case oidInterval:
		return types.Interval
	case oidJSONB:
		return types.JSONB
	}
	return types.Unknown
}

// typeSize is pg_type.typlen: the fixed size in bytes, or -1.
func typeSize(t types.Type) int16 {
	switch t.Kind {
	case types.KindBool:
		return 1
	case types.KindInt16:
		return 2
	case types.KindInt32, types.KindFloat32, types.KindDate:
		return 4
	case types.KindInt64, types.KindFloat64, types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		return 8
	case types.KindInterval, types.KindUUID:
		return 16
	}
	return -1
}

// typeModifier is pg_attribute.atttypmod for t: -1 when none, else
// Postgres's encoding (VARCHAR(n) is n+4, NUMERIC(p,s) ((p<<16)|s)+4,
// TIMESTAMP(p) p).
func typeModifier(t types.Type) int32 {
	switch t.Kind {
	case types.KindChar, types.KindVarchar:
		if t.Length > 0 {
			return t.Length + 4
		}
	case types.KindNumeric:
		if t.Precision > 0 {
			return (t.Precision<<16 | t.Scale) + 4
		}
	case types.KindTime, types.KindTimestamp, types.KindTimestampTZ:
		if t.Precision != types.MaxTimestampPrecision {
			return t.Precision
		}
	}
	return -1
}
