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

// NormalizeInput rewrites the row kinds of input records before their
// first merge: for the partial-update engine an input +U means the same as
// +I (see partialUpdate); other engines take input as is.
func NormalizeInput(o schema.Options, kinds []types.RowKind) {
	if o.MergeEngine != schema.PartialUpdate {
		return
	}
	for i, k := range kinds {
		if k == types.UpdateAfter {
			kinds[i] = types.Insert
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
