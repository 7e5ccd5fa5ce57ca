package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
)

var errInjected = errors.New("injected I/O error")

// crashFS fails every operation from the failAt-th on (pebble's
// vfs/errorfs in small): the process "crashes" at that instant. A write
// that fails writes a torn prefix of its data, as a crash in the middle
// of it would.
//
// It also keeps every change to a directory's entries (a file or
// directory created, a rename) until a SyncDir of that directory makes
// it durable; lose undoes those not yet durable, newest first, as a power
// failure may. Without lose, the test sees the other extreme, where every
// change reached the disk. Deletions are taken as durable at once: one
// that came back would bring back an older checkpoint or an orphan, both
// of which readers and Cleanup already meet.
type crashFS struct {
	OSFS
	ops, failAt int
	// log names every operation that went through, relative to root.
	root string
	log  []string
	// pending are the entry changes no SyncDir has made durable yet.
	pending []change
	renames int
}

// change is an entry change in dir and how to undo it.
type change struct {
	dir  string
	undo func()
}

func (f *crashFS) fail() bool {
	f.ops++
	return f.failAt > 0 && f.ops >= f.failAt
}

func (f *crashFS) note(op string, names ...string) {
	for _, n := range names {
		rel, err := filepath.Rel(f.root, n)
		if err != nil {
			panic(err)
		}
		op += " " + filepath.ToSlash(rel)
	}
	f.log = append(f.log, op)
}

func exists(name string) bool {
	_, err := os.Lstat(name)
	return err == nil
}

func (f *crashFS) created(name string) {
	f.pending = append(f.pending, change{dir: filepath.Dir(name), undo: func() { _ = os.RemoveAll(name) }})
}

func (f *crashFS) WriteFile(name string, data []byte) error {
	isNew := !exists(name)
	if isNew {
		defer f.created(name)
	}
	if f.fail() {
		_ = os.WriteFile(name, data[:len(data)/2], 0o644)
		return errInjected
	}
	f.note("WriteFile", name)
	return f.OSFS.WriteFile(name, data)
}

func (f *crashFS) Rename(o, n string) error {
	if f.fail() {
		return errInjected
	}
	if filepath.Dir(o) != filepath.Dir(n) {
		panic("crashFS models renames within one directory only")
	}
	prior, err := os.ReadFile(n)
	hadPrior := err == nil
	if err := f.OSFS.Rename(o, n); err != nil {
		return err
	}
	f.note("Rename", o, n)
	f.renames++
	f.pending = append(f.pending, change{dir: filepath.Dir(n), undo: func() {
		_ = os.Rename(n, o)
		if hadPrior {
			_ = os.WriteFile(n, prior, 0o644)
		}
	}})
	return nil
}

func (f *crashFS) SyncDir(d string) error {
	if f.fail() {
		return errInjected
	}
	f.note("SyncDir", d)
	f.pending = slices.DeleteFunc(f.pending, func(c change) bool { return filepath.Clean(c.dir) == filepath.Clean(d) })
	return f.OSFS.SyncDir(d)
}

func (f *crashFS) MkdirAll(d string) error {
	if f.fail() {
		return errInjected
	}
	var made []string
	for p := filepath.Clean(d); !exists(p); p = filepath.Dir(p) {
		made = append(made, p)
	}
	if err := f.OSFS.MkdirAll(d); err != nil {
		return err
	}
	f.note("MkdirAll", d)
	for i := len(made) - 1; i >= 0; i-- {
		f.created(made[i])
	}
	return nil
}

// lose undoes the entry changes no SyncDir made durable, newest first.
func (f *crashFS) lose() {
	for i := len(f.pending) - 1; i >= 0; i-- {
		f.pending[i].undo()
	}
	f.pending = nil
}

// payload is subtask i's state in checkpoint id: with big, subtask 0's is
// larger than InlineLimit, and so in a file; the others are in the
// metadata.
func payload(i int, id base.CheckpointID, big bool) string {
	p := fmt.Sprintf("state of %d in checkpoint %d", i, id)
	if i == 0 && big {
		p += strings.Repeat(".", InlineLimit)
	}
	return p
}

// checkRoot fails unless every entry of root is "shared", a single file
// chk-<id>.metadata or a directory chk-<id> with _metadata, and, when
// noDirs, no checkpoint is a directory.
func checkRoot(t *testing.T, root string, noDirs bool) {
	t.Helper()
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		id, f, ok := parseName(e.Name())
		switch {
		case e.Name() == sharedDir:
		case ok && f == inFile && !e.IsDir():
		case ok && f == inDir && e.IsDir() && !noDirs:
			if !exists(filepath.Join(root, e.Name(), metadataName)) {
				t.Fatalf("%s is a directory without metadata", e.Name())
			}
		default:
			t.Fatalf("root holds %s (checkpoint %d, form %d, directory %v)", e.Name(), id, f, e.IsDir())
		}
	}
}

// latestName names m by its metadata file, or says there is none.
func latestName(m *Metadata) string {
	if m == nil {
		return "none"
	}
	return m.Path()
}

// TestCrashAtEveryStep writes checkpoint 2 over a completed checkpoint 1
// and crashes at each I/O step in turn, with a subtask state in a file
// (the directory form) and with every state inline (the single-file
// form), and with the entry changes not yet synced either kept or lost.
// After every crash, a restarted storage finds a complete checkpoint
// whose states all read back with their checksums: checkpoint 2 if its
// metadata was renamed into place and that survived, else checkpoint 1
// (invariant metadata-last); Cleanup then leaves no orphan, and the job
// goes on to commit the next checkpoint. A Commit that returned is
// durable: losing what was not synced after it leaves checkpoint 2.
func TestCrashAtEveryStep(t *testing.T) {
	for _, big := range []bool{true, false} {
		for _, lose := range []bool{false, true} {
			t.Run(fmt.Sprintf("state-file=%v/lose-unsynced=%v", big, lose), func(t *testing.T) {
				crashAtEveryStep(t, big, lose)
			})
		}
	}
}

func crashAtEveryStep(t *testing.T, big, lose bool) {
	write := func(s *Storage, id base.CheckpointID) error {
		var fis []FileInfo
		for i := range 3 {
			fi, err := s.WriteSubtask(id, "op", i, []byte(payload(i, id, big)))
			if err != nil {
				return err
			}
			fis = append(fis, fi)
		}
		return s.Commit(&Metadata{Job: "j", Checkpoint: id, Subtasks: fis})
	}
	for failAt := 1; ; failAt++ {
		top := t.TempDir()
		root := filepath.Join(top, "job")
		if err := write(NewStorage(OSFS{}, root, 5), 1); err != nil {
			t.Fatal(err)
		}
		ffs := &crashFS{failAt: failAt, root: root}
		err := write(NewStorage(ffs, root, 5), 2)
		if lose {
			ffs.lose()
		}
		if err == nil {
			if failAt == 1 {
				t.Fatal("no I/O step failed")
			}
			// Every step has been crashed at; the commit is durable.
			if m, err := NewStorage(OSFS{}, root, 5).Latest(); err != nil || m.Checkpoint != 2 {
				t.Fatalf("after Commit returned: latest %s, %v; want checkpoint 2", latestName(m), err)
			}
			if !big {
				want := []string{"MkdirAll .", "SyncDir ..", "WriteFile chk-2.metadata.tmp",
					"Rename chk-2.metadata.tmp chk-2.metadata", "SyncDir ."}
				if !slices.Equal(ffs.log, want) {
					t.Fatalf("single-file commit did %q, want %q", ffs.log, want)
				}
				if failAt != len(want)+1 {
					t.Fatalf("crashed at %d steps, want %d", failAt-1, len(want))
				}
			}
			break
		}
		if !errors.Is(err, errInjected) {
			t.Fatalf("crash at step %d: %v", failAt, err)
		}
		s := NewStorage(OSFS{}, root, 5)
		m, err := s.Latest()
		if err != nil {
			t.Fatalf("crash at step %d: no complete checkpoint: %v", failAt, err)
		}
		want := base.CheckpointID(1)
		if ffs.renames > 0 && !lose {
			want = 2
		}
		if m.Checkpoint != want {
			t.Fatalf("crash at step %d (%q): latest checkpoint %d, want %d", failAt, ffs.log, m.Checkpoint, want)
		}
		for i := range 3 {
			got, err := s.ReadSubtask(m, "op", i)
			if err != nil || string(got) != payload(i, m.Checkpoint, big) {
				t.Fatalf("crash at step %d: checkpoint %d subtask %d = %q, %v", failAt, m.Checkpoint, i, got, err)
			}
		}
		if err := s.Cleanup(); err != nil {
			t.Fatal(err)
		}
		checkRoot(t, root, !big)
		next := m.Checkpoint + 1
		if err := write(s, next); err != nil {
			t.Fatalf("crash at step %d: next checkpoint: %v", failAt, err)
		}
		if m, err := NewStorage(OSFS{}, root, 5).Latest(); err != nil || m.Checkpoint != next {
			t.Fatalf("crash at step %d: latest after the next commit %s, %v; want %d", failAt, latestName(m), err, next)
		}
	}
}
