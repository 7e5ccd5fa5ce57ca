package agg

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/cockroachdb/apd/v3"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/expr"
	"github.com/stratadb/strata/sql/sqlerr"
)

// Accumulator is the state of one aggregate call for one group.
type Accumulator interface {
	// Add folds in one input row's arguments (none for count(*)).
	Add(args []types.Datum) error
	// Retract removes one input row's arguments added before.
	Retract(args []types.Datum) error
	// Result returns the aggregate's current value.
	Result() (types.Datum, error)
	// AppendState appends the accumulator's state to dst.
	AppendState(dst []byte) []byte
	// LoadState replaces the accumulator's state with one AppendState
	// wrote; errors wrap base.ErrCorruption.
	LoadState(b []byte) error
}

// Spec names an aggregate call: function, argument types, DISTINCT.
type Spec struct {
	Func     string
	Args     []types.Type
	Distinct bool
	// Order is string_agg's ORDER BY inside the call: its keys are the
	// last len(Order) Args, after the value and the delimiter. Values are
	// joined in that order, ties (and a call without ORDER BY) in the
	// values' sort order (invariant agg-order-free).
	Order []OrderKey
	// AppendOnly says that the input has inserts only (the planner's
	// changelog mode of the aggregate's input): min and max then keep
	// only the current extreme instead of the multiset of every value,
	// as Flink picks MaxAggFunction over MaxWithRetractAggFunction for an
	// insert-only input, and a Retract is an error. Other aggregates
	// ignore it.
	AppendOnly bool
}

// OrderKey is the direction of one ORDER BY key inside an aggregate call.
type OrderKey struct {
	Desc, NullsFirst bool
}

// ResultType returns the call's result type, or an error (42883) for a
// function or argument type Strata does not aggregate.
func (s Spec) ResultType() (types.Type, error) {
	if s.Func == "count" {
		return types.Int64, nil
	}
	if len(s.Args) == 0 {
		return types.Type{}, s.unknown()
	}
	a := s.Args[0]
	switch s.Func {
	case "sum":
		switch a.Kind {
		case types.KindInt16, types.KindInt32:
			return types.Int64, nil
		case types.KindInt64, types.KindNumeric:
			return types.Numeric, nil
		case types.KindFloat32, types.KindFloat64, types.KindInterval:
			return types.Type{Kind: a.Kind}, nil
		}
	case "avg":
		switch a.Kind {
		case types.KindInt16, types.KindInt32, types.KindInt64, types.KindNumeric:
			return types.Numeric, nil
		case types.KindFloat32, types.KindFloat64:
			return types.Float64, nil
		case types.KindInterval:
			return types.Interval, nil
		}
	case "min", "max":
		if a.Kind != types.KindUnknown {
			return a, nil
		}
	case "bool_and", "bool_or":
		if a.Kind == types.KindBool {
			return types.Bool, nil
		}
	case "string_agg":
		if len(s.Args) == 2+len(s.Order) && a.IsString() && s.Args[1].IsString() {
			return types.Text, nil
		}
	case "percentile_cont", "percentile_disc":
		if len(s.Args) == 2 && s.Args[1].Kind == types.KindFloat64 &&
			(s.Func == "percentile_disc" && a.Kind != types.KindUnknown || a.Kind == types.KindFloat64) {
			return a, nil
		}
	}
	return types.Type{}, s.unknown()
}

func (s Spec) unknown() error {
	parts := make([]string, len(s.Args))
	for i, t := range s.Args {
		parts[i] = strings.ToLower(t.String())
	}
	return sqlerr.New(sqlerr.UndefinedFunction, "aggregate %s(%s) does not exist", s.Func, strings.Join(parts, ", "))
}

// New returns a fresh accumulator for spec.
func New(spec Spec) (Accumulator, error) {
	rt, err := spec.ResultType()
	if err != nil {
		return nil, err
	}
	var acc Accumulator
	switch spec.Func {
	case "count":
		acc = &count{star: len(spec.Args) == 0}
	case "sum", "avg":
		switch spec.Args[0].Kind {
		case types.KindFloat32, types.KindFloat64:
			acc = &sumFloat{avg: spec.Func == "avg", out: rt.Kind}
		case types.KindInterval:
			acc = &sumInterval{avg: spec.Func == "avg"}
		default:
			acc = &sumExact{avg: spec.Func == "avg", out: rt.Kind}
		}
	case "min", "max":
		acc = &extreme{max: spec.Func == "max", appendOnly: spec.AppendOnly && !spec.Distinct, vals: multiset{types: spec.Args[:1]}}
	case "bool_and", "bool_or":
		acc = &boolAgg{or: spec.Func == "bool_or"}
	case "percentile_cont", "percentile_disc":
		acc = &percentile{disc: spec.Func == "percentile_disc", vals: multiset{types: spec.Args[:2]}}
	case "string_agg":
		n := len(spec.Order)
		ts := append(append([]types.Type(nil), spec.Args[2:2+n]...), types.Text, types.Text)
		acc = &stringAgg{keys: n, vals: multiset{types: ts, order: spec.Order}}
	}
	if spec.Distinct && len(spec.Args) > 0 {
		acc = &distinct{inner: acc, seen: multiset{types: spec.Args}}
	}
	return acc, nil
}

var (
	errRetractUnseen = fmt.Errorf("aggregate: retraction of a value that was never added: %w", base.ErrInvalidArgument)
	stateVersion     = byte(1)
)

func corrupt(what string) error {
	return fmt.Errorf("aggregate state: %s: %w", what, base.ErrCorruption)
}

// count is count(*) and count(x).
type count struct {
	star bool
	n    int64
}

func (c *count) Add(args []types.Datum) error {
	if c.star || !args[0].IsNull() {
		c.n++
	}
	return nil
}

func (c *count) Retract(args []types.Datum) error {
	if c.star || !args[0].IsNull() {
		if c.n == 0 {
			return errRetractUnseen
		}
		c.n--
	}
	return nil
}

func (c *count) Result() (types.Datum, error) { return types.NewInt64(c.n), nil }

func (c *count) AppendState(dst []byte) []byte {
	return binary.AppendVarint(append(dst, stateVersion), c.n)
}

func (c *count) LoadState(b []byte) error {
	r := reader{b: b}
	r.version()
	c.n = r.varint()
	return r.done()
}

// exact is the decimal context for exact sums.
var exact = apd.Context{Precision: 0, MaxExponent: apd.MaxExponent, MinExponent: apd.MinExponent, Traps: apd.InvalidOperation}

// sumExact sums integers and NUMERIC exactly. It counts NaN and the
// infinities apart (a NUMERIC may hold them) and the display scales of the
// values, so that the result has the largest scale among the values
// present, as Postgres's numeric sum does.
type sumExact struct {
	avg             bool
	out             types.Kind
	sum             apd.Decimal
	n               int64
	nan, pinf, ninf int64
	scales          map[int32]int64
}

func (s *sumExact) step(d types.Datum, sign int64) error {
	if d.IsNull() {
		return nil
	}
	var v apd.Decimal
	if d.Kind() == types.KindNumeric {
		v.Set(d.Decimal())
	} else {
		v.SetInt64(d.Int64())
	}
	if sign < 0 && s.n == 0 {
		return errRetractUnseen
	}
	s.n += sign
	switch {
	case v.Form == apd.NaN || v.Form == apd.NaNSignaling:
		s.nan += sign
		return nil
	case v.Form == apd.Infinite && v.Negative:
		s.ninf += sign
		return nil
	case v.Form == apd.Infinite:
		s.pinf += sign
		return nil
	}
	if s.scales == nil {
		s.scales = map[int32]int64{}
	}
	scale := max(-v.Exponent, 0)
	s.scales[scale] += sign
	if s.scales[scale] == 0 {
		delete(s.scales, scale)
	}
	if sign < 0 {
		v.Neg(&v)
	}
	if _, err := exact.Add(&s.sum, &s.sum, &v); err != nil {
		return sqlerr.New(sqlerr.NumericValueOutOfRange, "value overflows numeric format")
	}
	return nil
}

func (s *sumExact) Add(args []types.Datum) error     { return s.step(args[0], 1) }
func (s *sumExact) Retract(args []types.Datum) error { return s.step(args[0], -1) }

func (s *sumExact) total() *apd.Decimal {
	switch {
	case s.nan > 0 || (s.pinf > 0 && s.ninf > 0):
		return &apd.Decimal{Form: apd.NaN}
	case s.pinf > 0:
		return &apd.Decimal{Form: apd.Infinite}
	case s.ninf > 0:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}
	}
	scale := int32(0)
	for sc := range s.scales {
		scale = max(scale, sc)
	}
	r := new(apd.Decimal)
	ctx := exact
	ctx.Precision = uint32(s.sum.NumDigits()) + uint32(scale) + 2
	if _, err := ctx.Quantize(r, &s.sum, -scale); err != nil {
		r.Set(&s.sum)
	}
	if r.IsZero() {
		r.Negative = false
	}
	return r
}

func (s *sumExact) Result() (types.Datum, error) {
	if s.n == 0 {
		return types.Null, nil
	}
	t := s.total()
	if s.avg {
		return divide(types.NewNumeric(t), types.NewNumeric(apd.New(s.n, 0)))
	}
	if s.out == types.KindInt64 {
		i, err := t.Int64()
		if err != nil {
			return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range")
		}
		return types.NewInt64(i), nil
	}
	return types.NewNumeric(t), nil
}

// divide applies Postgres's NUMERIC division (expr's "/" operator).
func divide(a, b types.Datum) (types.Datum, error) {
	fn, _, err := expr.Builtins.Lookup("/", []types.Type{types.Numeric, types.Numeric})
	if err != nil {
		return types.Null, err
	}
	return fn.Eval(nil, []types.Datum{a, b})
}

func (s *sumExact) AppendState(dst []byte) []byte {
	dst = append(dst, stateVersion)
	for _, v := range []int64{s.n, s.nan, s.pinf, s.ninf, int64(len(s.scales))} {
		dst = binary.AppendVarint(dst, v)
	}
	keys := make([]int32, 0, len(s.scales))
	for k := range s.scales {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i] < keys[j] })
	for _, k := range keys {
		dst = binary.AppendVarint(dst, int64(k))
		dst = binary.AppendVarint(dst, s.scales[k])
	}
	return types.AppendRow(dst, types.Row{types.NewNumeric(&s.sum)}, []types.Type{types.Numeric})
}

func (s *sumExact) LoadState(b []byte) error {
	r := reader{b: b}
	r.version()
	s.n, s.nan, s.pinf, s.ninf = r.varint(), r.varint(), r.varint(), r.varint()
	nsc := r.varint()
	s.scales = map[int32]int64{}
	for i := int64(0); i < nsc && r.err == nil; i++ {
		k := r.varint()
		s.scales[int32(k)] = r.varint()
	}
	row := r.row([]types.Type{types.Numeric})
	if r.err == nil {
		s.sum.Set(row[0].Decimal())
	}
	return r.done()
}

// sumFloat sums REAL and DOUBLE PRECISION values as exact decimal sums of
// their shortest decimal forms, NaN and the infinities counted apart.
type sumFloat struct {
	avg   bool
	out   types.Kind
	exact sumExact
}

func (s *sumFloat) step(d types.Datum, sign int64) error {
	if d.IsNull() {
		return nil
	}
	f := d.Float64()
	var v apd.Decimal
	switch {
	case math.IsNaN(f):
		v.Form = apd.NaN
	case math.IsInf(f, 0):
		v.Form, v.Negative = apd.Infinite, f < 0
	default:
		bits := 64
		if d.Kind() == types.KindFloat32 {
			bits = 32
		}
		if _, _, err := v.SetString(strconv.FormatFloat(f, 'g', -1, bits)); err != nil {
			return err
		}
	}
	return s.exact.step(types.NewNumeric(&v), sign)
}

func (s *sumFloat) Add(args []types.Datum) error     { return s.step(args[0], 1) }
func (s *sumFloat) Retract(args []types.Datum) error { return s.step(args[0], -1) }

func (s *sumFloat) Result() (types.Datum, error) {
	if s.exact.n == 0 {
		return types.Null, nil
	}
	t := s.exact.total()
	var f float64
	switch t.Form {
	case apd.NaN:
		f = math.NaN()
	case apd.Infinite:
		f = math.Inf(1)
		if t.Negative {
			f = math.Inf(-1)
		}
	default:
		var err error
		if f, err = strconv.ParseFloat(t.Text('e'), 64); err != nil && !math.IsInf(f, 0) {
			return types.Null, err
		}
		if math.IsInf(f, 0) {
			return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
		}
	}
	if s.avg {
		return types.NewFloat64(f / float64(s.exact.n)), nil
	}
	if s.out == types.KindFloat32 {
		if !math.IsInf(f, 0) && math.IsInf(float64(float32(f)), 0) {
			return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "value out of range: overflow")
		}
		return types.NewFloat32(float32(f)), nil
	}
	return types.NewFloat64(f), nil
}

func (s *sumFloat) AppendState(dst []byte) []byte { return s.exact.AppendState(dst) }
func (s *sumFloat) LoadState(b []byte) error      { return s.exact.LoadState(b) }

// sumInterval sums INTERVALs field by field (months, days, microseconds),
// exactly; avg divides the sum as Postgres's interval_div does.
type sumInterval struct {
	avg                 bool
	n                   int64
	months, days, micro apd.Decimal
}

func (s *sumInterval) step(d types.Datum, sign int64) error {
	if d.IsNull() {
		return nil
	}
	if sign < 0 && s.n == 0 {
		return errRetractUnseen
	}
	s.n += sign
	iv := d.Interval()
	for _, p := range []struct {
		acc *apd.Decimal
		v   int64
	}{{&s.months, int64(iv.Months)}, {&s.days, int64(iv.Days)}, {&s.micro, iv.Micros}} {
		if _, err := exact.Add(p.acc, p.acc, apd.New(sign*p.v, 0)); err != nil {
			return err
		}
	}
	return nil
}

func (s *sumInterval) Add(args []types.Datum) error     { return s.step(args[0], 1) }
func (s *sumInterval) Retract(args []types.Datum) error { return s.step(args[0], -1) }

func (s *sumInterval) Result() (types.Datum, error) {
	if s.n == 0 {
		return types.Null, nil
	}
	m, err1 := s.months.Int64()
	d, err2 := s.days.Int64()
	u, err3 := s.micro.Int64()
	if err1 != nil || err2 != nil || err3 != nil || m != int64(int32(m)) || d != int64(int32(d)) {
		return types.Null, sqlerr.New(sqlerr.DatetimeFieldOverflow, "interval out of range")
	}
	sum := types.NewInterval(types.IntervalValue{Months: int32(m), Days: int32(d), Micros: u})
	if !s.avg {
		return sum, nil
	}
	fn, _, err := expr.Builtins.Lookup("/", []types.Type{types.Interval, types.Float64})
	if err != nil {
		return types.Null, err
	}
	return fn.Eval(nil, []types.Datum{sum, types.NewFloat64(float64(s.n))})
}

func (s *sumInterval) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(append(dst, stateVersion), s.n)
	ts := []types.Type{types.Numeric, types.Numeric, types.Numeric}
	return types.AppendRow(dst, types.Row{types.NewNumeric(&s.months), types.NewNumeric(&s.days), types.NewNumeric(&s.micro)}, ts)
}

func (s *sumInterval) LoadState(b []byte) error {
	r := reader{b: b}
	r.version()
	s.n = r.varint()
	row := r.row([]types.Type{types.Numeric, types.Numeric, types.Numeric})
	if r.err == nil {
		s.months.Set(row[0].Decimal())
		s.days.Set(row[1].Decimal())
		s.micro.Set(row[2].Decimal())
	}
	return r.done()
}

// boolAgg is bool_and (every) and bool_or.
type boolAgg struct {
	or          bool
	trues, fals int64
}

func (b *boolAgg) step(d types.Datum, sign int64) error {
	if d.IsNull() {
		return nil
	}
	p := &b.fals
	if d.Bool() {
		p = &b.trues
	}
	if sign < 0 && *p == 0 {
		return errRetractUnseen
	}
	*p += sign
	return nil
}

func (b *boolAgg) Add(args []types.Datum) error     { return b.step(args[0], 1) }
func (b *boolAgg) Retract(args []types.Datum) error { return b.step(args[0], -1) }

func (b *boolAgg) Result() (types.Datum, error) {
	switch {
	case b.trues+b.fals == 0:
		return types.Null, nil
	case b.or:
		return types.NewBool(b.trues > 0), nil
	}
	return types.NewBool(b.fals == 0), nil
}

func (b *boolAgg) AppendState(dst []byte) []byte {
	dst = binary.AppendVarint(append(dst, stateVersion), b.trues)
	return binary.AppendVarint(dst, b.fals)
}

func (b *boolAgg) LoadState(buf []byte) error {
	r := reader{b: buf}
	r.version()
	b.trues, b.fals = r.varint(), r.varint()
	return r.done()
}

// reader decodes accumulator state, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) version() {
	if len(r.b) < 1 || r.b[0] != stateVersion {
		r.err = corrupt("missing or unknown version")
		return
	}
	r.b = r.b[1:]
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, k := binary.Varint(r.b)
	if k <= 0 {
		r.err = corrupt("bad varint")
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *reader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, k := binary.Uvarint(r.b)
	if k <= 0 {
		r.err = corrupt("bad uvarint")
		return 0
	}
	r.b = r.b[k:]
	return v
}

func (r *reader) row(ts []types.Type) types.Row {
	if r.err != nil {
		return nil
	}
	row, rest, err := types.DecodeRow(r.b, ts)
	if err != nil {
		r.err = err
		return nil
	}
	r.b = rest
	return row
}

func (r *reader) done() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = corrupt("trailing bytes")
	}
	return r.err
}
