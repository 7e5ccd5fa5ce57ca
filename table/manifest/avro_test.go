package manifest

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/hamba/avro/v2"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

func TestManifestRoundTripAndChecks(t *testing.T) {
	fs := fileio.NewMem()
	io := NewIO(fs, "db/t")
	entries := []Entry{
		{Kind: Add, Bucket: 3, File: DataFile{Name: "data-1.parquet", Size: 10, CRC: 7, Rows: 5, MinKey: []byte{1}, MaxKey: []byte{9}, MinSeq: 1, MaxSeq: 5, Level: 0, Epoch: 4}},
		{Kind: Delete, Bucket: 3, File: DataFile{Name: "data-0.parquet", MinKey: []byte{}, MaxKey: []byte{}}},
	}
	meta, err := io.WriteManifest(entries, 2)
	if err != nil {
		t.Fatal(err)
	}
	if meta.NumAdded != 1 || meta.NumDeleted != 1 || meta.SchemaID != 2 {
		t.Fatalf("meta = %+v", meta)
	}
	ref, err := io.WriteList([]FileMeta{meta})
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadEntries(ref)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, entries) {
		t.Fatalf("entries:\n got %+v\nwant %+v", got, entries)
	}
	fs.Corrupt(io.Path(meta.Name), int(meta.Size)-3)
	io = NewIO(fs, "db/t") // decoded manifests are cached: read afresh
	if _, err := io.ReadManifest(meta); !errors.Is(err, base.ErrChecksum) {
		t.Fatalf("corrupt manifest: %v", err)
	}
	fs.Truncate(io.Path(ref.Name), int(ref.Size)/2)
	if _, err := io.ReadList(ref); !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("truncated list: %v", err)
	}
}

func TestMerge(t *testing.T) {
	f := func(n string) DataFile { return DataFile{Name: n} }
	live, err := Merge([]Entry{{Add, 0, f("a")}, {Add, 0, f("b")}, {Add, 1, f("a")}, {Delete, 0, f("a")}, {Add, 0, f("c")}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range live {
		names = append(names, e.File.Name+"@"+string(rune('0'+e.Bucket)))
	}
	if !reflect.DeepEqual(names, []string{"b@0", "a@1", "c@0"}) {
		t.Fatalf("live = %v", names)
	}
	if _, err := Merge([]Entry{{Delete, 0, f("x")}}); err == nil {
		t.Fatal("delete of a non-live file passed")
	}
}

// TestListCache checks that a manifest list is decoded once per IO: a
// second read is served from the cache (it survives the file's
// corruption), the lists an IO wrote are cached from what it encoded, a
// caller's append to a returned slice does not reach the cache, and the
// cache is bounded.
func TestListCache(t *testing.T) {
	fs := fileio.NewMem()
	w := NewIO(fs, "db/t")
	metas := []FileMeta{{Name: "manifest-a", Size: 1, NumAdded: 2}, {Name: "manifest-b", Size: 3, NumDeleted: 1}}
	ref, err := w.WriteList(metas)
	if err != nil {
		t.Fatal(err)
	}
	metas[0].Name = "changed after the write"
	r := NewIO(fs, "db/t")
	for i, io := range []*IO{w, r} {
		got, err := io.ReadList(ref)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Name != "manifest-a" || got[1].NumDeleted != 1 {
			t.Fatalf("IO %d: read %+v", i, got)
		}
		_ = append(got, FileMeta{Name: "appended"})
	}
	fs.Truncate(r.Path(ref.Name), int(ref.Size)/2)
	for i, io := range []*IO{w, r} {
		got, err := io.ReadList(ref)
		if err != nil || len(got) != 2 || got[0].Name != "manifest-a" {
			t.Fatalf("IO %d: cached read of a list truncated since: %+v, %v", i, got, err)
		}
	}
	if _, err := NewIO(fs, "db/t").ReadList(ref); !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("uncached read of the truncated list: %v", err)
	}
	var c cache[FileMeta]
	for i := range 10 {
		c.put(string(rune('a'+i)), make([]FileMeta, 3), 12)
	}
	if _, ok := c.get("a"); ok || c.items > 12 || len(c.byName) != 4 {
		t.Fatalf("bounded cache: %d items in %d lists, first kept: %v", c.items, len(c.byName), ok)
	}
	if _, ok := c.get("j"); !ok {
		t.Fatal("newest list evicted")
	}
}

// TestReadsManifestsWithoutNoRetracts: a manifest written with the
// DataFile schema before no_retracts existed reads, with NoRetracts unset
// (unknown), and one written now keeps the flag.
func TestReadsManifestsWithoutNoRetracts(t *testing.T) {
	old := strings.Replace(dataFileSchema, `,
 {"name":"no_retracts","type":"boolean","default":false}`, "", 1)
	if old == dataFileSchema {
		t.Fatal("the schema has no no_retracts field to leave out")
	}
	oldSchema := avro.MustParse(`{"type":"record","name":"Entry","namespace":"strata.manifest","fields":[
 {"name":"kind","type":"int"},
 {"name":"bucket","type":"int"},
 {"name":"file","type":` + old + `}]}`)
	file := DataFile{Name: "data-1.parquet", Size: 10, Rows: 5, MinKey: []byte{1}, MaxKey: []byte{9}, MinSeq: 1, MaxSeq: 5}
	data, err := encodeOCF(oldSchema, []avroEntry{{Kind: int32(Add), Bucket: 1, File: file}})
	if err != nil {
		t.Fatal(err)
	}
	fs := fileio.NewMem()
	if err := fs.WriteFile("db/t/manifest/manifest-old", data); err != nil {
		t.Fatal(err)
	}
	io := NewIO(fs, "db/t")
	got, err := io.ReadManifest(FileMeta{Name: "manifest-old", Size: int64(len(data)), CRC: int64(fileio.Checksum(data))})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].File.Name != file.Name || got[0].File.Rows != 5 || got[0].File.NoRetracts {
		t.Fatalf("old manifest read as %+v", got)
	}
	file.NoRetracts = true
	meta, err := io.WriteManifest([]Entry{{Kind: Add, Bucket: 1, File: file}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, err = NewIO(fs, "db/t").ReadManifest(meta)
	if err != nil || len(got) != 1 || !got[0].File.NoRetracts {
		t.Fatalf("new manifest read as %+v, %v", got, err)
	}
}

// An inline manifest reads as its entries, in lists inline or mixed with
// manifest files; a meta both named and inline, or inline without
// entries, is corrupt; a list file cannot hold an inline manifest.
func TestInlineManifests(t *testing.T) {
	fs := fileio.NewMem()
	io := NewIO(fs, "db/t")
	file := []Entry{{Kind: Add, Bucket: 0, File: DataFile{Name: "data-0.parquet", MinKey: []byte{}, MaxKey: []byte{}}}}
	meta, err := io.WriteManifest(file, 1)
	if err != nil {
		t.Fatal(err)
	}
	small := []Entry{
		{Kind: Delete, Bucket: 0, File: DataFile{Name: "data-0.parquet"}},
		{Kind: Add, Bucket: 2, File: DataFile{Name: "data-1.parquet", Rows: 4}},
	}
	inline := InlineManifest(small, 1)
	if inline.Name != "" || inline.Size != 0 || inline.NumAdded != 1 || inline.NumDeleted != 1 {
		t.Fatalf("inline meta %+v", inline)
	}
	got, err := NewIO(fs, "db/t").ReadEntries(InlineList([]FileMeta{meta, inline}))
	if err != nil {
		t.Fatal(err)
	}
	if want := append(slices.Clone(file), small...); !reflect.DeepEqual(got, want) {
		t.Fatalf("entries:\n got %+v\nwant %+v", got, want)
	}
	live, err := Merge(got)
	if err != nil || len(live) != 1 || live[0].File.Name != "data-1.parquet" {
		t.Fatalf("live %+v (%v)", live, err)
	}
	both := meta
	both.Entries = small
	if _, err := io.ReadManifest(both); !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "both named and inline") {
		t.Fatalf("named and inline: %v", err)
	}
	if _, err := io.ReadManifest(FileMeta{NumAdded: 1}); !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "without entries") {
		t.Fatalf("inline without entries: %v", err)
	}
	if _, err := io.WriteList([]FileMeta{meta, inline}); !errors.Is(err, base.ErrInvalidArgument) || !strings.Contains(err.Error(), "manifest 1 is inline") {
		t.Fatalf("list file with an inline manifest: %v", err)
	}
	if err := CheckInline([]FileMeta{meta, inline}); err != nil {
		t.Fatal(err)
	}
}
