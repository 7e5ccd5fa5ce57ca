package table_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
	"github.com/stratadb/strata/table/write"
)

// manifestDir returns the names of the files in the manifest directory of
// the table at wh/db/t, sorted.
func manifestDir(t *testing.T, fs fileio.FS) []string {
	t.Helper()
	files, err := fs.List("wh/db/t/" + manifest.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		out = append(out, f.Name)
	}
	slices.Sort(out)
	return out
}

// namedFiles returns the manifest and list files that the snapshots and
// tags of st name, sorted: what the manifest directory must hold, no more.
func namedFiles(t *testing.T, st *store.Store) []string {
	t.Helper()
	ids, err := st.Snapshots.IDs()
	if err != nil {
		t.Fatal(err)
	}
	var snaps []*snapshot.Snapshot
	for _, id := range ids {
		sn, err := st.Snapshots.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, sn)
	}
	tags, err := st.Snapshots.Tags()
	if err != nil {
		t.Fatal(err)
	}
	snaps = append(snaps, slices.Collect(maps.Values(tags))...)
	names := map[string]bool{}
	for _, sn := range snaps {
		for _, ref := range []manifest.FileRef{sn.BaseManifestList, sn.DeltaManifestList, sn.ChangelogManifestList} {
			if ref.Name != "" {
				names[ref.Name] = true
			}
			metas, err := st.Manifests.ReadList(ref)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range metas {
				if !m.Inline() {
					names[m.Name] = true
				}
			}
		}
	}
	return slices.Sorted(maps.Keys(names))
}

// checkClean checks that the manifest directory holds exactly the files
// the snapshots and tags name and that orphan cleanup finds nothing.
func checkClean(t *testing.T, fs fileio.FS, tb *table.Table, when string) {
	t.Helper()
	if got, want := manifestDir(t, fs), namedFiles(t, tb.Store()); !slices.Equal(got, want) {
		t.Fatalf("%s: manifest directory holds %v, the snapshots and tags name %v", when, got, want)
	}
	orphans, err := tb.OrphanFiles(0, true)
	if err != nil || len(orphans) != 0 {
		t.Fatalf("%s: orphans %v (%v)", when, orphans, err)
	}
}

// A table committed many times in small commits holds few manifest
// files: each commit's delta and changelog manifests are inline in its
// snapshot, and the base list writes them out as one file once they hold
// more than manifest.MaxInlineBaseEntries entries. Each snapshot reads as
// committed, and expiration leaves exactly the files the retained
// snapshots name (on a local file system, where deleting a directory by
// mistake fails).
func TestFewManifestFiles(t *testing.T) {
	fs, tb, w := localTable(t)
	const commits = 100
	for e := 1; e <= commits; e++ {
		commitEpoch(t, tb, w, epochOf(e), rowsOf(3, int64(e*10))...)
	}
	st := tb.Store()
	ids, err := st.Snapshots.IDs()
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != commits {
		t.Fatalf("%d snapshots for %d commits", len(ids), commits)
	}
	files := manifestDir(t, fs)
	maxSize := 0
	for _, id := range ids {
		b, err := fs.ReadFile(st.Snapshots.Path(id))
		if err != nil {
			t.Fatal(err)
		}
		maxSize = max(maxSize, len(b))
	}
	t.Logf("%d commits: %d manifest files; largest snapshot file %d bytes", commits, len(files), maxSize)
	// Before inline manifests: a delta and a changelog manifest every
	// commit, over 200 files.
	if len(files) > commits/8 {
		t.Fatalf("%d commits left %d manifest files: %v", commits, len(files), files)
	}
	if maxSize > 48<<10 {
		t.Fatalf("a snapshot file of %d bytes", maxSize)
	}
	latest, err := st.Snapshots.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if latest.Version != snapshot.InlineManifestsVersion {
		t.Fatalf("latest snapshot version %d", latest.Version)
	}
	for _, id := range []base.SnapshotID{1, 37, 64, commits} {
		rows, err := tb.ReadSnapshot(id)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 3*int(id) {
			t.Fatalf("snapshot %d reads %d rows, want %d", id, len(rows), 3*id)
		}
	}
	// The changelog, read from inline changelog manifests: every row
	// inserted once.
	inserts := 0
	for _, c := range streamChanges(t, tb) {
		if c.Kind.String() != "+I" {
			t.Fatalf("changelog holds %s", c.Kind)
		}
		inserts++
	}
	if inserts != 3*commits {
		t.Fatalf("changelog of %d commits holds %d inserts", commits, inserts)
	}
	checkClean(t, fs, tb, "after the commits")
	final := mustRead(t, tb)
	// Expire down to one snapshot, then go on committing and expiring.
	if _, err := maintain.Expire(st, maintain.ExpireOptions{RetainMin: 1, RetainMax: 1}); err != nil {
		t.Fatal(err)
	}
	checkClean(t, fs, tb, "after expiration")
	if got := mustRead(t, tb); got != final {
		t.Fatalf("after expiration\n%s\nwant\n%s", got, final)
	}
	for e := commits + 1; e <= commits+40; e++ {
		commitEpoch(t, tb, w, epochOf(e), rowsOf(3, int64(e*10))...)
		if e%5 == 0 {
			if _, err := maintain.Expire(st, maintain.ExpireOptions{RetainMin: 2, RetainMax: 2}); err != nil {
				t.Fatal(err)
			}
			checkClean(t, fs, tb, "after a later expiration")
		}
	}
	fresh, err := table.Open(fs, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := fresh.ReadLatest()
	if err != nil || len(rows) != 3*(commits+40) {
		t.Fatalf("reopened table reads %d rows (%v)", len(rows), err)
	}
}

// A table written before inline manifests, with snapshots of version 1
// (lists in files) and version 2 (lists inline, manifests in files) beside
// ones of version 3, reads at every snapshot, takes commits on top, and
// expires to exactly the files its retained snapshots and tags name; tags
// of each version roll back.
func TestManifestFormatsMixed(t *testing.T) {
	fs, tb, w := localTable(t)
	for e := 1; e <= 3; e++ {
		commitEpoch(t, tb, w, epochOf(e), rowsOf(4, int64(e*10))...)
	}
	st := tb.Store()
	versions := map[base.SnapshotID]int{1: snapshot.FormatVersion, 2: snapshot.InlineManifestsVersion, 3: snapshot.InlineListsVersion}
	for id, v := range versions {
		sn, err := st.Snapshots.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		switch v {
		case snapshot.FormatVersion:
			writeVersion1(t, fs, st, sn)
		case snapshot.InlineListsVersion:
			writeVersion2(t, fs, st, sn)
		}
	}
	if len(manifestDir(t, fs)) == 0 {
		t.Fatal("the older snapshots wrote no manifest file")
	}
	tb, err := table.Open(fs, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	st = tb.Store()
	want := map[base.SnapshotID]string{}
	for id, v := range versions {
		sn, err := st.Snapshots.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if sn.Version != v {
			t.Fatalf("snapshot %d: version %d, want %d", id, sn.Version, v)
		}
		rows, err := tb.ReadSnapshot(id)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 4*int(id) {
			t.Fatalf("snapshot %d (version %d) reads %d rows", id, v, len(rows))
		}
		want[id] = dump(rows)
		if err := tb.CreateTag("v"+id.String(), id); err != nil {
			t.Fatal(err)
		}
	}
	checkClean(t, fs, tb, "older versions")
	// Commit on top of the version-2 snapshot.
	w, err = tb.NewWriter("job")
	if err != nil {
		t.Fatal(err)
	}
	for e := 4; e <= 40; e++ {
		commitEpoch(t, tb, w, epochOf(e), rowsOf(4, int64(e*10))...)
	}
	sn4, err := st.Snapshots.Get(4)
	if err != nil {
		t.Fatal(err)
	}
	if sn4.Version != snapshot.InlineManifestsVersion || !manifest.HasInline(sn4.DeltaManifestList.Metas) {
		t.Fatalf("commit on version 2: version %d, delta %+v", sn4.Version, sn4.DeltaManifestList)
	}
	latest := mustRead(t, tb)
	if strings.Count(latest, "(") != 160 {
		t.Fatalf("after commits on the older versions:\n%s", latest)
	}
	if _, err := maintain.Expire(st, maintain.ExpireOptions{RetainMin: 1, RetainMax: 1}); err != nil {
		t.Fatal(err)
	}
	checkClean(t, fs, tb, "expired with tags")
	for _, id := range []base.SnapshotID{1, 3, 2, 3} {
		fresh, err := table.Open(fs, "wh/db/t")
		if err != nil {
			t.Fatal(err)
		}
		if id == 3 && versions[2] == 0 {
			// The snapshots expired next hold inline manifests and none
			// kept does: there is no file to delete for them. The files
			// only the tag named are orphans.
			if err := fresh.Store().Snapshots.DeleteTag("v2"); err != nil {
				t.Fatal(err)
			}
			if _, err := fresh.OrphanFiles(0, false); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := fresh.RollbackToTag("v"+id.String(), "admin"); err != nil {
			t.Fatalf("rollback to v%d: %v", id, err)
		}
		if got := mustRead(t, fresh); got != want[id] {
			t.Fatalf("rollback to v%d (version %d)\n%s\nwant\n%s", id, versions[id], got, want[id])
		}
		if _, err := maintain.Expire(fresh.Store(), maintain.ExpireOptions{RetainMin: 1, RetainMax: 1}); err != nil {
			t.Fatal(err)
		}
		checkClean(t, fs, fresh, "after a rollback")
		if id == 2 {
			delete(versions, 2)
		}
	}
	// Commit on the rollback to the version-2 tag, drop the tags, expire
	// and clean: what is left is what the latest snapshot names.
	fresh, err := table.Open(fs, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	w, err = fresh.NewWriter("job2")
	if err != nil {
		t.Fatal(err)
	}
	for e := 50; e < 60; e++ {
		commitEpoch(t, fresh, w, epochOf(e), rowsOf(1, int64(5000+e))...)
	}
	final := mustRead(t, fresh)
	if strings.Count(final, "(") != 22 {
		t.Fatalf("after commits on the rollback:\n%s", final)
	}
	for id := range versions {
		if err := fresh.Store().Snapshots.DeleteTag("v" + id.String()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := maintain.Expire(fresh.Store(), maintain.ExpireOptions{RetainMin: 1, RetainMax: 1}); err != nil {
		t.Fatal(err)
	}
	// The files only the dropped tags named are orphans now.
	if _, err := fresh.OrphanFiles(0, false); err != nil {
		t.Fatal(err)
	}
	checkClean(t, fs, fresh, "without tags")
	if got := listFiles(t, fs); len(got) != 0 {
		t.Fatalf("list files left: %v", got)
	}
	if got := mustRead(t, fresh); got != final {
		t.Fatalf("at the end\n%s\nwant\n%s", got, final)
	}
}

// localTable creates a table of two buckets on a local directory (where
// deleting a directory by mistake fails) and a writer for it.
func localTable(t *testing.T) (fileio.FS, *table.Table, *write.Writer) {
	t.Helper()
	fs, err := fileio.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tb := newTable(t, fs, map[string]string{"bucket": "2"})
	w, err := tb.NewWriter("job")
	if err != nil {
		t.Fatal(err)
	}
	return fs, tb, w
}
