package agg

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/sqlerr"
)

// multiset holds tuples of values with their multiplicities, sorted by the
// tuples' memcomparable keys (so in types.Compare order) and, among tuples
// that compare equal but are written differently (1.5 and 1.50), by their
// exact encoding. It backs min, max, string_agg and DISTINCT, which must
// find the next value when one is retracted; keeping every representation
// makes the choice among equal values independent of arrival order.
type multiset struct {
	types []types.Type
	// order gives the direction of the first len(order) columns (a
	// NULL sorts by NullsFirst); the others sort ascending.
	order   []OrderKey
	entries []entry // sorted by key
}

type entry struct {
	key  string // memcomparable key of vals
	full string // key followed by the exact row encoding of vals
	vals types.Row
	n    int64
}

func (m *multiset) keyOf(vals []types.Datum) (key, full string) {
	k, n := m.appendFull(nil, vals)
	return string(k[:n]), string(k)
}

// appendFull appends vals' memcomparable key followed by their exact row
// encoding to k (the full form of keyOf) and returns it with the key's
// length.
func (m *multiset) appendFull(k []byte, vals []types.Datum) ([]byte, int) {
	for i, v := range vals {
		if i < len(m.order) {
			o := m.order[i]
			switch {
			case v.IsNull() && o.NullsFirst:
				k = append(k, 0)
			case v.IsNull():
				k = append(k, 2)
			default:
				dir := types.Ascending
				if o.Desc {
					dir = types.Descending
				}
				k = types.AppendKeyOrdered(append(k, 1), v, m.types[i], dir)
			}
			continue
		}
		k = types.AppendKey(k, v, m.types[i])
	}
	n := len(k)
	return types.AppendRow(k, vals, m.types), n
}

func (m *multiset) find(full string) (int, bool) {
	i := sort.Search(len(m.entries), func(i int) bool { return m.entries[i].full >= full })
	return i, i < len(m.entries) && m.entries[i].full == full
}

// add changes the multiplicity of vals by delta and returns the new
// multiplicity; a retraction below zero is an error.
func (m *multiset) add(vals []types.Datum, delta int64) (int64, error) {
	key, full := m.keyOf(vals)
	i, ok := m.find(full)
	if !ok {
		if delta < 0 {
			return 0, errRetractUnseen
		}
		m.entries = append(m.entries, entry{})
		copy(m.entries[i+1:], m.entries[i:])
		m.entries[i] = entry{key: key, full: full, vals: types.Row(vals).Copy(), n: delta}
		return delta, nil
	}
	e := &m.entries[i]
	if e.n+delta < 0 {
		return 0, errRetractUnseen
	}
	e.n += delta
	n := e.n
	if n == 0 {
		m.entries = append(m.entries[:i], m.entries[i+1:]...)
	}
	return n, nil
}

func (m *multiset) appendState(dst []byte) []byte {
	dst = binary.AppendUvarint(append(dst, stateVersion), uint64(len(m.entries)))
	for _, e := range m.entries {
		dst = binary.AppendVarint(dst, e.n)
		dst = types.AppendRow(dst, e.vals, m.types)
	}
	return dst
}

func (m *multiset) loadState(r *reader) {
	r.version()
	n := r.uvarint()
	m.entries = m.entries[:0]
	for i := uint64(0); i < n && r.err == nil; i++ {
		cnt := r.varint()
		row := r.row(m.types)
		if r.err != nil {
			return
		}
		if cnt <= 0 {
			r.err = corrupt("multiset count not positive")
			return
		}
		key, full := m.keyOf(row)
		m.entries = append(m.entries, entry{key: key, full: full, vals: row, n: cnt})
	}
	if r.err == nil && !sort.SliceIsSorted(m.entries, func(i, j int) bool { return m.entries[i].full < m.entries[j].full }) {
		r.err = corrupt("multiset out of order")
	}
}

// extreme is min and max: the multiset of non-NULL values. Over an
// append-only input (appendOnly) the multiset holds only its extreme
// entry: the value that the full multiset would answer with (among values
// that compare equal, the last by exact encoding for max, the first for
// min), so the result and the state's encoding are those of the full
// multiset's answer, whatever the arrival order.
type extreme struct {
	max        bool
	appendOnly bool
	vals       multiset
	buf        []byte
}

// errRetractAppendOnly is a Retract into an accumulator built for an
// insert-only input.
var errRetractAppendOnly = fmt.Errorf("aggregate: retraction in an insert-only input: %w", base.ErrInvalidArgument)

func (x *extreme) Add(args []types.Datum) error {
	if args[0].IsNull() {
		return nil
	}
	if !x.appendOnly {
		_, err := x.vals.add(args[:1], 1)
		return err
	}
	x.buf, _ = x.vals.appendFull(x.buf[:0], args[:1])
	es := x.vals.entries
	if len(es) == 0 {
		_, err := x.vals.add(args[:1], 1)
		return err
	}
	best := &es[len(es)-1]
	if !x.max {
		best = &es[0]
	}
	switch c := strings.Compare(string(x.buf), best.full); {
	case c == 0:
		best.n++
	case (c > 0) == x.max:
		key, full := x.vals.keyOf(args[:1])
		x.vals.entries = append(x.vals.entries[:0], entry{key: key, full: full, vals: types.Row(args[:1]).Copy(), n: 1})
	}
	return nil
}

func (x *extreme) Retract(args []types.Datum) error {
	if args[0].IsNull() {
		return nil
	}
	if x.appendOnly {
		return errRetractAppendOnly
	}
	_, err := x.vals.add(args[:1], -1)
	return err
}

func (x *extreme) Result() (types.Datum, error) {
	es := x.vals.entries
	switch {
	case len(es) == 0:
		return types.Null, nil
	case x.max:
		return es[len(es)-1].vals[0], nil
	}
	return es[0].vals[0], nil
}

func (x *extreme) AppendState(dst []byte) []byte { return x.vals.appendState(dst) }

func (x *extreme) LoadState(b []byte) error {
	r := reader{b: b}
	x.vals.loadState(&r)
	if es := x.vals.entries; x.appendOnly && len(es) > 1 {
		// State of a retractable accumulator: keep its extreme.
		if x.max {
			x.vals.entries = append(es[:0], es[len(es)-1])
		} else {
			x.vals.entries = es[:1]
		}
	}
	return r.done()
}

// stringAgg is string_agg(value, delimiter): the values joined in sort
// order (ties broken by delimiter), each but the first preceded by its
// delimiter; a NULL delimiter is empty, NULL values are skipped.
type stringAgg struct {
	keys int // ORDER BY keys, the first columns of vals
	vals multiset
}

func (s *stringAgg) args(a []types.Datum) []types.Datum {
	v, d := a[0], a[1]
	if d.IsNull() {
		d = types.NewText("")
	}
	out := append(make([]types.Datum, 0, s.keys+2), a[2:2+s.keys]...)
	return append(out, types.NewText(v.Str()), types.NewText(d.Str()))
}

func (s *stringAgg) Add(a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	_, err := s.vals.add(s.args(a), 1)
	return err
}

func (s *stringAgg) Retract(a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	_, err := s.vals.add(s.args(a), -1)
	return err
}

func (s *stringAgg) Result() (types.Datum, error) {
	if len(s.vals.entries) == 0 {
		return types.Null, nil
	}
	var b strings.Builder
	first := true
	for _, e := range s.vals.entries {
		for range e.n {
			if !first {
				b.WriteString(e.vals[s.keys+1].Str())
			}
			b.WriteString(e.vals[s.keys].Str())
			first = false
		}
	}
	return types.NewText(b.String()), nil
}

func (s *stringAgg) AppendState(dst []byte) []byte { return s.vals.appendState(dst) }

func (s *stringAgg) LoadState(b []byte) error {
	r := reader{b: b}
	s.vals.loadState(&r)
	return r.done()
}

// distinct feeds its inner accumulator each distinct argument tuple once.
// Among tuples that compare equal (1.5 and 1.50) the one with the
// smallest exact encoding represents them, whatever the arrival order;
// when the representative changes, the inner accumulator retracts the old
// one and adds the new. Tuples with a NULL are ignored, as DISTINCT
// aggregates ignore them.
type distinct struct {
	inner Accumulator
	seen  multiset
}

func hasNull(args []types.Datum) bool {
	for _, a := range args {
		if a.IsNull() {
			return true
		}
	}
	return false
}

// representative returns the representing tuple of key, or nil.
func (d *distinct) representative(key string) types.Row {
	i := sort.Search(len(d.seen.entries), func(i int) bool { return d.seen.entries[i].key >= key })
	if i < len(d.seen.entries) && d.seen.entries[i].key == key {
		return d.seen.entries[i].vals
	}
	return nil
}

func (d *distinct) step(args []types.Datum, delta int64) error {
	if hasNull(args) {
		return nil
	}
	key, _ := d.seen.keyOf(args)
	before := d.representative(key)
	if _, err := d.seen.add(args, delta); err != nil {
		return err
	}
	after := d.representative(key)
	if before != nil && after != nil && d.seen.sameEncoding(before, after) {
		return nil
	}
	if before != nil {
		if err := d.inner.Retract(before); err != nil {
			return err
		}
	}
	if after != nil {
		return d.inner.Add(after)
	}
	return nil
}

func (m *multiset) sameEncoding(a, b types.Row) bool {
	_, fa := m.keyOf(a)
	_, fb := m.keyOf(b)
	return fa == fb
}

func (d *distinct) Add(args []types.Datum) error     { return d.step(args, 1) }
func (d *distinct) Retract(args []types.Datum) error { return d.step(args, -1) }

func (d *distinct) Result() (types.Datum, error) { return d.inner.Result() }

func (d *distinct) AppendState(dst []byte) []byte {
	inner := d.inner.AppendState(nil)
	dst = binary.AppendUvarint(d.seen.appendState(dst), uint64(len(inner)))
	return append(dst, inner...)
}

func (d *distinct) LoadState(b []byte) error {
	r := reader{b: b}
	d.seen.loadState(&r)
	if r.err != nil {
		return r.err
	}
	n, k := binary.Uvarint(r.b)
	if k <= 0 || uint64(len(r.b)-k) != n {
		return corrupt("bad inner state length")
	}
	return d.inner.LoadState(r.b[k:])
}

// percentile is percentile_cont and percentile_disc (f) WITHIN GROUP
// (ORDER BY x): the multiset of (x, f) pairs of non-NULL x, sorted by x
// (f is the same in every row, Postgres evaluates it once). percentile_cont
// interpolates linearly between the values at ranks floor and ceil of
// f * (n - 1); percentile_disc is the first value whose rank reaches
// f * n. A NULL f gives NULL; f outside [0, 1] is an error (22003).
type percentile struct {
	disc bool
	vals multiset
}

func (p *percentile) Add(a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	_, err := p.vals.add(a[:2], 1)
	return err
}

func (p *percentile) Retract(a []types.Datum) error {
	if a[0].IsNull() {
		return nil
	}
	_, err := p.vals.add(a[:2], -1)
	return err
}

// at returns the value of 0-based rank r.
func (p *percentile) at(r int64) types.Datum {
	for _, e := range p.vals.entries {
		if r < e.n {
			return e.vals[0]
		}
		r -= e.n
	}
	return types.Null
}

func (p *percentile) Result() (types.Datum, error) {
	es := p.vals.entries
	if len(es) == 0 || es[0].vals[1].IsNull() {
		return types.Null, nil
	}
	f := es[0].vals[1].Float64()
	if f < 0 || f > 1 || math.IsNaN(f) {
		return types.Null, sqlerr.New(sqlerr.NumericValueOutOfRange, "percentile value %g is not between 0 and 1", f)
	}
	var n int64
	for _, e := range es {
		n += e.n
	}
	if p.disc {
		r := int64(math.Ceil(f * float64(n)))
		if r < 1 {
			r = 1
		}
		return p.at(r - 1), nil
	}
	pos := f * float64(n-1)
	lo, hi := int64(math.Floor(pos)), int64(math.Ceil(pos))
	a := p.at(lo).Float64()
	if lo == hi {
		return types.NewFloat64(a), nil
	}
	b := p.at(hi).Float64()
	return types.NewFloat64(a + (b-a)*(pos-float64(lo))), nil
}

func (p *percentile) AppendState(dst []byte) []byte { return p.vals.appendState(dst) }

func (p *percentile) LoadState(b []byte) error {
	r := reader{b: b}
	p.vals.loadState(&r)
	return r.done()
}
