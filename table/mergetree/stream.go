package mergetree

import (
	"bytes"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/record"
)

// RunReader hands out one sorted run a block at a time: the records of
// each block, and of the blocks one after another, in (key, seq) order.
// A compaction's reader decodes the run's files one by one; tests slice
// blocks held in memory. It is the cursor side of Paimon's sort-merge
// reader (SortMergeReader over one RecordReader per sorted run).
type RunReader interface {
	// NextBlock returns the run's next block, or nil at the end. The
	// merge only reads the block, and lets go of it once it has moved
	// past its records.
	NextBlock() (*record.Block, error)
}

// Limits bound the blocks a streaming merge hands out, as Paimon's
// RollingFileWriter rolls to a new file at its target size.
type Limits struct {
	// Rows is the most records of one output block (at least 1).
	Rows int
	// Bytes is the most record.Block.Bytes of one output block (0: no
	// bound). A block rolls at the first flush that reaches it; flushes
	// come closer together as a block nears it, so it goes past by about
	// a record (by at most a batch of records when the records' sizes
	// vary widely).
	Bytes int
	// Expect is how many records the runs hold together (0: unknown), an
	// upper bound of the output's: output blocks are sized for what is
	// left of it rather than grown by doubling.
	Expect int
}

// MergeStats describe what a streaming merge did and held.
type MergeStats struct {
	// Records and Blocks are the records and blocks handed out.
	Records, Blocks int
	// MaxHeld is the most input blocks the merge referred to at once: at
	// most two per run when each run holds one record per key, as data
	// files do ([stream-memory]; a key's records are all held while it
	// is merged).
	MaxHeld int
	// MaxOutBytes is the largest output block's record.Block.Bytes.
	MaxOutBytes int
}

// mergeBatch is how many output records a streaming merge gathers at
// once: large enough for the column-by-column gather to pay, small
// enough that a block's limit is overshot by little.
const mergeBatch = 1024

// MergeRuns merges sorted runs read a block at a time, as MergeBlocks
// merges runs held whole: the same records come out, in key order, with
// f merging each key's records (oldest first) and, with dropRetracts,
// keys whose result is a retraction left out ([drop-deletes]). The output
// is handed to emit in blocks of at most lim, each the caller's to keep
// (strings included: they point into no input block). This is Paimon's
// merge of sorted runs with a rolling writer (MergeTreeCompactRewriter
// over a SortMergeReader into a RollingFileWriter): the memory a merge
// needs is its inputs' current blocks plus one output block, whatever
// the runs' total size ([stream-memory]).
//
// A heap of cursors, one per run, gives the records in (key, seq) order;
// under the deduplicate engine a key's newest record is gathered column
// by column into the output a batch at a time (and the records of a run
// below every other run's current key are taken in a stretch, without
// the heap), other engines feed f with the key's records built as rows.
// An input block is let go of at the first key boundary after its cursor
// has moved past it, once the records gathered from it have been copied
// out.
func MergeRuns(ts []types.Type, runs []RunReader, f Func, dropRetracts bool, lim Limits, emit func(*record.Block) error) (MergeStats, error) {
	m := &streamMerge{ts: ts, runs: runs, f: f, dedupe: IsDeduplicate(f), drop: dropRetracts, lim: lim, emit: emit,
		runHeap: runHeap{blocks: make([]*record.Block, len(runs)), pos: make([]int, len(runs))}, src: make([]int32, len(runs))}
	m.lim.Rows = max(m.lim.Rows, 1)
	m.out = record.NewBlock(ts, true, m.capacity())
	for i := range runs {
		ok, err := m.load(i)
		if err != nil {
			return m.stats, err
		}
		if ok {
			m.heap = append(m.heap, i)
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	group := make([]record.Ref, 0, 8)
	for len(m.heap) > 0 {
		if !m.dedupe || !m.tryBulk() {
			var err error
			if group, err = m.nextKey(group[:0]); err != nil {
				return m.stats, err
			}
			m.take(group)
		}
		pending := len(m.refs) + m.out.Len() - m.counted
		if pending >= m.batch() || m.out.Len()+len(m.refs) >= m.lim.Rows || len(m.srcs) > len(m.heap) {
			m.flush()
		}
		if m.out.Len() >= m.lim.Rows || (m.lim.Bytes > 0 && m.outBytes >= m.lim.Bytes) {
			if err := m.roll(); err != nil {
				return m.stats, err
			}
		}
	}
	m.flush()
	if m.out.Len() > 0 {
		if err := m.roll(); err != nil {
			return m.stats, err
		}
	}
	return m.stats, nil
}

// streamMerge is MergeRuns' state.
type streamMerge struct {
	ts     []types.Type
	runs   []RunReader
	f      Func
	dedupe bool
	drop   bool
	lim    Limits
	emit   func(*record.Block) error

	// runHeap holds run i's current block (blocks[i]), its position in
	// it (pos[i]) and the runs with records left as a min-heap on their
	// current records.
	runHeap
	src []int32 // blocks[i]'s index in srcs

	// srcs are the blocks refs and the output's strings may point into:
	// the runs' current blocks and those they moved past since the last
	// flush.
	srcs []*record.Block
	// refs are the records (in srcs) gathered into out at the next flush.
	refs []record.Ref

	out      *record.Block
	counted  int // out's records [0, counted) own their strings and are in outBytes
	outBytes int
	// skip is how many keys go through the heap before bulk is tried
	// again; skipped counts them.
	skip, skipped int

	// seenBytes and seenRecords are the bytes and records of the output
	// so far, flushed: their ratio sizes the batches near the byte limit.
	seenBytes, seenRecords int
	stats                  MergeStats
}

// batch returns how many records may be pending before a flush: a full
// batch while the output block is far from its byte limit, fewer as it
// nears it (by the records' average size so far), so that a block goes
// past the limit by about a record, not a batch.
func (m *streamMerge) batch() int {
	if m.lim.Bytes == 0 || m.seenRecords == 0 {
		return mergeBatch
	}
	avg := max(1, m.seenBytes/m.seenRecords)
	return max(1, min(mergeBatch, (m.lim.Bytes-m.outBytes)/avg))
}

// load makes run i's next non-empty block current; false at the run's end.
func (m *streamMerge) load(i int) (bool, error) {
	for {
		blk, err := m.runs[i].NextBlock()
		if err != nil {
			return false, err
		}
		if blk == nil {
			m.blocks[i] = nil
			return false, nil
		}
		if blk.Len() == 0 {
			continue
		}
		m.blocks[i], m.pos[i], m.src[i] = blk, 0, int32(len(m.srcs))
		m.srcs = append(m.srcs, blk)
		m.stats.MaxHeld = max(m.stats.MaxHeld, len(m.srcs))
		return true, nil
	}
}

// pop returns the smallest current record and moves its run on, to the
// run's next block when it is past the end of this one.
func (m *streamMerge) pop() (record.Ref, error) {
	r := m.heap[0]
	ref := record.Ref{Block: m.src[r], Row: int32(m.pos[r])}
	m.pos[r]++
	if m.pos[r] == m.blocks[r].Len() {
		ok, err := m.load(r)
		if err != nil {
			return ref, err
		}
		if !ok {
			last := len(m.heap) - 1
			m.heap[0] = m.heap[last]
			m.heap = m.heap[:last]
		}
	}
	if len(m.heap) > 0 {
		m.down(0)
	}
	return ref, nil
}

// nextKey appends to dst the records of the next key, oldest first (the
// heap orders a key's records by sequence number).
func (m *streamMerge) nextKey(dst []record.Ref) ([]record.Ref, error) {
	first, err := m.pop()
	if err != nil {
		return dst, err
	}
	dst = append(dst, first)
	// The key stays valid: the block it is in stays in srcs until the
	// next flush.
	key := m.srcs[first.Block].Key(int(first.Row))
	for len(m.heap) > 0 {
		r := m.heap[0]
		if !bytes.Equal(m.blocks[r].Key(m.pos[r]), key) {
			break
		}
		ref, err := m.pop()
		if err != nil {
			return dst, err
		}
		dst = append(dst, ref)
	}
	return dst, nil
}

// tryBulk calls bulk unless recent calls took next to nothing, as they do
// when the runs' keys interleave closely: then it waits a number of keys
// that doubles with each such call (up to 64) before trying again. It
// reports whether bulk took records.
func (m *streamMerge) tryBulk() bool {
	if m.skipped < m.skip {
		m.skipped++
		return false
	}
	m.skipped = 0
	n := m.bulk()
	if n <= 2 {
		m.skip = min(max(1, 2*m.skip), 64)
	} else {
		m.skip = 0
	}
	return n > 0
}

// bulk takes, under the deduplicate engine, the records of the run with
// the smallest key that come before every other run's current key, each
// the only record of its key: each is its key's result as it is, taken
// without going through the heap. Runs mostly hold keys the others do not
// (a large run and a few small newer ones), so most records go this way.
// It stops before the end of the run's block (the next block may hold
// more records of the last key), at a key the run holds twice, and at the
// next flush's batch or the output's record limit. It returns how many
// records it took.
func (m *streamMerge) bulk() int {
	r := m.heap[0]
	blk, p := m.blocks[r], m.pos[r]
	var bound []byte // the smallest current key of the other runs
	for _, i := range []int{1, 2} {
		if i < len(m.heap) {
			o := m.heap[i]
			if k := m.blocks[o].Key(m.pos[o]); bound == nil || record.CompareKeys(k, bound) < 0 {
				bound = k
			}
		}
	}
	pending := len(m.refs) + m.out.Len() - m.counted
	room := min(m.batch()-pending, m.lim.Rows-m.out.Len()-len(m.refs))
	end, last := p, blk.Len()-1
	for end < last && end-p < room {
		k := blk.Key(end)
		if (bound != nil && record.CompareKeys(k, bound) >= 0) || bytes.Equal(k, blk.Key(end+1)) {
			break
		}
		if !(m.drop && blk.Kinds[end].IsRetract()) {
			m.refs = append(m.refs, record.Ref{Block: m.src[r], Row: int32(end)})
		}
		end++
	}
	if end > p {
		m.pos[r] = end
		m.down(0)
	}
	return end - p
}

// take merges one key's records into the output.
func (m *streamMerge) take(group []record.Ref) {
	if m.dedupe {
		last := group[len(group)-1]
		if !(m.drop && m.srcs[last.Block].Kinds[last.Row].IsRetract()) {
			m.refs = append(m.refs, last)
		}
		return
	}
	m.f.Reset()
	var maxSeq base.SeqNum
	for _, r := range group {
		kv := m.srcs[r.Block].KV(int(r.Row))
		m.f.Add(&kv)
		maxSeq = max(maxSeq, kv.Seq)
	}
	if kv, ok := m.f.Result(); ok && !(m.drop && kv.Kind.IsRetract()) {
		kv.Seq = maxSeq
		m.out.AppendKV(&kv)
	}
}

// capacity returns the records to make room for in a new output block:
// the record limit, what is left of the expected records (a batch when
// that is unknown), and, once the records' average size is known, the
// byte limit's worth; a batch until that size is known, when the byte
// limit may be reached much sooner.
func (m *streamMerge) capacity() int {
	c := m.lim.Rows
	if m.lim.Expect > 0 {
		c = min(c, m.lim.Expect-m.stats.Records)
	} else {
		c = min(c, mergeBatch) // nothing known: grow as records come
	}
	if m.lim.Bytes > 0 {
		if m.seenRecords == 0 {
			return max(0, min(c, mergeBatch))
		}
		c = min(c, m.lim.Bytes/max(1, m.seenBytes/m.seenRecords)+1)
	}
	return max(0, c)
}

// flush gathers the pending records into the output, gives the output's
// new records strings of their own, and lets go of the input blocks the
// runs have moved past.
func (m *streamMerge) flush() {
	if m.lim.Bytes > 0 && m.seenRecords == 0 && m.out.Len() == 0 && len(m.refs) > 0 {
		// The first records: size the block by the batch's records.
		var size, keys int
		for _, r := range m.refs {
			keys += len(m.srcs[r.Block].Key(int(r.Row)))
			size += m.srcs[r.Block].Slice(int(r.Row), int(r.Row)+1).Bytes()
		}
		avg := max(1, size/len(m.refs))
		c := min(m.lim.Rows, m.lim.Bytes/avg+1)
		if m.lim.Expect > 0 {
			c = min(c, m.lim.Expect)
		}
		m.out.Grow(c, c*keys/len(m.refs))
	}
	if len(m.refs) > 0 {
		m.out.Gather(m.srcs, m.refs)
		m.refs = m.refs[:0]
	}
	if n := m.out.Len(); n > m.counted {
		m.out.OwnStringsFrom(m.counted)
		added := m.out.Slice(m.counted, n).Bytes()
		m.outBytes += added
		m.seenBytes += added
		m.seenRecords += n - m.counted
		m.counted = n
	}
	if len(m.srcs) == len(m.heap) {
		return // every block in srcs is a run's current one
	}
	// Keep only the runs' current blocks, in a new slice: the old one
	// would keep the others reachable.
	srcs := make([]*record.Block, 0, len(m.runs))
	for _, r := range m.heap {
		m.src[r] = int32(len(srcs))
		srcs = append(srcs, m.blocks[r])
	}
	m.srcs = srcs
}

// roll hands the output block out and starts the next one.
func (m *streamMerge) roll() error {
	out := m.out
	m.stats.Records += out.Len()
	m.stats.Blocks++
	m.stats.MaxOutBytes = max(m.stats.MaxOutBytes, m.outBytes)
	out.MarkOwnsStrings() // flush copied every record's strings
	m.out = record.NewBlock(m.ts, true, m.capacity())
	m.counted, m.outBytes = 0, 0
	return m.emit(out)
}
