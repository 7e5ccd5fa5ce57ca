package snapshot

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
)

// countingFS counts the reads of each file.
type countingFS struct {
	fileio.FS
	mu    sync.Mutex
	reads map[string]int // guarded by mu
}

func newCountingFS() *countingFS {
	return &countingFS{FS: fileio.NewMem(), reads: map[string]int{}}
}

func (c *countingFS) ReadFile(p string) ([]byte, error) {
	c.mu.Lock()
	c.reads[p]++
	c.mu.Unlock()
	return c.FS.ReadFile(p)
}

// readsOf returns how often snapshot id of table t was read.
func (c *countingFS) readsOf(id base.SnapshotID) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.reads[NewManager(nil, "t").Path(id)]
}

// testSnapshot is snapshot id with an inline list and a watermark.
func testSnapshot(id base.SnapshotID) *Snapshot {
	w := int64(id) * 1000
	return &Snapshot{
		ID: id, Epoch: base.Epoch(id), CommitKind: Append, CommitUser: "job", CommitIdentifier: uint64(id),
		DeltaManifestList: manifest.InlineList([]manifest.FileMeta{{Name: fmt.Sprintf("manifest-%d", id), Size: 10, NumAdded: 1}}),
		Watermark:         &w,
	}
}

func publishAll(t *testing.T, m *Manager, ids ...base.SnapshotID) {
	t.Helper()
	for _, id := range ids {
		if err := m.Publish(testSnapshot(id)); err != nil {
			t.Fatal(err)
		}
	}
}

// A manager decodes a snapshot file once: the publishing manager never
// reads it, another one reads it at its first Get; both return what the
// file holds.
func TestGetReadsOnce(t *testing.T) {
	fs := newCountingFS()
	writer := NewManager(fs, "t")
	publishAll(t, writer, 1, 2, 3)
	reader := NewManager(fs, "t")
	var first *Snapshot
	for i := range 3 {
		s, err := reader.Get(2)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = s
		} else if !reflect.DeepEqual(s, first) {
			t.Fatalf("Get %d = %+v, want %+v", i, s, first)
		}
	}
	if n := fs.readsOf(2); n != 1 {
		t.Fatalf("3 Gets of snapshot 2 read its file %d times, want 1", n)
	}
	s, err := writer.Get(2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(s, first) {
		t.Fatalf("the publisher's snapshot 2 = %+v, the file's %+v", s, first)
	}
	if n := fs.readsOf(2); n != 1 {
		t.Fatalf("the publisher read snapshot 2 (%d reads in all)", n)
	}
	if s.Version != InlineListsVersion || *s.Watermark != 2000 || s.DeltaManifestList.Metas[0].Name != "manifest-2" {
		t.Fatalf("snapshot 2 = %+v", s)
	}
}

// A caller changing the snapshot Get returned changes no later Get.
func TestGetReturnsACopy(t *testing.T) {
	fs := newCountingFS()
	m := NewManager(fs, "t")
	publishAll(t, m, 1)
	for range 2 {
		s, err := m.Get(1)
		if err != nil {
			t.Fatal(err)
		}
		if s.Epoch != 1 || *s.Watermark != 1000 || s.CommitUser != "job" || len(s.DeltaManifestList.Metas) != 1 {
			t.Fatalf("Get(1) = %+v", s)
		}
		s.Epoch = 99
		*s.Watermark = 99
		s.CommitUser = "other"
		s.DeltaManifestList.Metas = append(s.DeltaManifestList.Metas, manifest.FileMeta{Name: "extra"})
	}
}

// Delete forgets the snapshot; a file deleted or replaced elsewhere (by
// another process's expiration, or a table dropped and created again) is
// noticed by the next Get.
func TestGetAfterDelete(t *testing.T) {
	fs := newCountingFS()
	m := NewManager(fs, "t")
	publishAll(t, m, 1, 2, 3)
	if err := m.Delete(1); err != nil {
		t.Fatal(err)
	}
	if s, err := m.Get(1); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("Get of deleted snapshot 1 = %+v, %v; want not found", s, err)
	}
	if n := m.decoded.len(); n != 2 {
		t.Fatalf("%d snapshots cached after deleting 1 of 3", n)
	}

	// Another manager deletes snapshot 2 and publishes another one.
	other := NewManager(fs, "t")
	if err := other.Delete(2); err != nil {
		t.Fatal(err)
	}
	if s, err := m.Get(2); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("Get of snapshot 2 deleted elsewhere = %+v, %v; want not found", s, err)
	}
	again := testSnapshot(2)
	again.Epoch = 7
	if err := other.Publish(again); err != nil {
		t.Fatal(err)
	}
	if s, err := m.Get(2); err != nil || s.Epoch != 7 {
		t.Fatalf("Get of snapshot 2 published again = %+v, %v; want epoch 7", s, err)
	}
	if s, err := m.Get(3); err != nil || s.Epoch != 3 {
		t.Fatalf("Get(3) = %+v, %v", s, err)
	}
}

// The cache keeps the newest maxCached snapshots.
func TestCacheBound(t *testing.T) {
	fs := newCountingFS()
	m := NewManager(fs, "t")
	const n = maxCached + 10
	for id := base.SnapshotID(1); id <= n; id++ {
		publishAll(t, m, id)
	}
	if got := m.decoded.len(); got != maxCached {
		t.Fatalf("%d snapshots cached, want %d", got, maxCached)
	}
	for _, id := range []base.SnapshotID{n, n - maxCached + 1, 10, 1} {
		if s, err := m.Get(id); err != nil || s.ID != id {
			t.Fatalf("Get(%d) = %+v, %v", id, s, err)
		}
	}
	for id, want := range map[base.SnapshotID]int{n: 0, n - maxCached + 1: 0, 10: 1, 1: 1} {
		if got := fs.readsOf(id); got != want {
			t.Errorf("snapshot %d read %d times, want %d", id, got, want)
		}
	}
	if got := m.decoded.len(); got != maxCached {
		t.Fatalf("%d snapshots cached after reading old ones, want %d", got, maxCached)
	}
}

// Concurrent Gets, changes to their results and Deletes (run with -race).
func TestGetConcurrent(t *testing.T) {
	fs := newCountingFS()
	writer := NewManager(fs, "t")
	const n = 20
	for id := base.SnapshotID(1); id <= n; id++ {
		publishAll(t, writer, id)
	}
	m := NewManager(fs, "t")
	var wg sync.WaitGroup
	errs := make(chan error, 8*n)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 * n {
				id := base.SnapshotID(i%n + 1)
				s, err := m.Get(id)
				if id <= n/2 && errors.Is(err, base.ErrNotFound) {
					continue // deleted meanwhile
				}
				if err != nil || s.ID != id || s.Epoch != base.Epoch(id) || *s.Watermark != int64(id)*1000 {
					errs <- fmt.Errorf("goroutine %d: Get(%d) = %+v, %v", g, id, s, err)
					return
				}
				s.Epoch = 0
				*s.Watermark = 0
			}
		}()
	}
	for id := base.SnapshotID(1); id <= n/2; id++ {
		if err := m.Delete(id); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for id := base.SnapshotID(1); id <= n; id++ {
		_, err := m.Get(id)
		if deleted := id <= n/2; deleted != errors.Is(err, base.ErrNotFound) || (!deleted && err != nil) {
			t.Errorf("Get(%d) after the deletes: %v", id, err)
		}
	}
	for id := base.SnapshotID(n/2 + 1); id <= n; id++ {
		if got := fs.readsOf(id); got > 8 {
			t.Errorf("snapshot %d read %d times by 8 goroutines", id, got)
		}
	}
}
