package compact

import (
	"fmt"
	"sort"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/mergetree"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// Rewrite merges the files of unit u of bucket b (read with schema sc,
// merged with f) into files of at most targetRows records at
// u.OutputLevel, and returns them. The merged files leave the store's
// decoded-file cache.
func Rewrite(st *store.Store, sc *schema.Schema, f mergetree.Func, b int32, u mergetree.Unit, targetRows int) ([]manifest.DataFile, error) {
	runs := make([]*record.Block, 0, len(u.Files))
	var epoch int64
	for _, file := range u.Files {
		blk, err := st.ReadBlock(b, file, sc)
		if err != nil {
			return nil, err
		}
		runs = append(runs, blk)
		epoch = max(epoch, file.Epoch)
	}
	// The merged records are gathered into a block of their own, so the
	// inputs' blocks can go when the inputs leave the cache (string values
	// aside, which keep the decoded pages they point into alive).
	merged := mergetree.MergeBlocks(sc.Types(), runs, f, u.DropDeletes)
	var out []manifest.DataFile
	for start := 0; start < merged.Len(); start += targetRows {
		end := min(start+targetRows, merged.Len())
		df, err := st.WriteFile(b, "data", sc, merged.Slice(start, end), int32(u.OutputLevel), base.Epoch(epoch))
		if err != nil {
			return nil, err
		}
		out = append(out, df)
	}
	st.Forget(b, u.Files)
	return out, nil
}

// Table compacts the latest snapshot of a primary-key table: each bucket
// the picker selects, or every bucket with more than one file (or with
// retractions) when full is set. It returns the COMPACT message, empty if
// nothing needed compaction; the caller commits it.
func Table(st *store.Store, user string, full bool) (commit.Message, error) {
	msg := commit.Message{CommitUser: user, Kind: snapshot.Compact}
	latest, err := st.Snapshots.Latest()
	if err != nil || latest == nil {
		return msg, err
	}
	sc, err := st.Schemas.Get(latest.SchemaID)
	if err != nil {
		return msg, err
	}
	if !sc.HasPrimaryKey() {
		return msg, fmt.Errorf("table %s: compaction of append tables is not supported: %w", st.Dir, base.ErrInvalidArgument)
	}
	opts, err := schema.ParseOptions(sc)
	if err != nil {
		return msg, err
	}
	msg.SchemaID, msg.Epoch = sc.ID, latest.Epoch
	live, err := st.LiveFiles(latest)
	if err != nil {
		return msg, err
	}
	byBucket := store.ByBucket(live)
	buckets := make([]int32, 0, len(byBucket))
	for b := range byBucket {
		buckets = append(buckets, b)
	}
	sort.Slice(buckets, func(i, j int) bool { return buckets[i] < buckets[j] })
	f := mergetree.NewFunc(sc, opts)
	for _, b := range buckets {
		files := byBucket[b]
		var u mergetree.Unit
		ok := false
		if full {
			u = mergetree.Unit{OutputLevel: opts.NumLevels - 1, Files: files, DropDeletes: true}
			ok = len(files) > 1 || files[0].Level != int32(opts.NumLevels-1)
		} else {
			u, ok = mergetree.Pick(mergetree.Runs(files), opts)
		}
		if !ok {
			continue
		}
		after, err := Rewrite(st, sc, f, b, u, opts.TargetFileRows)
		if err != nil {
			return msg, err
		}
		msg.Buckets = append(msg.Buckets, commit.BucketChange{Bucket: b, CompactBefore: u.Files, CompactAfter: after})
	}
	return msg, nil
}
