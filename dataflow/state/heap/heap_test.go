package heap

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/statetest"
	"github.com/stratadb/strata/internal/base"
)

func TestSuite(t *testing.T) {
	statetest.Run(t, statetest.Factory{
		New: func(*testing.T) state.Backend { return New() },
		Restore: func(t *testing.T, h []byte, f state.SnapshotFiles) state.Backend {
			b, err := Restore(h, f)
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
	})
}

func TestRestoreRejectsDamage(t *testing.T) {
	b := New()
	_ = b.Set([]byte("ns"), []byte("k"), []byte("v"))
	sn, _ := b.Snapshot(1, nil)
	h := sn.Handle
	for _, bad := range [][]byte{nil, {9}, h[:len(h)-1], append(h, 0)} {
		if _, err := Restore(bad, nil); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("Restore(%x) = %v, want corruption", bad, err)
		}
	}
}

// sharedFiles returns checkpoint storage's shared files in a fresh
// directory, which take arena files from memory (format version 3).
func sharedFiles(t *testing.T) (*checkpoint.SharedFiles, string) {
	root := t.TempDir()
	return checkpoint.NewStorage(checkpoint.OSFS{}, root, 1).Shared(), filepath.Join(root, "shared")
}

// TestSuiteSharedFiles runs the suite over arena files, with a tail of 64
// bytes at most carried in the handle, so that its small states make
// files, merge them and restore from them.
func TestSuiteSharedFiles(t *testing.T) {
	defer func(n int) { inlineTail = n }(inlineTail)
	inlineTail = 64
	files, dir := sharedFiles(t)
	defer func() {
		if n, _ := dirSize(t, dir); n == 0 {
			t.Error("the suite wrote no arena file")
		}
	}()
	statetest.Run(t, statetest.Factory{
		New: func(*testing.T) state.Backend { return New() },
		Restore: func(t *testing.T, h []byte, f state.SnapshotFiles) state.Backend {
			if h[0] != formatSlotLog {
				t.Fatalf("handle of version %d, want %d", h[0], formatSlotLog)
			}
			b, err := Restore(h, f)
			if err != nil {
				t.Fatal(err)
			}
			return b
		},
		Files: files,
	})
}

// finish runs a snapshot's asynchronous part as the runtime does.
func finish(t *testing.T, sn state.Snapshot) []byte {
	t.Helper()
	if err := sn.Upload(); err != nil {
		t.Fatal(err)
	}
	h, err := sn.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func dirSize(t *testing.T, dir string) (files int, bytes int64) {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		info, err := e.Info()
		if err != nil {
			t.Fatal(err)
		}
		files++
		bytes += info.Size()
	}
	return files, bytes
}

// TestArenaFilesIncremental: a snapshot writes only the arena bytes the
// previous ones did not (a restored backend's first snapshot writes next
// to nothing), small files at the tail merge so that their number stays
// logarithmic, and every handle restores the state it captured.
func TestArenaFilesIncremental(t *testing.T) {
	files, dir := sharedFiles(t)
	b := New()
	val := bytes.Repeat([]byte("x"), 1000)
	for i := range 20000 {
		_ = b.Set(fmt.Appendf(nil, "ns-%06d", i), nil, val)
	}
	sn, err := b.SnapshotAsync(1, files)
	if err != nil {
		t.Fatal(err)
	}
	h1 := finish(t, sn)
	_, size1 := dirSize(t, dir)
	if size1 < 20000*1000 {
		t.Fatalf("first snapshot stored %d bytes of arena, want the whole arena", size1)
	}
	r, err := Restore(h1, files)
	if err != nil {
		t.Fatal(err)
	}
	// Forty snapshots, each after one changed value.
	var last []byte
	for i := range 40 {
		if err := r.Set([]byte("ns-000007"), nil, fmt.Appendf(nil, "v%d", i)); err != nil {
			t.Fatal(err)
		}
		sn, err := r.SnapshotAsync(base.CheckpointID(2+i), files)
		if err != nil {
			t.Fatal(err)
		}
		last = finish(t, sn)
		if len(sn.Shared) > 2+20000*1000/maxSegment+8 {
			t.Fatalf("snapshot %d references %d arena files", i, len(sn.Shared))
		}
	}
	n, size := dirSize(t, dir)
	if size-size1 > 4096 {
		t.Fatalf("40 one-value snapshots stored %d more bytes", size-size1)
	}
	t.Logf("%d files, %d bytes", n, size)
	r2, err := Restore(last, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ ns, want string }{{"ns-000007", "v39"}, {"ns-000008", string(val)}, {"ns-019999", string(val)}} {
		got, ok, _ := r2.Get([]byte(c.ns), nil)
		if !ok || string(got) != c.want {
			t.Fatalf("Get(%s) = %.20q,%v want %.20q", c.ns, got, ok, c.want)
		}
	}
	// The first handle still restores the state before the changes.
	r1, err := Restore(h1, files)
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := r1.Get([]byte("ns-000007"), nil); string(got) != string(val) {
		t.Fatalf("first handle restores ns-000007 = %.20q", got)
	}
}

// TestSmallStateNeedsNoFile: a state under inlineTail is all in its handle,
// including after changes.
func TestSmallStateNeedsNoFile(t *testing.T) {
	files, dir := sharedFiles(t)
	b := New()
	for i := range 100 {
		_ = b.Set(fmt.Appendf(nil, "ns-%d", i), nil, []byte("value"))
	}
	var h []byte
	for id := range base.CheckpointID(5) {
		_ = b.Set([]byte("ns-3"), nil, fmt.Appendf(nil, "v%d", id))
		sn, err := b.SnapshotAsync(id+1, files)
		if err != nil {
			t.Fatal(err)
		}
		if len(sn.Shared) != 0 {
			t.Fatalf("small state references arena files %v", sn.Shared)
		}
		h = finish(t, sn)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("shared directory exists: %v", err)
	}
	r, err := Restore(h, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := r.Get([]byte("ns-3"), nil); !ok || string(got) != "v4" {
		t.Fatalf("Get(ns-3) = %q,%v", got, ok)
	}
}

// TestArenaFilesChecked: a damaged or missing arena file fails the restore
// with the reason, as does a handle of version 3 without storage.
func TestArenaFilesChecked(t *testing.T) {
	files, dir := sharedFiles(t)
	b := New()
	_ = b.Set([]byte("ns"), nil, bytes.Repeat([]byte("v"), inlineTail))
	sn, err := b.Snapshot(1, files)
	if err != nil {
		t.Fatal(err)
	}
	if len(sn.Shared) != 1 {
		t.Fatalf("snapshot of %d bytes references %d arena files, want 1", inlineTail, len(sn.Shared))
	}
	if err := sn.Upload(); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(sn.Handle, nil); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("Restore without storage: %v", err)
	}
	name := filepath.Join(dir, sn.Shared[0])
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	data[0] ^= 1
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(sn.Handle, files); !errors.Is(err, base.ErrChecksum) {
		t.Fatalf("Restore of a flipped bit: %v", err)
	}
	if err := os.WriteFile(name, data[1:], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(sn.Handle, files); !errors.Is(err, base.ErrChecksum) {
		t.Fatalf("Restore of a short file: %v", err)
	}
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	if _, err := Restore(sn.Handle, files); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("Restore of a missing file: %v", err)
	}
	h := sn.Handle
	for _, bad := range [][]byte{h[:len(h)-1], append(bytes.Clone(h), 0)} {
		if _, err := Restore(bad, files); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("Restore(%x) = %v, want corruption", bad, err)
		}
	}
}

// TestArenaFilesAfterCompaction: once the arena is compacted, the next
// snapshot writes the new arena and no longer references the old files.
func TestArenaFilesAfterCompaction(t *testing.T) {
	files, _ := sharedFiles(t)
	b := New()
	val := bytes.Repeat([]byte("y"), 100)
	for i := range 5000 {
		_ = b.Set(fmt.Appendf(nil, "ns-%d", i), nil, val)
	}
	sn, _ := b.SnapshotAsync(1, files)
	finish(t, sn)
	gen := b.v.gen
	for round := 0; b.v.gen == gen; round++ {
		for i := range 5000 {
			_ = b.Set(fmt.Appendf(nil, "ns-%d", i), nil, fmt.Appendf(nil, "%d-%s", round, val))
		}
	}
	sn2, _ := b.SnapshotAsync(2, files)
	h := finish(t, sn2)
	if len(sn.Shared) == 0 || len(sn2.Shared) == 0 {
		t.Fatalf("snapshots of more than %d bytes reference %d and %d arena files", inlineTail, len(sn.Shared), len(sn2.Shared))
	}
	for _, n := range sn2.Shared {
		if slices.Contains(sn.Shared, n) {
			t.Fatalf("snapshot after compaction references %s of the old arena", n)
		}
	}
	r, err := Restore(h, files)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := r.Get([]byte("ns-5"), nil); !ok || !bytes.HasSuffix(got, val) {
		t.Fatalf("Get(ns-5) = %q,%v", got, ok)
	}
}

// TestSmallStateHandleStaysSmall: a job whose state is a few values it
// rewrites at every checkpoint (a source's position, a sink's buffer)
// keeps a checkpoint handle of about its live size, not one that carries
// the old versions until 64 KiB of them pile up.
func TestSmallStateHandleStaysSmall(t *testing.T) {
	files, _ := sharedFiles(t)
	b := New()
	pos := func(i int) []byte {
		return fmt.Appendf(nil, `{"position":{"snapshot":%d,"offset":0},"closed":%d}`, i, i)
	}
	var first, largest int
	for id := base.CheckpointID(1); id <= 2000; id++ {
		_ = b.Set([]byte("position"), nil, pos(int(id)))
		_ = b.Set([]byte("2pc-buffer"), nil, []byte{})
		h := finish(t, func() state.Snapshot {
			sn, err := b.SnapshotAsync(id, files)
			if err != nil {
				t.Fatal(err)
			}
			return sn
		}())
		if id == 1 {
			first = len(h)
		}
		largest = max(largest, len(h))
	}
	if largest > first+8<<10 {
		t.Fatalf("handle grew from %d to %d bytes over 2000 checkpoints of two rewritten values", first, largest)
	}
	r, err := Restore(func() []byte {
		sn, err := b.SnapshotAsync(2001, files)
		if err != nil {
			t.Fatal(err)
		}
		return finish(t, sn)
	}(), files)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := r.Get([]byte("position"), nil); !ok || string(got) != string(pos(2000)) {
		t.Fatalf("Get(position) = %q,%v", got, ok)
	}
}
