package mergetree

import (
	"testing"

	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/schema"
)

func opts() schema.Options {
	return schema.Options{NumLevels: 5, RunCountTrigger: 3, SizeRatio: 1, MaxSizeAmplification: 200}
}

func files(specs ...[2]int64) []manifest.DataFile { // (level, size)
	var out []manifest.DataFile
	for i, s := range specs {
		out = append(out, manifest.DataFile{Name: string(rune('a' + i)), Level: int32(s[0]), Size: s[1], MaxSeq: int64(100 - i)})
	}
	return out
}

func TestPick(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []manifest.DataFile
		ok    bool
		level int
		n     int
		drop  bool
	}{
		{"one run", files([2]int64{4, 100}), false, 0, 0, false},
		{"size amplification", files([2]int64{0, 150}, [2]int64{0, 100}, [2]int64{4, 100}), true, 4, 3, true},
		{"size ratio stops at a big run", files([2]int64{0, 10}, [2]int64{0, 10}, [2]int64{4, 1000}), true, 3, 2, false},
		{"no ratio, under trigger", files([2]int64{0, 10}, [2]int64{0, 100}, [2]int64{4, 1000}), false, 0, 0, false},
		{"run count forces, never into level 0", files([2]int64{0, 1}, [2]int64{0, 10}, [2]int64{0, 100}, [2]int64{4, 100000}), true, 4, 4, true},
		{"run count forces into the level below", files([2]int64{0, 1}, [2]int64{0, 10}, [2]int64{2, 100}, [2]int64{3, 1000}, [2]int64{4, 100000}), true, 2, 3, false},
	} {
		u, ok := Pick(Runs(tc.files), opts())
		if ok != tc.ok || (ok && (u.OutputLevel != tc.level || len(u.Files) != tc.n || u.DropDeletes != tc.drop)) {
			t.Errorf("%s: got ok=%v level=%d files=%d drop=%v", tc.name, ok, u.OutputLevel, len(u.Files), u.DropDeletes)
		}
	}
}

func TestRunsNewestFirst(t *testing.T) {
	fs := []manifest.DataFile{{Name: "l2", Level: 2}, {Name: "old0", MaxSeq: 1}, {Name: "new0", MaxSeq: 9}, {Name: "l1", Level: 1}}
	runs := Runs(fs)
	var names []string
	for _, r := range runs {
		names = append(names, r.Files[0].Name)
	}
	if got := names; len(got) != 4 || got[0] != "new0" || got[1] != "old0" || got[2] != "l1" || got[3] != "l2" {
		t.Fatalf("runs %v", got)
	}
}

// rewriteFactor commits steps level-0 runs of one size to a bucket of an
// insert-only table, compacting at once whenever Pick asks, and returns
// the bytes compaction rewrote over the bytes committed.
func rewriteFactor(t *testing.T, o schema.Options, steps int) float64 {
	t.Helper()
	const size = 1000
	var files []manifest.DataFile
	var rewritten int64
	for seq := int64(1); seq <= int64(steps); seq++ {
		files = append(files, manifest.DataFile{Name: "l0", Level: 0, Size: size, MaxSeq: seq})
		u, ok := Pick(Runs(files), o)
		if !ok {
			continue
		}
		type id struct {
			level int32
			seq   int64
		}
		in := map[id]bool{}
		var merged manifest.DataFile
		for _, f := range u.Files {
			in[id{f.Level, f.MaxSeq}] = true
			merged.Size += f.Size
			merged.MaxSeq = max(merged.MaxSeq, f.MaxSeq)
		}
		rewritten += merged.Size
		var kept []manifest.DataFile
		for _, f := range files {
			if !in[id{f.Level, f.MaxSeq}] {
				kept = append(kept, f)
			}
		}
		if len(kept) != len(files)-len(u.Files) {
			t.Fatalf("step %d: unit of %d files, %d of %d kept", seq, len(u.Files), len(kept), len(files))
		}
		merged.Level = int32(u.OutputLevel)
		files = append(kept, merged)
	}
	return float64(rewritten) / float64(steps*size)
}

// TestPickRewrites checks that universal compaction with the default
// number of levels (trigger+1, schema.ParseOptions) rewrites a table that
// grows by small commits a logarithmic number of times: quadrupling the
// commits adds a few rewrites per byte. With one level fewer the lowest
// level absorbs every new run and the factor grows with the table.
func TestPickRewrites(t *testing.T) {
	o := schema.Options{NumLevels: 6, RunCountTrigger: 5, SizeRatio: 1, MaxSizeAmplification: 200}
	short, long := rewriteFactor(t, o, 450), rewriteFactor(t, o, 1800)
	if short > 8 || long > 14 || long-short > 8 {
		t.Errorf("6 levels: rewrite factor %.1f after 450 commits, %.1f after 1800", short, long)
	}
	o.NumLevels = 5
	short5, long5 := rewriteFactor(t, o, 450), rewriteFactor(t, o, 1800)
	if long5 < 4*long {
		t.Errorf("5 levels: rewrite factor %.1f after 450 commits, %.1f after 1800; want the growth that 6 levels avoid (%.1f)", short5, long5, long)
	}
	t.Logf("rewrite factor after 450 and 1800 commits: 6 levels %.1f, %.1f; 5 levels %.1f, %.1f", short, long, short5, long5)
}
