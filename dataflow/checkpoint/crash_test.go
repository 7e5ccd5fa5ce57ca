package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
)

var errInjected = errors.New("injected I/O error")

// faultFS fails every operation from the n-th on (pebble's vfs/errorfs in
// small): the process "crashes" at that instant and later operations,
// after a "restart", go through again. A write that fails writes a torn
// prefix of its data, as a crash in the middle of it would.
type faultFS struct {
	OSFS
	ops, failAt int
}

func (f *faultFS) fail() bool {
	f.ops++
	return f.failAt > 0 && f.ops >= f.failAt
}

func (f *faultFS) WriteFile(name string, data []byte) error {
	if f.fail() {
		_ = os.WriteFile(name, data[:len(data)/2], 0o644)
		return errInjected
	}
	return f.OSFS.WriteFile(name, data)
}

func (f *faultFS) Rename(o, n string) error {
	if f.fail() {
		return errInjected
	}
	return f.OSFS.Rename(o, n)
}

func (f *faultFS) SyncDir(d string) error {
	if f.fail() {
		return errInjected
	}
	return f.OSFS.SyncDir(d)
}

func (f *faultFS) MkdirAll(d string) error {
	if f.fail() {
		return errInjected
	}
	return f.OSFS.MkdirAll(d)
}

// payload is subtask i's state in checkpoint id: subtask 0's is larger
// than InlineLimit, and so in a file; the others are in the metadata.
func payload(i int, id base.CheckpointID) string {
	p := fmt.Sprintf("state of %d in checkpoint %d", i, id)
	if i == 0 {
		p += strings.Repeat(".", InlineLimit)
	}
	return p
}

// TestCrashAtEveryStep writes checkpoint 2 over a completed checkpoint 1
// and crashes at each I/O step in turn. After every crash, a restarted
// storage finds a complete checkpoint whose files all read back with their
// checksums: checkpoint 2 if its metadata was renamed into place, else
// checkpoint 1 (invariant metadata-last); Cleanup then leaves no orphan.
func TestCrashAtEveryStep(t *testing.T) {
	write := func(s *Storage, id base.CheckpointID) error {
		var fis []FileInfo
		for i := range 3 {
			fi, err := s.WriteSubtask(id, "op", i, []byte(payload(i, id)))
			if err != nil {
				return err
			}
			fis = append(fis, fi)
		}
		return s.Commit(&Metadata{Job: "j", Checkpoint: id, Subtasks: fis})
	}
	for failAt := 1; ; failAt++ {
		root := t.TempDir()
		if err := write(NewStorage(OSFS{}, root, 5), 1); err != nil {
			t.Fatal(err)
		}
		ffs := &faultFS{failAt: failAt}
		err := write(NewStorage(ffs, root, 5), 2)
		if err == nil {
			if failAt == 1 {
				t.Fatal("no I/O step failed")
			}
			break // every step has been crashed at
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("crash at step %d: %v", failAt, err)
		}
		s := NewStorage(OSFS{}, root, 5)
		m, err := s.Latest()
		if err != nil {
			t.Fatalf("crash at step %d: no complete checkpoint: %v", failAt, err)
		}
		for i := range 3 {
			got, err := s.ReadSubtask(m, "op", i)
			if err != nil || string(got) != payload(i, m.Checkpoint) {
				t.Fatalf("crash at step %d: checkpoint %d subtask %d = %q, %v", failAt, m.Checkpoint, i, got, err)
			}
		}
		if err := s.Cleanup(); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(root)
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(root, e.Name(), "_metadata")); err != nil {
				t.Fatalf("crash at step %d: Cleanup left %s without metadata", failAt, e.Name())
			}
		}
	}
}
