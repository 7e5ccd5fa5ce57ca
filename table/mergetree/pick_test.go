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
