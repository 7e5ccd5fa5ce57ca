package mergetree

import (
	"sort"

	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/schema"
)

// Run is one sorted run of a bucket.
type Run struct {
	Level int
	Files []manifest.DataFile
}

// Size is the run's total file size in bytes.
func (r Run) Size() int64 {
	var n int64
	for _, f := range r.Files {
		n += f.Size
	}
	return n
}

// Runs groups a bucket's files into sorted runs, newest first.
func Runs(files []manifest.DataFile) []Run {
	var runs []Run
	byLevel := map[int][]manifest.DataFile{}
	var l0 []manifest.DataFile
	for _, f := range files {
		if f.Level == 0 {
			l0 = append(l0, f)
		} else {
			byLevel[int(f.Level)] = append(byLevel[int(f.Level)], f)
		}
	}
	sort.Slice(l0, func(i, j int) bool { return l0[i].MaxSeq > l0[j].MaxSeq })
	for _, f := range l0 {
		runs = append(runs, Run{Level: 0, Files: []manifest.DataFile{f}})
	}
	levels := make([]int, 0, len(byLevel))
	for l := range byLevel {
		levels = append(levels, l)
	}
	sort.Ints(levels)
	for _, l := range levels {
		runs = append(runs, Run{Level: l, Files: byLevel[l]})
	}
	return runs
}

// Unit is a compaction decision: rewrite Files into OutputLevel.
type Unit struct {
	OutputLevel int
	Files       []manifest.DataFile
	// DropDeletes is true when the unit holds the bucket's oldest run, so
	// retract results cancel nothing older and can go ([drop-deletes]).
	DropDeletes bool
}

// Pick decides whether the bucket whose runs are given (newest first, as
// Runs returns them) needs compaction, and what to compact.
func Pick(runs []Run, o schema.Options) (Unit, bool) {
	n := len(runs)
	if n <= 1 {
		return Unit{}, false
	}
	maxLevel := o.NumLevels - 1
	// Size amplification.
	var newer int64
	for _, r := range runs[:n-1] {
		newer += r.Size()
	}
	if oldest := runs[n-1].Size(); oldest > 0 && newer*100 > int64(o.MaxSizeAmplification)*oldest {
		return unit(runs, n, maxLevel), true
	}
	if u, ok := pickRatio(runs, 1, false, o, maxLevel); ok {
		return u, true
	}
	if n > o.RunCountTrigger {
		return pickRatio(runs, n-o.RunCountTrigger+1, true, o, maxLevel)
	}
	return Unit{}, false
}

func pickRatio(runs []Run, count int, force bool, o schema.Options, maxLevel int) (Unit, bool) {
	var candidate int64
	for _, r := range runs[:count] {
		candidate += r.Size()
	}
	for i := count; i < len(runs); i++ {
		next := runs[i].Size()
		if candidate*int64(100+o.SizeRatio) < next*100 {
			break
		}
		candidate += next
		count++
	}
	if force || count > 1 {
		return unit(runs, count, maxLevel), true
	}
	return Unit{}, false
}

func unit(runs []Run, count, maxLevel int) Unit {
	out := 0
	if count == len(runs) {
		out = maxLevel
	} else {
		out = max(0, runs[count].Level-1)
	}
	if out == 0 {
		// Never write level 0: take runs up to the next non-zero level.
		for i := count; i < len(runs); i++ {
			count++
			if runs[i].Level != 0 {
				out = runs[i].Level
				break
			}
		}
	}
	if count == len(runs) {
		out = maxLevel
	}
	u := Unit{OutputLevel: out, DropDeletes: count == len(runs)}
	for _, r := range runs[:count] {
		u.Files = append(u.Files, r.Files...)
	}
	return u
}
