package types

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/stratadb/strata/internal/base"
)

// Kind is the family of a SQL type, without its modifiers.
type Kind uint8

// The kinds Strata supports, in the order of the Postgres names they mirror.
// KindUnknown is the type of an untyped NULL literal before binding.
const (
	KindUnknown     Kind = iota
	KindBool             // BOOLEAN
	KindInt16            // SMALLINT
	KindInt32            // INTEGER
	KindInt64            // BIGINT
	KindFloat32          // REAL
	KindFloat64          // DOUBLE PRECISION
	KindNumeric          // NUMERIC(p,s), exact decimal
	KindChar             // CHAR(n), blank-padded
	KindVarchar          // VARCHAR(n)
	KindText             // TEXT
	KindUUID             // UUID
	KindBytea            // BYTEA
	KindDate             // DATE
	KindTime             // TIME (without time zone)
	KindTimestamp        // TIMESTAMP(p) (without time zone)
	KindTimestampTZ      // TIMESTAMPTZ(p)
	KindInterval         // INTERVAL
	KindJSONB            // JSONB
	numKinds
)

var kindNames = [numKinds]string{
	KindUnknown:     "UNKNOWN",
	KindBool:        "BOOLEAN",
	KindInt16:       "SMALLINT",
	KindInt32:       "INTEGER",
	KindInt64:       "BIGINT",
	KindFloat32:     "REAL",
	KindFloat64:     "DOUBLE PRECISION",
	KindNumeric:     "NUMERIC",
	KindChar:        "CHAR",
	KindVarchar:     "VARCHAR",
	KindText:        "TEXT",
	KindUUID:        "UUID",
	KindBytea:       "BYTEA",
	KindDate:        "DATE",
	KindTime:        "TIME",
	KindTimestamp:   "TIMESTAMP",
	KindTimestampTZ: "TIMESTAMPTZ",
	KindInterval:    "INTERVAL",
	KindJSONB:       "JSONB",
}

// String returns the kind's SQL name without modifiers, e.g. "NUMERIC".
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Limits of type modifiers, as in Postgres.
const (
	// MaxNumericPrecision is the largest p of NUMERIC(p,s) (Postgres: 1000).
	MaxNumericPrecision = 1000
	// MaxCharLength is the largest n of CHAR(n) and VARCHAR(n) (Postgres:
	// 10485760).
	MaxCharLength = 10485760
	// MaxTimestampPrecision is the largest fractional-second precision of
	// TIME and TIMESTAMP: microseconds.
	MaxTimestampPrecision = 6
)

// Type is a SQL type with its modifiers. The zero Type is KindUnknown.
//
// Modifiers, by kind:
//   - NUMERIC: Precision p in 1..1000 and Scale s in 0..p; Precision 0 means
//     unconstrained NUMERIC (any precision and scale).
//   - CHAR, VARCHAR: Length n in 1..MaxCharLength; 0 means unlimited
//     (VARCHAR without n; CHAR without n is CHAR(1), as in Postgres).
//   - TIME, TIMESTAMP, TIMESTAMPTZ: Precision 0..6 digits of fractional
//     seconds; the constructors default it to 6.
//
// Types are small values: compare them with ==.
type Type struct {
	Kind      Kind
	Precision int32
	Scale     int32
	Length    int32
}

// Common types without modifiers.
var (
	Unknown     = Type{Kind: KindUnknown}
	Bool        = Type{Kind: KindBool}
	Int16       = Type{Kind: KindInt16}
	Int32       = Type{Kind: KindInt32}
	Int64       = Type{Kind: KindInt64}
	Float32     = Type{Kind: KindFloat32}
	Float64     = Type{Kind: KindFloat64}
	Numeric     = Type{Kind: KindNumeric} // unconstrained NUMERIC
	Text        = Type{Kind: KindText}
	Varchar     = Type{Kind: KindVarchar} // VARCHAR without a length
	UUID        = Type{Kind: KindUUID}
	Bytea       = Type{Kind: KindBytea}
	Date        = Type{Kind: KindDate}
	Time        = Type{Kind: KindTime, Precision: 6}
	Timestamp   = Type{Kind: KindTimestamp, Precision: 6}
	TimestampTZ = Type{Kind: KindTimestampTZ, Precision: 6}
	Interval    = Type{Kind: KindInterval}
	JSONB       = Type{Kind: KindJSONB}
)

// NumericType returns NUMERIC(p,s). It returns an error wrapping
// base.ErrInvalidArgument unless 1 <= p <= 1000 and 0 <= s <= p.
func NumericType(p, s int) (Type, error) {
	if p < 1 || p > MaxNumericPrecision {
		return Type{}, fmt.Errorf("NUMERIC precision %d must be between 1 and %d: %w", p, MaxNumericPrecision, base.ErrInvalidArgument)
	}
	if s < 0 || s > p {
		return Type{}, fmt.Errorf("NUMERIC scale %d must be between 0 and precision %d: %w", s, p, base.ErrInvalidArgument)
	}
	return Type{Kind: KindNumeric, Precision: int32(p), Scale: int32(s)}, nil
}

// CharType returns CHAR(n) (blank-padded). It returns an error wrapping
// base.ErrInvalidArgument unless 1 <= n <= MaxCharLength.
func CharType(n int) (Type, error) {
	if n < 1 || n > MaxCharLength {
		return Type{}, fmt.Errorf("length for type char must be between 1 and %d, not %d: %w", MaxCharLength, n, base.ErrInvalidArgument)
	}
	return Type{Kind: KindChar, Length: int32(n)}, nil
}

// VarcharType returns VARCHAR(n). It returns an error wrapping
// base.ErrInvalidArgument unless 1 <= n <= MaxCharLength.
func VarcharType(n int) (Type, error) {
	if n < 1 || n > MaxCharLength {
		return Type{}, fmt.Errorf("length for type varchar must be between 1 and %d, not %d: %w", MaxCharLength, n, base.ErrInvalidArgument)
	}
	return Type{Kind: KindVarchar, Length: int32(n)}, nil
}

// TimeLikeType returns TIME(p), TIMESTAMP(p) or TIMESTAMPTZ(p) for kind k.
// It returns an error wrapping base.ErrInvalidArgument unless 0 <= p <= 6
// and k is one of those kinds.
func TimeLikeType(k Kind, p int) (Type, error) {
	switch k {
	case KindTime, KindTimestamp, KindTimestampTZ:
	default:
		return Type{}, fmt.Errorf("type %s takes no precision: %w", k, base.ErrInvalidArgument)
	}
	if p < 0 || p > MaxTimestampPrecision {
		return Type{}, fmt.Errorf("%s precision %d must be between 0 and %d: %w", k, p, MaxTimestampPrecision, base.ErrInvalidArgument)
	}
	return Type{Kind: k, Precision: int32(p)}, nil
}

// String returns the SQL spelling of t, e.g. "NUMERIC(10,2)", "VARCHAR(20)",
// "TIMESTAMP(3)". ParseType accepts every string String returns.
func (t Type) String() string {
	switch t.Kind {
	case KindNumeric:
		if t.Precision > 0 {
			return fmt.Sprintf("NUMERIC(%d,%d)", t.Precision, t.Scale)
		}
	case KindChar, KindVarchar:
		if t.Length > 0 {
			return fmt.Sprintf("%s(%d)", t.Kind, t.Length)
		}
	case KindTime, KindTimestamp, KindTimestampTZ:
		if t.Precision != MaxTimestampPrecision {
			return fmt.Sprintf("%s(%d)", t.Kind, t.Precision)
		}
	}
	return t.Kind.String()
}

// Validate checks t's modifiers against the limits in the Type doc comment.
// The error wraps base.ErrInvalidArgument.
func (t Type) Validate() error {
	bad := func(what string) error {
		return fmt.Errorf("type %s: %s: %w", t, what, base.ErrInvalidArgument)
	}
	if t.Kind >= numKinds {
		return bad("unknown kind")
	}
	switch t.Kind {
	case KindNumeric:
		if t.Precision == 0 && t.Scale == 0 {
			return nil
		}
		_, err := NumericType(int(t.Precision), int(t.Scale))
		return err
	case KindChar, KindVarchar:
		if t.Length < 0 || t.Length > MaxCharLength {
			return bad("length out of range")
		}
		if t.Kind == KindChar && t.Length == 0 {
			return bad("CHAR needs a length of at least 1")
		}
	case KindTime, KindTimestamp, KindTimestampTZ:
		if t.Precision < 0 || t.Precision > MaxTimestampPrecision {
			return bad("precision out of range")
		}
	}
	if t.Precision != 0 && t.Kind != KindNumeric && t.Kind != KindTime && t.Kind != KindTimestamp && t.Kind != KindTimestampTZ {
		return bad("kind takes no precision")
	}
	if t.Scale != 0 && t.Kind != KindNumeric {
		return bad("kind takes no scale")
	}
	if t.Length != 0 && t.Kind != KindChar && t.Kind != KindVarchar {
		return bad("kind takes no length")
	}
	return nil
}

// IsNumeric reports whether t is one of the number kinds (integers, floats,
// NUMERIC).
func (t Type) IsNumeric() bool {
	switch t.Kind {
	case KindInt16, KindInt32, KindInt64, KindFloat32, KindFloat64, KindNumeric:
		return true
	}
	return false
}

// IsString reports whether t is CHAR, VARCHAR or TEXT.
func (t Type) IsString() bool {
	return t.Kind == KindChar || t.Kind == KindVarchar || t.Kind == KindText
}

// typeAliases maps every accepted spelling (lower case, single spaces) to a
// kind. Modifiers in parentheses are parsed separately.
var typeAliases = map[string]Kind{
	"boolean": KindBool, "bool": KindBool,
	"smallint": KindInt16, "int2": KindInt16,
	"integer": KindInt32, "int": KindInt32, "int4": KindInt32,
	"bigint": KindInt64, "int8": KindInt64,
	"real": KindFloat32, "float4": KindFloat32,
	"double precision": KindFloat64, "float8": KindFloat64, "double": KindFloat64, "float": KindFloat64,
	"numeric": KindNumeric, "decimal": KindNumeric,
	"char": KindChar, "character": KindChar, "bpchar": KindChar,
	"varchar": KindVarchar, "character varying": KindVarchar,
	"text": KindText, "string": KindText,
	"uuid":  KindUUID,
	"bytea": KindBytea,
	"date":  KindDate,
	"time":  KindTime, "time without time zone": KindTime,
	"timestamp": KindTimestamp, "timestamp without time zone": KindTimestamp,
	"timestamptz": KindTimestampTZ, "timestamp with time zone": KindTimestampTZ,
	"interval": KindInterval,
	"jsonb":    KindJSONB,
}

// ParseType parses a type name as Postgres spells it, case-insensitively:
// "bigint", "int8", "numeric(10, 2)", "varchar(20)", "character varying",
// "timestamp(3)", "timestamp with time zone", "double precision", ... It is
// the inverse of Type.String and accepts the common aliases. Unknown names
// and bad modifiers give an error wrapping base.ErrInvalidArgument that names
// the input.
func ParseType(s string) (Type, error) {
	in := s
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	var mods []int
	var suffix string
	if i := strings.IndexByte(s, '('); i >= 0 {
		j := strings.IndexByte(s, ')')
		if j < i {
			return Type{}, fmt.Errorf("type %q: unbalanced parentheses: %w", in, base.ErrInvalidArgument)
		}
		for _, part := range strings.Split(s[i+1:j], ",") {
			n, err := strconv.Atoi(strings.TrimSpace(part))
			if err != nil {
				return Type{}, fmt.Errorf("type %q: modifier %q is not an integer: %w", in, part, base.ErrInvalidArgument)
			}
			mods = append(mods, n)
		}
		suffix = strings.TrimSpace(s[j+1:])
		s = strings.TrimSpace(s[:i])
		if suffix != "" {
			// "timestamp(3) with time zone"
			s = s + " " + suffix
		}
	}
	k, ok := typeAliases[s]
	if !ok {
		return Type{}, fmt.Errorf("type %q does not exist: %w", in, base.ErrInvalidArgument)
	}
	var t Type
	var err error
	switch k {
	case KindNumeric:
		switch len(mods) {
		case 0:
			t = Numeric
		case 1:
			t, err = NumericType(mods[0], 0)
		case 2:
			t, err = NumericType(mods[0], mods[1])
		default:
			err = fmt.Errorf("NUMERIC takes at most two modifiers: %w", base.ErrInvalidArgument)
		}
	case KindChar:
		switch len(mods) {
		case 0:
			t = Type{Kind: KindChar, Length: 1}
		case 1:
			t, err = CharType(mods[0])
		default:
			err = fmt.Errorf("CHAR takes one modifier: %w", base.ErrInvalidArgument)
		}
	case KindVarchar:
		switch len(mods) {
		case 0:
			t = Varchar
		case 1:
			t, err = VarcharType(mods[0])
		default:
			err = fmt.Errorf("VARCHAR takes one modifier: %w", base.ErrInvalidArgument)
		}
	case KindTime, KindTimestamp, KindTimestampTZ:
		switch len(mods) {
		case 0:
			t = Type{Kind: k, Precision: MaxTimestampPrecision}
		case 1:
			t, err = TimeLikeType(k, mods[0])
		default:
			err = fmt.Errorf("%s takes one modifier: %w", k, base.ErrInvalidArgument)
		}
	default:
		if len(mods) > 0 {
			err = fmt.Errorf("%s takes no modifiers: %w", k, base.ErrInvalidArgument)
		}
		t = Type{Kind: k}
	}
	if err != nil {
		return Type{}, fmt.Errorf("type %q: %w", in, err)
	}
	return t, nil
}

// MarshalText encodes t as its SQL spelling, so that schema files hold
// "NUMERIC(10,2)" rather than a struct.
func (t Type) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText parses what MarshalText wrote.
func (t *Type) UnmarshalText(b []byte) error {
	p, err := ParseType(string(b))
	if err != nil {
		return err
	}
	*t = p
	return nil
}
