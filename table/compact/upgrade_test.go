package compact

import (
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/mergetree"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/store"
)

// upgradeTable is a deduplicate table (k BIGINT key, v TEXT) on a fresh
// in-memory store, with a target of targetRows records a file.
type upgradeTable struct {
	t   *testing.T
	st  *store.Store
	sc  *schema.Schema
	f   mergetree.Func
	seq base.SeqNum
}

const upgradeTargetRows = 6400

func newUpgradeTable(t *testing.T) *upgradeTable {
	t.Helper()
	st := store.New(fileio.NewMem(), "t")
	sc, err := schema.New([]schema.Field{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Text, Nullable: true}},
		[]string{"k"}, map[string]string{"merge-engine": "deduplicate"})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Schemas.Commit(sc); err != nil {
		t.Fatal(err)
	}
	o, _ := schema.ParseOptions(sc)
	return &upgradeTable{t: t, st: st, sc: sc, f: mergetree.NewFunc(sc, o)}
}

// file writes keys [lo, hi) as one file at level, all inserts except the
// keys in deletes, which are -D records.
func (u *upgradeTable) file(lo, hi int, level int32, deletes ...int) manifest.DataFile {
	u.t.Helper()
	kvs := make([]record.KV, 0, hi-lo)
	for k := lo; k < hi; k++ {
		u.seq++
		// A value that does not compress: file sizes follow record counts.
		r := rand.New(rand.NewSource(int64(k)))
		row := types.Row{types.NewInt64(int64(k)), types.NewText(fmt.Sprintf("%016x%016x%016x", r.Uint64(), r.Uint64(), r.Uint64()))}
		kind := types.Insert
		if slices.Contains(deletes, k) {
			kind = types.Delete
		}
		kvs = append(kvs, record.KV{Key: types.EncodeKey(nil, row, u.sc.KeyIndexes(), u.sc.KeyTypes()), Seq: u.seq, Kind: kind, Row: row})
	}
	df, err := u.st.WriteFile(0, "data", u.sc, record.BlockOf(u.sc.Types(), true, kvs), level, 1)
	if err != nil {
		u.t.Fatal(err)
	}
	return df
}

// read merges files as a read does: newest record of each key, without
// retractions.
func (u *upgradeTable) read(files []manifest.DataFile) *record.Block {
	u.t.Helper()
	var runs []*record.Block
	for _, f := range files {
		blk, err := u.st.ReadBlock(0, f, u.sc)
		if err != nil {
			u.t.Fatal(err)
		}
		runs = append(runs, blk)
	}
	return mergetree.MergeBlocks(u.sc.Types(), runs, u.f, true)
}

func names(files []manifest.DataFile) string {
	var s []string
	for _, f := range files {
		s = append(s, fmt.Sprintf("%s@%d", f.Name, f.Level))
	}
	return strings.Join(s, " ")
}

// TestRewriteUpgradesDisjointFiles: a file of a compaction unit that
// overlaps no other input and is larger than what is merged is moved to
// the output level without being rewritten (Paimon's upgrade), or left
// alone when it is there already; a file that overlaps another, is
// smaller than what would be merged beside it, or may hold retractions
// that the unit drops, is rewritten. Every outcome reads the same as the
// inputs.
func TestRewriteUpgradesDisjointFiles(t *testing.T) {
	for _, tc := range []struct {
		name string
		// big makes the unit's large file; small the newer ones.
		big      func(u *upgradeTable) manifest.DataFile
		small    func(u *upgradeTable) []manifest.DataFile
		drop     bool
		wantBig  string // "untouched", "upgraded" or "rewritten"
		wantNew  int    // new files written
		wantGone int    // files replaced by new files
	}{
		{"larger than a third of the rest", func(u *upgradeTable) manifest.DataFile { return u.file(0, 400, 5) },
			smallAbove, true, "untouched", 1, 5},
		{"at the output level, keys above it", func(u *upgradeTable) manifest.DataFile { return u.file(0, 3000, 5) },
			smallAbove, true, "untouched", 1, 5},
		{"below the output level", func(u *upgradeTable) manifest.DataFile { return u.file(0, 3000, 3) },
			smallAbove, true, "upgraded", 1, 5},
		{"keys below it", func(u *upgradeTable) manifest.DataFile { return u.file(5000, 8000, 5) },
			smallAbove, true, "untouched", 1, 5},
		{"with a retraction, dropped", func(u *upgradeTable) manifest.DataFile { return u.file(0, 3000, 3, 7) },
			smallAbove, true, "rewritten", 1, 6},
		{"with a retraction, kept", func(u *upgradeTable) manifest.DataFile { return u.file(0, 3000, 3, 7) },
			smallAbove, false, "upgraded", 1, 5},
		{"overlapped", func(u *upgradeTable) manifest.DataFile { return u.file(0, 3000, 5) },
			func(u *upgradeTable) []manifest.DataFile {
				return append(smallAbove(u), u.file(2990, 3010, 0))
			}, true, "rewritten", 1, 7},
		{"smaller than a third of the rest", func(u *upgradeTable) manifest.DataFile { return u.file(0, 200, 5) },
			smallAbove, true, "rewritten", 1, 6},
		{"large enough to keep beside more", func(u *upgradeTable) manifest.DataFile { return u.file(0, 4500, 3) },
			func(u *upgradeTable) []manifest.DataFile {
				var fs []manifest.DataFile
				for i := range 9 {
					fs = append(fs, u.file(5000+500*i, 5500+500*i, 0))
				}
				return fs
			}, true, "upgraded", 1, 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newUpgradeTable(t)
			big := tc.big(u)
			files := append([]manifest.DataFile{big}, tc.small(u)...)
			want := u.read(files)
			unit := mergetree.Unit{OutputLevel: 5, Files: files, DropDeletes: tc.drop}
			res, err := Rewrite(u.st, u.sc, u.f, 0, unit, upgradeTargetRows)
			if err != nil {
				t.Fatal(err)
			}
			inBefore := slices.ContainsFunc(res.Before, func(f manifest.DataFile) bool { return f.Name == big.Name })
			i := slices.IndexFunc(res.After, func(f manifest.DataFile) bool { return f.Name == big.Name })
			got := "rewritten"
			switch {
			case !inBefore && i < 0:
				got = "untouched"
			case inBefore && i >= 0:
				got = "upgraded"
				if res.After[i].Level != 5 || res.After[i].Size != big.Size || res.After[i].MaxSeq != big.MaxSeq {
					t.Fatalf("upgraded file %+v, from %+v", res.After[i], big)
				}
			case !inBefore:
				t.Fatalf("the big file is added but was not live: before %s, after %s", names(res.Before), names(res.After))
			}
			if got != tc.wantBig {
				t.Fatalf("the big file is %s, want %s: before %s, after %s", got, tc.wantBig, names(res.Before), names(res.After))
			}
			gone := res.Gone()
			if len(gone) != tc.wantGone || len(res.After)-(len(res.Before)-len(gone)) != tc.wantNew {
				t.Fatalf("%d files replaced by %d new ones, want %d by %d: before %s, after %s",
					len(gone), len(res.After)-(len(res.Before)-len(gone)), tc.wantGone, tc.wantNew, names(res.Before), names(res.After))
			}
			// What a read sees afterwards: the inputs the rewrite left, and
			// its output, which is one sorted run at the output level.
			var live []manifest.DataFile
			for _, f := range files {
				if !slices.ContainsFunc(res.Before, func(g manifest.DataFile) bool { return g.Name == f.Name }) {
					if f.Level != 5 {
						t.Fatalf("file %s left at level %d", f.Name, f.Level)
					}
					live = append(live, f)
				}
			}
			live = append(live, res.After...)
			if c := Chains(live); len(c) != 1 {
				t.Fatalf("the output level is %d sorted runs: %s", len(c), names(live))
			}
			if err := sameRecords(u.read(live), want); err != nil {
				t.Fatal(err)
			}
			for _, f := range live {
				if !tc.drop || (got == "upgraded" && f.Name == big.Name) {
					continue
				}
				if !f.NoRetracts {
					t.Fatalf("file %s at the oldest level may hold retractions", f.Name)
				}
			}
		})
	}
}

// smallAbove writes five level-0 files of 200 keys each, above key 3000.
func smallAbove(u *upgradeTable) []manifest.DataFile {
	var fs []manifest.DataFile
	for i := range 5 {
		fs = append(fs, u.file(3000+200*i, 3200+200*i, 0))
	}
	return fs
}

// TestRewriteOfGrowingTableIsLinear: a table whose keys only grow (the
// demo's auction and person tables), compacted as the writer does after
// every small file, rewrites each record fewer times with upgrades than
// when every file of a unit is merged, and keeps few files.
func TestRewriteOfGrowingTableIsLinear(t *testing.T) {
	for _, target := range []int{4 * upgradeTargetRows, 1 << 20} {
		without, _ := growTable(t, target, false)
		with, files := growTable(t, target, true)
		t.Logf("target %d rows: each record rewritten %.1f times, %.1f without upgrades; %d files", target, with, without, files)
		if with*2 > without {
			t.Errorf("target %d rows: each record rewritten %.1f times, %.1f without upgrades", target, with, without)
		}
		if limit := 300*300/target*3/2 + 20; files > limit {
			t.Errorf("target %d rows: %d files for %d records", target, files, 300*300)
		}
	}
}

// growTable writes 300 files of 300 growing keys (the demo's auction
// table writes 600 in a 100 ms epoch), compacting as the
// writer does, and returns how many times a record was rewritten on
// average and how many files the table has at the end.
func growTable(t *testing.T, target int, upgrade bool) (float64, int) {
	u := newUpgradeTable(t)
	o, _ := schema.ParseOptions(u.sc)
	o.TargetFileRows = target
	var live []manifest.DataFile
	written, rewritten := 0, 0
	for epoch := range 300 {
		f := u.file(300*epoch, 300*epoch+300, 0)
		written += 300
		live = append(live, f)
		unit, ok := mergetree.Pick(mergetree.Runs(live), o)
		if !ok {
			continue
		}
		res, _, err := rewrite(u.st, u.sc, u.f, 0, unit, mergetree.Limits{Rows: target, Bytes: TargetFileBytes}, upgrade)
		if err != nil {
			t.Fatal(err)
		}
		gone := map[string]bool{}
		for _, g := range res.Before {
			gone[g.Name] = true
		}
		for _, g := range res.Gone() {
			rewritten += int(g.Rows)
		}
		var next []manifest.DataFile
		for _, g := range live {
			if !gone[g.Name] {
				next = append(next, g)
			}
		}
		live = append(next, res.After...)
	}
	if got := u.read(live); got.Len() != written {
		t.Fatalf("%d records read, %d written", got.Len(), written)
	}
	return float64(rewritten) / float64(written), len(live)
}

// TestUpgradableKeepsFullFiles: files of the target size side by side (a
// stretch a merge cut at TargetFileBytes) are all kept, however many
// there are beside each other, while the small files beside them are
// merged; a file below the target size but large beside what is merged is
// kept too.
func TestUpgradableKeepsFullFiles(t *testing.T) {
	full := int64(TargetFileBytes * 8 / 10)
	var secs [][]manifest.DataFile
	for i := range 4 {
		secs = append(secs, []manifest.DataFile{{Name: fmt.Sprint("full", i), Rows: 28000, Size: full, NoRetracts: true}})
	}
	secs = append(secs, []manifest.DataFile{{Name: "mid", Rows: 9000, Size: 4 << 20, NoRetracts: true}})
	for i := range 5 {
		secs = append(secs, []manifest.DataFile{{Name: fmt.Sprint("small", i), Rows: 600, Size: 250 << 10, NoRetracts: true}})
	}
	keep := upgradable(secs, true, 1<<20)
	var got []string
	for i, k := range keep {
		if k {
			got = append(got, secs[i][0].Name)
		}
	}
	if want := "full0 full1 full2 full3 mid"; strings.Join(got, " ") != want {
		t.Fatalf("kept %v, want %s", got, want)
	}
}

// TestPlanKeepsToMergeBudget: past mergeBudget bytes, files that overlap
// nothing are moved rather than merged, the smallest merged first;
// overlapping files are merged whatever the budget.
func TestPlanKeepsToMergeBudget(t *testing.T) {
	key := func(k int) []byte { return []byte{byte(k >> 8), byte(k)} }
	var files []manifest.DataFile
	// Twenty disjoint files of 1 MiB and one of 2 MiB (each a third of the
	// rest or less, so none is kept by size), then two files that overlap.
	for i := range 21 {
		size := int64(1 << 20)
		if i == 7 {
			size = 2 << 20
		}
		files = append(files, manifest.DataFile{Name: fmt.Sprint("d", i), Rows: 1000, Size: size, NoRetracts: true,
			MinKey: key(10 * i), MaxKey: key(10*i + 5), Level: 1})
	}
	files = append(files,
		manifest.DataFile{Name: "o1", Rows: 10, Size: 2 << 20, MinKey: key(1000), MaxKey: key(1010), Level: 0},
		manifest.DataFile{Name: "o2", Rows: 10, Size: 2 << 20, MinKey: key(1005), MaxKey: key(1020), Level: 2})
	groups, kept := plan(mergetree.Unit{OutputLevel: 5, Files: files}, 1<<20)
	merged := map[string]bool{}
	var bytes int64
	for _, g := range groups {
		for _, f := range g {
			merged[f.Name] = true
			bytes += f.Size
		}
	}
	if !merged["o1"] || !merged["o2"] {
		t.Fatalf("overlapping files not merged: %v", merged)
	}
	if merged["d7"] {
		t.Fatalf("the largest disjoint file merged before smaller ones: %v", merged)
	}
	// The overlapping 4 MiB, then four disjoint files of 1 MiB, fill the
	// budget; the other 17 move.
	if bytes != mergeBudget {
		t.Fatalf("%d bytes merged, budget %d: %v", bytes, mergeBudget, merged)
	}
	moved := 0
	for _, k := range kept {
		if k.Name != "" {
			moved++
		}
	}
	if moved != 17 {
		t.Fatalf("%d files moved, want 17", moved)
	}
}
