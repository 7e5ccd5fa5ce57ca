package store

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
)

func testStore(t *testing.T, fs fileio.FS, c *Cache) (*Store, *schema.Schema) {
	t.Helper()
	st := New(fs, "t")
	st.SetCache(c)
	sc, err := schema.New([]schema.Field{{Name: "k", Type: types.Int64}, {Name: "s", Type: types.Text, Nullable: true}}, []string{"k"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Schemas.Commit(sc); err != nil {
		t.Fatal(err)
	}
	return st, sc
}

// block returns n records with text values of width bytes, all starting
// with tag.
func block(sc *schema.Schema, n, width int, tag string) *record.Block {
	b := record.NewBlock(sc.Types(), true, n)
	for i := 0; i < n; i++ {
		row := types.Row{types.NewInt64(int64(i)), types.NewText(tag + strings.Repeat("x", width-len(tag)))}
		b.AppendRow(types.EncodeKey(nil, row, sc.KeyIndexes(), sc.KeyTypes()), base.SeqNum(i+1), types.Insert, row)
	}
	return b
}

// TestCacheBytesBound ([cache-bytes]): the files two stores cache in one
// cache stay within its capacity in bytes, the least recently used going
// first whoever cached it; a file larger than the capacity is read but
// not kept.
func TestCacheBytesBound(t *testing.T) {
	fsA, fsB := fileio.NewMem(), fileio.NewMem()
	_, sc0 := testStore(t, fileio.NewMem(), NewCache(1<<30))
	one := block(sc0, 100, 100, "").Bytes()
	c := NewCache(3*one + one/2) // room for three files
	a, sc := testStore(t, fsA, c)
	b, _ := testStore(t, fsB, c)
	var files []manifest.DataFile
	for i := 0; i < 3; i++ {
		df, err := a.WriteFile(0, "data", sc, block(sc, 100, 100, fmt.Sprint("a", i)), 1, 1)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, df)
	}
	if bytes, n := c.Size(); n != 3 || bytes != 3*one {
		t.Fatalf("cache holds %d files, %d bytes; want 3, %d", n, bytes, 3*one)
	}
	// Using a's first file makes its second the least recently used.
	if _, err := a.ReadBlock(0, files[0], sc); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WriteFile(0, "data", sc, block(sc, 100, 100, "b"), 1, 1); err != nil {
		t.Fatal(err)
	}
	if bytes, n := c.Size(); n != 3 || bytes > 3*one+one/2 {
		t.Fatalf("cache holds %d files, %d bytes over capacity %d", n, bytes, 3*one+one/2)
	}
	if _, ok := c.get(cacheKey{owner: a.id, path: a.DataPath(0, files[1].Name), schema: sc.ID}); ok {
		t.Fatal("the least recently used file stayed")
	}
	for _, i := range []int{0, 2} {
		if _, ok := c.get(cacheKey{owner: a.id, path: a.DataPath(0, files[i].Name), schema: sc.ID}); !ok {
			t.Fatalf("file %d went", i)
		}
	}
	// Too large for the whole cache: read, not kept.
	big, err := b.WriteFile(0, "data", sc, block(sc, 500, 100, "big"), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	fresh := New(fsB, "t")
	fresh.SetCache(c)
	blk, err := fresh.ReadBlock(0, big, sc)
	if err != nil || blk.Len() != 500 {
		t.Fatalf("read of the large file: %v", err)
	}
	if _, n := fresh.CachedBytes(); n != 0 {
		t.Fatal("a file larger than the cache was kept")
	}
}

// TestCacheOwners: a store sees only the files it cached itself (a
// second handle of a table starts empty); a store's row bound evicts its
// own files only; CacheRows 0 keeps nothing; Forget and dropOwner drop a
// store's files.
func TestCacheOwners(t *testing.T) {
	fsA, fsB := fileio.NewMem(), fileio.NewMem()
	c := NewCache(1 << 30)
	a, sc := testStore(t, fsA, c)
	b, _ := testStore(t, fsB, c)
	fa, err := a.WriteFile(0, "data", sc, block(sc, 10, 20, "from-a"), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	other := block(sc, 10, 20, "from-b")
	if _, err := b.WriteFile(0, "data", sc, other, 1, 1); err != nil {
		t.Fatal(err)
	}
	// A second handle of a's table starts with nothing cached, and caches
	// what it reads under its own name.
	a2 := New(fsA, "t")
	a2.SetCache(c)
	if _, n := a2.CachedBytes(); n != 0 {
		t.Fatalf("a fresh handle sees %d cached files", n)
	}
	if got, err := a2.ReadBlock(0, fa, sc); err != nil || !strings.HasPrefix(got.Cols[1].Strs[0], "from-a") {
		t.Fatalf("second handle read: %v", err)
	}
	if _, n := a2.CachedBytes(); n != 1 {
		t.Fatalf("the second handle caches %d files", n)
	}
	c.dropOwner(a2.id)
	// a may keep 25 rows: its third file pushes out its first, not b's.
	a.CacheRows = 25
	fa2, _ := a.WriteFile(0, "data", sc, block(sc, 10, 20, "a2"), 1, 1)
	if _, n := a.CachedBytes(); n != 2 {
		t.Fatalf("a keeps %d files", n)
	}
	if _, err := a.WriteFile(0, "data", sc, block(sc, 10, 20, "a3"), 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, n := a.CachedBytes(); n != 2 {
		t.Fatalf("a keeps %d files under a bound of 25 rows", n)
	}
	if _, n := b.CachedBytes(); n != 1 {
		t.Fatalf("b keeps %d files after a's eviction", n)
	}
	a.Forget(0, []manifest.DataFile{fa2})
	if _, n := a.CachedBytes(); n != 1 {
		t.Fatalf("a keeps %d files after Forget", n)
	}
	c.dropOwner(a.id)
	if _, n := a.CachedBytes(); n != 0 {
		t.Fatalf("a keeps %d files after dropOwner", n)
	}
	if bytes, n := c.Size(); n != 1 || bytes != other.Bytes() {
		t.Fatalf("cache holds %d files, %d bytes; want b's only", n, bytes)
	}
	// CacheRows 0: nothing kept.
	off, _ := testStore(t, fileio.NewMem(), c)
	off.CacheRows = 0
	if _, err := off.WriteFile(0, "data", sc, block(sc, 10, 20, "off"), 1, 1); err != nil {
		t.Fatal(err)
	}
	if _, n := off.CachedBytes(); n != 0 {
		t.Fatal("a store with CacheRows 0 cached a file")
	}
}
