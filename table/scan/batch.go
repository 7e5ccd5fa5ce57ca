package scan

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/mergetree"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// ReadKVs returns the merged records of snapshot sn, read with its schema
// (or with read, if not nil, which must be a later schema): per bucket in
// bucket order, sorted by key within a bucket for primary-key tables, in
// sequence order for append tables.
func ReadKVs(st *store.Store, sn *snapshot.Snapshot, read *schema.Schema) ([]record.KV, error) {
	blocks, err := readBlocks(st, sn, read)
	if err != nil {
		return nil, err
	}
	var total int
	for _, b := range blocks {
		total += b.Len()
	}
	out := make([]record.KV, 0, total)
	for _, b := range blocks {
		out = append(out, b.KVs()...)
	}
	return out, nil
}

// Read returns the rows of snapshot sn (see ReadKVs), their values carved
// from one block of datums.
func Read(st *store.Store, sn *snapshot.Snapshot) ([]types.Row, error) {
	parts, err := readValues(st, sn)
	if err != nil {
		return nil, err
	}
	var total, w int
	for _, p := range parts {
		total += p.Len()
		w = p.Width()
	}
	rows := make([]types.Row, total)
	slab := make([]types.Datum, total*w)
	for i := range rows {
		rows[i] = types.Row(slab[i*w : (i+1)*w : (i+1)*w])
	}
	// Column by column: each pass reads one vector in order.
	first := 0
	for _, p := range parts {
		for c := range p.Cols {
			v := &p.Cols[c]
			for i := range p.Len() {
				slab[(first+i)*w+c] = v.Get(i)
			}
		}
		first += p.Len()
	}
	return rows, nil
}

// ReadChunks returns the rows of snapshot sn (see ReadKVs) as chunks of at
// most types.DefaultChunkSize rows, every row kind +I. This is the batch
// read without a datum per value: each bucket's merge gathers its rows'
// values into one chunk's vectors (mergetree.MergeValues), which the
// chunks returned slice.
func ReadChunks(st *store.Store, sn *snapshot.Snapshot) ([]*types.Chunk, error) {
	parts, err := readValues(st, sn)
	if err != nil {
		return nil, err
	}
	var out []*types.Chunk
	for _, p := range parts {
		for lo := 0; lo < p.Len(); lo += types.DefaultChunkSize {
			out = append(out, record.SliceChunk(p, lo, min(lo+types.DefaultChunkSize, p.Len())))
		}
	}
	return out, nil
}

// readValues returns the rows of sn as chunks, one per bucket of a
// primary-key table (merged, retractions dropped), one per file of an
// append table, in bucket order; every row kind is +I.
func readValues(st *store.Store, sn *snapshot.Snapshot) ([]*types.Chunk, error) {
	parts, err := mergeBuckets(st, sn, nil, func(ts []types.Type, runs []*record.Block, f mergetree.Func) []*types.Chunk {
		if f == nil {
			out := make([]*types.Chunk, len(runs))
			for i, r := range runs {
				c := r.Chunk
				c.Kinds = make([]types.RowKind, r.Len()) // +I is 0
				out[i] = &c
			}
			return out
		}
		return []*types.Chunk{mergetree.MergeValues(ts, runs, f)}
	})
	if err != nil {
		return nil, err
	}
	var out []*types.Chunk
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// readBlocks returns the merged records of sn (see ReadKVs for read) as
// blocks, in bucket order: one merged block per bucket of a primary-key
// table, the files in sequence order for an append table.
func readBlocks(st *store.Store, sn *snapshot.Snapshot, read *schema.Schema) ([]*record.Block, error) {
	parts, err := mergeBuckets(st, sn, read, func(ts []types.Type, runs []*record.Block, f mergetree.Func) []*record.Block {
		if f == nil {
			return runs
		}
		return []*record.Block{mergetree.MergeBlocks(ts, runs, f, true)}
	})
	if err != nil {
		return nil, err
	}
	var out []*record.Block
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// mergeBuckets reads and decodes the live files of sn (see ReadKVs for
// read) and returns, in bucket order, what merge makes of each bucket's
// runs with the bucket's own merge function (nil for append tables, whose
// runs are then the files in sequence order).
//
// Files are decoded in parallel, a bounded number at a time (they are
// independent, and decoding dominates a scan), and a bucket is merged as
// soon as its last file is decoded, under the same bound, while later
// buckets' files are still decoding: there is no barrier between decoding
// and merging at which cores would wait for the slowest file.
func mergeBuckets[T any](st *store.Store, sn *snapshot.Snapshot, read *schema.Schema, merge func(ts []types.Type, runs []*record.Block, f mergetree.Func) T) ([]T, error) {
	if read == nil {
		var err error
		if read, err = st.Schemas.Get(sn.SchemaID); err != nil {
			return nil, err
		}
	}
	opts, err := schema.ParseOptions(read)
	if err != nil {
		return nil, err
	}
	live, err := st.LiveFiles(sn)
	if err != nil {
		return nil, err
	}
	ts := read.Types()
	byBucket := store.ByBucket(live)
	ids := make([]int32, 0, len(byBucket))
	for b := range byBucket {
		ids = append(ids, b)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	type bucketJob struct {
		id      int32
		files   []manifest.DataFile
		runs    []*record.Block
		errs    []error
		pending atomic.Int32 // files not decoded yet
		out     T
	}
	buckets := make([]*bucketJob, len(ids))
	for i, b := range ids {
		files := byBucket[b]
		if !read.HasPrimaryKey() {
			sort.Slice(files, func(i, j int) bool { return files[i].MinSeq < files[j].MinSeq })
		}
		bj := &bucketJob{id: b, files: files, runs: make([]*record.Block, len(files)), errs: make([]error, len(files))}
		bj.pending.Store(int32(len(files)))
		buckets[i] = bj
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, bj := range buckets {
		for fi, file := range bj.files {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				bj.runs[fi], bj.errs[fi] = st.ReadBlock(bj.id, file, read)
				<-sem
				if bj.pending.Add(-1) != 0 {
					return
				}
				// The bucket's last file: merge the bucket.
				for _, err := range bj.errs {
					if err != nil {
						return
					}
				}
				sem <- struct{}{}
				defer func() { <-sem }()
				var f mergetree.Func
				if read.HasPrimaryKey() {
					f = mergetree.NewFunc(read, opts)
				}
				bj.out = merge(ts, bj.runs, f)
			}()
		}
	}
	wg.Wait()
	out := make([]T, len(buckets))
	for i, bj := range buckets {
		for _, err := range bj.errs {
			if err != nil {
				return nil, fmt.Errorf("snapshot %d: %w", sn.ID, err)
			}
		}
		out[i] = bj.out
	}
	return out, nil
}

// AtEpoch returns the snapshot holding the table at epoch e: the newest
// with epoch <= e. It returns nil if the table had no data by e: it has no
// snapshot of e or before, and none of its snapshots has expired (its
// earliest is snapshot 1). When snapshots have expired and the earliest
// kept one is newer than e, the table at e is gone, not empty: the error
// is an *ExpiredError (wrapping base.ErrNotFound), as Paimon refuses a
// scan of an expired snapshot rather than answer it empty.
func AtEpoch(st *store.Store, e base.Epoch) (*snapshot.Snapshot, error) {
	sn, err := st.Snapshots.AtOrBeforeEpoch(e)
	if err != nil || sn != nil {
		return sn, err
	}
	first, err := st.Snapshots.EarliestID()
	if err != nil || first <= 1 {
		return nil, err
	}
	earliest, err := st.Snapshots.Get(first)
	if errors.Is(err, base.ErrNotFound) {
		// Expired under us: the table at e is gone all the more.
		return nil, &ExpiredError{Table: st.Dir, Epoch: e}
	}
	if err != nil {
		return nil, err
	}
	if earliest.Epoch > e {
		return nil, &ExpiredError{Table: st.Dir, Epoch: e, Earliest: earliest.Epoch}
	}
	return nil, nil
}

// ExpiredError says that a table's snapshot of an epoch has expired
// (snapshot.num-retained.*, snapshot.time-retained): Table is the table's
// directory, Earliest the epoch of the earliest snapshot kept (0 when
// unknown). Its message leaves the table to the caller to name. Its
// SQLSTATE is 55000 (object not in prerequisite state).
type ExpiredError struct {
	Table    string
	Epoch    base.Epoch
	Earliest base.Epoch
}

func (e *ExpiredError) Error() string {
	if e.Earliest == 0 {
		return fmt.Sprintf("epoch %d is no longer kept: its snapshot has expired", e.Epoch)
	}
	return fmt.Sprintf("epoch %d is no longer kept: the snapshots before epoch %d have expired, so the table at epoch %d cannot be read (nor told apart from a table that did not exist yet then); the table options snapshot.num-retained.min, snapshot.num-retained.max and snapshot.time-retained set how many are kept", e.Epoch, e.Earliest, e.Epoch)
}

// Unwrap makes errors.Is(err, base.ErrNotFound) hold.
func (e *ExpiredError) Unwrap() error { return base.ErrNotFound }

// SQLState is the error's SQLSTATE: 55000.
func (e *ExpiredError) SQLState() string { return "55000" }
