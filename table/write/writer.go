package write

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/compact"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/mergetree"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// Writer writes one table. It is not safe for concurrent use: one
// goroutine (the sink's) owns it.
type Writer struct {
	st         *store.Store
	sc         *schema.Schema
	opts       schema.Options
	user       string
	keyCols    []int
	keyTypes   []types.Type
	canRetract bool
	base       map[int32][]manifest.DataFile // live files of the snapshot the writer started from
	buckets    map[int32]*bucket
	lastEpoch  base.Epoch // highest epoch written
	prepared   base.Epoch // everything <= prepared has been handed out
	watermark  *int64
	keyBuf     []byte // the last encoded key, reused for the next
}

// slabRows is how many rows a slab holds.
const slabRows = 4096

// rowCopy returns a copy of row carved from ed's current slab, taking a
// slab from the bucket's free list (or a new one) when it is full.
func (b *bucket) rowCopy(ed *epochData, row types.Row) types.Row {
	if len(ed.datums)+len(row) > cap(ed.datums) {
		var slab []types.Datum
		if n := len(b.freeDatums); n > 0 && cap(b.freeDatums[n-1]) >= len(row) {
			slab, b.freeDatums = b.freeDatums[n-1][:0], b.freeDatums[:n-1]
		} else {
			slab = make([]types.Datum, 0, slabRows*len(row))
		}
		ed.datums = slab
		ed.datumSlabs = append(ed.datumSlabs, slab)
	}
	n := len(ed.datums)
	ed.datums = append(ed.datums, row...)
	return types.Row(ed.datums[n : n+len(row) : n+len(row)])
}

// keyCopy returns a copy of k carved from ed's current key slab (see
// rowCopy).
func (b *bucket) keyCopy(ed *epochData, k []byte) []byte {
	if len(ed.keys)+len(k) > cap(ed.keys) {
		var slab []byte
		if n := len(b.freeKeys); n > 0 && cap(b.freeKeys[n-1]) >= len(k) {
			slab, b.freeKeys = b.freeKeys[n-1][:0], b.freeKeys[:n-1]
		} else {
			slab = make([]byte, 0, max(64<<10, len(k)))
		}
		ed.keys = slab
		ed.keySlabs = append(ed.keySlabs, slab)
	}
	n := len(ed.keys)
	ed.keys = append(ed.keys, k...)
	return ed.keys[n : n+len(k) : n+len(k)]
}

// recycle hands the slabs and the record array of ed's spilled buffer buf
// back to the bucket, for the buffers that follow. Only a primary-key
// table's buffer may be recycled: its spilled run is a copy
// (mergetree.SortMerge), so nothing refers to the buffer any more, where
// an append table's run is the buffer itself.
func (b *bucket) recycle(ed *epochData, buf []record.KV) {
	b.freeDatums = append(b.freeDatums, ed.datumSlabs...)
	b.freeKeys = append(b.freeKeys, ed.keySlabs...)
	ed.datums, ed.keys, ed.datumSlabs, ed.keySlabs = nil, nil, nil, nil
	b.freeBuf = buf[:0]
}

type bucket struct {
	id      int32
	files   []manifest.DataFile // the bucket's view: base plus everything prepared
	own     []manifest.DataFile // files this writer prepared (write-only mode: not yet known committed)
	nextSeq base.SeqNum
	pending map[base.Epoch]*epochData
	f       mergetree.Func // the bucket's own: buckets prepare in parallel
	// sizeHint is the length of the bucket's last spilled buffer: a new
	// epoch's buffer starts with that capacity instead of growing by
	// copying from empty.
	sizeHint int
	// Buffered rows and keys are carved from slabs rather than allocated
	// one by one: fewer allocations, and a buffer's rows sit together in
	// memory, so that sorting it gathers them from a few megabytes rather
	// than from the rows of every bucket. A primary-key table's spilled
	// buffer returns its slabs and record array here, to be reused by the
	// next buffers instead of allocated (and collected) anew at every
	// spill. They hold at most one buffer's worth (write-buffer-rows rows),
	// which the bucket's next buffer fills again.
	freeDatums [][]types.Datum
	freeKeys   [][]byte
	freeBuf    []record.KV
}

type epochData struct {
	buf []record.KV
	// datums and keys are the current slabs buf's rows and keys are
	// carved from; datumSlabs and keySlabs are all the slabs buf uses.
	datums     []types.Datum
	keys       []byte
	datumSlabs [][]types.Datum
	keySlabs   [][]byte

	files     []manifest.DataFile
	changelog []manifest.DataFile
}

// New opens a writer on the latest snapshot of st for commit user user.
func New(st *store.Store, user string) (*Writer, error) {
	sc, err := st.Schemas.Latest()
	if err != nil {
		return nil, err
	}
	opts, err := schema.ParseOptions(sc)
	if err != nil {
		return nil, err
	}
	w := &Writer{st: st, sc: sc, opts: opts, user: user,
		keyCols: sc.KeyIndexes(), keyTypes: sc.KeyTypes(), canRetract: mergetree.CanRetract(sc, opts),
		base: map[int32][]manifest.DataFile{}, buckets: map[int32]*bucket{}}
	latest, err := st.Snapshots.Latest()
	if err != nil {
		return nil, err
	}
	if latest != nil {
		live, err := st.LiveFiles(latest)
		if err != nil {
			return nil, err
		}
		w.base = store.ByBucket(live)
		w.lastEpoch, w.prepared = latest.Epoch, latest.Epoch
	}
	if ce, err := st.Snapshots.CommittedEpoch(); err == nil && ce > w.prepared {
		w.lastEpoch, w.prepared = ce, ce
	}
	return w, nil
}

// Schema returns the schema rows must have.
func (w *Writer) Schema() *schema.Schema { return w.sc }

func (w *Writer) bucketOf(key []byte) int32 {
	if len(w.keyCols) == 0 {
		return 0
	}
	return record.Bucket(key, w.opts.Buckets)
}

func (w *Writer) getBucket(id int32) *bucket {
	b := w.buckets[id]
	if b == nil {
		b = &bucket{id: id, files: append([]manifest.DataFile(nil), w.base[id]...), nextSeq: 1,
			pending: map[base.Epoch]*epochData{}, f: mergetree.NewFunc(w.sc, w.opts)}
		for _, f := range b.files {
			b.nextSeq = max(b.nextSeq, base.SeqNum(f.MaxSeq)+1)
		}
		w.buckets[id] = b
	}
	return b
}

// SetWatermark records the event-time watermark to store in the next
// snapshots.
func (w *Writer) SetWatermark(ms int64) { w.watermark = &ms }

// Write adds one row of epoch e with row kind kind. Epochs must not
// decrease and must be above the last prepared one; rows must fit the
// schema; an append table takes only +I; a table whose merge engine
// cannot retract takes no -U/-D. Errors wrap base.ErrInvalidArgument.
func (w *Writer) Write(e base.Epoch, kind types.RowKind, row types.Row) error {
	if e < w.lastEpoch || e <= w.prepared {
		return fmt.Errorf("table %s: write of epoch %d after epoch %d (prepared through %d): %w", w.st.Dir, e, w.lastEpoch, w.prepared, base.ErrInvalidArgument)
	}
	if !kind.Valid() {
		return fmt.Errorf("table %s: row kind %d: %w", w.st.Dir, kind, base.ErrInvalidArgument)
	}
	if err := w.sc.CheckRow(row); err != nil {
		return fmt.Errorf("table %s: %w", w.st.Dir, err)
	}
	if kind.IsRetract() && (len(w.keyCols) == 0 || !w.canRetract) {
		return fmt.Errorf("table %s: %s row refused: the table takes no retractions (append table, or min/max aggregation): %w", w.st.Dir, kind, base.ErrInvalidArgument)
	}
	w.lastEpoch = e
	var key []byte
	if len(w.keyCols) > 0 {
		key = types.EncodeKey(w.keyBuf[:0], row, w.keyCols, w.keyTypes)
		w.keyBuf = key
	}
	b := w.getBucket(w.bucketOf(key))
	ed := b.pending[e]
	if ed == nil {
		ed = &epochData{}
		b.pending[e] = ed
	}
	if ed.buf == nil {
		if b.freeBuf != nil {
			ed.buf, b.freeBuf = b.freeBuf, nil
		} else {
			ed.buf = make([]record.KV, 0, min(b.sizeHint, w.opts.WriteBufferRows))
		}
	}
	if key != nil {
		key = b.keyCopy(ed, key)
	}
	ed.buf = append(ed.buf, record.KV{Key: key, Seq: b.nextSeq, Kind: kind, Row: b.rowCopy(ed, row)})
	b.nextSeq++
	if len(ed.buf) >= w.opts.WriteBufferRows {
		return w.spill(b, e, ed)
	}
	return nil
}

// WriteChunk writes every row of c in epoch e.
func (w *Writer) WriteChunk(e base.Epoch, c *types.Chunk) error {
	row := make(types.Row, c.Width())
	for i := 0; i < c.Len(); i++ {
		row = c.AppendRowTo(row[:0], i)
		if err := w.Write(e, c.Kind(i), row); err != nil {
			return err
		}
	}
	return nil
}

// spill writes ed's buffer of bucket b as a level-0 sorted run (and, for
// the input producer, the raw rows as a changelog file).
func (w *Writer) spill(b *bucket, e base.Epoch, ed *epochData) error {
	if len(ed.buf) == 0 {
		return nil
	}
	buf := ed.buf
	ed.buf = nil
	b.sizeHint = len(buf)
	if w.opts.ChangelogProducer == schema.ChangelogInput {
		cl, err := w.st.WriteFile(b.id, "changelog", w.sc, buf, 0, e)
		if err != nil {
			return err
		}
		ed.changelog = append(ed.changelog, cl)
	}
	run := buf
	if len(w.keyCols) > 0 {
		mergetree.NormalizeInput(w.opts, buf)
		run = mergetree.SortMerge(buf, b.f, false)
		b.recycle(ed, buf)
		if len(run) == 0 {
			return nil // first-row fed only retractions: nothing to store
		}
	}
	df, err := w.st.WriteFile(b.id, "data", w.sc, run, 0, e)
	if err != nil {
		return err
	}
	ed.files = append(ed.files, df)
	return nil
}

// PrepareCommit hands out everything written for epochs <= upTo: one
// message per epoch that wrote rows, in epoch order, and always a last
// message of epoch upTo (empty if nothing was written in it) so that the
// commit advances the committed epoch to upTo. Compaction runs here when
// the picker asks for it. After it, writes of epochs <= upTo are refused.
func (w *Writer) PrepareCommit(upTo base.Epoch) ([]commit.Message, error) {
	if upTo < w.prepared {
		return nil, fmt.Errorf("table %s: prepare through epoch %d after %d: %w", w.st.Dir, upTo, w.prepared, base.ErrInvalidArgument)
	}
	epochSet := map[base.Epoch]bool{}
	ids := make([]int32, 0, len(w.buckets))
	for id, b := range w.buckets {
		ids = append(ids, id)
		for e := range b.pending {
			if e <= upTo {
				epochSet[e] = true
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	epochs := make([]base.Epoch, 0, len(epochSet))
	for e := range epochSet {
		epochs = append(epochs, e)
	}
	sort.Slice(epochs, func(i, j int) bool { return epochs[i] < epochs[j] })
	if len(epochs) > 0 && !w.opts.Compaction {
		if err := w.refresh(); err != nil {
			return nil, err
		}
	}
	var msgs []commit.Message
	for _, e := range epochs {
		msg := commit.Message{CommitUser: w.user, Epoch: e, Kind: snapshot.Append, SchemaID: w.sc.ID, Watermark: w.watermark}
		// Buckets are independent LSM trees: they prepare in parallel, a
		// bounded number at a time, each touching only its own state.
		type result struct {
			ch  commit.BucketChange
			err error
		}
		var touched []*bucket
		for _, id := range ids {
			if w.buckets[id].pending[e] != nil {
				touched = append(touched, w.buckets[id])
			}
		}
		results := make([]result, len(touched))
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		var wg sync.WaitGroup
		for i, b := range touched {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				results[i].ch, results[i].err = w.prepareBucket(b, e, b.pending[e])
			}()
		}
		wg.Wait()
		for i, b := range touched {
			if results[i].err != nil {
				return nil, results[i].err
			}
			delete(b.pending, e)
			msg.Buckets = append(msg.Buckets, results[i].ch)
		}
		msgs = append(msgs, msg)
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Epoch < upTo {
		msgs = append(msgs, commit.Message{CommitUser: w.user, Epoch: upTo, Kind: snapshot.Append, SchemaID: w.sc.ID, Watermark: w.watermark})
	}
	w.prepared = upTo
	w.lastEpoch = max(w.lastEpoch, upTo)
	return msgs, nil
}

func (w *Writer) prepareBucket(b *bucket, e base.Epoch, ed *epochData) (commit.BucketChange, error) {
	ch := commit.BucketChange{Bucket: b.id}
	if err := w.spill(b, e, ed); err != nil {
		return ch, err
	}
	ch.NewFiles = ed.files
	ch.Changelog = ed.changelog
	if w.opts.ChangelogProducer == schema.ChangelogLookup && len(w.keyCols) > 0 {
		cl, err := w.lookupChangelog(b, e, ed.files)
		if errors.Is(err, base.ErrNotFound) && !w.opts.Compaction {
			// A dedicated compaction and an expiration removed a file of
			// the view since the last refresh: refresh and look up again.
			if err = w.refreshBucket(b); err == nil {
				cl, err = w.lookupChangelog(b, e, ed.files)
			}
		}
		if err != nil {
			return ch, err
		}
		ch.Changelog = append(ch.Changelog, cl...)
	}
	b.files = append(b.files, ed.files...)
	if !w.opts.Compaction {
		b.own = append(b.own, ed.files...)
	}
	if w.opts.Compaction && len(w.keyCols) > 0 {
		if u, ok := mergetree.Pick(mergetree.Runs(b.files), w.opts); ok {
			after, err := compact.Rewrite(w.st, w.sc, b.f, b.id, u, w.opts.TargetFileRows)
			if err != nil {
				return ch, err
			}
			ch.CompactBefore, ch.CompactAfter = u.Files, after
			gone := map[string]bool{}
			for _, f := range u.Files {
				gone[f.Name] = true
			}
			kept := b.files[:0]
			for _, f := range b.files {
				if !gone[f.Name] {
					kept = append(kept, f)
				}
			}
			b.files = append(kept, after...)
		}
	}
	return ch, nil
}

// refresh rebuilds the bucket views of a write-only writer from the latest
// snapshot, where a dedicated compactor may have replaced files: a view is
// the bucket's live files plus this writer's files of epochs above the
// committed epoch (prepared, not committed yet). A write-only writer never
// compacts, so nothing it prepared deletes a live file. Without this, the
// lookup changelog would read files that expiration removed after a
// dedicated compaction.
func (w *Writer) refresh() error {
	for _, b := range w.buckets {
		if err := w.refreshBucket(b); err != nil {
			return err
		}
	}
	return nil
}

// refreshBucket rebuilds one bucket's view (see refresh). It only reads
// shared state, so buckets may refresh in parallel.
func (w *Writer) refreshBucket(b *bucket) error {
	latest, err := w.st.Snapshots.Latest()
	if err != nil || latest == nil {
		return err
	}
	ce, err := w.st.Snapshots.CommittedEpoch()
	if err != nil {
		return err
	}
	live, err := w.st.LiveFiles(latest)
	if err != nil {
		return err
	}
	own := b.own[:0]
	for _, f := range b.own {
		if base.Epoch(f.Epoch) > ce {
			own = append(own, f)
		}
	}
	b.own = own
	b.files = b.files[:0:0]
	for _, e := range live {
		if e.Bucket == b.id {
			b.files = append(b.files, e.File)
		}
	}
	b.files = append(b.files, own...)
	return nil
}
