package mergetree

import (
	"bytes"
	"cmp"
	"fmt"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
)

// Func merges the records of one key, fed with Add in sequence order.
type Func interface {
	// Reset starts a new key.
	Reset()
	// Add feeds the next (newer) record of the key.
	Add(kv *record.KV)
	// Result returns the merged record; ok is false if the key has no
	// record at all (first-row fed only retractions).
	Result() (kv record.KV, ok bool)
}

// NewFunc returns the merge function of the schema's merge engine.
func NewFunc(s *schema.Schema, o schema.Options) Func {
	switch o.MergeEngine {
	case schema.PartialUpdate:
		return &partialUpdate{key: keySet(s)}
	case schema.Aggregation:
		fns := make([]string, len(s.Fields))
		keys := keySet(s)
		for i, f := range s.Fields {
			if keys[i] {
				continue
			}
			fns[i] = o.Aggregates[f.Name]
			if fns[i] == "" {
				fns[i] = schema.AggLastNonNullValue
			}
		}
		return &aggregate{fns: fns, types: s.Types()}
	case schema.FirstRow:
		return &firstRow{}
	}
	return &dedup{}
}

func keySet(s *schema.Schema) []bool {
	k := make([]bool, len(s.Fields))
	for _, i := range s.KeyIndexes() {
		k[i] = true
	}
	return k
}

type dedup struct {
	last record.KV
	any  bool
}

func (d *dedup) Reset()            { d.any = false }
func (d *dedup) Add(kv *record.KV) { d.last, d.any = *kv, true }
func (d *dedup) Result() (record.KV, bool) {
	return d.last, d.any
}

// partialUpdate merges non-NULL columns. Stored results distinguish a
// row built on top of older records (+I: overwrite their non-NULL columns)
// from a row that replaces them because a -D came first (+U: reset, then
// set). Writers turn input +U into +I before merging (NormalizeInput), so
// +U only ever means "replace" inside data files.
type partialUpdate struct {
	key     []bool
	row     types.Row // nil: deleted or never set
	last    record.KV
	deleted bool // a -D (or a replacing +U) was seen
	any     bool
}

func (p *partialUpdate) Reset() { p.row, p.deleted, p.any = nil, false, false }
func (p *partialUpdate) Add(kv *record.KV) {
	p.any = true
	p.last = *kv
	switch kv.Kind {
	case types.UpdateBefore:
		return
	case types.Delete:
		p.row, p.deleted = nil, true
		return
	case types.UpdateAfter:
		p.row, p.deleted = kv.Row.Copy(), true
		return
	}
	if p.row == nil {
		p.row = kv.Row.Copy()
		return
	}
	for i, d := range kv.Row {
		if !p.key[i] && !d.IsNull() {
			p.row[i] = d
		}
	}
}
func (p *partialUpdate) Result() (record.KV, bool) {
	if !p.any {
		return record.KV{}, false
	}
	kind := types.Insert
	switch {
	case p.row == nil && p.deleted:
		kind = types.Delete
	case p.row == nil:
		kind = types.UpdateBefore // only -U seen: says nothing about the key
	case p.deleted:
		kind = types.UpdateAfter
	}
	row := p.row
	if row == nil {
		row = p.last.Row
	}
	return record.KV{Key: p.last.Key, Seq: p.last.Seq, Kind: kind, Row: row}, true
}

// IsDeduplicate reports whether f is the deduplicate engine's function,
// whose merge of a key's records is always the newest record as it is:
// callers may then skip feeding it.
func IsDeduplicate(f Func) bool {
	_, ok := f.(*dedup)
	return ok
}

// NormalizeInput rewrites input rows before their first merge: for the
// partial-update engine an input +U means the same as +I (see
// partialUpdate); other engines take input as is.
func NormalizeInput(o schema.Options, kvs []record.KV) {
	if o.MergeEngine != schema.PartialUpdate {
		return
	}
	for i := range kvs {
		if kvs[i].Kind == types.UpdateAfter {
			kvs[i].Kind = types.Insert
		}
	}
}

type firstRow struct {
	first record.KV
	any   bool
}

func (f *firstRow) Reset() { f.any = false }
func (f *firstRow) Add(kv *record.KV) {
	if !f.any && kv.Kind.IsAdd() {
		f.first, f.any = *kv, true
		f.first.Kind = types.Insert
	}
}
func (f *firstRow) Result() (record.KV, bool) { return f.first, f.any }

type aggregate struct {
	fns   []string // "" for key columns
	types []types.Type
	acc   types.Row
	last  record.KV
}

func (a *aggregate) Reset() { a.acc = nil }
func (a *aggregate) Add(kv *record.KV) {
	a.last = *kv
	if a.acc == nil {
		a.acc = make(types.Row, len(kv.Row))
		for i, fn := range a.fns {
			if fn == "" {
				a.acc[i] = kv.Row[i]
			}
		}
	}
	retract := kv.Kind.IsRetract()
	for i, fn := range a.fns {
		if fn == "" {
			continue
		}
		a.acc[i] = fold(fn, a.types[i], a.acc[i], kv.Row[i], retract)
	}
}
func (a *aggregate) Result() (record.KV, bool) {
	if a.acc == nil {
		return record.KV{}, false
	}
	return record.KV{Key: a.last.Key, Seq: a.last.Seq, Kind: types.Insert, Row: a.acc}, true
}

// fold applies aggregate function fn of a column of type t.
func fold(fn string, t types.Type, acc, v types.Datum, retract bool) types.Datum {
	switch fn {
	case schema.AggSum:
		if v.IsNull() {
			return acc
		}
		if retract {
			v = negate(v, t)
		}
		if acc.IsNull() {
			return v
		}
		return add(acc, v, t)
	case schema.AggMin, schema.AggMax:
		if retract {
			panic(fmt.Sprintf("mergetree: [remergeable] %s cannot retract; writers must refuse retractions", fn))
		}
		if v.IsNull() {
			return acc
		}
		if acc.IsNull() {
			return v
		}
		c := types.Compare(v, acc)
		if (fn == schema.AggMin && c < 0) || (fn == schema.AggMax && c > 0) {
			return v
		}
		return acc
	case schema.AggLastValue:
		if retract {
			return types.Null
		}
		return v
	default: // last_non_null_value
		if v.IsNull() {
			return acc
		}
		if retract {
			return types.Null
		}
		return v
	}
}

func negate(v types.Datum, t types.Type) types.Datum {
	switch t.Kind {
	case types.KindInt16:
		return types.NewInt16(-int16(v.Int64()))
	case types.KindInt32:
		return types.NewInt32(-int32(v.Int64()))
	case types.KindInt64:
		return types.NewInt64(-v.Int64())
	case types.KindFloat32:
		return types.NewFloat32(-float32(v.Float64()))
	case types.KindFloat64:
		return types.NewFloat64(-v.Float64())
	}
	panic("mergetree: sum over " + t.String())
}

func add(a, b types.Datum, t types.Type) types.Datum {
	switch t.Kind {
	case types.KindInt16:
		return types.NewInt16(int16(a.Int64() + b.Int64()))
	case types.KindInt32:
		return types.NewInt32(int32(a.Int64() + b.Int64()))
	case types.KindInt64:
		return types.NewInt64(a.Int64() + b.Int64())
	case types.KindFloat32:
		return types.NewFloat32(float32(a.Float64() + b.Float64()))
	case types.KindFloat64:
		return types.NewFloat64(a.Float64() + b.Float64())
	}
	panic("mergetree: sum over " + t.String())
}

// CanRetract reports whether the table accepts -U/-D rows: every engine
// does, except aggregation with a min or max column.
func CanRetract(s *schema.Schema, o schema.Options) bool {
	if o.MergeEngine != schema.Aggregation {
		return true
	}
	for _, fn := range o.Aggregates {
		if fn == schema.AggMin || fn == schema.AggMax {
			return false
		}
	}
	return true
}

// SortKVs sorts records by (key, seq) ([sorted-run]).
func SortKVs(kvs []record.KV) {
	slices.SortFunc(kvs, func(a, b record.KV) int {
		if c := bytes.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return cmp.Compare(a.Seq, b.Seq)
	})
}

// Merge merges runs (each sorted by key then seq, in any run order) into
// one record per key, sorted by key, using f. With dropRetracts, keys
// whose result is a retraction are left out ([drop-deletes]); reads always
// drop them. It is a k-way merge over the runs (a heap of run cursors),
// so it costs O(n log k) for n records in k runs.
func Merge(runs [][]record.KV, f Func, dropRetracts bool) []record.KV {
	n := 0
	for _, r := range runs {
		n += len(r)
	}
	return MergeInto(make([]record.KV, 0, n), runs, f, dropRetracts)
}

// MergeInto is Merge appending to out.
func MergeInto(out []record.KV, runs [][]record.KV, f Func, dropRetracts bool) []record.KV {
	mergeEach(runs, f, dropRetracts, func(kv *record.KV) { out = append(out, *kv) })
	return out
}

// MergeRows is Merge returning only the merged rows, appended to out: a
// batch read wants the rows, and building the records first would allocate
// and copy a record per row for nothing.
func MergeRows(out []types.Row, runs [][]record.KV, f Func, dropRetracts bool) []types.Row {
	mergeEach(runs, f, dropRetracts, func(kv *record.KV) { out = append(out, kv.Row) })
	return out
}

// mergeEach calls emit with each merged record of runs in key order (see
// Merge). The record passed is only valid during the call.
func mergeEach(runs [][]record.KV, f Func, dropRetracts bool, emit func(*record.KV)) {
	_, dedupe := f.(*dedup)
	switch len(runs) {
	case 0:
		return
	case 1:
		// One sorted run holds one record per key ([sorted-run]): no heap.
		run := runs[0]
		if dedupe {
			// Deduplicate's result of a lone record is the record itself.
			for i := range run {
				if !(dropRetracts && run[i].Kind.IsRetract()) {
					emit(&run[i])
				}
			}
			return
		}
		for i := range run {
			f.Reset()
			f.Add(&run[i])
			if kv, ok := f.Result(); ok && !(dropRetracts && kv.Kind.IsRetract()) {
				kv.Seq = run[i].Seq
				emit(&kv)
			}
		}
		return
	case 2:
		mergeTwo(runs[0], runs[1], f, dedupe, dropRetracts, emit)
		return
	}
	it := NewIterator(runs)
	var group []*record.KV
	for {
		group = it.NextKey(group[:0])
		if len(group) == 0 {
			return
		}
		mergeGroup(group, f, dedupe, dropRetracts, emit)
	}
}

// mergeGroup emits the merge of one key's records (oldest first).
func mergeGroup(group []*record.KV, f Func, dedupe, dropRetracts bool, emit func(*record.KV)) {
	if dedupe {
		// Deduplicate's result is the newest record as it is.
		if kv := group[len(group)-1]; !(dropRetracts && kv.Kind.IsRetract()) {
			emit(kv)
		}
		return
	}
	f.Reset()
	var maxSeq base.SeqNum
	for _, kv := range group {
		f.Add(kv)
		maxSeq = max(maxSeq, kv.Seq)
	}
	if kv, ok := f.Result(); ok && !(dropRetracts && kv.Kind.IsRetract()) {
		kv.Seq = maxSeq
		emit(&kv)
	}
}

// mergeTwo is mergeEach of two runs, the common case of a bucket's read and
// of its compactions: two cursors compared directly instead of a heap.
func mergeTwo(a, b []record.KV, f Func, dedupe, dropRetracts bool, emit func(*record.KV)) {
	var group []*record.KV
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		var key []byte
		switch {
		case j == len(b):
			key = a[i].Key
		case i == len(a):
			key = b[j].Key
		case bytes.Compare(a[i].Key, b[j].Key) <= 0:
			key = a[i].Key
		default:
			key = b[j].Key
		}
		// The key's records of each run, each in sequence order, merged
		// into one group oldest first.
		ea, eb := i, j
		for ea < len(a) && bytes.Equal(a[ea].Key, key) {
			ea++
		}
		for eb < len(b) && bytes.Equal(b[eb].Key, key) {
			eb++
		}
		group = group[:0]
		for i < ea || j < eb {
			if j == eb || (i < ea && a[i].Seq < b[j].Seq) {
				group = append(group, &a[i])
				i++
			} else {
				group = append(group, &b[j])
				j++
			}
		}
		mergeGroup(group, f, dedupe, dropRetracts, emit)
	}
}

// Iterator walks sorted runs in (key, seq) order, a key at a time.
type Iterator struct {
	runs [][]record.KV
	pos  []int
	heap []int // run indexes, a min-heap on the runs' current records
}

// NewIterator returns an iterator over runs, each sorted by (key, seq).
func NewIterator(runs [][]record.KV) *Iterator {
	it := &Iterator{runs: runs, pos: make([]int, len(runs))}
	for i, r := range runs {
		if len(r) > 0 {
			it.heap = append(it.heap, i)
		}
	}
	for i := len(it.heap)/2 - 1; i >= 0; i-- {
		it.down(i)
	}
	return it
}

func (it *Iterator) cur(h int) *record.KV { r := it.heap[h]; return &it.runs[r][it.pos[r]] }

func (it *Iterator) less(a, b int) bool { return record.Less(it.cur(a), it.cur(b)) }

func (it *Iterator) down(i int) {
	n := len(it.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && it.less(r, l) {
			m = r
		}
		if !it.less(m, i) {
			return
		}
		it.heap[i], it.heap[m] = it.heap[m], it.heap[i]
		i = m
	}
}

// pop returns the smallest current record and advances its run.
func (it *Iterator) pop() *record.KV {
	kv := it.cur(0)
	r := it.heap[0]
	it.pos[r]++
	if it.pos[r] == len(it.runs[r]) {
		last := len(it.heap) - 1
		it.heap[0] = it.heap[last]
		it.heap = it.heap[:last]
	}
	if len(it.heap) > 0 {
		it.down(0)
	}
	return kv
}

// NextKey appends to dst the records of the next key, oldest first, and
// returns it; an empty result means the runs are exhausted.
func (it *Iterator) NextKey(dst []*record.KV) []*record.KV {
	if len(it.heap) == 0 {
		return dst
	}
	first := it.pop()
	dst = append(dst, first)
	for len(it.heap) > 0 && bytes.Equal(it.cur(0).Key, first.Key) {
		dst = append(dst, it.pop())
	}
	return dst
}

// MergeSorted merges records already sorted by (key, seq).
func MergeSorted(all []record.KV, f Func, dropRetracts bool) []record.KV {
	out := make([]record.KV, 0, len(all))
	for i := 0; i < len(all); {
		j := i
		f.Reset()
		var maxSeq base.SeqNum
		for j < len(all) && bytes.Equal(all[j].Key, all[i].Key) {
			f.Add(&all[j])
			maxSeq = max(maxSeq, all[j].Seq)
			j++
		}
		if kv, ok := f.Result(); ok && !(dropRetracts && kv.Kind.IsRetract()) {
			kv.Seq = maxSeq
			out = append(out, kv)
		}
		i = j
	}
	return out
}
