package mergetree

import (
	"bytes"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
)

// SortMerge sorts buf (a write buffer in arrival order, with keys) by key
// and sequence number and merges each key's records with f, as SortKVs
// followed by MergeSorted would, into a new block: one record per key, in
// key order. buf is left as it is, and the result shares no mutable
// memory with it, so buf may be reset and reused at once.
//
// Under the deduplicate engine a key's result is its newest record as it
// is: the survivors are gathered column by column from buf. Other engines
// feed f with each key's records built as rows.
func SortMerge(buf *record.Block, f Func, dropRetracts bool) *record.Block {
	ts := buf.Types()
	n := buf.Len()
	if n == 0 {
		return record.NewBlock(ts, true, 0)
	}
	entries := make([]sortEntry, n)
	for i := 0; i < n; i++ {
		entries[i] = newSortEntry(buf.Key(i), buf.Seqs[i], i)
	}
	sortBuffer(buf, entries)
	if _, dedupe := f.(*dedup); dedupe {
		refs := make([]record.Ref, 0, n)
		for i := 0; i < n; {
			j := i + 1
			for j < n && sameKey(buf, &entries[i], &entries[j]) {
				j++
			}
			last := entries[j-1].idx
			if !(dropRetracts && buf.Kinds[last].IsRetract()) {
				refs = append(refs, record.Ref{Row: int32(last)})
			}
			i = j
		}
		out := record.NewBlock(ts, true, len(refs))
		out.Keys = make([]byte, 0, len(buf.Keys)/n*len(refs)+16)
		out.Gather([]*record.Block{buf}, refs)
		return out
	}
	out := record.NewBlock(ts, true, n)
	for i := 0; i < n; {
		j := i + 1
		for j < n && sameKey(buf, &entries[i], &entries[j]) {
			j++
		}
		f.Reset()
		var maxSeq base.SeqNum
		for _, e := range entries[i:j] {
			kv := buf.KV(int(e.idx))
			f.Add(&kv)
			maxSeq = max(maxSeq, e.seq)
		}
		if kv, ok := f.Result(); ok && !(dropRetracts && kv.Kind.IsRetract()) {
			kv.Seq = maxSeq
			out.AppendKV(&kv)
		}
		i = j
	}
	return out
}

func sameKey(blk *record.Block, a, b *sortEntry) bool {
	if a.hi != b.hi || a.lo != b.lo || a.n != b.n {
		return false
	}
	return a.n <= 16 || bytes.Equal(blk.Key(int(a.idx))[16:], blk.Key(int(b.idx))[16:])
}

// MergeBlocks merges runs (each sorted by key then seq, in any run order,
// all of column types ts) into a new block of one record per key, sorted
// by key, using f. With dropRetracts, keys whose result is a retraction
// are left out ([drop-deletes]); reads always drop them. One run is walked
// directly, two with two cursors, more with a heap of cursors (O(n log k)
// for n records in k runs). Under the deduplicate engine the survivors
// are gathered column by column from the runs; other engines feed f with
// each key's records built as rows.
func MergeBlocks(ts []types.Type, runs []*record.Block, f Func, dropRetracts bool) *record.Block {
	n, nk := 0, 0
	for _, r := range runs {
		n += r.Len()
		nk += len(r.Keys)
	}
	if _, dedupe := f.(*dedup); dedupe {
		refs := make([]record.Ref, 0, n)
		eachGroup(runs, func(group []record.Ref) {
			last := group[len(group)-1]
			if !(dropRetracts && runs[last.Block].Kinds[last.Row].IsRetract()) {
				refs = append(refs, last)
			}
		})
		out := record.NewBlock(ts, true, len(refs))
		out.Keys = make([]byte, 0, nk)
		out.Gather(runs, refs)
		return out
	}
	out := record.NewBlock(ts, true, n)
	eachGroup(runs, func(group []record.Ref) {
		f.Reset()
		var maxSeq base.SeqNum
		for _, r := range group {
			kv := runs[r.Block].KV(int(r.Row))
			f.Add(&kv)
			maxSeq = max(maxSeq, kv.Seq)
		}
		if kv, ok := f.Result(); ok && !(dropRetracts && kv.Kind.IsRetract()) {
			kv.Seq = maxSeq
			out.AppendKV(&kv)
		}
	})
	return out
}

// MergeValues is MergeBlocks with dropRetracts for a batch read: it returns
// only the merged rows' values, as a chunk whose row kinds are all +I,
// without the keys and sequence numbers a block would carry.
func MergeValues(ts []types.Type, runs []*record.Block, f Func) *types.Chunk {
	if _, dedupe := f.(*dedup); !dedupe {
		c := MergeBlocks(ts, runs, f, true).Chunk
		clear(c.Kinds) // +I is 0
		return &c
	}
	n := 0
	for _, r := range runs {
		n += r.Len()
	}
	refs := make([]record.Ref, 0, n)
	eachGroup(runs, func(group []record.Ref) {
		last := group[len(group)-1]
		if !runs[last.Block].Kinds[last.Row].IsRetract() {
			refs = append(refs, last)
		}
	})
	c := types.NewChunk(ts, 0)
	record.GatherValues(c, runs, refs)
	return c
}

// eachGroup calls fn with the records of each key of runs (each sorted by
// key then seq), oldest first, in key order. The group is only valid
// during the call.
func eachGroup(runs []*record.Block, fn func(group []record.Ref)) {
	var live []*record.Block
	var ids []int32
	for i, r := range runs {
		if r.Len() > 0 {
			live = append(live, r)
			ids = append(ids, int32(i))
		}
	}
	group := make([]record.Ref, 0, 8)
	switch len(live) {
	case 0:
		return
	case 1:
		// A sorted run holds a key's records together, oldest first.
		r, id := live[0], ids[0]
		for i, n := 0, r.Len(); i < n; {
			group = append(group[:0], record.Ref{Block: id, Row: int32(i)})
			k := r.Key(i)
			for i++; i < n && bytes.Equal(r.Key(i), k); i++ {
				group = append(group, record.Ref{Block: id, Row: int32(i)})
			}
			fn(group)
		}
		return
	case 2:
		eachGroupTwo(live[0], live[1], ids[0], ids[1], group, fn)
		return
	}
	it := NewBlockIterator(runs)
	for {
		group = it.NextKey(group[:0])
		if len(group) == 0 {
			return
		}
		fn(group)
	}
}

// eachGroupTwo is eachGroup of two runs (ids ia and ib), the common case
// of a bucket's read and of its compactions: two cursors compared directly
// instead of a heap.
func eachGroupTwo(a, b *record.Block, ia, ib int32, group []record.Ref, fn func([]record.Ref)) {
	i, j, na, nb := 0, 0, a.Len(), b.Len()
	for i < na || j < nb {
		var key []byte
		switch {
		case j == nb:
			key = a.Key(i)
		case i == na:
			key = b.Key(j)
		default:
			ka, kb := a.Key(i), b.Key(j)
			c := record.CompareKeys(ka, kb)
			// The common cases: the key is in one run only, once.
			if c < 0 && (i+1 == na || !bytes.Equal(a.Key(i+1), ka)) {
				group = append(group[:0], record.Ref{Block: ia, Row: int32(i)})
				i++
				fn(group)
				continue
			}
			if c > 0 && (j+1 == nb || !bytes.Equal(b.Key(j+1), kb)) {
				group = append(group[:0], record.Ref{Block: ib, Row: int32(j)})
				j++
				fn(group)
				continue
			}
			key = ka
			if c > 0 {
				key = kb
			}
		}
		// The key's records of each run, each in sequence order, merged
		// into one group oldest first.
		ea, eb := i, j
		for ea < na && bytes.Equal(a.Key(ea), key) {
			ea++
		}
		for eb < nb && bytes.Equal(b.Key(eb), key) {
			eb++
		}
		group = group[:0]
		for i < ea || j < eb {
			if j == eb || (i < ea && a.Seqs[i] < b.Seqs[j]) {
				group = append(group, record.Ref{Block: ia, Row: int32(i)})
				i++
			} else {
				group = append(group, record.Ref{Block: ib, Row: int32(j)})
				j++
			}
		}
		fn(group)
	}
}

// BlockIterator walks sorted runs in (key, seq) order, a key at a time.
type BlockIterator struct {
	runHeap
}

// runHeap is a k-way merge's state: run i's current block and position
// in it, and the indexes of the runs with records left as a min-heap on
// their current records by (key, seq). BlockIterator and the streaming
// merge share it.
type runHeap struct {
	blocks []*record.Block
	pos    []int
	heap   []int
}

func (h *runHeap) less(a, b int) bool {
	ra, rb := h.heap[a], h.heap[b]
	ba, bb := h.blocks[ra], h.blocks[rb]
	pa, pb := h.pos[ra], h.pos[rb]
	if c := record.CompareKeys(ba.Key(pa), bb.Key(pb)); c != 0 {
		return c < 0
	}
	return ba.Seqs[pa] < bb.Seqs[pb]
}

func (h *runHeap) down(i int) {
	n := len(h.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h.heap[i], h.heap[m] = h.heap[m], h.heap[i]
		i = m
	}
}

// NewBlockIterator returns an iterator over runs, each sorted by (key,
// seq).
func NewBlockIterator(runs []*record.Block) *BlockIterator {
	it := &BlockIterator{runHeap{blocks: runs, pos: make([]int, len(runs))}}
	for i, r := range runs {
		if r.Len() > 0 {
			it.heap = append(it.heap, i)
		}
	}
	for i := len(it.heap)/2 - 1; i >= 0; i-- {
		it.down(i)
	}
	return it
}

// pop returns the smallest current record and advances its run.
func (it *BlockIterator) pop() record.Ref {
	r := it.heap[0]
	ref := record.Ref{Block: int32(r), Row: int32(it.pos[r])}
	it.pos[r]++
	if it.pos[r] == it.blocks[r].Len() {
		last := len(it.heap) - 1
		it.heap[0] = it.heap[last]
		it.heap = it.heap[:last]
	}
	if len(it.heap) > 0 {
		it.down(0)
	}
	return ref
}

// NextKey appends to dst the records of the next key, oldest first, and
// returns it; an empty result means the runs are exhausted.
func (it *BlockIterator) NextKey(dst []record.Ref) []record.Ref {
	if len(it.heap) == 0 {
		return dst
	}
	first := it.pop()
	dst = append(dst, first)
	key := it.blocks[first.Block].Key(int(first.Row))
	for len(it.heap) > 0 {
		r := it.heap[0]
		if !bytes.Equal(it.blocks[r].Key(it.pos[r]), key) {
			break
		}
		dst = append(dst, it.pop())
	}
	return dst
}
