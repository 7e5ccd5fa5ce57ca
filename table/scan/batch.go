package scan

import (
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
	parts, err := mergeBuckets(st, sn, read, func(runs [][]record.KV, f mergetree.Func) []record.KV {
		if f == nil {
			var out []record.KV
			for _, run := range runs {
				out = append(out, run...)
			}
			return out
		}
		return mergetree.Merge(runs, f, true)
	})
	if err != nil {
		return nil, err
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	var total int
	for _, p := range parts {
		total += len(p)
	}
	out := make([]record.KV, 0, total)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out, nil
}

// Read returns the rows of snapshot sn (see ReadKVs). Each bucket's merge
// yields its rows directly, without building the merged records first.
func Read(st *store.Store, sn *snapshot.Snapshot) ([]types.Row, error) {
	parts, err := mergeBuckets(st, sn, nil, func(runs [][]record.KV, f mergetree.Func) []types.Row {
		var n int
		for _, run := range runs {
			n += len(run)
		}
		out := make([]types.Row, 0, n)
		if f == nil {
			for _, run := range runs {
				for j := range run {
					out = append(out, run[j].Row)
				}
			}
			return out
		}
		return mergetree.MergeRows(out, runs, f, true)
	})
	if err != nil {
		return nil, err
	}
	var total int
	for _, p := range parts {
		total += len(p)
	}
	rows := make([]types.Row, 0, total)
	for _, p := range parts {
		rows = append(rows, p...)
	}
	return rows, nil
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
func mergeBuckets[T any](st *store.Store, sn *snapshot.Snapshot, read *schema.Schema, merge func(runs [][]record.KV, f mergetree.Func) T) ([]T, error) {
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
	byBucket := store.ByBucket(live)
	ids := make([]int32, 0, len(byBucket))
	for b := range byBucket {
		ids = append(ids, b)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	type bucketJob struct {
		id      int32
		files   []manifest.DataFile
		runs    [][]record.KV
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
		bj := &bucketJob{id: b, files: files, runs: make([][]record.KV, len(files)), errs: make([]error, len(files))}
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
				bj.runs[fi], bj.errs[fi] = st.ReadFile(bj.id, file, read)
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
				bj.out = merge(bj.runs, f)
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
// with epoch <= e. It returns nil if the table had no data by e.
func AtEpoch(st *store.Store, e base.Epoch) (*snapshot.Snapshot, error) {
	return st.Snapshots.AtOrBeforeEpoch(e)
}
