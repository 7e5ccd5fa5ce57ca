package commit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/snapshot"
)

// A chain of plans, each on the one before, as a batch makes them: ids,
// counts, live files and base manifests follow the messages, the base
// list is merged into one manifest once it names more than
// maxBaseManifests, and the encoded files read back as the snapshots say.
func TestPlanChain(t *testing.T) {
	fs := fileio.NewMem()
	mio := manifest.NewIO(fs, "t")
	var p parent
	var rows int64
	merged := false
	for i := 1; i <= maxBaseManifests+3; i++ {
		f := manifest.DataFile{Name: fmt.Sprintf("data-%d", i), Rows: int64(i), MinSeq: int64(i), MaxSeq: int64(i)}
		m := &Message{CommitUser: "job", Epoch: base.Epoch(10 + i), Kind: snapshot.Append,
			Buckets: []BucketChange{{Bucket: 0, NewFiles: []manifest.DataFile{f},
				Changelog: []manifest.DataFile{{Name: fmt.Sprintf("changelog-%d", i), Rows: 2}}}}}
		pl, err := plan("t", p, m, 0, 1000, mio)
		if err != nil {
			t.Fatal(err)
		}
		rows += int64(i)
		s := pl.snap
		if s.ID != base.SnapshotID(i) || s.Epoch != base.Epoch(10+i) || s.TotalRecordCount != rows || s.DeltaRecordCount != int64(i) || s.ChangelogRecordCount != 2 {
			t.Fatalf("plan %d: snapshot %+v", i, s)
		}
		if len(pl.next.live) != i || pl.next.live[i-1].File.Name != f.Name {
			t.Fatalf("plan %d: %d live files", i, len(pl.next.live))
		}
		// The parent's base and delta manifests, merged into one when more
		// than maxBaseManifests, then this plan's delta manifest.
		wantBase := len(p.metas)
		if wantBase > maxBaseManifests {
			wantBase, merged = 1, true
		}
		if len(pl.next.metas) != wantBase+1 {
			t.Fatalf("plan %d: next base names %d manifests, want %d", i, len(pl.next.metas), wantBase+1)
		}
		// The lists are inline: the only files are manifests.
		if !s.DeltaManifestList.Inline() || !s.ChangelogManifestList.Inline() || s.BaseManifestList.Inline() != (i > 1) {
			t.Fatalf("plan %d: lists not inline: %+v", i, s)
		}
		for _, e := range pl.files {
			if !strings.HasPrefix(e.name, "manifest-") || strings.HasPrefix(e.name, "manifest-list-") {
				t.Fatalf("plan %d: writes %s, which is not a manifest", i, e.name)
			}
			if err := mio.Stage(e.name, e.data); err != nil {
				t.Fatal(err)
			}
		}
		entries, err := manifest.NewIO(fs, "t").ReadEntries(s.BaseManifestList, s.DeltaManifestList)
		if err != nil {
			t.Fatal(err)
		}
		live, err := manifest.Merge(entries)
		if err != nil || len(live) != i {
			t.Fatalf("plan %d: files read back give %d live files (%v)", i, len(live), err)
		}
		cl, err := manifest.NewIO(fs, "t").ReadEntries(s.ChangelogManifestList)
		if err != nil || len(cl) != 1 || cl[0].File.Name != fmt.Sprintf("changelog-%d", i) {
			t.Fatalf("plan %d: changelog read back %v (%v)", i, cl, err)
		}
		p = pl.next
	}
	if !merged {
		t.Fatal("no plan merged the base manifests")
	}
	// A message that deletes a file that is not live conflicts.
	m := &Message{CommitUser: "job", Epoch: 99, Kind: snapshot.Compact,
		Buckets: []BucketChange{{Bucket: 0, CompactBefore: []manifest.DataFile{{Name: "gone"}}}}}
	if _, err := plan("t", p, m, 0, 1000, mio); !errors.Is(err, base.ErrConflict) {
		t.Fatalf("delete of a file not live: %v", err)
	}
	// A message that adds a live file again is refused.
	m = &Message{CommitUser: "job", Epoch: 99, Kind: snapshot.Append,
		Buckets: []BucketChange{{Bucket: 1, NewFiles: []manifest.DataFile{{Name: "x", MinSeq: 1, MaxSeq: 1}, {Name: "x", MinSeq: 2, MaxSeq: 2}}}}}
	if _, err := plan("t", p, m, 0, 1000, mio); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("file added twice: %v", err)
	}
}
