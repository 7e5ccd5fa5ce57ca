package commit

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/snapshot"
)

// A chain of plans, each on the one before, as a batch makes them: ids,
// counts and live files follow the messages; a delta or changelog manifest
// is inline up to manifest.MaxInlineEntries entries and a file beyond;
// the base list's inline manifests are written out as files once they
// hold more than manifest.MaxInlineBaseEntries entries, and the base list
// is merged into one manifest once it names more than maxBaseManifests
// files; the snapshots read back as planned.
func TestPlanChain(t *testing.T) {
	fs := fileio.NewMem()
	mio := manifest.NewIO(fs, "t")
	reader := manifest.NewIO(fs, "t") // never encodes: reads what was staged
	var p parent
	var rows int64
	var seq [2]int64
	var recent []manifest.DataFile // bucket 0's newest files, compacted in threes
	newFile := func(b int32, name string, n int) manifest.DataFile {
		f := manifest.DataFile{Name: name, Rows: int64(n), MinSeq: seq[b] + 1, MaxSeq: seq[b] + int64(n)}
		seq[b] += int64(n)
		return f
	}
	flushes, fullMerges, small, smallFiles := 0, 0, 0, 0
	const plans = 1000
	for i := 1; i <= plans; i++ {
		m := &Message{CommitUser: "job", Epoch: base.Epoch(10 + i), Kind: snapshot.Append}
		var added int64
		switch {
		case i%50 == 0: // a large commit: its delta is a file
			var fs []manifest.DataFile
			for j := range manifest.MaxInlineEntries + 8 {
				fs = append(fs, newFile(1, fmt.Sprintf("big-%d-%d", i, j), 1))
				added++
			}
			m.Buckets = []BucketChange{{Bucket: 1, NewFiles: fs}}
		case i%7 == 0 && len(recent) >= 3: // compaction of recent files
			in := recent[len(recent)-3:]
			out := manifest.DataFile{Name: fmt.Sprintf("compacted-%d", i), Rows: in[0].Rows + in[1].Rows + in[2].Rows,
				MinSeq: in[0].MinSeq, MaxSeq: in[2].MaxSeq, Level: 1}
			m.Kind = snapshot.Compact
			m.Buckets = []BucketChange{{Bucket: 0, CompactBefore: slices.Clone(in), CompactAfter: []manifest.DataFile{out}}}
			recent = recent[:len(recent)-3]
		default:
			f := newFile(0, fmt.Sprintf("data-%d", i), i)
			recent = append(recent, f)
			added = int64(i)
			m.Buckets = []BucketChange{{Bucket: 0, NewFiles: []manifest.DataFile{f},
				Changelog: []manifest.DataFile{{Name: fmt.Sprintf("changelog-%d", i), Rows: 2}}}}
		}
		pl, err := plan("t", p, m, 0, 1000, mio)
		if err != nil {
			t.Fatalf("plan %d: %v", i, err)
		}
		rows += added
		s := pl.snap
		if s.ID != base.SnapshotID(i) || s.TotalRecordCount != rows || s.DeltaRecordCount != added {
			t.Fatalf("plan %d: snapshot %+v", i, s)
		}
		// The delta and changelog: one manifest each, inline when small.
		for _, c := range []struct {
			ref  manifest.FileRef
			want int
		}{{s.DeltaManifestList, len(m.Entries())}, {s.ChangelogManifestList, len(m.ChangelogEntries())}} {
			if c.want == 0 {
				if !c.ref.IsZero() {
					t.Fatalf("plan %d: a list for nothing: %+v", i, c.ref)
				}
				continue
			}
			if !c.ref.Inline() || len(c.ref.Metas) != 1 || c.ref.Metas[0].Inline() != (c.want <= manifest.MaxInlineEntries) {
				t.Fatalf("plan %d: list of %d entries: %+v", i, c.want, c.ref)
			}
			if got := c.ref.Metas[0].NumAdded + c.ref.Metas[0].NumDeleted; got != int64(c.want) {
				t.Fatalf("plan %d: manifest counts %d entries, want %d", i, got, c.want)
			}
		}
		// The base list: bounded inline entries and named files.
		named, inline := 0, 0
		var fresh []manifest.FileMeta
		for _, meta := range s.BaseManifestList.Metas {
			if meta.Inline() {
				inline += len(meta.Entries)
				continue
			}
			named++
			if !slices.ContainsFunc(p.metas, func(o manifest.FileMeta) bool { return o.Name == meta.Name }) {
				fresh = append(fresh, meta)
			}
		}
		if inline > manifest.MaxInlineBaseEntries || named > maxBaseManifests {
			t.Fatalf("plan %d: base list holds %d inline entries and names %d files", i, inline, named)
		}
		switch {
		case len(fresh) == 1 && named == 1 && len(p.metas) > 1 && fresh[0].NumAdded == int64(len(p.live)):
			fullMerges++
		case len(fresh) > 0:
			flushes++
			if inline != 0 {
				t.Fatalf("plan %d: a flush left %d inline entries", i, inline)
			}
		}
		wantFiles := len(fresh)
		for _, ref := range []manifest.FileRef{s.DeltaManifestList, s.ChangelogManifestList} {
			if ref.Inline() && !ref.Metas[0].Inline() {
				wantFiles++
			}
		}
		if len(pl.files) != wantFiles {
			t.Fatalf("plan %d: writes %d files, want %d", i, len(pl.files), wantFiles)
		}
		if wantFiles == 0 {
			small++
		}
		smallFiles += len(pl.files)
		for _, e := range pl.files {
			if !strings.HasPrefix(e.name, "manifest-") || strings.HasPrefix(e.name, "manifest-list-") {
				t.Fatalf("plan %d: writes %s, which is not a manifest", i, e.name)
			}
			if err := mio.Stage(e.name, e.data); err != nil {
				t.Fatal(err)
			}
		}
		entries, err := reader.ReadEntries(s.BaseManifestList, s.DeltaManifestList)
		if err != nil {
			t.Fatalf("plan %d: %v", i, err)
		}
		live, err := manifest.Merge(entries)
		if err != nil || !slices.Equal(names(live), names(pl.next.live)) {
			t.Fatalf("plan %d: files read back give live files %v (%v), want %v", i, names(live), err, names(pl.next.live))
		}
		if cl := m.ChangelogEntries(); len(cl) > 0 {
			got, err := reader.ReadEntries(s.ChangelogManifestList)
			if err != nil || len(got) != 1 || got[0].File.Name != cl[0].File.Name {
				t.Fatalf("plan %d: changelog read back %v (%v)", i, got, err)
			}
		}
		p = pl.next
	}
	if flushes < 10 || fullMerges == 0 {
		t.Fatalf("%d flushes of inline manifests and %d full merges in %d plans", flushes, fullMerges, plans)
	}
	// Most plans write no file; all of them wrote about one file per 20
	// plans (before inline manifests: two per plan, a delta and a
	// changelog manifest).
	if small < plans*9/10 || smallFiles > plans/10 {
		t.Fatalf("%d of %d plans wrote no file; %d files in all", small, plans, smallFiles)
	}
	t.Logf("%d plans: %d manifest files (%d flushes, %d full merges)", plans, smallFiles, flushes, fullMerges)
	// A message that deletes a file that is not live conflicts.
	m := &Message{CommitUser: "job", Epoch: 99, Kind: snapshot.Compact,
		Buckets: []BucketChange{{Bucket: 0, CompactBefore: []manifest.DataFile{{Name: "gone"}}}}}
	if _, err := plan("t", p, m, 0, 1000, mio); !errors.Is(err, base.ErrConflict) {
		t.Fatalf("delete of a file not live: %v", err)
	}
	// A message that adds a live file again is refused.
	m = &Message{CommitUser: "job", Epoch: 99, Kind: snapshot.Append,
		Buckets: []BucketChange{{Bucket: 2, NewFiles: []manifest.DataFile{{Name: "x", MinSeq: 1, MaxSeq: 1}, {Name: "x", MinSeq: 2, MaxSeq: 2}}}}}
	if _, err := plan("t", p, m, 0, 1000, mio); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("file added twice: %v", err)
	}
}

func names(es []manifest.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = fmt.Sprintf("%s@%d", e.File.Name, e.Bucket)
	}
	return out
}

// flushInline writes each run of inline manifests as one file in its
// place, with the ADD and DELETE pairs within a run cancelled, and leaves
// out a run that cancels entirely.
func TestFlushInline(t *testing.T) {
	add := func(n string) manifest.Entry {
		return manifest.Entry{Kind: manifest.Add, File: manifest.DataFile{Name: n}}
	}
	del := func(n string) manifest.Entry {
		return manifest.Entry{Kind: manifest.Delete, File: manifest.DataFile{Name: n}}
	}
	in := func(es ...manifest.Entry) manifest.FileMeta { return manifest.InlineManifest(es, 0) }
	metas := []manifest.FileMeta{
		{Name: "F"}, in(add("a"), add("b")), in(del("a"), add("c"), del("f")),
		{Name: "G"}, in(del("b")), in(add("d"), del("d")),
	}
	var written [][]string
	got, err := flushInline(metas, func(es []manifest.Entry) (manifest.FileMeta, error) {
		var w []string
		for _, e := range es {
			w = append(w, e.Kind.String()+" "+e.File.Name)
		}
		written = append(written, w)
		return manifest.FileMeta{Name: fmt.Sprintf("W%d", len(written))}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var gotNames []string
	for _, m := range got {
		gotNames = append(gotNames, m.Name)
	}
	want := [][]string{{"ADD b", "ADD c", "DELETE f"}, {"DELETE b"}}
	if !slices.Equal(gotNames, []string{"F", "W1", "G", "W2"}) || fmt.Sprint(written) != fmt.Sprint(want) {
		t.Fatalf("flushed list %v, files %v; want [F W1 G W2], %v", gotNames, written, want)
	}
}
