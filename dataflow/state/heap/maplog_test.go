package heap

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
)

// mapsEqual reports how a and b's map entries differ ("" when equal).
func mapsEqual(a, b *Backend) string {
	if len(a.m) != len(b.m) {
		return fmt.Sprintf("%d namespaces against %d", len(a.m), len(b.m))
	}
	for ns, inner := range a.m {
		if !maps.EqualFunc(inner, b.m[ns], func(x, y []byte) bool { return string(x) == string(y) }) {
			return fmt.Sprintf("namespace %q: %d entries against %d, or different values", ns, len(inner), len(b.m[ns]))
		}
	}
	return ""
}

// newFiles lists the files of dir not in before, with their sizes.
func newFiles(t *testing.T, dir string, before map[string]int64) map[string]int64 {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, e := range es {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := before[e.Name()]; !ok {
			out[e.Name()] = info.Size()
		}
		before[e.Name()] = info.Size()
	}
	return out
}

// TestMapSnapshotsAreIncremental: after the first snapshot of a map state
// (a base file), a snapshot writes only the entries changed since the one
// before (change records, carried in the handle until they fill a file),
// a new base comes once the changes outweigh the base, and every handle
// restores exactly the map entries it captured, through restores that go
// on snapshotting from what they restored.
func TestMapSnapshotsAreIncremental(t *testing.T) {
	defer func(n int) { inlineTail = n }(inlineTail)
	inlineTail = 4 << 10
	files, dir := sharedFiles(t)
	seen := map[string]int64{}
	b := New()
	val := strings.Repeat("v", 40)
	for i := range 3000 {
		ns := fmt.Appendf(nil, "join-%02d", i%30)
		if err := b.Set(ns, fmt.Appendf(nil, "row-%05d", i), []byte(val)); err != nil {
			t.Fatal(err)
		}
	}
	h := finish(t, mustSnapshot(t, b, 1, files))
	first := newFiles(t, dir, seen)
	var baseSize int64
	for name, size := range first {
		if strings.HasSuffix(name, ".maps") {
			baseSize = size
		}
	}
	if baseSize < 3000*40 {
		t.Fatalf("first snapshot wrote %v, want a base file of the map entries", first)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	written := int64(0)
	rebased := false
	for id := base.CheckpointID(2); id < 80; id++ {
		// A few changes: puts, deletes, now and then a whole namespace.
		for range 8 {
			ns := fmt.Appendf(nil, "join-%02d", rng.IntN(30))
			key := fmt.Appendf(nil, "row-%05d", rng.IntN(4000))
			switch rng.IntN(10) {
			case 0, 1:
				_ = b.Delete(ns, key)
			default:
				_ = b.Set(ns, key, fmt.Appendf(nil, "%s-%d", val, id))
			}
		}
		if id%25 == 0 {
			_ = b.DeleteNamespace(fmt.Appendf(nil, "join-%02d", rng.IntN(30)))
		}
		if id == 60 {
			// Enough changes to outweigh the base.
			for i := range 4000 {
				_ = b.Set([]byte("join-99"), fmt.Appendf(nil, "big-%05d", i), []byte(val))
			}
		}
		h = finish(t, mustSnapshot(t, b, id, files))
		for name, size := range newFiles(t, dir, seen) {
			if strings.HasSuffix(name, ".maps") {
				rebased = true
			} else if id < 60 {
				written += size
			}
		}
		if h[0] != formatSlotLog {
			t.Fatalf("handle of version %d, want %d", h[0], formatSlotLog)
		}
		if id < 60 && len(h) > int(baseSize)/4 {
			t.Fatalf("snapshot %d: handle of %d bytes against a base of %d", id, len(h), baseSize)
		}
		if id%10 == 0 || id > 58 {
			r, err := Restore(h, files)
			if err != nil {
				t.Fatalf("restore of snapshot %d: %v", id, err)
			}
			if d := mapsEqual(b, r); d != "" {
				t.Fatalf("restore of snapshot %d: %s", id, d)
			}
			if id%20 == 0 {
				b = r // go on from the restored backend
			}
		}
	}
	if written == 0 || written > baseSize {
		t.Errorf("snapshots 2-59 wrote %d bytes of change files, want some and less than the base's %d", written, baseSize)
	}
	if !rebased {
		t.Error("changes outweighing the base did not write a new base")
	}
}

// TestMapFilesChecked: a damaged or missing map file fails the restore
// with an error naming it.
func TestMapFilesChecked(t *testing.T) {
	defer func(n int) { inlineTail = n }(inlineTail)
	inlineTail = 256
	files, dir := sharedFiles(t)
	b := New()
	for i := range 100 {
		_ = b.Set([]byte("ns"), fmt.Appendf(nil, "k%03d", i), []byte("value"))
	}
	h := finish(t, mustSnapshot(t, b, 1, files))
	paths, err := filepath.Glob(filepath.Join(dir, "*.maps"))
	if err != nil || len(paths) != 1 {
		t.Fatalf("map base files %v (%v), want one", paths, err)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	if err := os.WriteFile(paths[0], data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(h, files); !errors.Is(err, base.ErrChecksum) || !strings.Contains(err.Error(), filepath.Base(paths[0])) {
		t.Errorf("restore with a damaged map file: %v, want a checksum error naming it", err)
	}
	if err := os.Remove(paths[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(h, files); !errors.Is(err, base.ErrNotFound) {
		t.Errorf("restore with a missing map file: %v, want not found", err)
	}
	if _, err := Restore(h, nil); !errors.Is(err, base.ErrInvalidArgument) {
		t.Errorf("restore without shared files: %v, want invalid argument", err)
	}
}

// TestMapSnapshotDroppedBeforeUpload: a snapshot whose upload never ran
// (its checkpoint aborted) leaves its files to the next snapshot's upload.
func TestMapSnapshotDroppedBeforeUpload(t *testing.T) {
	defer func(n int) { inlineTail = n }(inlineTail)
	inlineTail = 256
	files, _ := sharedFiles(t)
	b := New()
	for i := range 100 {
		_ = b.Set([]byte("ns"), fmt.Appendf(nil, "k%03d", i), []byte("value"))
	}
	if _, err := b.SnapshotAsync(1, files); err != nil { // dropped
		t.Fatal(err)
	}
	for i := range 100 {
		_ = b.Set([]byte("ns"), fmt.Appendf(nil, "k%03d", i), []byte("other"))
	}
	if _, err := b.SnapshotAsync(2, files); err != nil { // dropped
		t.Fatal(err)
	}
	_ = b.Delete([]byte("ns"), []byte("k007"))
	h := finish(t, mustSnapshot(t, b, 3, files))
	r, err := Restore(h, files)
	if err != nil {
		t.Fatal(err)
	}
	if d := mapsEqual(b, r); d != "" {
		t.Fatal(d)
	}
}

func mustSnapshot(t *testing.T, b *Backend, id base.CheckpointID, files state.SnapshotFiles) state.Snapshot {
	t.Helper()
	sn, err := b.SnapshotAsync(id, files)
	if err != nil {
		t.Fatal(err)
	}
	return sn
}
