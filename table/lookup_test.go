package table_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/scan"
)

func TestLookup(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), map[string]string{"bucket": "4", "write-only": "true"})
	w, _ := tb.NewWriter("job")
	commitEpoch(t, tb, w, 1, rowsOf(50, 0)...)
	w.Write(2, types.Delete, row(7, 0, ""))
	w.Write(2, types.UpdateAfter, row(8, 80, "eight"))
	msgs, _ := w.PrepareCommit(2)
	tb.Commit(msgs)
	for k, want := range map[int64]string{3: "(3, 3, v3)", 7: "", 8: "(8, 80, eight)", 99: ""} {
		got, err := tb.Lookup(types.Row{types.NewInt64(k)})
		if err != nil {
			t.Fatal(err)
		}
		s := ""
		if got != nil {
			s = got.String()
		}
		if s != want {
			t.Errorf("lookup %d = %q, want %q", k, s, want)
		}
	}
	if _, err := tb.Lookup(types.Row{}); !errors.Is(err, base.ErrInvalidArgument) {
		t.Errorf("lookup without key: %v", err)
	}
}

func TestStreamNeedsChangelog(t *testing.T) {
	tb, err := table.Create(fileio.NewMem(), "t", testFields, []string{"k"}, map[string]string{"changelog-producer": "none"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.StreamFrom(scan.Position{}, ""); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("stream without changelog: %v", err)
	}
}

// The input producer stores the rows as written: exact when the input is
// a full changelog.
func TestInputChangelogProducer(t *testing.T) {
	tb, err := table.Create(fileio.NewMem(), "t", testFields, []string{"k"}, map[string]string{"changelog-producer": "input"})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := tb.NewWriter("job")
	w.Write(1, types.Insert, row(1, 1, "a"))
	w.Write(1, types.UpdateBefore, row(1, 1, "a"))
	w.Write(1, types.UpdateAfter, row(1, 2, "b"))
	msgs, _ := w.PrepareCommit(1)
	tb.Commit(msgs)
	s, _ := tb.StreamFrom(scan.Position{}, "")
	b, ok, err := s.Next()
	if err != nil || !ok || len(b.Changes) != 3 || b.Changes[1].Kind != types.UpdateBefore || b.Changes[2].Row[2].Str() != "b" {
		t.Fatalf("input changelog %+v %v", b.Changes, err)
	}
}

// TestChangelogSharesDataFile ([changelog-shares-data]): an epoch that
// only inserts new keys has its data file as its changelog file, named by
// both manifests; an epoch that changes a key writes a changelog file of
// its own. The stream reads the same changes either way, and expiration
// after a compaction deletes a shared file once no retained snapshot
// names it, and no file that one still does.
func TestChangelogSharesDataFile(t *testing.T) {
	fs := fileio.NewMem()
	tb := newTable(t, fs, map[string]string{"bucket": "1", "write-only": "true", "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "3"})
	w, err := tb.NewWriter("job")
	if err != nil {
		t.Fatal(err)
	}
	st := tb.Store()
	// names returns the data files a snapshot's delta adds and the files
	// its changelog names.
	names := func(id base.SnapshotID) (data, changelog []string) {
		t.Helper()
		sn, err := st.Snapshots.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		for i, ref := range []manifest.FileRef{sn.DeltaManifestList, sn.ChangelogManifestList} {
			entries, err := st.Manifests.ReadEntries(ref)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Kind != manifest.Add {
					continue
				}
				if i == 0 {
					data = append(data, e.File.Name)
				} else {
					changelog = append(changelog, e.File.Name)
				}
			}
		}
		return data, changelog
	}
	ids := commitEpoch(t, tb, w, 1, rowsOf(50, 0)...)
	data, cl := names(ids[0])
	if len(data) != 1 || !slices.Equal(data, cl) {
		t.Fatalf("an insert-only epoch: data %v, changelog %v", data, cl)
	}
	shared := data[0]
	w.Write(2, types.UpdateAfter, row(3, 30, "thirty"))
	w.Write(2, types.Insert, row(100, 1, "new"))
	msgs, err := w.PrepareCommit(2)
	if err != nil {
		t.Fatal(err)
	}
	ids, err = tb.Commit(msgs)
	if err != nil {
		t.Fatal(err)
	}
	data, cl = names(ids[0])
	if len(data) != 1 || len(cl) != 1 || data[0] == cl[0] || !strings.HasPrefix(cl[0], "changelog-") {
		t.Fatalf("an epoch that updates a key: data %v, changelog %v", data, cl)
	}
	ids = commitEpoch(t, tb, w, 3, rowsOf(10, 200)...)
	if data, cl = names(ids[0]); len(data) != 1 || !slices.Equal(data, cl) {
		t.Fatalf("a second insert-only epoch: data %v, changelog %v", data, cl)
	}
	kinds := map[types.RowKind]int{}
	var updated string
	for _, c := range streamChanges(t, tb) {
		kinds[c.Kind]++
		if c.Kind == types.UpdateAfter {
			updated = c.Row.String()
		}
	}
	if kinds[types.Insert] != 61 || kinds[types.UpdateBefore] != 1 || kinds[types.UpdateAfter] != 1 || updated != "(3, 30, thirty)" || len(kinds) != 3 {
		t.Fatalf("stream: %v, update %s", kinds, updated)
	}
	// A full compaction replaces the shared file; it stays while epoch 1's
	// snapshot is retained, and goes with it.
	if _, err := tb.Compact("compactor", true); err != nil {
		t.Fatal(err)
	}
	path := st.DataPath(0, shared)
	if ok, err := fs.Exists(path); err != nil || !ok {
		t.Fatalf("the shared file went while its snapshot is retained: %v %v", ok, err)
	}
	for e := 4; e <= 7; e++ {
		commitEpoch(t, tb, w, epochOf(e), rowsOf(1, int64(1000+e))...)
		if _, err := tb.Expire(); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := fs.Exists(path); err != nil || ok {
		t.Fatalf("the shared file outlived every snapshot naming it: %v %v", ok, err)
	}
	if orphans, err := tb.OrphanFiles(0, true); err != nil || len(orphans) != 0 {
		t.Fatalf("orphans %v (%v)", orphans, err)
	}
	rows, err := tb.ReadLatest()
	if err != nil || len(rows) != 65 {
		t.Fatalf("%d rows after expiration (%v)", len(rows), err)
	}
}
