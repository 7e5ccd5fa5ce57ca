package write

import (
	"bytes"
	"cmp"
	"slices"
	"sort"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/mergetree"
	"github.com/stratadb/strata/table/record"
)

// lookupChangelog computes the exact changelog of epoch e in bucket b
// (package doc, [changelog-exact]) from the epoch's new files and the
// bucket's older files, and writes it as one changelog file. The epoch's
// keys come in order from a merge of its new files; each older file is
// walked by one cursor that only moves forward, so the cost is linear in
// the records read.
func (w *Writer) lookupChangelog(b *bucket, e base.Epoch, newFiles []manifest.DataFile) ([]manifest.DataFile, error) {
	var fresh [][]record.KV
	var lo, hi []byte
	for _, f := range newFiles {
		kvs, err := w.st.ReadFile(b.id, f, w.sc)
		if err != nil {
			return nil, err
		}
		if len(kvs) == 0 {
			continue
		}
		fresh = append(fresh, kvs)
		if lo == nil || bytes.Compare(kvs[0].Key, lo) < 0 {
			lo = kvs[0].Key
		}
		if hi == nil || bytes.Compare(kvs[len(kvs)-1].Key, hi) > 0 {
			hi = kvs[len(kvs)-1].Key
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	var old [][]record.KV
	for _, f := range b.files {
		if bytes.Compare(f.MaxKey, lo) < 0 || bytes.Compare(f.MinKey, hi) > 0 {
			continue
		}
		kvs, err := w.st.ReadFile(b.id, f, w.sc)
		if err != nil {
			return nil, err
		}
		old = append(old, kvs)
	}
	pos := make([]int, len(old))
	// Each new record yields at most an update pair: size the output for
	// that rather than growing it by copying.
	var freshRows int
	for _, run := range fresh {
		freshRows += len(run)
	}
	out := make([]record.KV, 0, 2*freshRows)
	seq := b.nextSeq
	emit := func(kind types.RowKind, kv record.KV) {
		out = append(out, record.KV{Key: kv.Key, Seq: seq, Kind: kind, Row: kv.Row})
		seq++
	}
	// The epoch's keys in order, a key's records oldest first: usually the
	// epoch wrote one file per bucket, a sorted run that is walked directly
	// instead of through the merge heap.
	var it *mergetree.Iterator
	var single []record.KV
	if len(fresh) == 1 {
		single = fresh[0]
	} else {
		it = mergetree.NewIterator(fresh)
	}
	dedupe := mergetree.IsDeduplicate(b.f)
	var group, prior []*record.KV
	for i := 0; ; i++ {
		if it != nil {
			group = it.NextKey(group[:0])
		} else if i < len(single) {
			// A sorted run (key, then sequence number) holds its key's
			// records together, oldest first.
			group = append(group[:0], &single[i])
			for i+1 < len(single) && bytes.Equal(single[i+1].Key, single[i].Key) {
				i++
				group = append(group, &single[i])
			}
		} else {
			group = group[:0]
		}
		if len(group) == 0 {
			break
		}
		key := group[0].Key
		prior = prior[:0]
		for j, run := range old {
			p := pos[j]
			if p < len(run) && bytes.Compare(run[p].Key, key) < 0 {
				p = seekKey(run, p, key)
			}
			for ; p < len(run) && bytes.Equal(run[p].Key, key); p++ {
				prior = append(prior, &run[p])
			}
			pos[j] = p
		}
		var o, n record.KV
		var hadOld, hasNew bool
		if dedupe {
			// Deduplicate's merge of a key's records is its newest
			// record: no need to order the older ones or feed the
			// function. The epoch's records are newer than every older
			// one ([seq-order]).
			if len(prior) > 0 {
				newest := prior[0]
				for _, r := range prior[1:] {
					if r.Seq > newest.Seq {
						newest = r
					}
				}
				o, hadOld = *newest, !newest.Kind.IsRetract()
			}
			last := group[len(group)-1]
			n, hasNew = *last, !last.Kind.IsRetract()
		} else {
			if len(prior) > 1 { // most keys have one older record: nothing to order
				slices.SortFunc(prior, func(a, b *record.KV) int { return cmp.Compare(a.Seq, b.Seq) })
			}
			o, hadOld = fold(b.f, prior)
			n, hasNew = fold(b.f, append(prior, group...))
		}
		switch {
		case !hadOld && hasNew:
			emit(types.Insert, n)
		case hadOld && !hasNew:
			emit(types.Delete, o)
		case hadOld && hasNew && !sameRow(o.Row, n.Row):
			emit(types.UpdateBefore, o)
			emit(types.UpdateAfter, n)
		}
	}
	if len(out) == 0 {
		return nil, nil
	}
	cl, err := w.st.WriteFile(b.id, "changelog", w.sc, out, 0, e)
	if err != nil {
		return nil, err
	}
	return []manifest.DataFile{cl}, nil
}

// fold merges one key's records (oldest first) and tells whether the key
// is present.
func fold(f mergetree.Func, recs []*record.KV) (record.KV, bool) {
	if len(recs) == 0 {
		return record.KV{}, false
	}
	f.Reset()
	for _, r := range recs {
		f.Add(r)
	}
	kv, ok := f.Result()
	return kv, ok && !kv.Kind.IsRetract()
}

func sameRow(a, b types.Row) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !sameDatum(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

// sameDatum tells whether a and b are both NULL or equal under
// types.Compare, deciding the common cases (integers, equal strings)
// without the general comparison.
func sameDatum(a, b *types.Datum) bool {
	ka, kb := a.Kind(), b.Kind()
	if ka == types.KindUnknown || kb == types.KindUnknown {
		return ka == kb
	}
	if ka == kb {
		switch ka {
		case types.KindInt16, types.KindInt32, types.KindInt64:
			return a.Int64() == b.Int64()
		case types.KindText, types.KindVarchar:
			if a.Str() == b.Str() {
				return true
			}
		}
	}
	return types.Compare(*a, *b) == 0
}

// seekKey returns the first position at or after p (where run[p].Key <
// key) whose key is >= key. Keys the cursor looks for are usually near it,
// so it gallops forward (1, 2, 4, ... records) to bracket the key, then
// searches the bracket: O(log d) comparisons for a distance d instead of
// O(log n) over the rest of the run.
func seekKey(run []record.KV, p int, key []byte) int {
	lo, step := p, 1 // run[lo].Key < key
	hi := lo + step
	for hi < len(run) && bytes.Compare(run[hi].Key, key) < 0 {
		lo = hi
		step *= 2
		hi = lo + step
	}
	hi = min(hi, len(run))
	// The answer lies in (lo, hi].
	return lo + 1 + sort.Search(hi-lo-1, func(i int) bool { return bytes.Compare(run[lo+1+i].Key, key) >= 0 })
}
