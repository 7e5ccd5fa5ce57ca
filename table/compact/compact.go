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

// Result is what a rewrite did to a bucket: the files it replaced
// (Before) and the files that replace them (After), for a commit's
// BucketChange.CompactBefore and CompactAfter. A file the rewrite moved
// to the output level without rewriting it (an upgrade) is in both, at
// its old and its new level; a file that stays where it is, untouched, is
// in neither.
type Result struct {
	Before, After []manifest.DataFile
}

// Gone returns the files of Before that After does not keep under the
// same name: those the rewrite replaced by new files.
func (r Result) Gone() []manifest.DataFile {
	kept := make(map[string]bool, len(r.After))
	for _, f := range r.After {
		kept[f.Name] = true
	}
	var gone []manifest.DataFile
	for _, f := range r.Before {
		if !kept[f.Name] {
			gone = append(gone, f)
		}
	}
	return gone
}

// Rewrite compacts unit u of bucket b (read with schema sc, merged with f)
// into files at u.OutputLevel of at most targetRows records and
// TargetFileBytes bytes each. Files that overlap no other file of the
// unit and are large enough are not rewritten but upgraded (see
// upgradable), as Paimon's MergeTreeCompactTask upgrades them; the others
// are merged, each stretch of adjacent key ranges on its own. The
// replaced files leave the store's cache of decoded files.
//
// Each merge streams (Paimon's MergeTreeCompactRewriter: a sort-merge
// reader over the sorted runs into a rolling file writer): its files are
// split into chains of files with disjoint key ranges (Chains), each
// chain is read a file at a time, and mergetree.MergeRuns merges the
// chains with f into output blocks that are written as files as soon as
// they reach the target size. The memory it needs is one decoded file per
// chain and one output file, not the bucket's size ([rewrite-memory]).
func Rewrite(st *store.Store, sc *schema.Schema, f mergetree.Func, b int32, u mergetree.Unit, targetRows int) (Result, error) {
	res, _, err := rewrite(st, sc, f, b, u, mergetree.Limits{Rows: targetRows, Bytes: TargetFileBytes}, true)
	if err == nil {
		st.Forget(b, res.Gone())
	}
	return res, err
}

// RewriteKeep is Rewrite leaving the replaced files in the cache: a
// background compaction whose result is committed later calls
// store.Forget when it hands the result out, since until that commit the
// replaced files are still the live ones that lookups and scans read.
func RewriteKeep(st *store.Store, sc *schema.Schema, f mergetree.Func, b int32, u mergetree.Unit, targetRows int) (Result, error) {
	res, _, err := rewrite(st, sc, f, b, u, mergetree.Limits{Rows: targetRows, Bytes: TargetFileBytes}, true)
	return res, err
}

// rewrite is Rewrite with the output files' limits given, returning what
// the merges held (summed); without upgrade, every file of u is merged
// (a full compaction's promise: one sorted run without retractions).
func rewrite(st *store.Store, sc *schema.Schema, f mergetree.Func, b int32, u mergetree.Unit, lim mergetree.Limits, upgrade bool) (Result, mergetree.MergeStats, error) {
	var res Result
	var stats mergetree.MergeStats
	groups := [][]manifest.DataFile{u.Files}
	var kept []manifest.DataFile
	if upgrade {
		groups, kept = plan(u, lim.Rows)
	}
	// Files without records go: they are in no group (Chains leaves them
	// out) and are replaced by nothing.
	for _, file := range u.Files {
		if file.Rows == 0 && upgrade {
			res.Before = append(res.Before, file)
		}
	}
	for i, g := range groups {
		out, s, err := merge(st, sc, f, b, u, g, lim)
		if err != nil {
			// The files written so far are in no snapshot: orphan cleanup
			// (maintain) removes them.
			return Result{}, stats, err
		}
		res.Before = append(res.Before, g...)
		res.After = append(res.After, out...)
		stats.Records += s.Records
		stats.Blocks += s.Blocks
		stats.MaxHeld = max(stats.MaxHeld, s.MaxHeld)
		stats.MaxOutBytes = max(stats.MaxOutBytes, s.MaxOutBytes)
		if i < len(kept) && kept[i].Name != "" {
			if kept[i].Level != int32(u.OutputLevel) {
				up := kept[i]
				up.Level = int32(u.OutputLevel)
				res.Before = append(res.Before, kept[i])
				res.After = append(res.After, up)
			}
		}
	}
	return res, stats, nil
}

// merge merges files (of unit u) into new files at u.OutputLevel, in key
// order; their epoch is the highest of files'.
func merge(st *store.Store, sc *schema.Schema, f mergetree.Func, b int32, u mergetree.Unit, files []manifest.DataFile, lim mergetree.Limits) ([]manifest.DataFile, mergetree.MergeStats, error) {
	var epoch int64
	lim.Expect = 0
	for _, file := range files {
		epoch = max(epoch, file.Epoch)
		lim.Expect += int(file.Rows)
	}
	chains := Chains(files)
	if len(chains) == 0 {
		return nil, mergetree.MergeStats{}, nil
	}
	readers := make([]mergetree.RunReader, len(chains))
	for i, c := range chains {
		readers[i] = &chainReader{st: st, sc: sc, bucket: b, files: c}
	}
	var out []manifest.DataFile
	stats, err := mergetree.MergeRuns(sc.Types(), readers, f, u.DropDeletes, lim, func(blk *record.Block) error {
		// Staged (store.StageFile): content durable now, names once the
		// bucket directory is synced below, before any message names them.
		df, err := st.StageFile(b, "data", sc, blk, int32(u.OutputLevel), base.Epoch(epoch))
		if err != nil {
			return err
		}
		out = append(out, df)
		return nil
	})
	if err == nil && len(out) > 0 {
		err = st.SyncBuckets([]int32{b})
	}
	return out, stats, err
}

// plan splits the files of u with records into the groups to merge and
// the files to keep (Paimon's MergeTreeCompactTask): sections are the
// stretches of overlapping key ranges, in key order; a section of one
// upgradable file is kept, and the sections between two kept files make
// one group. kept[i] is the file after groups[i] (a zero DataFile after
// the last group); a group may be empty.
func plan(u mergetree.Unit, targetRows int) (groups [][]manifest.DataFile, kept []manifest.DataFile) {
	secs := sections(u.Files)
	keep := upgradable(secs, u.DropDeletes, targetRows)
	// A budget of bytes merged by one compaction: files that must be
	// merged (overlapping ones, and ones whose retractions go) count
	// first, then the files that could be moved, smallest first; past the
	// budget these are moved rather than merged (a later compaction
	// merges them), so that a compaction's time stays bounded.
	var merged int64
	var movable []int
	for i, sec := range secs {
		if keep[i] {
			continue
		}
		if len(sec) == 1 && (!u.DropDeletes || sec[0].NoRetracts) {
			movable = append(movable, i)
			continue
		}
		for _, f := range sec {
			merged += f.Size
		}
	}
	sort.SliceStable(movable, func(a, b int) bool { return secs[movable[a]][0].Size < secs[movable[b]][0].Size })
	for _, i := range movable {
		if merged >= mergeBudget {
			keep[i] = true
			continue
		}
		merged += secs[i][0].Size
	}
	var g []manifest.DataFile
	for i, sec := range secs {
		if keep[i] {
			groups, kept = append(groups, g), append(kept, sec[0])
			g = nil
			continue
		}
		g = append(g, sec...)
	}
	return append(groups, g), append(kept, manifest.DataFile{})
}

// sections groups the files with records by overlapping key ranges: each
// section's files overlap, transitively, and no two sections do; the
// sections come in key order.
func sections(files []manifest.DataFile) [][]manifest.DataFile {
	sorted := make([]manifest.DataFile, 0, len(files))
	for _, f := range files {
		if f.Rows > 0 {
			sorted = append(sorted, f)
		}
	}
	sort.SliceStable(sorted, func(i, j int) bool { return bytes.Compare(sorted[i].MinKey, sorted[j].MinKey) < 0 })
	var secs [][]manifest.DataFile
	var end []byte
	for _, f := range sorted {
		if len(secs) > 0 && bytes.Compare(f.MinKey, end) <= 0 {
			secs[len(secs)-1] = append(secs[len(secs)-1], f)
			if bytes.Compare(f.MaxKey, end) > 0 {
				end = f.MaxKey
			}
			continue
		}
		secs = append(secs, []manifest.DataFile{f})
		end = f.MaxKey
	}
	return secs
}

// upgradable tells which sections are one file that the compaction keeps
// as it is, only moving it to the output level. Rewriting a file that
// overlaps no other input merges it with nothing: it only joins it to its
// neighbours in a larger file. Paimon keeps such a file once it reaches a
// share of the target file size; a table here that grows by a small file
// an epoch (the demo's auction and person tables, whose keys only grow)
// would then rewrite its whole newest stretch, up to that size, at every
// compaction. So a file is kept when it holds at least minUpgradeShare
// percent of target-file-rows records or, on disk, of TargetFileBytes
// (Paimon's rule, at a smaller share), or when it is larger than 1/upgradeFanIn of
// the files merged beside it: a
// stretch of small files is merged into one once it outgrows the files
// around it upgradeFanIn times over, as tiers merge in size-tiered
// compaction, so a record is rewritten a number of times logarithmic in
// the table's size, to the base upgradeFanIn. A file that may hold
// retractions (manifest.DataFile.NoRetracts unset) is merged when the
// unit drops them ([drop-deletes]), so that the oldest run holds none.
func upgradable(secs [][]manifest.DataFile, dropDeletes bool, targetRows int) []bool {
	keep := make([]bool, len(secs))
	var rest int64
	var cands []int
	for i, sec := range secs {
		for _, f := range sec {
			rest += f.Size
		}
		if len(sec) != 1 || (dropDeletes && !sec[0].NoRetracts) {
			continue
		}
		cands = append(cands, i)
	}
	// Full files first: they are kept whatever lies beside them (several
	// of them side by side, a stretch a merge cut at the target size, are
	// each a small part of the unit, and must not count against each
	// other). A file of TargetFileBytes in memory is at least 70% of it
	// on disk only when it compresses little; one that compresses more is
	// left to the second rule.
	var small []int
	for _, i := range cands {
		f := secs[i][0]
		if f.Rows*100 >= int64(targetRows)*minUpgradeShare || f.Size*100 >= TargetFileBytes*minUpgradeShare {
			keep[i] = true
			rest -= f.Size
			continue
		}
		small = append(small, i)
	}
	// Then largest first: each is kept when it is large beside what stays
	// to be merged once it and the larger kept files are set aside.
	sort.SliceStable(small, func(a, b int) bool { return secs[small[a]][0].Size > secs[small[b]][0].Size })
	for _, i := range small {
		f := secs[i][0]
		if f.Size*upgradeFanIn > rest-f.Size {
			keep[i] = true
			rest -= f.Size
		}
	}
	return keep
}

// minUpgradeShare is the percentage of target-file-rows records, or of
// TargetFileBytes on disk, from which a file that overlaps no other input
// is always upgraded. Paimon keeps files of 70% of target-file-size; its
// writers add a file a checkpoint, here a file an epoch, and merging a
// stretch of such files up to 70% of 16 MiB took up to half a second of a
// core in the freshness run, so files are final from a quarter (4 MiB).
// upgradeFanIn is how many times its size the files merged beside a
// smaller one may reach before it is merged with them (upgradable).
//
// mergeBudget is the most bytes (on disk) of files that overlap nothing
// one compaction merges before it moves the others instead (plan): an
// auction compaction that merged 25 MB of such files took half a second
// of a core, beside a stream that commits every 100 ms.
const mergeBudget = TargetFileBytes / 2

const (
	minUpgradeShare = 25
	upgradeFanIn    = 3
)

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

// rewriteTable is Rewrite for Table, with upgrades only when asked.
func rewriteTable(st *store.Store, sc *schema.Schema, f mergetree.Func, b int32, u mergetree.Unit, targetRows int, upgrade bool) (Result, error) {
	res, _, err := rewrite(st, sc, f, b, u, mergetree.Limits{Rows: targetRows, Bytes: TargetFileBytes}, upgrade)
	if err == nil {
		st.Forget(b, res.Gone())
	}
	return res, err
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
		res, err := rewriteTable(st, sc, f, b, u, opts.TargetFileRows, !full)
		if err != nil {
			return msg, err
		}
		if len(res.Before)+len(res.After) == 0 {
			continue
		}
		msg.Buckets = append(msg.Buckets, commit.BucketChange{Bucket: b, CompactBefore: res.Before, CompactAfter: res.After})
	}
	return msg, nil
}
