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
	var fresh []*record.Block
	var freshFile manifest.DataFile // the file of fresh[0]
	var lo, hi []byte
	for _, f := range newFiles {
		blk, err := w.st.ReadBlock(b.id, f, w.sc)
		if err != nil {
			return nil, err
		}
		n := blk.Len()
		if n == 0 {
			continue
		}
		if len(fresh) == 0 {
			freshFile = f
		}
		fresh = append(fresh, blk)
		if lo == nil || record.CompareKeys(blk.Key(0), lo) < 0 {
			lo = blk.Key(0)
		}
		if hi == nil || record.CompareKeys(blk.Key(n-1), hi) > 0 {
			hi = blk.Key(n - 1)
		}
	}
	if len(fresh) == 0 {
		return nil, nil
	}
	var old []*record.Block
	for _, f := range b.files {
		if record.CompareKeys(f.MaxKey, lo) < 0 || record.CompareKeys(f.MinKey, hi) > 0 {
			continue
		}
		blk, err := w.st.ReadBlock(b.id, f, w.sc)
		if err != nil {
			return nil, err
		}
		old = append(old, blk)
	}
	pos := make([]int, len(old))
	// srcs are the older files then the epoch's: a Ref's Block indexes it.
	srcs := append(append(make([]*record.Block, 0, len(old)+len(fresh)), old...), fresh...)
	nOld := int32(len(old))
	// Each new record yields at most an update pair: size the output for
	// that rather than growing it by copying.
	var freshRows int
	for _, run := range fresh {
		freshRows += run.Len()
	}
	dedupe := mergetree.IsDeduplicate(b.f)
	// Under the deduplicate engine the changelog's records are records of
	// the files as they are, gathered column by column at the end (refs,
	// with their new kinds); other engines build their merged rows.
	var refs []record.Ref
	var kinds []types.RowKind
	out := record.NewBlock(w.sc.Types(), true, 0)
	if dedupe {
		refs = make([]record.Ref, 0, 2*freshRows)
		kinds = make([]types.RowKind, 0, 2*freshRows)
	}
	seq := b.nextSeq
	emit := func(kind types.RowKind, kv record.KV) {
		out.AppendRow(kv.Key, seq, kind, kv.Row)
		seq++
	}
	// The epoch's keys in order, a key's records oldest first: usually the
	// epoch wrote one file per bucket, a sorted run that is walked directly
	// instead of through the merge heap.
	var it *mergetree.BlockIterator
	var single *record.Block
	if len(fresh) == 1 {
		single = fresh[0]
	} else {
		it = mergetree.NewBlockIterator(fresh)
	}
	var group, prior []record.Ref
	for i := 0; ; i++ {
		if it != nil {
			group = it.NextKey(group[:0])
			for g := range group {
				group[g].Block += nOld
			}
		} else if i < single.Len() {
			// A sorted run (key, then sequence number) holds its key's
			// records together, oldest first.
			group = append(group[:0], record.Ref{Block: nOld, Row: int32(i)})
			for i+1 < single.Len() && bytes.Equal(single.Key(i+1), single.Key(i)) {
				i++
				group = append(group, record.Ref{Block: nOld, Row: int32(i)})
			}
		} else {
			group = group[:0]
		}
		if len(group) == 0 {
			break
		}
		key := srcs[group[0].Block].Key(int(group[0].Row))
		prior = prior[:0]
		for j, run := range old {
			p, n := pos[j], run.Len()
			if p < n && record.CompareKeys(run.Key(p), key) < 0 {
				p = seekKey(run, p, key)
			}
			for ; p < n && bytes.Equal(run.Key(p), key); p++ {
				prior = append(prior, record.Ref{Block: int32(j), Row: int32(p)})
			}
			pos[j] = p
		}
		if dedupe {
			// Deduplicate's merge of a key's records is its newest
			// record: no need to order the older ones or feed the
			// function. The epoch's records are newer than every older
			// one ([seq-order]).
			var o record.Ref
			hadOld := false
			if len(prior) > 0 {
				o = prior[0]
				for _, r := range prior[1:] {
					if srcs[r.Block].Seqs[r.Row] > srcs[o.Block].Seqs[o.Row] {
						o = r
					}
				}
				hadOld = !srcs[o.Block].Kinds[o.Row].IsRetract()
			}
			n := group[len(group)-1]
			hasNew := !srcs[n.Block].Kinds[n.Row].IsRetract()
			switch {
			case !hadOld && hasNew:
				refs, kinds = append(refs, n), append(kinds, types.Insert)
			case hadOld && !hasNew:
				refs, kinds = append(refs, o), append(kinds, types.Delete)
			case hadOld && hasNew && !record.SameRow(srcs[o.Block], int(o.Row), srcs[n.Block], int(n.Row)):
				refs, kinds = append(refs, o, n), append(kinds, types.UpdateBefore, types.UpdateAfter)
			}
			continue
		}
		priorKVs := make([]record.KV, len(prior))
		for j, r := range prior {
			priorKVs[j] = srcs[r.Block].KV(int(r.Row))
		}
		slices.SortFunc(priorKVs, func(a, b record.KV) int { return cmp.Compare(a.Seq, b.Seq) })
		all := slices.Clip(priorKVs)
		for _, r := range group {
			all = append(all, srcs[r.Block].KV(int(r.Row)))
		}
		o, hadOld := fold(b.f, priorKVs)
		n, hasNew := fold(b.f, all)
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
	if dedupe && single != nil && len(refs) == single.Len() && allInserts(kinds) && allInserts(single.Kinds) {
		// Every record of the epoch's one file is a new key, inserted:
		// the changelog is that file, record for record (a table whose
		// keys only grow, as the demo's auction and person tables, writes
		// such epochs). The changelog names the data file rather than a
		// copy of it ([changelog-shares-data]).
		return []manifest.DataFile{freshFile}, nil
	}
	if dedupe {
		out = record.NewBlock(w.sc.Types(), true, len(refs))
		out.Gather(srcs, refs)
		for i := range kinds {
			out.Kinds[i] = kinds[i]
			out.Seqs[i] = seq
			seq++
		}
	}
	if out.Len() == 0 {
		return nil, nil
	}
	cl, err := w.st.StageFile(b.id, "changelog", w.sc, out, 0, e)
	if err != nil {
		return nil, err
	}
	b.unsynced = true
	return []manifest.DataFile{cl}, nil
}

// fold merges one key's records (oldest first) and tells whether the key
// is present.
func fold(f mergetree.Func, recs []record.KV) (record.KV, bool) {
	if len(recs) == 0 {
		return record.KV{}, false
	}
	f.Reset()
	for i := range recs {
		f.Add(&recs[i])
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

// seekKey returns the first position at or after p (where run's key p <
// key) whose key is >= key. Keys the cursor looks for are usually near it,
// so it gallops forward (1, 2, 4, ... records) to bracket the key, then
// searches the bracket: O(log d) comparisons for a distance d instead of
// O(log n) over the rest of the run.
func seekKey(run *record.Block, p int, key []byte) int {
	n := run.Len()
	lo, step := p, 1 // run.Key(lo) < key
	hi := lo + step
	for hi < n && record.CompareKeys(run.Key(hi), key) < 0 {
		lo = hi
		step *= 2
		hi = lo + step
	}
	hi = min(hi, n)
	// The answer lies in (lo, hi].
	return lo + 1 + sort.Search(hi-lo-1, func(i int) bool { return record.CompareKeys(run.Key(lo+1+i), key) >= 0 })
}
