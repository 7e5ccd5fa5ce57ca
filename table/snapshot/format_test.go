package snapshot

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
)

// A snapshot is written with the lowest version that holds what it holds
// (1: lists in files, 2: inline lists, 3: inline manifests) and reads back
// as written; a file whose version does not allow what it holds, of an
// unknown version, or with a malformed inline manifest is refused as
// corrupt, naming what is wrong.
func TestInlineManifestFormat(t *testing.T) {
	fs := fileio.NewMem()
	m := NewManager(fs, "t")
	entries := []manifest.Entry{
		{Kind: manifest.Add, Bucket: 1, File: manifest.DataFile{Name: "data-a.parquet", Rows: 3, MinKey: []byte{1}, MaxKey: []byte{2}, MinSeq: 1, MaxSeq: 3}},
		{Kind: manifest.Delete, Bucket: 0, File: manifest.DataFile{Name: "data-b.parquet", MinKey: []byte{}, MaxKey: []byte{}}},
	}
	named := manifest.FileMeta{Name: "manifest-x", Size: 10, CRC: 4, NumAdded: 1}
	inline := manifest.InlineManifest(entries, 2)
	if inline.NumAdded != 1 || inline.NumDeleted != 1 || inline.SchemaID != 2 || !inline.Inline() {
		t.Fatalf("inline manifest %+v", inline)
	}
	for i, c := range []struct {
		base, delta manifest.FileRef
		want        int
	}{
		{manifest.FileRef{Name: "manifest-list-a", Size: 5}, manifest.FileRef{}, FormatVersion},
		{manifest.InlineList([]manifest.FileMeta{named}), manifest.FileRef{}, InlineListsVersion},
		{manifest.InlineList([]manifest.FileMeta{named}), manifest.InlineList([]manifest.FileMeta{inline}), InlineManifestsVersion},
	} {
		s := &Snapshot{ID: base.SnapshotID(i + 1), BaseManifestList: c.base, DeltaManifestList: c.delta, CommitKind: Append}
		if err := m.Publish(s); err != nil {
			t.Fatal(err)
		}
		got, err := m.Get(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != c.want || !reflect.DeepEqual(got, s) {
			t.Fatalf("snapshot %d: version %d, want %d; read\n%+v\nwrote\n%+v", s.ID, got.Version, c.want, got, s)
		}
	}

	bad := func(mutate func(s *Snapshot)) *Snapshot {
		s := &Snapshot{ID: 9, Version: InlineManifestsVersion, CommitKind: Append,
			BaseManifestList:  manifest.InlineList([]manifest.FileMeta{named}),
			DeltaManifestList: manifest.InlineList([]manifest.FileMeta{manifest.InlineManifest(slices.Clone(entries), 2)})}
		mutate(s)
		return s
	}
	for _, c := range []struct {
		s    *Snapshot
		want string
	}{
		{bad(func(s *Snapshot) { s.Version = 4 }), "unknown format version 4"},
		{bad(func(s *Snapshot) { s.Version = InlineListsVersion }), "an inline manifest in format version 2"},
		{bad(func(s *Snapshot) { s.Version = FormatVersion }), "an inline manifest list in format version 1"},
		{bad(func(s *Snapshot) { s.DeltaManifestList.Metas[0].Name = "manifest-y" }), "manifest manifest-y is both named and inline"},
		{bad(func(s *Snapshot) { s.DeltaManifestList.Metas[0].Entries = nil }), "inline but holds no entries"},
		{bad(func(s *Snapshot) { s.DeltaManifestList.Metas[0].Size = 7 }), "inline but has a size or CRC"},
		{bad(func(s *Snapshot) { s.DeltaManifestList.Metas[0].Entries[1].Kind = 5 }), "entry 1 has kind 5"},
		{bad(func(s *Snapshot) { s.BaseManifestList.Name = "manifest-list-b" }), "manifest list manifest-list-b is both named and inline"},
	} {
		b, err := fileio.EncodeJSON(c.s)
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.WriteFile(m.Path(9), b); err != nil {
			t.Fatal(err)
		}
		_, err = m.Get(9)
		if !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "snapshot-9") {
			t.Errorf("want %q: %v", c.want, err)
		}
	}
}
