package compact

import (
	"bytes"
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

// TargetFileBytes is the most record.Block.Bytes of records a compaction
// puts in one output file (as well as at most the table's
// target-file-rows records): a file is decoded whole when it is read, so
// this bounds what reading one costs, and what a compaction holds of each
// sorted run it merges ([rewrite-memory]). Paimon's target-file-size (128
// MB on disk) plays the same part for a reader that decodes a file a
// batch at a time.
const TargetFileBytes = 16 << 20

// Rewrite merges the files of unit u of bucket b (read with schema sc,
// merged with f) into files of at most targetRows records and
// TargetFileBytes bytes at u.OutputLevel, and returns them in key order.
// The merged files leave the store's cache of decoded files.
//
// It streams (Paimon's MergeTreeCompactRewriter: a sort-merge reader
// over the sorted runs into a rolling file writer): the unit's files are
// split into chains of files with disjoint key ranges (Chains), each
// chain is read a file at a time, and mergetree.MergeRuns merges the
// chains with f into output blocks that are written as files as soon as
// they reach the target size. The memory it needs is one decoded file per
// chain and one output file, not the bucket's size ([rewrite-memory]).
func Rewrite(st *store.Store, sc *schema.Schema, f mergetree.Func, b int32, u mergetree.Unit, targetRows int) ([]manifest.DataFile, error) {
	out, _, err := rewrite(st, sc, f, b, u, mergetree.Limits{Rows: targetRows, Bytes: TargetFileBytes})
	if err == nil {
		st.Forget(b, u.Files)
	}
	return out, err
}

// RewriteKeep is Rewrite leaving the merged files in the cache: a
// background compaction whose result is committed later calls
// store.Forget when it hands the result out, since until that commit the
// merged files are still the live ones that lookups and scans read.
func RewriteKeep(st *store.Store, sc *schema.Schema, f mergetree.Func, b int32, u mergetree.Unit, targetRows int) ([]manifest.DataFile, error) {
	out, _, err := rewrite(st, sc, f, b, u, mergetree.Limits{Rows: targetRows, Bytes: TargetFileBytes})
	return out, err
}

// rewrite is Rewrite with the output files' limits given, returning what
// the merge held.
func rewrite(st *store.Store, sc *schema.Schema, f mergetree.Func, b int32, u mergetree.Unit, lim mergetree.Limits) ([]manifest.DataFile, mergetree.MergeStats, error) {
	var epoch int64
	for _, file := range u.Files {
		epoch = max(epoch, file.Epoch)
	}
	for _, file := range u.Files {
		lim.Expect += int(file.Rows)
	}
	chains := Chains(u.Files)
	readers := make([]mergetree.RunReader, len(chains))
	for i, c := range chains {
		readers[i] = &chainReader{st: st, sc: sc, bucket: b, files: c}
	}
	var out []manifest.DataFile
	stats, err := mergetree.MergeRuns(sc.Types(), readers, f, u.DropDeletes, lim, func(blk *record.Block) error {
		df, err := st.WriteFile(b, "data", sc, blk, int32(u.OutputLevel), base.Epoch(epoch))
		if err != nil {
			return err
		}
		out = append(out, df)
		return nil
	})
	if err != nil {
		// The files written so far are in no snapshot: orphan cleanup
		// (maintain) removes them.
		return nil, stats, err
	}
	return out, stats, nil
}

// Chains splits files (of one bucket) into chains whose files have
// disjoint key ranges, each in key order, as few as the files' overlaps
// allow (Paimon's IntervalPartition does the same for its sort-merge
// reader): a chain's records, read file after file, are in (key, seq)
// order ([sorted-run]), so it is one sorted run for a merge. A level's
// files make one chain; each level-0 file one of its own, unless its key
// range lies beside another's. Files without records are left out.
func Chains(files []manifest.DataFile) [][]manifest.DataFile {
	sorted := make([]manifest.DataFile, 0, len(files))
	for _, f := range files {
		if f.Rows > 0 {
			sorted = append(sorted, f)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool {
		if c := bytes.Compare(sorted[i].MinKey, sorted[j].MinKey); c != 0 {
			return c < 0
		}
		return bytes.Compare(sorted[i].MaxKey, sorted[j].MaxKey) < 0
	})
	// Greedy interval partitioning: files come by their first key; each
	// goes after the chain that ended earliest, if it ended below the
	// file's first key, else starts a chain. This uses as many chains as
	// the most files that overlap at one key.
	var chains [][]manifest.DataFile
	for _, f := range sorted {
		best := -1
		for i, c := range chains {
			end := c[len(c)-1].MaxKey
			if bytes.Compare(end, f.MinKey) < 0 && (best < 0 || bytes.Compare(end, chains[best][len(chains[best])-1].MaxKey) < 0) {
				best = i
			}
		}
		if best < 0 {
			chains = append(chains, []manifest.DataFile{f})
			continue
		}
		chains[best] = append(chains[best], f)
	}
	return chains
}

// chainReader reads a chain of files a file at a time, each decoded whole
// (ReadBlockOnce: a cached copy if there is one, else from storage
// without filling the cache).
type chainReader struct {
	st     *store.Store
	sc     *schema.Schema
	bucket int32
	files  []manifest.DataFile
}

func (c *chainReader) NextBlock() (*record.Block, error) {
	if len(c.files) == 0 {
		return nil, nil
	}
	f := c.files[0]
	c.files = c.files[1:]
	return c.st.ReadBlockOnce(c.bucket, f, c.sc)
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
