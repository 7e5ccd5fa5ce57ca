package types

import (
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
)

// Text input follows Postgres's type input functions (boolin, int4in,
// float8in, numeric_in, varchar_in, bpcharin, uuid_in, byteain, date_in,
// time_in, timestamp_in, timestamptz_in, interval_in, jsonb_in) with
// DateStyle ISO and IntervalStyle postgres. The invariant the tests hold
// (parse-roundtrip): for every datum d of type t and every zone loc,
// ParseText(t, FormatText(d, loc), loc) returns a datum equal to d under
// Compare with the same FormatText.
//
// Deliberate differences from Postgres are listed in the doc comments of
// the kind's parser (parse_datetime.go, parse_interval.go).

// ValueError is a value that could not be read or converted. Its message is
// the one Postgres gives, word for word ("invalid input syntax for type
// integer: \"abc\""), Code is the SQLSTATE the wire protocol reports, and
// Detail, when set, is Postgres's DETAIL line. It wraps base.ErrOutOfRange
// for SQLSTATE class 22003/22008/22015 errors and base.ErrInvalidArgument
// for the others, so errors.Is classifies it.
type ValueError struct {
	Code   string // SQLSTATE, e.g. "22P02"
	Msg    string // Postgres's primary message
	Detail string // Postgres's DETAIL, or ""
	marker error
}

// Error returns the Postgres message.
func (e *ValueError) Error() string { return e.Msg }

// Unwrap returns base.ErrOutOfRange or base.ErrInvalidArgument.
func (e *ValueError) Unwrap() error { return e.marker }

// SQLState returns the Postgres error code, so that the SQL layer reports
// it without knowing this type.
func (e *ValueError) SQLState() string { return e.Code }

// SQLDetail returns Postgres's DETAIL line, or "".
func (e *ValueError) SQLDetail() string { return e.Detail }

// SQLSTATE codes of the errors this package returns.
const (
	codeInvalidText    = "22P02" // invalid_text_representation
	codeOutOfRange     = "22003" // numeric_value_out_of_range
	codeStringTooLong  = "22001" // string_data_right_truncation
	codeDatetimeFormat = "22007" // invalid_datetime_format
	codeDatetimeRange  = "22008" // datetime_field_overflow
	codeIntervalRange  = "22015" // interval_field_overflow
	codeTZDisplacement = "22009" // invalid_time_zone_displacement_value
	codeInvalidParam   = "22023" // invalid_parameter_value
	codeBadCharacter   = "22021" // character_not_in_repertoire
	codeCannotCoerce   = "42846" // cannot_coerce
	codeNotSupported   = "0A000" // feature_not_supported
)

func valueErr(code, msg string) *ValueError {
	marker := base.ErrInvalidArgument
	switch code {
	case codeOutOfRange, codeDatetimeRange, codeIntervalRange:
		marker = base.ErrOutOfRange
	}
	return &ValueError{Code: code, Msg: msg, marker: marker}
}

func syntaxErr(typeName, s string) error {
	return valueErr(codeInvalidText, fmt.Sprintf("invalid input syntax for type %s: \"%s\"", typeName, s))
}

// pgTypeName is the name Postgres's format_type_be gives a kind in error
// messages ("cannot cast type boolean to date").
// PGTypeName is PostgreSQL's name of type t as pg_typeof shows it, without
// its modifiers: "integer", "numeric", "character varying", "timestamp
// without time zone", "unknown" for an untyped literal or NULL.
func PGTypeName(t Type) string {
	if t.Kind == KindUnknown {
		return "unknown"
	}
	return pgTypeName(t.Kind)
}

func pgTypeName(k Kind) string {
	switch k {
	case KindBool:
		return "boolean"
	case KindInt16:
		return "smallint"
	case KindInt32:
		return "integer"
	case KindInt64:
		return "bigint"
	case KindFloat32:
		return "real"
	case KindFloat64:
		return "double precision"
	case KindNumeric:
		return "numeric"
	case KindChar:
		return "character"
	case KindVarchar:
		return "character varying"
	case KindText:
		return "text"
	case KindUUID:
		return "uuid"
	case KindBytea:
		return "bytea"
	case KindDate:
		return "date"
	case KindTime:
		return "time without time zone"
	case KindTimestamp:
		return "timestamp without time zone"
	case KindTimestampTZ:
		return "timestamp with time zone"
	case KindInterval:
		return "interval"
	case KindJSONB:
		return "jsonb"
	}
	return "unknown"
}

// ParseText reads s, a value in Postgres's text input format, as a value of
// type t, applying t's modifiers as an INSERT into a column of type t does
// (NUMERIC(p,s) rounds to scale s, VARCHAR(n) refuses longer text unless
// the excess is spaces, CHAR(n) pads, TIMESTAMP(p) rounds to p digits).
// loc is the session time zone: a TIMESTAMPTZ written without a zone is
// local time in loc (nil means UTC); other kinds ignore it.
//
// Per kind, the accepted forms are Postgres's: see parseBool, parseInt,
// parseFloat, parseNumeric, parseString, parseUUID, parseBytea, and
// parse_datetime.go and parse_interval.go for the date/time kinds. Words
// that need the current time ('now', 'today', 'tomorrow', 'yesterday') are
// refused: ParseText reads no clock, and the binder substitutes them.
//
// Errors are *ValueError with Postgres's message (`invalid input syntax for
// type integer: "abc"`, `value "99999" is out of range for type smallint`),
// wrapping base.ErrOutOfRange for values outside the type's range and
// base.ErrInvalidArgument otherwise.
func ParseText(t Type, s string, loc *time.Location) (Datum, error) {
	switch t.Kind {
	case KindBool:
		return parseBool(s)
	case KindInt16, KindInt32, KindInt64:
		return parseInt(t.Kind, s)
	case KindFloat32, KindFloat64:
		return parseFloat(t.Kind, s)
	case KindNumeric:
		return parseNumeric(t, s)
	case KindChar, KindVarchar, KindText:
		return parseString(t, s, false)
	case KindUUID:
		return parseUUID(s)
	case KindBytea:
		return parseBytea(s)
	case KindDate:
		return parseDate(s)
	case KindTime:
		return parseTime(t, s)
	case KindTimestamp, KindTimestampTZ:
		return parseTimestamp(t, s, loc)
	case KindInterval:
		return parseInterval(s)
	case KindJSONB:
		d, err := NewJSONB(s)
		if err != nil {
			// Postgres: the message names json, the detail says what
			// is wrong in Postgres's words (jsonSyntaxDetail).
			e := valueErr(codeInvalidText, "invalid input syntax for type json")
			e.Detail = jsonSyntaxDetail(s)
			if e.Detail == "" {
				e.Detail = base.UserMessage(err.Error())
			}
			return Null, e
		}
		return d, nil
	}
	return Null, valueErr(codeInvalidParam, fmt.Sprintf("cannot read a value of type %s", t))
}

// isSpace is C's isspace in the C locale, which Postgres's input functions
// skip around a value.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && isSpace(s[i]) {
		i++
	}
	for j > i && isSpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isLetter reports an ASCII letter.
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return len(s) > 0
}

// parseBool is boolin (parse_bool_with_len): after trimming white space,
// any case-insensitive prefix of "true", "yes", "false", "no" (one letter
// is enough), "on", "off" (at least two letters), or exactly "1" or "0".
func parseBool(s string) (Datum, error) {
	v := strings.ToLower(trimSpace(s))
	if v != "" {
		switch v[0] {
		case 't':
			if strings.HasPrefix("true", v) {
				return NewBool(true), nil
			}
		case 'y':
			if strings.HasPrefix("yes", v) {
				return NewBool(true), nil
			}
		case 'f':
			if strings.HasPrefix("false", v) {
				return NewBool(false), nil
			}
		case 'n':
			if strings.HasPrefix("no", v) {
				return NewBool(false), nil
			}
		case 'o':
			if len(v) >= 2 && strings.HasPrefix("on", v) {
				return NewBool(true), nil
			}
			if len(v) >= 2 && strings.HasPrefix("off", v) {
				return NewBool(false), nil
			}
		case '1':
			if v == "1" {
				return NewBool(true), nil
			}
		case '0':
			if v == "0" {
				return NewBool(false), nil
			}
		}
	}
	return Null, syntaxErr("boolean", s)
}

// parseInt is Postgres 15's pg_strtoint16/32/64: optional white space, an
// optional sign, decimal digits, optional white space. No underscores, no
// hexadecimal (those came in Postgres 16).
func parseInt(k Kind, s string) (Datum, error) {
	v := trimSpace(s)
	digits := v
	if digits != "" && (digits[0] == '+' || digits[0] == '-') {
		digits = digits[1:]
	}
	if !allDigits(digits) {
		return Null, syntaxErr(pgTypeName(k), s)
	}
	bits := 64
	switch k {
	case KindInt16:
		bits = 16
	case KindInt32:
		bits = 32
	}
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		return Null, valueErr(codeOutOfRange, fmt.Sprintf("value \"%s\" is out of range for type %s", s, pgTypeName(k)))
	}
	switch k {
	case KindInt16:
		return NewInt16(int16(n)), nil
	case KindInt32:
		return NewInt32(int32(n)), nil
	}
	return NewInt64(n), nil
}

// scanDecimal returns the length of the longest prefix of s that C's strtod
// reads as a decimal number: [+-] (digits [. digits] | . digits)
// [(e|E) [+-] digits]; 0 if there is none. mantissaNonZero reports a
// non-zero digit before the exponent.
func scanDecimal(s string) (n int, mantissaNonZero bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && isDigit(s[i]) {
		if s[i] != '0' {
			mantissaNonZero = true
		}
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			if s[i] != '0' {
				mantissaNonZero = true
			}
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && isDigit(s[j]) {
			for j < len(s) && isDigit(s[j]) {
				j++
			}
			i = j
		}
	}
	return i, mantissaNonZero
}

// parseFloat is float4in/float8in: white space, then a decimal number or
// (case-insensitively, with an optional sign) "NaN", "Infinity" or "inf",
// then white space. A REAL is rounded once, from the decimal text to the
// nearest float32, as strtof does. A finite input that overflows to
// infinity or underflows to zero is out of range, as in Postgres
// (denormals are kept). Unlike glibc's strtod, hexadecimal floats are not
// read.
func parseFloat(k Kind, s string) (Datum, error) {
	v := trimSpace(s)
	bits := 64
	if k == KindFloat32 {
		bits = 32
	}
	var f float64
	unsigned := v
	if unsigned != "" && (unsigned[0] == '+' || unsigned[0] == '-') {
		unsigned = unsigned[1:]
	}
	switch lower := strings.ToLower(unsigned); {
	case lower == "nan":
		f = math.NaN()
	case lower == "infinity" || lower == "inf":
		f = math.Inf(1)
		if v[0] == '-' {
			f = math.Inf(-1)
		}
	default:
		n, nonZero := scanDecimal(v)
		if n == 0 || n != len(v) {
			return Null, syntaxErr(pgTypeName(k), s)
		}
		var err error
		f, err = strconv.ParseFloat(v, bits)
		if err != nil || (f == 0 && nonZero) {
			// Postgres quotes the whole input for REAL but only the number
			// for DOUBLE PRECISION.
			quoted := s
			if k == KindFloat64 {
				quoted = v
			}
			return Null, valueErr(codeOutOfRange, fmt.Sprintf("\"%s\" is out of range for type %s", quoted, pgTypeName(k)))
		}
	}
	if k == KindFloat32 {
		return NewFloat32(float32(f)), nil
	}
	return NewFloat64(f), nil
}

// Limits of Postgres's numeric format: digits before the point and after.
const (
	numericMaxWeightDigits = 131072
	numericMaxDisplayScale = 16383
)

// decodableNumeric reports whether a finite decimal read from stored bytes
// (row codec, key encoding) is within the range Strata can hold and print:
// Postgres's limits, with room for the longer scales exact multiplication
// produces. Anything beyond is corruption; accepting it would let a few
// bytes ask for a billion-digit string.
func decodableNumeric(digits int64, exponent int64) bool {
	return exponent >= -2*numericMaxDisplayScale && digits+exponent <= numericMaxWeightDigits+1
}

// parseNumeric is numeric_in: white space, "NaN" or [+-]"Infinity"/"inf"
// (case-insensitive), or [+-] digits [. digits] [e [+-] digits], then white
// space. At most 131072 digits before the point and 16383 after it fit
// ("value overflows numeric format"). The scale of the value is
// the number of digits after the point less the exponent (never below 0),
// so '1.50' keeps two digits and '1e2' reads as 100. With NUMERIC(p,s) the
// value is then rounded to s digits (see applyNumericTypmod).
func parseNumeric(t Type, s string) (Datum, error) {
	d, err := parseDecimal(s)
	if err != nil {
		return Null, err
	}
	d, err = applyNumericTypmod(d, t)
	if err != nil {
		return Null, err
	}
	return newNumericOwned(d), nil
}

func parseDecimal(s string) (*apd.Decimal, error) {
	v := trimSpace(s)
	switch strings.ToLower(v) {
	case "nan":
		return &apd.Decimal{Form: apd.NaN}, nil
	case "infinity", "+infinity", "inf", "+inf":
		return &apd.Decimal{Form: apd.Infinite}, nil
	case "-infinity", "-inf":
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, nil
	}
	n, _ := scanDecimal(v)
	if n == 0 || n != len(v) {
		return nil, syntaxErr("numeric", s)
	}
	overflow := valueErr(codeOutOfRange, "value overflows numeric format")
	mantissa, exp := v, int64(0)
	if i := strings.IndexAny(v, "eE"); i >= 0 {
		e, err := strconv.ParseInt(strings.TrimPrefix(v[i+1:], "+"), 10, 32)
		if err != nil || e >= math.MaxInt32/2 || e <= -(math.MaxInt32/2) {
			return nil, overflow
		}
		mantissa, exp = v[:i], e
	}
	d, _, err := apd.NewFromString(mantissa)
	if err != nil {
		return nil, syntaxErr("numeric", s)
	}
	// Check the size before normalizeDecimal multiplies out a positive
	// exponent.
	exp += int64(d.Exponent)
	if d.Coeff.Sign() == 0 && exp > 0 {
		exp = 0
	}
	if -exp > numericMaxDisplayScale || d.NumDigits()+exp > numericMaxWeightDigits {
		return nil, overflow
	}
	d.Exponent = int32(exp)
	normalizeDecimal(d)
	return d, nil
}

// normalizeDecimal gives a finite d Postgres's shape: a scale of at least 0
// (exponent <= 0) and no negative zero.
func normalizeDecimal(d *apd.Decimal) {
	if d.Form != apd.Finite {
		return
	}
	if d.Exponent > 0 {
		var m apd.BigInt
		m.Exp(apd.NewBigInt(10), apd.NewBigInt(int64(d.Exponent)), nil)
		d.Coeff.Mul(&d.Coeff, &m)
		d.Exponent = 0
	}
	if d.Coeff.Sign() == 0 {
		d.Negative = false
	}
}

// applyNumericTypmod is Postgres's apply_typmod for NUMERIC(p,s): a finite
// value is rounded to s digits after the point, half away from zero, and
// keeps exactly s digits of scale; if it then has more than p-s digits
// before the point it is "numeric field overflow". NaN passes; an
// infinity does not fit any NUMERIC(p,s). Unconstrained NUMERIC (p = 0)
// keeps the value as is. d is not modified.
func applyNumericTypmod(d *apd.Decimal, t Type) (*apd.Decimal, error) {
	if t.Precision == 0 {
		return d, nil
	}
	p, sc := int64(t.Precision), int64(t.Scale)
	switch d.Form {
	case apd.NaN, apd.NaNSignaling:
		return d, nil
	case apd.Infinite:
		e := valueErr(codeOutOfRange, "numeric field overflow")
		e.Detail = fmt.Sprintf("A field with precision %d, scale %d cannot hold an infinite value.", p, sc)
		return nil, e
	}
	ctx := apd.Context{
		Precision:   uint32(int64(d.NumDigits()) + sc + 2),
		Rounding:    apd.RoundHalfUp, // on magnitudes: half away from zero
		MaxExponent: apd.MaxExponent,
		MinExponent: apd.MinExponent,
	}
	r := new(apd.Decimal)
	if _, err := ctx.Quantize(r, d, int32(-sc)); err != nil {
		panic(fmt.Sprintf("types: quantize %s to scale %d: %v", d, sc, err))
	}
	normalizeDecimal(r)
	if r.Coeff.Sign() != 0 {
		if intDigits := r.NumDigits() - sc; intDigits > p-sc {
			maxDigits := p - sc
			e := valueErr(codeOutOfRange, "numeric field overflow")
			if maxDigits > 0 {
				e.Detail = fmt.Sprintf("A field with precision %d, scale %d must round to an absolute value less than 10^%d.", p, sc, maxDigits)
			} else {
				e.Detail = fmt.Sprintf("A field with precision %d, scale %d must round to an absolute value less than 1.", p, sc)
			}
			return nil, e
		}
	}
	return r, nil
}

// parseString reads text for CHAR(n), VARCHAR(n) and TEXT. The text must be
// valid UTF-8 without NUL bytes (Postgres refuses both at the encoding
// layer). Lengths count characters, not bytes. Longer text than n is an
// error unless the excess is spaces, which are cut; explicit (a CAST)
// truncates silently instead, as varchar(n)'s length coercion does. CHAR(n)
// is then padded with spaces to n characters.
func parseString(t Type, s string, explicit bool) (Datum, error) {
	if err := checkEncoding(s); err != nil {
		return Null, err
	}
	switch t.Kind {
	case KindText:
		return NewText(s), nil
	case KindVarchar:
		v, err := fitLength(t, s, explicit)
		if err != nil {
			return Null, err
		}
		return NewVarchar(v), nil
	}
	v, err := fitLength(t, s, explicit)
	if err != nil {
		return Null, err
	}
	if t.Length > 0 {
		if n := utf8.RuneCountInString(v); n < int(t.Length) {
			v += strings.Repeat(" ", int(t.Length)-n)
		}
	}
	return NewChar(v), nil
}

// fitLength cuts s to t.Length characters under the rules of parseString.
func fitLength(t Type, s string, explicit bool) (string, error) {
	n := int(t.Length)
	if n == 0 || len(s) <= n {
		return s, nil // fewer bytes than n: fewer characters too
	}
	cut, count := -1, 0
	for i := range s {
		if count == n {
			cut = i
			break
		}
		count++
	}
	if cut < 0 {
		return s, nil // at most n characters
	}
	if !explicit && strings.TrimRight(s[cut:], " ") != "" {
		name := "character varying"
		if t.Kind == KindChar {
			name = "character"
		}
		e := valueErr(codeStringTooLong, fmt.Sprintf("value too long for type %s(%d)", name, n))
		return "", e
	}
	return s[:cut], nil
}

func checkEncoding(s string) error {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0 {
			return valueErr(codeBadCharacter, `invalid byte sequence for encoding "UTF8": 0x00`)
		}
		if r == utf8.RuneError && size <= 1 {
			// Postgres shows as many bytes as the first one announces.
			n := 1
			switch c := s[i]; {
			case c >= 0xf0 && c <= 0xf7:
				n = 4
			case c >= 0xe0 && c <= 0xef:
				n = 3
			case c >= 0xc0 && c <= 0xdf:
				n = 2
			}
			end := min(i+n, len(s))
			var parts []string
			for _, b := range []byte(s[i:end]) {
				parts = append(parts, fmt.Sprintf("0x%02x", b))
			}
			return valueErr(codeBadCharacter, `invalid byte sequence for encoding "UTF8": `+strings.Join(parts, " "))
		}
		i += size
	}
	return nil
}

// parseUUID is uuid_in: 32 hexadecimal digits in either case, optionally
// in braces, with an optional hyphen after any group of four digits
// (so both the standard 8-4-4-4-12 form and the bare 32-digit form read).
// No white space is allowed.
func parseUUID(s string) (Datum, error) {
	src := s
	braces := false
	if strings.HasPrefix(src, "{") {
		src = src[1:]
		braces = true
	}
	var u [16]byte
	for i := 0; i < 16; i++ {
		if len(src) < 2 {
			return Null, syntaxErr("uuid", s)
		}
		b, err := hex.DecodeString(src[:2])
		if err != nil {
			return Null, syntaxErr("uuid", s)
		}
		u[i] = b[0]
		src = src[2:]
		if len(src) > 0 && src[0] == '-' && i%2 == 1 && i < 15 {
			src = src[1:]
		}
	}
	if braces {
		if !strings.HasPrefix(src, "}") {
			return Null, syntaxErr("uuid", s)
		}
		src = src[1:]
	}
	if src != "" {
		return Null, syntaxErr("uuid", s)
	}
	return NewUUID(u), nil
}

// parseBytea is byteain: "\x" followed by pairs of hexadecimal digits
// (white space allowed between pairs), or else the escape format, where
// "\\" is a backslash, "\nnn" an octal byte (first digit 0-3) and any other
// byte stands for itself.
func parseBytea(s string) (Datum, error) {
	if strings.HasPrefix(s, `\x`) {
		out := make([]byte, 0, (len(s)-2)/2)
		for i := 2; i < len(s); {
			c := s[i]
			if c == ' ' || c == '\n' || c == '\t' || c == '\r' {
				i++
				continue
			}
			hi, ok := unhex(c)
			if !ok {
				return Null, badHexDigit(s[i:])
			}
			i++
			if i >= len(s) {
				return Null, valueErr(codeInvalidParam, "invalid hexadecimal data: odd number of digits")
			}
			lo, ok := unhex(s[i])
			if !ok {
				return Null, badHexDigit(s[i:])
			}
			i++
			out = append(out, hi<<4|lo)
		}
		return NewBytea(out), nil
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		switch {
		case s[i] != '\\':
			out = append(out, s[i])
			i++
		case i+3 < len(s) && s[i+1] >= '0' && s[i+1] <= '3' && isOctal(s[i+2]) && isOctal(s[i+3]):
			out = append(out, (s[i+1]-'0')<<6|(s[i+2]-'0')<<3|(s[i+3]-'0'))
			i += 4
		case i+1 < len(s) && s[i+1] == '\\':
			out = append(out, '\\')
			i += 2
		default:
			return Null, valueErr(codeInvalidText, "invalid input syntax for type bytea")
		}
	}
	return NewBytea(out), nil
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

func badHexDigit(rest string) error {
	_, size := utf8.DecodeRuneInString(rest)
	return valueErr(codeInvalidParam, fmt.Sprintf("invalid hexadecimal digit: \"%s\"", rest[:size]))
}
