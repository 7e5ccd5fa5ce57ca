package format

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// unit is how an integer fills a temporal column.
type unit uint8

const (
	unitDefault unit = iota // days for DATE, milliseconds for timestamps
	unitDays
	unitMillis
	unitMicros
	unitNanos
)

// hint is what an envelope's schema says about a field: the unit of a
// temporal integer, or that a string is a Kafka Connect Decimal (the
// base64 of the big-endian two's complement unscaled value) of a scale.
type hint struct {
	unit    unit
	decimal bool
	scale   int
}

// fromConnectDecimal reads a Kafka Connect Decimal: base64 of the
// big-endian two's complement unscaled value.
func fromConnectDecimal(col catalog.Column, s string, scale int) (types.Datum, error) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) == 0 {
		return types.Null, fieldError(col.Name, strconv.Quote(s), fmt.Errorf("not the base64 bytes of a decimal: %w", base.ErrInvalidArgument))
	}
	v := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 { // negative: subtract 2^(8n)
		v.Sub(v, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	r := new(big.Rat).SetFrac(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil))
	return fromText(col, r.FloatString(scale))
}

// fieldError names the field and the value of a conversion that failed.
// The value is cut to 64 bytes.
func fieldError(field, value string, err error) error {
	if len(value) > 64 {
		value = value[:64] + "..."
	}
	return fmt.Errorf("field %q: value %s: %w", field, value, err)
}

func misfit(what string, t types.Type) error {
	return fmt.Errorf("%s does not fit type %s: %w", what, t, base.ErrInvalidArgument)
}

// nullCheck returns NULL, or an error when the column is NOT NULL.
func nullCheck(col catalog.Column, value string) (types.Datum, error) {
	if col.NotNull {
		return types.Null, fieldError(col.Name, value, fmt.Errorf("NULL in NOT NULL column: %w", base.ErrInvalidArgument))
	}
	return types.Null, nil
}

// fromText converts a string by the column type's text input.
func fromText(col catalog.Column, s string) (types.Datum, error) {
	d, err := types.ParseText(col.Type, s, nil)
	if err != nil {
		return types.Null, fieldError(col.Name, strconv.Quote(s), err)
	}
	return d, nil
}

// fromJSON converts one JSON value (raw text) to col's type.
func fromJSON(col catalog.Column, raw json.RawMessage, h hint) (types.Datum, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nullCheck(col, "null")
	}
	t := col.Type
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return types.Null, fieldError(col.Name, string(raw), fmt.Errorf("bad JSON string: %v: %w", err, base.ErrInvalidArgument))
		}
		if h.decimal && t.Kind != types.KindBytea {
			return fromConnectDecimal(col, s, h.scale)
		}
		return fromText(col, s)
	case 't', 'f':
		switch {
		case t.Kind == types.KindBool, t.IsString():
			return fromText(col, string(raw))
		case t.Kind == types.KindJSONB:
			return types.NewJSONB(string(raw))
		}
		return types.Null, fieldError(col.Name, string(raw), misfit("a JSON boolean", t))
	case '{', '[':
		switch {
		case t.Kind == types.KindJSONB:
			d, err := types.NewJSONB(string(raw))
			if err != nil {
				return types.Null, fieldError(col.Name, string(raw), err)
			}
			return d, nil
		case t.IsString():
			var buf bytes.Buffer
			if err := json.Compact(&buf, raw); err != nil {
				return types.Null, fieldError(col.Name, string(raw), fmt.Errorf("bad JSON: %v: %w", err, base.ErrInvalidArgument))
			}
			return fromText(col, buf.String())
		}
		return types.Null, fieldError(col.Name, string(raw), misfit("a JSON object or array", t))
	}
	return fromNumber(col, string(raw), h.unit)
}

// fromNumber converts a number's literal text: exact for numeric kinds,
// a count of days or of a time unit for temporal kinds.
func fromNumber(col catalog.Column, lit string, u unit) (types.Datum, error) {
	t := col.Type
	switch t.Kind {
	case types.KindInt16, types.KindInt32, types.KindInt64, types.KindFloat32, types.KindFloat64, types.KindNumeric,
		types.KindChar, types.KindVarchar, types.KindText:
		return fromText(col, lit)
	case types.KindJSONB:
		d, err := types.NewJSONB(lit)
		if err != nil {
			return types.Null, fieldError(col.Name, lit, err)
		}
		return d, nil
	case types.KindDate, types.KindTimestamp, types.KindTimestampTZ:
		n, err := strconv.ParseInt(lit, 10, 64)
		if err != nil {
			return types.Null, fieldError(col.Name, lit, fmt.Errorf("a %s from a number needs a whole number: %w", t, base.ErrInvalidArgument))
		}
		d, err := fromEpochCount(t, n, u)
		if err != nil {
			return types.Null, fieldError(col.Name, lit, err)
		}
		return d, nil
	}
	return types.Null, fieldError(col.Name, lit, misfit("a number", t))
}

// fromEpochCount reads n days (DATE) or n time units (timestamps) since
// 1970-01-01 00:00:00 UTC.
func fromEpochCount(t types.Type, n int64, u unit) (types.Datum, error) {
	if t.Kind == types.KindDate && (u == unitDefault || u == unitDays) {
		if n < int64(types.MinDate) || n > int64(types.MaxDate) {
			return types.Null, fmt.Errorf("date out of range: %w", base.ErrOutOfRange)
		}
		return types.NewDate(int32(n)), nil
	}
	var micros int64
	switch u {
	case unitDefault, unitMillis:
		if n > math.MaxInt64/1000 || n < math.MinInt64/1000 {
			return types.Null, fmt.Errorf("timestamp out of range: %w", base.ErrOutOfRange)
		}
		micros = n * 1000
	case unitMicros:
		micros = n
	case unitNanos:
		micros = n / 1000
		if n%1000 < 0 {
			micros-- // floor
		}
	case unitDays:
		if n > math.MaxInt64/86_400_000_000 || n < math.MinInt64/86_400_000_000 {
			return types.Null, fmt.Errorf("timestamp out of range: %w", base.ErrOutOfRange)
		}
		micros = n * 86_400_000_000
	}
	if micros < types.MinTimestamp || micros > types.MaxTimestamp {
		return types.Null, fmt.Errorf("timestamp out of range: %w", base.ErrOutOfRange)
	}
	// Cast applies the column's precision (and reads a DATE's day).
	return types.Cast(types.NewTimestamp(micros), t, types.CastContext{})
}

// fromGo converts a decoded Avro value to col's type.
func fromGo(col catalog.Column, v any) (types.Datum, error) {
	t := col.Type
	switch x := v.(type) {
	case nil:
		return nullCheck(col, "null")
	case string:
		return fromText(col, x)
	case []byte:
		if t.Kind == types.KindBytea {
			return types.NewBytea(x), nil
		}
		return fromText(col, string(x))
	case [16]byte:
		if t.Kind == types.KindUUID {
			return types.NewUUID(x), nil
		}
		return types.Null, fieldError(col.Name, fmt.Sprintf("%x", x), misfit("a 16-byte fixed", t))
	case bool:
		if t.Kind == types.KindBool || t.IsString() {
			return fromText(col, strconv.FormatBool(x))
		}
		return types.Null, fieldError(col.Name, strconv.FormatBool(x), misfit("a boolean", t))
	case int:
		return fromNumber(col, strconv.FormatInt(int64(x), 10), unitDefault)
	case int32:
		return fromNumber(col, strconv.FormatInt(int64(x), 10), unitDefault)
	case int64:
		return fromNumber(col, strconv.FormatInt(x, 10), unitDefault)
	case float32:
		return fromFloat(col, float64(x), 32)
	case float64:
		return fromFloat(col, x, 64)
	case *big.Rat:
		return fromText(col, ratText(x))
	case time.Time:
		return fromTime(col, x)
	case time.Duration:
		if t.Kind == types.KindTime {
			return types.NewTime(x.Microseconds()), nil
		}
		return types.Null, fieldError(col.Name, x.String(), misfit("a time of day", t))
	case map[string]any, []any:
		b, err := json.Marshal(x)
		if err != nil {
			return types.Null, fieldError(col.Name, fmt.Sprint(x), fmt.Errorf("%v: %w", err, base.ErrInvalidArgument))
		}
		if t.Kind == types.KindJSONB {
			return types.NewJSONB(string(b))
		}
		if t.IsString() {
			return fromText(col, string(b))
		}
		return types.Null, fieldError(col.Name, string(b), misfit("a record, map or array", t))
	}
	return types.Null, fieldError(col.Name, fmt.Sprint(v), misfit(fmt.Sprintf("a value of Go type %T", v), t))
}

func fromFloat(col catalog.Column, f float64, bits int) (types.Datum, error) {
	switch col.Type.Kind {
	case types.KindFloat32:
		return types.NewFloat32(float32(f)), nil
	case types.KindFloat64:
		return types.NewFloat64(f), nil
	}
	return fromNumber(col, strconv.FormatFloat(f, 'g', -1, bits), unitDefault)
}

func fromTime(col catalog.Column, x time.Time) (types.Datum, error) {
	x = x.UTC()
	switch col.Type.Kind {
	case types.KindDate:
		days := x.Unix() / 86400
		if x.Unix()%86400 < 0 {
			days--
		}
		d, err := fromEpochCount(col.Type, days, unitDays)
		if err != nil {
			return types.Null, fieldError(col.Name, x.String(), err)
		}
		return d, nil
	case types.KindTimestamp, types.KindTimestampTZ:
		d, err := fromEpochCount(col.Type, x.UnixMicro(), unitMicros)
		if err != nil {
			return types.Null, fieldError(col.Name, x.String(), err)
		}
		return d, nil
	}
	return fromText(col, x.Format("2006-01-02 15:04:05.999999Z07:00"))
}

// ratText writes an Avro decimal exactly (its denominator is a power of
// ten up to 10^38).
func ratText(r *big.Rat) string {
	s := r.FloatString(40)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
