package table_test

import (
	"testing"

	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
	"github.com/stratadb/strata/table/snapshot"
)

// Tags of an inline-list snapshot and of a version-1 snapshot survive the
// expiration of their snapshots, keep what they reference, and roll back.
func TestTagsAcrossListFormats(t *testing.T) {
	fs := fileio.NewMem()
	tb := newTable(t, fs, map[string]string{"bucket": "2"})
	w, err := tb.NewWriter("job")
	if err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, tb, w, 1, rowsOf(4, 0)...)
	st := tb.Store()
	sn, err := st.Snapshots.Get(1)
	if err != nil {
		t.Fatal(err)
	}
	// Snapshot 1 as a version-1 file.
	writeVersion1(t, fs, st, sn)
	tb, err = table.Open(fs, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	st = tb.Store()
	want1 := mustRead(t, tb)
	if err := tb.CreateTag("v1", 1); err != nil {
		t.Fatal(err)
	}
	w, err = tb.NewWriter("job")
	if err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, tb, w, 2, rowsOf(3, 10)...)
	want2 := mustRead(t, tb)
	latest, err := st.Snapshots.Latest()
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.CreateTag("v2", latest.ID); err != nil {
		t.Fatal(err)
	}
	tag2, err := st.Snapshots.Tag("v2")
	if err != nil {
		t.Fatal(err)
	}
	if tag2.Version != snapshot.InlineManifestsVersion {
		t.Fatalf("tag v2 version %d", tag2.Version)
	}
	for e := 3; e < 60; e++ {
		commitEpoch(t, tb, w, epochOf(e), rowsOf(2, int64(100+e*10))...)
	}
	wantLast := mustRead(t, tb)
	if _, err := maintain.Expire(st, maintain.ExpireOptions{RetainMin: 1, RetainMax: 1}); err != nil {
		t.Fatal(err)
	}
	orphans, err := tb.OrphanFiles(0, true)
	if err != nil || len(orphans) != 0 {
		t.Fatalf("orphans with two tags: %v (%v)", orphans, err)
	}
	fresh, err := table.Open(fs, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, fresh); got != wantLast {
		t.Fatalf("latest after expiration\n%s\nwant\n%s", got, wantLast)
	}
	for _, c := range []struct{ tag, want string }{{"v1", want1}, {"v2", want2}, {"v1", want1}} {
		if _, err := fresh.RollbackToTag(c.tag, "admin"); err != nil {
			t.Fatalf("rollback to %s: %v", c.tag, err)
		}
		if got := mustRead(t, fresh); got != c.want {
			t.Fatalf("after rollback to %s\n%s\nwant\n%s", c.tag, got, c.want)
		}
		if _, err := maintain.Expire(fresh.Store(), maintain.ExpireOptions{RetainMin: 1, RetainMax: 1}); err != nil {
			t.Fatal(err)
		}
		if got := mustRead(t, fresh); got != c.want {
			t.Fatalf("after rollback to %s and expiration\n%s\nwant\n%s", c.tag, got, c.want)
		}
	}
	// Writing on top of the rollback, then dropping the tags: everything
	// but the latest content goes, and the latest still reads.
	w3, err := fresh.NewWriter("job2")
	if err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, fresh, w3, 70, rowsOf(1, 5000)...)
	want := mustRead(t, fresh)
	for _, n := range []string{"v1", "v2"} {
		if err := fresh.Store().Snapshots.DeleteTag(n); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := maintain.Expire(fresh.Store(), maintain.ExpireOptions{RetainMin: 1, RetainMax: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := fresh.OrphanFiles(0, false); err != nil {
		t.Fatal(err)
	}
	again, err := table.Open(fs, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, again); got != want {
		t.Fatalf("after dropping tags and cleaning\n%s\nwant\n%s", got, want)
	}
	if got := listFiles(t, fs); len(got) != 0 {
		t.Fatalf("list files left: %v", got)
	}
}
