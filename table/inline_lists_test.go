package table_test

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// listFiles returns the manifest list files of the table at wh/db/t.
func listFiles(t *testing.T, fs fileio.FS) []string {
	t.Helper()
	files, err := fs.List("wh/db/t/" + manifest.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if strings.HasPrefix(f.Name, "manifest-list-") {
			out = append(out, f.Name)
		}
	}
	return out
}

// writeVersion1 rewrites snapshot sn as a version before inline lists wrote
// it: each manifest and each list in a file of its own, format version 1.
func writeVersion1(t *testing.T, fs fileio.FS, st *store.Store, sn *snapshot.Snapshot) {
	t.Helper()
	rewriteSnapshot(t, fs, st, sn, true)
}

// writeVersion2 rewrites snapshot sn as a version before inline manifests
// wrote it: each manifest in a file of its own, the lists inline, format
// version 2.
func writeVersion2(t *testing.T, fs fileio.FS, st *store.Store, sn *snapshot.Snapshot) {
	t.Helper()
	rewriteSnapshot(t, fs, st, sn, false)
}

// rewriteSnapshot rewrites snapshot sn with its inline manifests written
// as manifest files and, with listFiles, its lists too, under the version
// that wrote that form.
func rewriteSnapshot(t *testing.T, fs fileio.FS, st *store.Store, sn *snapshot.Snapshot, listFiles bool) {
	t.Helper()
	legacy := *sn
	legacy.Version = snapshot.InlineListsVersion
	if listFiles {
		legacy.Version = snapshot.FormatVersion
	}
	for _, ref := range []*manifest.FileRef{&legacy.BaseManifestList, &legacy.DeltaManifestList, &legacy.ChangelogManifestList} {
		if ref.IsZero() {
			*ref = manifest.FileRef{}
			continue
		}
		metas := make([]manifest.FileMeta, len(ref.Metas))
		for i, m := range ref.Metas {
			metas[i] = m
			if m.Inline() {
				named, err := st.Manifests.WriteManifest(m.Entries, m.SchemaID)
				if err != nil {
					t.Fatal(err)
				}
				metas[i] = named
			}
		}
		if !listFiles {
			*ref = manifest.InlineList(metas)
			continue
		}
		named, err := st.Manifests.WriteList(metas)
		if err != nil {
			t.Fatal(err)
		}
		*ref = named
	}
	b, err := fileio.EncodeJSON(&legacy)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile(st.Snapshots.Path(sn.ID), b); err != nil {
		t.Fatal(err)
	}
}

// A commit keeps its manifest lists inline in the snapshot (format version
// 2, or 3 with inline manifests) and writes no list file; a snapshot of format version 1, whose lists
// are files, still reads, takes commits on top, and its list files go with
// it when it expires.
func TestInlineManifestLists(t *testing.T) {
	fs := fileio.NewMem()
	tb := newTable(t, fs, map[string]string{"bucket": "2"})
	w, err := tb.NewWriter("job")
	if err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, tb, w, 1, rowsOf(4, 0)...)
	if got := listFiles(t, fs); len(got) != 0 {
		t.Fatalf("a commit wrote list files %v", got)
	}
	st := tb.Store()
	sn, err := st.Snapshots.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	if sn.Version != snapshot.InlineManifestsVersion || !sn.DeltaManifestList.Inline() || !sn.ChangelogManifestList.Inline() {
		t.Fatalf("snapshot 1: version %d, delta %+v, changelog %+v", sn.Version, sn.DeltaManifestList, sn.ChangelogManifestList)
	}
	want1 := mustRead(t, tb)

	// Rewrite snapshot 1 as an older version wrote it: lists in files.
	writeVersion1(t, fs, st, sn)
	if got := listFiles(t, fs); len(got) != 2 {
		t.Fatalf("legacy snapshot: list files %v, want delta and changelog", got)
	}

	// A fresh process reads it and commits on top.
	fresh, err := table.Open(fs, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, fresh); got != want1 {
		t.Fatalf("legacy snapshot reads\n%s\nwant\n%s", got, want1)
	}
	w2, err := fresh.NewWriter("job")
	if err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, fresh, w2, 2, rowsOf(3, 10)...)
	commitEpoch(t, fresh, w2, 3, rowsOf(2, 20)...)
	want := mustRead(t, fresh)
	if strings.Count(want, "(") != 9 {
		t.Fatalf("after two commits on the legacy snapshot:\n%s", want)
	}

	// The legacy lists stay while snapshot 1 does and go with it.
	if _, err := maintain.Expire(fresh.Store(), maintain.ExpireOptions{RetainMin: 2, RetainMax: 2}); err != nil {
		t.Fatal(err)
	}
	if got := listFiles(t, fs); len(got) != 0 {
		t.Fatalf("expiring snapshot 1 left its list files %v", got)
	}
	if got := mustRead(t, fresh); got != want {
		t.Fatalf("after expiration\n%s\nwant\n%s", got, want)
	}
	orphans, err := fresh.OrphanFiles(0, true)
	if err != nil || len(orphans) != 0 {
		t.Fatalf("orphans after expiration: %v (%v)", orphans, err)
	}

	// A version-1 file that holds an inline list is refused.
	bad := *sn
	bad.Version = snapshot.FormatVersion
	b, err := fileio.EncodeJSON(&bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile("wh/db/t/snapshot/snapshot-1", b); err != nil {
		t.Fatal(err)
	}
	// Read by a manager that has not decoded snapshot 1 before: a manager
	// keeps the snapshots it decoded, since their files never change.
	if _, err := snapshot.NewManager(fs, "wh/db/t").Get(1); err == nil || !strings.Contains(err.Error(), "inline manifest list in format version 1") {
		t.Fatalf("version 1 with an inline list: %v", err)
	}
}
