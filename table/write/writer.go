package write

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

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
	types      []types.Type // the columns' types
	canRetract bool
	base       map[int32][]manifest.DataFile // live files of the snapshot the writer started from
	buckets    map[int32]*bucket
	byID       []*bucket  // buckets by id, as buckets holds them: Write looks them up by index
	lastEpoch  base.Epoch // highest epoch written
	prepared   base.Epoch // everything <= prepared has been handed out
	watermark  *int64
	keyBuf     []byte // the last encoded key, reused for the next
	async      bool   // compact in the background (SetAsyncCompaction)
}

type bucket struct {
	id      int32
	files   []manifest.DataFile // the bucket's view: base plus everything prepared
	own     []manifest.DataFile // files this writer prepared (write-only mode: not yet known committed)
	nextSeq base.SeqNum
	pending map[base.Epoch]*epochData
	// cur is pending[curEpoch], the epoch Write last wrote to (nil when
	// that epoch has been handed out): consecutive rows of one epoch skip
	// the map.
	cur      *epochData
	curEpoch base.Epoch
	f        mergetree.Func // the bucket's own: buckets prepare in parallel
	// sizeHint is the length of the bucket's last spilled buffer: a new
	// epoch's buffer starts with that capacity instead of growing by
	// copying from empty.
	sizeHint int
	// free is a primary-key table's last spilled buffer, emptied, for the
	// bucket's next buffer to fill again instead of allocating (and
	// collecting) a new one at every spill: its run is a copy
	// (mergetree.SortMerge), so nothing refers to the buffer any more. An
	// append table's run is the buffer itself, which is never reused.
	free *record.Block
	// unsynced: files of the bucket were staged since its directory was
	// last synced (syncBuckets).
	unsynced bool
	// compacting is the bucket's running or finished background
	// compaction whose result no message holds yet; nil when none.
	compacting *compaction
}

type epochData struct {
	// buf holds the epoch's buffered records by column (record.Block):
	// a record costs a few words in a handful of slices rather than a row
	// of datums.
	buf       *record.Block
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
		keyCols: sc.KeyIndexes(), keyTypes: sc.KeyTypes(), types: sc.Types(), canRetract: mergetree.CanRetract(sc, opts),
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
	if int(id) < len(w.byID) && w.byID[id] != nil {
		return w.byID[id]
	}
	b := w.buckets[id]
	if b == nil {
		b = &bucket{id: id, files: append([]manifest.DataFile(nil), w.base[id]...), nextSeq: 1,
			pending: map[base.Epoch]*epochData{}, f: mergetree.NewFunc(w.sc, w.opts)}
		for _, f := range b.files {
			b.nextSeq = max(b.nextSeq, base.SeqNum(f.MaxSeq)+1)
		}
		w.buckets[id] = b
	}
	if id >= 0 && int(id) < w.opts.Buckets {
		if len(w.byID) == 0 {
			w.byID = make([]*bucket, w.opts.Buckets)
		}
		w.byID[id] = b
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
	ed := w.epochBuffer(b, e)
	ed.buf.AppendRow(key, b.nextSeq, kind, row)
	b.nextSeq++
	if ed.buf.Len() >= w.opts.WriteBufferRows {
		return w.spill(b, e, ed)
	}
	return nil
}

// epochBuffer returns bucket b's data of epoch e, with a write buffer.
func (w *Writer) epochBuffer(b *bucket, e base.Epoch) *epochData {
	ed := b.cur
	if ed == nil || b.curEpoch != e {
		if ed = b.pending[e]; ed == nil {
			ed = &epochData{}
			b.pending[e] = ed
		}
		b.cur, b.curEpoch = ed, e
	}
	if ed.buf == nil {
		if b.free != nil {
			ed.buf, b.free = b.free, nil
		} else {
			// An eighth more than the last buffer held: epochs of about
			// the same size then fill it without growing (a copy of
			// every column) when one is slightly larger.
			ed.buf = record.NewBlock(w.types, len(w.keyCols) > 0, min(b.sizeHint+b.sizeHint/8, w.opts.WriteBufferRows))
		}
	}
	return ed
}

// WriteChunk writes every row of c in epoch e. An append table takes
// a chunk of inserts that fits its schema column by column (appendChunk);
// any other chunk goes row by row through Write.
func (w *Writer) WriteChunk(e base.Epoch, c *types.Chunk) error {
	if len(w.keyCols) == 0 && c.Len() > 0 && e >= w.lastEpoch && e > w.prepared &&
		allInserts(c.Kinds) && w.sc.CheckChunk(c) == nil {
		return w.appendChunk(e, c)
	}
	row := make(types.Row, c.Width())
	for i := 0; i < c.Len(); i++ {
		row = c.AppendRowTo(row[:0], i)
		if err := w.Write(e, c.Kind(i), row); err != nil {
			return err
		}
	}
	return nil
}

// allInserts reports whether every kind is +I.
func allInserts(kinds []types.RowKind) bool {
	for _, k := range kinds {
		if k != types.Insert {
			return false
		}
	}
	return true
}

// appendChunk is Write of each row of c, an all-insert chunk that fits
// the schema of an append table (bucket 0, no keys), with the rows
// appended to the write buffer column by column: the buffer spills at
// WriteBufferRows rows exactly as row by row.
func (w *Writer) appendChunk(e base.Epoch, c *types.Chunk) error {
	w.lastEpoch = e
	b := w.getBucket(0)
	for lo := 0; lo < c.Len(); {
		ed := w.epochBuffer(b, e)
		hi := min(c.Len(), lo+w.opts.WriteBufferRows-ed.buf.Len())
		ed.buf.AppendRange(c, lo, hi, b.nextSeq, types.Insert)
		b.nextSeq += base.SeqNum(hi - lo)
		lo = hi
		if ed.buf.Len() >= w.opts.WriteBufferRows {
			if err := w.spill(b, e, ed); err != nil {
				return err
			}
		}
	}
	return nil
}

// spill writes ed's buffer of bucket b as a level-0 sorted run (and, for
// the input producer of a primary-key table, the raw rows as a changelog
// file). An append table's level-0 data files hold its rows as written,
// in order: they are its changelog, which streams read from a snapshot's
// delta (scan.Stream), as Paimon's append tables have no changelog files.
func (w *Writer) spill(b *bucket, e base.Epoch, ed *epochData) error {
	if ed.buf == nil || ed.buf.Len() == 0 {
		return nil
	}
	buf := ed.buf
	ed.buf = nil
	b.sizeHint = buf.Len()
	if w.opts.ChangelogProducer == schema.ChangelogInput && len(w.keyCols) > 0 {
		cl, err := w.st.StageFile(b.id, "changelog", w.sc, buf, 0, e)
		if err != nil {
			return err
		}
		ed.changelog = append(ed.changelog, cl)
		b.unsynced = true
	}
	run := buf
	if len(w.keyCols) > 0 {
		mergetree.NormalizeInput(w.opts, buf.Kinds)
		run = mergetree.SortMerge(buf, b.f, false)
		buf.Reset()
		b.free = buf
		if run.Len() == 0 {
			return nil // first-row fed only retractions: nothing to store
		}
	}
	df, err := w.st.StageFile(b.id, "data", w.sc, run, 0, e)
	if err != nil {
		return err
	}
	b.unsynced = true
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
			b.cur = nil
			msg.Buckets = append(msg.Buckets, results[i].ch)
		}
		msgs = append(msgs, msg)
	}
	// [names-before-message]: the files the messages name are staged;
	// their names become durable here, before anyone can store the
	// messages in a checkpoint.
	if err := w.syncBuckets(); err != nil {
		return nil, err
	}
	if len(msgs) == 0 || msgs[len(msgs)-1].Epoch < upTo {
		msgs = append(msgs, commit.Message{CommitUser: w.user, Epoch: upTo, Kind: snapshot.Append, SchemaID: w.sc.ID, Watermark: w.watermark})
	}
	w.prepared = upTo
	w.lastEpoch = max(w.lastEpoch, upTo)
	return msgs, nil
}

// syncBuckets syncs the directory of every bucket with staged files, once
// each and all at once ([names-before-message]).
func (w *Writer) syncBuckets() error {
	var ids []int32
	for id, b := range w.buckets {
		if b.unsynced {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := w.st.SyncBuckets(ids); err != nil {
		return err
	}
	for _, id := range ids {
		w.buckets[id].unsynced = false
	}
	return nil
}

func (w *Writer) prepareBucket(b *bucket, e base.Epoch, ed *epochData) (commit.BucketChange, error) {
	ch := commit.BucketChange{Bucket: b.id}
	// A finished background compaction first, so that the lookups below
	// read its output, which replaced the files it merged in the cache.
	if err := w.finishCompaction(b, &ch); err != nil {
		return ch, err
	}
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
	if w.opts.Compaction && len(w.keyCols) > 0 && b.compacting == nil {
		if u, ok := mergetree.Pick(mergetree.Runs(b.files), w.opts); ok {
			if w.async {
				b.compacting = w.startCompaction(b, u)
				return ch, nil
			}
			res, err := compact.Rewrite(w.st, w.sc, b.f, b.id, u, w.opts.TargetFileRows)
			if err != nil {
				return ch, err
			}
			ch.CompactBefore, ch.CompactAfter = res.Before, res.After
			b.files = replaceFiles(b.files, res.Before, res.After)
		}
	}
	return ch, nil
}

// replaceFiles returns files without gone, followed by after.
func replaceFiles(files, gone, after []manifest.DataFile) []manifest.DataFile {
	drop := make(map[string]bool, len(gone))
	for _, f := range gone {
		drop[f.Name] = true
	}
	out := make([]manifest.DataFile, 0, len(files)-len(gone)+len(after))
	for _, f := range files {
		if !drop[f.Name] {
			out = append(out, f)
		}
	}
	return append(out, after...)
}

// compaction is a bucket's background compaction (SetAsyncCompaction).
type compaction struct {
	unit mergetree.Unit
	// done is closed once res and err are set.
	done chan struct{}
	res  compact.Result
	err  error
	// urgent is closed when a prepare waits for the compaction (its
	// bucket is at the stop trigger): one still waiting for a slot then
	// starts without one.
	urgent     chan struct{}
	urgentOnce sync.Once
}

// hurry lets c start without a slot of compactionSlots if it has not
// started yet.
func (c *compaction) hurry() { c.urgentOnce.Do(func() { close(c.urgent) }) }

// compactionSlots bounds the background compactions that rewrite at once
// in this process, over all tables: GOMAXPROCS/2, at least one, as
// RocksDB's max_background_compactions bounds its compaction threads.
// Every keyed table a job writes compacts in the background; without a
// bound, several tables that pick a rewrite in the same epoch take every
// core from the jobs for as long as they run, and every job's epoch waits
// behind them. A compaction waiting for a slot is still its bucket's
// compaction in flight: the bucket's prepares go on without it up to the
// stop trigger (finishCompaction), and when a prepare must wait for it
// there, it starts at once without a slot (compaction.hurry), so that a
// bucket at the stop trigger never waits behind another table's
// compaction, as RocksDB lets compactions exceed their bound under write
// stalls.
var compactionSlots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))

// compactionsRunning and compactionsPeak count the background
// compactions rewriting in a slot now and at most at once, and
// compactionsHurried those that started without one
// (BackgroundCompactions).
var compactionsRunning, compactionsPeak, compactionsHurried atomic.Int64

// acquireCompactionSlot waits for a slot of compactionSlots, or until
// urgent is closed, and returns the slot's release.
func acquireCompactionSlot(urgent <-chan struct{}) (release func()) {
	select {
	case compactionSlots <- struct{}{}:
	case <-urgent:
		compactionsHurried.Add(1)
		return func() {}
	}
	n := compactionsRunning.Add(1)
	for {
		p := compactionsPeak.Load()
		if n <= p || compactionsPeak.CompareAndSwap(p, n) {
			break
		}
	}
	return func() {
		compactionsRunning.Add(-1)
		<-compactionSlots
	}
}

// BackgroundCompactions returns how many background compactions are
// rewriting in a slot now, the most that ever did at once in this
// process, the bound on both (GOMAXPROCS/2, at least 1), and how many
// started without a slot because a prepare waited for them.
func BackgroundCompactions() (running, peak, bound, hurried int) {
	return int(compactionsRunning.Load()), int(compactionsPeak.Load()), cap(compactionSlots), int(compactionsHurried.Load())
}

// startCompaction rewrites unit u of bucket b on a goroutine of its own,
// with a merge function of its own (b.f serves the bucket's lookups); it
// reads only immutable files and the store, and writes only new files.
func (w *Writer) startCompaction(b *bucket, u mergetree.Unit) *compaction {
	c := &compaction{unit: u, done: make(chan struct{}), urgent: make(chan struct{})}
	f := mergetree.NewFunc(w.sc, w.opts)
	st, sc, id, rows := w.st, w.sc, b.id, w.opts.TargetFileRows
	go func() {
		defer close(c.done)
		release := acquireCompactionSlot(c.urgent)
		defer release()
		c.res, c.err = compact.RewriteKeep(st, sc, f, id, u, rows)
	}()
	return c
}

// finishCompaction puts the result of b's background compaction into ch
// once it is done ([async-compaction]): it waits for it only when the
// bucket has more than RunCountTrigger+stopTriggerExtra sorted runs, as
// Paimon's writer stops at num-sorted-run.stop-trigger. A failed
// compaction fails the prepare that finds it.
func (w *Writer) finishCompaction(b *bucket, ch *commit.BucketChange) error {
	c := b.compacting
	if c == nil {
		return nil
	}
	if len(mergetree.Runs(b.files)) > w.opts.RunCountTrigger+stopTriggerExtra {
		c.hurry()
		<-c.done
	}
	select {
	case <-c.done:
	default:
		return nil
	}
	b.compacting = nil
	if c.err != nil {
		return fmt.Errorf("table %s: bucket %d: compaction: %w", w.st.Dir, b.id, c.err)
	}
	ch.CompactBefore, ch.CompactAfter = c.res.Before, c.res.After
	b.files = replaceFiles(b.files, c.res.Before, c.res.After)
	w.st.Forget(b.id, c.res.Gone())
	return nil
}

// stopTriggerExtra is how many sorted runs above the compaction trigger a
// bucket may hold before a prepare waits for its running compaction
// (Paimon's default num-sorted-run.stop-trigger is the trigger plus 3).
const stopTriggerExtra = 3

// SetAsyncCompaction makes the writer compact in the background
// ([async-compaction]): a prepare that picks a compaction starts it and
// goes on, and the prepare of a later epoch that touches the bucket puts
// its result in that epoch's message. A streaming sink turns it on, so
// that rewriting a bucket does not hold up the epoch that triggered it.
func (w *Writer) SetAsyncCompaction(on bool) { w.async = on }

// WaitCompaction waits until no background compaction of the writer runs;
// their results still go into the messages of the next prepares. A writer
// that is dropped need not call it: a compaction's files are in no
// snapshot until a message names them, and orphan cleanup removes them.
func (w *Writer) WaitCompaction() {
	for _, b := range w.buckets {
		if b.compacting != nil {
			b.compacting.hurry()
			<-b.compacting.done
		}
	}
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
