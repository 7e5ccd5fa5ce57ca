package scan

import (
	"fmt"
	"runtime"
	"sort"
	"sync"

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
	parts, err := readBuckets(st, sn, read)
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

// readBuckets returns ReadKVs' records bucket by bucket, in bucket order,
// without concatenating them.
func readBuckets(st *store.Store, sn *snapshot.Snapshot, read *schema.Schema) ([][]record.KV, error) {
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
	// Files are read and decoded in parallel, a bounded number at a time
	// (they are independent and decoding dominates a scan); the merge then
	// runs bucket by bucket in order.
	type job struct {
		bucket int32
		file   manifest.DataFile
		kvs    []record.KV
		err    error
	}
	var jobs []*job
	for _, b := range ids {
		files := byBucket[b]
		if !read.HasPrimaryKey() {
			sort.Slice(files, func(i, j int) bool { return files[i].MinSeq < files[j].MinSeq })
		}
		for _, file := range files {
			jobs = append(jobs, &job{bucket: b, file: file})
		}
	}
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			j.kvs, j.err = st.ReadFile(j.bucket, j.file, read)
		}()
	}
	wg.Wait()
	// Buckets merge independently: in parallel too, each with its own
	// merge function, then concatenated in bucket order.
	type bucketJob struct {
		runs [][]record.KV
		out  []record.KV
	}
	var buckets []*bucketJob
	for i := 0; i < len(jobs); {
		b := jobs[i].bucket
		bj := &bucketJob{}
		for ; i < len(jobs) && jobs[i].bucket == b; i++ {
			if err := jobs[i].err; err != nil {
				return nil, fmt.Errorf("snapshot %d: %w", sn.ID, err)
			}
			bj.runs = append(bj.runs, jobs[i].kvs)
		}
		buckets = append(buckets, bj)
	}
	for _, bj := range buckets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if !read.HasPrimaryKey() {
				for _, r := range bj.runs {
					bj.out = append(bj.out, r...)
				}
				return
			}
			bj.out = mergetree.Merge(bj.runs, mergetree.NewFunc(read, opts), true)
		}()
	}
	wg.Wait()
	parts := make([][]record.KV, len(buckets))
	for i, bj := range buckets {
		parts[i] = bj.out
	}
	return parts, nil
}

// Read returns the rows of snapshot sn (see ReadKVs). The rows are taken
// from the buckets' merged records directly, without first concatenating
// the records.
func Read(st *store.Store, sn *snapshot.Snapshot) ([]types.Row, error) {
	parts, err := readBuckets(st, sn, nil)
	if err != nil {
		return nil, err
	}
	var total int
	for _, p := range parts {
		total += len(p)
	}
	rows := make([]types.Row, 0, total)
	for _, p := range parts {
		for i := range p {
			rows = append(rows, p[i].Row)
		}
	}
	return rows, nil
}

// AtEpoch returns the snapshot holding the table at epoch e: the newest
// with epoch <= e. It returns nil if the table had no data by e.
func AtEpoch(st *store.Store, e base.Epoch) (*snapshot.Snapshot, error) {
	return st.Snapshots.AtOrBeforeEpoch(e)
}
