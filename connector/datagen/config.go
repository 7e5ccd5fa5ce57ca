package datagen

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// Kind is how a column's values are made.
type Kind string

// The two kinds of column, Flink's datagen connector's.
const (
	// Random draws each row's value independently, uniformly from a
	// range (or a length, for strings and bytes).
	Random Kind = "random"
	// Sequence gives row n the value Start + n (for NUMERIC, Start + n
	// whole units; for DATE, Start + n days); a sequence with an End
	// bounds the rows.
	Sequence Kind = "sequence"
)

// Field configures one column. Values are SQL text read as the column's
// type (types.ParseText, time zone UTC), e.g. "42", "3.14", "2024-01-01
// 12:00:00"; empty means the default. Which fields apply depends on the
// kind; doc.go lists the defaults per type.
type Field struct {
	// Kind is Random (the default) or Sequence.
	Kind Kind
	// Start and End are a sequence's first and last value; Start is
	// required, End defaults to the type's largest value.
	Start, End string
	// Min and Max bound a random column's values, both included (for
	// REAL and DOUBLE PRECISION, Max excluded). A random DATE or
	// TIMESTAMP(TZ) column with neither is a time column: see MaxPast.
	Min, Max string
	// MaxPast is how far before its row's generation time a random
	// TIMESTAMP(TZ) or DATE value without Min and Max may lie (Flink's
	// fields.#.max-past): the value is drawn from [t-MaxPast, t], t being
	// the row's generation time (doc.go, "Time"). 0, the default, gives
	// the generation time itself. It must not be negative and applies to
	// no other column.
	MaxPast time.Duration
	// Length is a random string's or BYTEA's length in characters or
	// bytes; 0 means the default.
	Length int
	// NullRate is the probability in [0, 1] that a value is NULL; it must
	// be 0 for a NOT NULL column.
	NullRate float64
}

// Config describes a random relation: its columns, how each is made, how
// many rows and how fast. Rows are numbered 0, 1, 2, ...; row n depends
// only on Seed, n and the columns' configuration (invariant row-purity).
type Config struct {
	// Columns is the schema of the rows, in order.
	Columns []catalog.Column
	// Fields configures columns by name; a column without one is Random
	// with the defaults of its type.
	Fields map[string]Field
	// Rows is the number of rows; 0 means unbounded, unless a sequence
	// with an End bounds it (the smallest bound wins).
	Rows uint64
	// Rate is the wall-clock rate in rows per second; 0 means as fast as
	// rows are read. (The rows-per-second option defaults to 10000, as in
	// Flink; the Go zero value does not pace.)
	Rate uint64
	// Seed selects the random sequence.
	Seed uint64
	// ChunkRows is the most rows in one transaction; 0 means
	// types.DefaultChunkSize.
	ChunkRows int
	// Now is the clock that rate limiting and the start time of time
	// columns read; nil means time.Now.
	Now func() time.Time
}

// Defaults of random columns.
const (
	// DefaultLength is the length of random strings and BYTEA values
	// (Flink's default), cut to the type's length.
	DefaultLength = 100
	// defaultNumericDigits is how many integer digits a random NUMERIC has
	// by default (at most the type's p-s).
	defaultNumericDigits = 6
	// defaultNumericScale is the scale of an unconstrained NUMERIC given
	// no min or max.
	defaultNumericScale = 2
)

// Default ranges of random date and time columns. A random DATE or
// TIMESTAMP(TZ) column with neither min nor max is a time column (doc.go,
// "Time"); with one of them, the other defaults to these.
var (
	defaultDateMin = "2000-01-01"
	defaultDateMax = "2030-12-31"
	defaultTSMin   = "2000-01-01 00:00:00"
	defaultTSMax   = "2030-12-31 23:59:59"
	defaultTimeMin = "00:00:00"
	defaultTimeMax = "23:59:59"
)

// rep is how a column's values are stored in a Vector.
type rep uint8

const (
	repBool    rep = iota
	repInt         // integers, DATE, TIME, TIMESTAMP(TZ): Ints
	repFloat       // Floats
	repNumeric     // Decimals: scaled int64 with exponent -scale
	repString      // Strs: letters, or a sequence's decimal text
	repBytes       // Strs: raw bytes
	repUUID        // Strs: 16 bytes, version 4
)

// column is a compiled Field: everything Next needs, as numbers.
type column struct {
	name string
	typ  types.Type
	rep  rep
	seq  bool
	// Sequence: row n has value start + n*step.
	start, step int64
	// Random integer-like values: lo + intn(span) units of unit (span 0
	// stands for 2^64).
	lo   int64
	span uint64
	unit int64
	// Random floats: flo + float()*fspan.
	flo, fspan float64
	scale      int32 // NUMERIC
	length     int   // random strings and bytes
	pad        int   // CHAR(n): pad to n
	// A time column (DATE or TIMESTAMP(TZ) without min and max): values
	// lie within maxPast µs before the row's generation time.
	now     bool
	maxPast int64
	// A value is NULL when a draw falls below nullBelow.
	nullBelow uint64
}

// compiled is a validated Config.
type compiled struct {
	cfg   Config
	cols  []column
	types []types.Type
	limit uint64 // one past the last row number
	// hasNow is set when a column is a time column, which makes the
	// Reader keep a start time.
	hasNow bool
}

func invalid(format string, args ...any) error {
	return fmt.Errorf("datagen: "+format+": %w", append(args, base.ErrInvalidArgument)...)
}

// compile checks cfg and turns each column's Field into numbers. Errors
// wrap base.ErrInvalidArgument and name the column and the field option.
func compile(cfg Config) (*compiled, error) {
	if len(cfg.Columns) == 0 {
		return nil, invalid("no columns")
	}
	if cfg.ChunkRows == 0 {
		cfg.ChunkRows = types.DefaultChunkSize
	}
	if cfg.ChunkRows < 0 {
		return nil, invalid("ChunkRows %d is negative", cfg.ChunkRows)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c := &compiled{cfg: cfg, limit: cfg.Rows}
	if c.limit == 0 {
		c.limit = math.MaxUint64
	}
	seen := map[string]bool{}
	for _, col := range cfg.Columns {
		if seen[col.Name] {
			return nil, invalid("column %q appears twice", col.Name)
		}
		seen[col.Name] = true
		if err := col.Type.Validate(); err != nil {
			return nil, fmt.Errorf("datagen: column %q: %w", col.Name, err)
		}
		cc, count, err := compileColumn(col, cfg.Fields[col.Name])
		if err != nil {
			return nil, err
		}
		if cc.seq {
			c.limit = min(c.limit, count)
		}
		c.hasNow = c.hasNow || cc.now
		c.cols = append(c.cols, cc)
		c.types = append(c.types, col.Type)
	}
	for name := range cfg.Fields {
		if !seen[name] {
			return nil, invalid("fields.%s configures no column (columns: %s)", name, columnNames(cfg.Columns))
		}
	}
	return c, nil
}

func columnNames(cols []catalog.Column) string {
	s := ""
	for i, c := range cols {
		if i > 0 {
			s += ", "
		}
		s += c.Name
	}
	return s
}

// compileColumn compiles one column; count is a sequence's length.
func compileColumn(col catalog.Column, f Field) (cc column, count uint64, err error) {
	cc = column{name: col.Name, typ: col.Type, unit: 1, step: 1}
	opt := func(what string) string { return "fields." + col.Name + "." + what }
	bad := func(format string, args ...any) error {
		return invalid("column %q (%s): %s", col.Name, col.Type, fmt.Sprintf(format, args...))
	}
	if math.IsNaN(f.NullRate) || f.NullRate < 0 || f.NullRate > 1 {
		return cc, 0, bad("%s %v is not between 0 and 1", opt("null-rate"), f.NullRate)
	}
	if f.NullRate > 0 && col.NotNull {
		return cc, 0, bad("%s must be 0 for a NOT NULL column", opt("null-rate"))
	}
	if f.NullRate >= 1 {
		cc.nullBelow = math.MaxUint64
	} else {
		cc.nullBelow = uint64(f.NullRate * (1 << 64))
	}
	if f.Length < 0 {
		return cc, 0, bad("%s %d is negative", opt("length"), f.Length)
	}
	switch f.Kind {
	case "", Random:
	case Sequence:
		cc.seq = true
	default:
		return cc, 0, bad("%s %q is not random or sequence", opt("kind"), f.Kind)
	}
	if cc.seq && (f.Min != "" || f.Max != "" || f.Length != 0) {
		return cc, 0, bad("min, max and length apply to random columns, not to a sequence")
	}
	if !cc.seq && (f.Start != "" || f.End != "") {
		return cc, 0, bad("start and end apply to sequences, not to a random column")
	}
	if f.MaxPast < 0 {
		return cc, 0, bad("%s %v is negative", opt("max-past"), f.MaxPast)
	}
	if f.MaxPast != 0 {
		switch {
		case col.Type.Kind != types.KindDate && col.Type.Kind != types.KindTimestamp && col.Type.Kind != types.KindTimestampTZ:
			return cc, 0, bad("%s applies to TIMESTAMP, TIMESTAMPTZ and DATE columns", opt("max-past"))
		case cc.seq:
			return cc, 0, bad("%s applies to random columns, not to a sequence", opt("max-past"))
		case f.Min != "" || f.Max != "":
			return cc, 0, bad("%s applies to a column without min and max (its values lie before the row's generation time, not in [min, max])", opt("max-past"))
		}
	}
	// timeColumn makes cc a time column when it is random without min
	// and max.
	timeColumn := func() bool {
		if cc.seq || f.Min != "" || f.Max != "" {
			return false
		}
		cc.now, cc.maxPast = true, f.MaxPast.Microseconds()
		return true
	}
	// parse reads a value option as the column's type.
	parse := func(what, s string) (types.Datum, error) {
		d, err := types.ParseText(col.Type, s, nil)
		if err != nil {
			return types.Null, fmt.Errorf("datagen: column %q: %s %q: %w", col.Name, opt(what), s, err)
		}
		return d, nil
	}
	// bounds reads min and max (or start and end) with defaults, as
	// int64 values through conv.
	bounds := func(loOpt, hiOpt, loText, hiText, loDef, hiDef string, conv func(types.Datum) (int64, error)) (lo, hi int64, err error) {
		if loText == "" {
			loText = loDef
		}
		if hiText == "" {
			hiText = hiDef
		}
		if loText == "" {
			return 0, 0, bad("a sequence needs %s", opt(loOpt))
		}
		dl, err := parse(loOpt, loText)
		if err != nil {
			return 0, 0, err
		}
		dh, err := parse(hiOpt, hiText)
		if err != nil {
			return 0, 0, err
		}
		if lo, err = conv(dl); err != nil {
			return 0, 0, bad("%s: %v", opt(loOpt), err)
		}
		if hi, err = conv(dh); err != nil {
			return 0, 0, bad("%s: %v", opt(hiOpt), err)
		}
		if lo > hi {
			return 0, 0, bad("%s %s is above %s %s", opt(loOpt), loText, opt(hiOpt), hiText)
		}
		return lo, hi, nil
	}
	// intRange sets a sequence's start and count or a random range from
	// bounds in units of cc.step (sequences) or cc.unit (random).
	intRange := func(loDef, hiDef, seqEnd string, conv func(types.Datum) (int64, error)) error {
		if cc.seq {
			lo, hi, err := bounds("start", "end", f.Start, f.End, "", seqEnd, conv)
			if err != nil {
				return err
			}
			cc.start = lo
			count = uint64(hi-lo) / uint64(cc.step)
			if count < math.MaxUint64 {
				count++
			}
			return nil
		}
		lo, hi, err := bounds("min", "max", f.Min, f.Max, loDef, hiDef, conv)
		if err != nil {
			return err
		}
		// Whole units of unit inside [lo, hi].
		ulo, uhi := ceilDiv(lo, cc.unit), floorDiv(hi, cc.unit)
		if ulo > uhi {
			return bad("no value of precision %d lies between %s and %s", col.Type.Precision, opt("min"), opt("max"))
		}
		cc.lo, cc.span = ulo, uint64(uhi-ulo)+1
		return nil
	}
	noSeq := func() error {
		if cc.seq {
			return bad("a sequence needs an integer, NUMERIC, string or DATE column")
		}
		return nil
	}
	micros := func(d types.Datum) (int64, error) { return d.Micros(), nil }
	t := col.Type
	switch t.Kind {
	case types.KindBool:
		cc.rep = repBool
		if err := noSeq(); err != nil {
			return cc, 0, err
		}
		if f.Min != "" || f.Max != "" {
			return cc, 0, bad("min and max do not apply to BOOLEAN")
		}
	case types.KindInt16, types.KindInt32, types.KindInt64:
		cc.rep = repInt
		lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
		switch t.Kind {
		case types.KindInt16:
			lo, hi = math.MinInt16, math.MaxInt16
		case types.KindInt32:
			lo, hi = math.MinInt32, math.MaxInt32
		}
		err = intRange(strconv.FormatInt(lo, 10), strconv.FormatInt(hi, 10), strconv.FormatInt(hi, 10),
			func(d types.Datum) (int64, error) { return d.Int64(), nil })
	case types.KindFloat32, types.KindFloat64:
		cc.rep = repFloat
		if err := noSeq(); err != nil {
			return cc, 0, err
		}
		lo, hi := 0.0, 1.0
		if f.Min != "" {
			d, err := parse("min", f.Min)
			if err != nil {
				return cc, 0, err
			}
			lo = d.Float64()
		}
		if f.Max != "" {
			d, err := parse("max", f.Max)
			if err != nil {
				return cc, 0, err
			}
			hi = d.Float64()
		}
		if !(lo < hi) || math.IsInf(hi-lo, 0) {
			return cc, 0, bad("%s %v must be below %s %v, both finite", opt("min"), lo, opt("max"), hi)
		}
		cc.flo, cc.fspan = lo, hi-lo
	case types.KindNumeric:
		cc.rep = repNumeric
		cc.scale = t.Scale
		digits := defaultNumericDigits
		if t.Precision > 0 {
			digits = min(digits, int(t.Precision-t.Scale))
		} else {
			cc.scale = max(decimalScale(f.Min), decimalScale(f.Max), decimalScale(f.Start), decimalScale(f.End))
			if f.Min == "" && f.Max == "" && f.Start == "" && f.End == "" {
				cc.scale = defaultNumericScale
			}
		}
		if cc.scale > 18 {
			return cc, 0, bad("scale %d is too large for generated values (at most 18)", cc.scale)
		}
		pow := int64(1)
		for range cc.scale {
			pow *= 10
		}
		cc.step = pow
		hiDef := nines(digits, int(cc.scale))
		seqEnd := ""
		if cc.seq && f.End == "" {
			if t.Precision > 0 && t.Precision <= 18 {
				seqEnd = nines(int(t.Precision-t.Scale), int(t.Scale))
			} else {
				seqEnd = strconv.FormatInt(math.MaxInt64/pow, 10)
			}
		}
		err = intRange("0", hiDef, seqEnd, func(d types.Datum) (int64, error) { return scaled(d.Decimal(), cc.scale) })
	case types.KindChar, types.KindVarchar, types.KindText:
		cc.rep = repString
		if cc.seq {
			// The decimal text of an integer sequence.
			s, err := parseInt64(opt("start"), f.Start)
			if err != nil {
				return cc, 0, bad("%v", err)
			}
			end := int64(math.MaxInt64)
			if t.Length > 0 && t.Length < 19 {
				// The largest number that fits the type's length.
				end = 1
				for range t.Length {
					end *= 10
				}
				end--
			}
			if f.End != "" {
				if end, err = parseInt64(opt("end"), f.End); err != nil {
					return cc, 0, bad("%v", err)
				}
			}
			if s > end {
				return cc, 0, bad("%s %d is above %s %d", opt("start"), s, opt("end"), end)
			}
			if t.Length > 0 && (len(strconv.FormatInt(s, 10)) > int(t.Length) || len(strconv.FormatInt(end, 10)) > int(t.Length)) {
				return cc, 0, bad("sequence values up to %d do not fit %s", end, t)
			}
			cc.start, count = s, uint64(end-s)
			if count < math.MaxUint64 {
				count++
			}
			if t.Kind == types.KindChar {
				cc.pad = int(t.Length)
			}
			break
		}
		if f.Min != "" || f.Max != "" {
			return cc, 0, bad("min and max do not apply to strings; use %s", opt("length"))
		}
		cc.length = f.Length
		if cc.length == 0 {
			cc.length = DefaultLength
			if t.Length > 0 {
				cc.length = min(cc.length, int(t.Length))
			}
		}
		if t.Length > 0 && cc.length > int(t.Length) {
			return cc, 0, bad("%s %d is longer than %s allows", opt("length"), cc.length, t)
		}
		if t.Kind == types.KindChar {
			cc.pad = int(t.Length)
		}
	case types.KindBytea:
		cc.rep = repBytes
		if err := noSeq(); err != nil {
			return cc, 0, err
		}
		if f.Min != "" || f.Max != "" {
			return cc, 0, bad("min and max do not apply to BYTEA; use %s", opt("length"))
		}
		cc.length = f.Length
		if cc.length == 0 {
			cc.length = DefaultLength
		}
	case types.KindUUID:
		cc.rep = repUUID
		if err := noSeq(); err != nil {
			return cc, 0, err
		}
		if f.Min != "" || f.Max != "" || f.Length != 0 {
			return cc, 0, bad("min, max and length do not apply to UUID")
		}
	case types.KindDate:
		cc.rep = repInt
		if timeColumn() {
			break
		}
		err = intRange(defaultDateMin, defaultDateMax, "5874897-12-31", func(d types.Datum) (int64, error) {
			v := d.Date()
			if v == types.DateInfinity || v == types.DateNegInfinity {
				return 0, fmt.Errorf("infinity is not a bound")
			}
			return int64(v), nil
		})
	case types.KindTime:
		cc.rep = repInt
		if err := noSeq(); err != nil {
			return cc, 0, err
		}
		cc.unit = precisionUnit(t.Precision)
		err = intRange(defaultTimeMin, defaultTimeMax, "", micros)
	case types.KindTimestamp, types.KindTimestampTZ:
		cc.rep = repInt
		if err := noSeq(); err != nil {
			return cc, 0, err
		}
		cc.unit = precisionUnit(t.Precision)
		if timeColumn() {
			break
		}
		err = intRange(defaultTSMin, defaultTSMax, "", func(d types.Datum) (int64, error) {
			v := d.Micros()
			if v == types.TimestampInfinity || v == types.TimestampNegInfinity {
				return 0, fmt.Errorf("infinity is not a bound")
			}
			return v, nil
		})
	default:
		return cc, 0, bad("datagen cannot generate type %s", t)
	}
	if err != nil {
		return cc, 0, err
	}
	return cc, count, nil
}

// nines returns the largest decimal with the given digits before and
// after the point, "0" for none: nines(3, 2) = "999.99".
func nines(intDigits, scale int) string {
	b := []byte("0")
	if intDigits > 0 {
		b = b[:0]
		for range intDigits {
			b = append(b, '9')
		}
	}
	if scale > 0 {
		b = append(b, '.')
		for range scale {
			b = append(b, '9')
		}
	}
	return string(b)
}

// precisionUnit returns 10^(6-p) µs, the step of TIME(p) and TIMESTAMP(p).
func precisionUnit(p int32) int64 {
	u := int64(1)
	for i := p; i < types.MaxTimestampPrecision; i++ {
		u *= 10
	}
	return u
}

func parseInt64(opt, s string) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("a sequence needs %s", opt)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not an integer", opt, s)
	}
	return v, nil
}

// decimalScale returns the number of digits after the point in s, 0 when
// s is not a plain decimal.
func decimalScale(s string) int32 {
	for i := range len(s) {
		if s[i] == '.' {
			n := int32(0)
			for j := i + 1; j < len(s) && s[j] >= '0' && s[j] <= '9'; j++ {
				n++
			}
			return n
		}
	}
	return 0
}

// scaled returns d * 10^scale rounded to an integer, or an error when it
// is not finite or does not fit an int64.
func scaled(d *apd.Decimal, scale int32) (int64, error) {
	if d.Form != apd.Finite {
		return 0, fmt.Errorf("%s is not a finite number", d)
	}
	var q apd.Decimal
	ctx := apd.BaseContext.WithPrecision(60)
	if _, err := ctx.Quantize(&q, d, -scale); err != nil {
		return 0, err
	}
	q.Exponent = 0
	v, err := q.Int64()
	if err != nil {
		return 0, fmt.Errorf("%s has too many digits for generated values", d)
	}
	return v, nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func ceilDiv(a, b int64) int64 { return -floorDiv(-a, b) }
