package fileio

import (
	"errors"
	"fmt"
	"path"
	"sync"
)

// ErrInjected is the error Faulty returns for an injected failure.
var ErrInjected = errors.New("fileio: injected failure")

// Faulty wraps an FS and fails mutating operations on request: after
// FailAfter(n), the n-th following WriteFile, PutIfAbsent, Delete, Stager
// operation (Stage, SyncDir, WriteHint; Faulty is a Stager over any inner
// FS, through the package's fallbacks), Prepare or Publish of a prepared
// file (counting from 1) fails with ErrInjected without touching the inner
// FS, and so does every later mutating operation until Reset, as if the
// process had died there (pebble's vfs/errorfs). Reads always pass through.
//
// Faulty also remembers the names created by Stage and by Publish of a
// prepared file whose directory has not been synced since: LoseUnsynced
// removes them from the inner FS, which is what a crash may do to names
// whose directory was never fsynced. A test that crashes there checks that
// nothing durable names a file whose name was not durable yet.
type Faulty struct {
	inner FS
	id    uint64 // names the wrapper for Identity when inner has no identity
	mu    struct {
		sync.Mutex
		ops     int  // mutating operations seen since FailAfter; guarded by mu
		failAt  int  // 0: never fail; guarded by mu
		tripped bool // guarded by mu
		// unsynced are the names created without a SyncDir of their
		// directory since, by directory; guarded by mu.
		unsynced map[string][]string
	}
}

// NewFaulty wraps inner; it injects nothing until FailAfter.
func NewFaulty(inner FS) *Faulty {
	f := &Faulty{inner: inner, id: storageIDs.Add(1)}
	f.mu.unsynced = map[string][]string{}
	return f
}

// Identity implements Identifier: the inner FS's identity (a Faulty
// reaches the inner FS's files), or the wrapper's own number when the
// inner FS has none.
func (f *Faulty) Identity() string {
	if id, ok := f.inner.(Identifier); ok {
		return id.Identity()
	}
	return fmt.Sprintf("faulty:%d", f.id)
}

// LoseUnsynced removes from the inner FS every name created by Stage or
// Publish since the last SyncDir of its directory, and returns them. With
// keepNewest, the newest such name of each directory survives: a crash may
// keep any subset of the unsynced names, and this one is the subset that
// shows a later file durable without an earlier one.
func (f *Faulty) LoseUnsynced(keepNewest bool) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var lost []string
	for _, names := range f.mu.unsynced {
		if keepNewest {
			names = names[:len(names)-1]
		}
		for _, p := range names {
			if err := f.inner.Delete(p); err != nil {
				return lost, err
			}
			lost = append(lost, p)
		}
	}
	f.mu.unsynced = map[string][]string{}
	return lost, nil
}

// created records p as a name not durable until SyncDir of its directory.
func (f *Faulty) created(p string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := path.Dir(clean(p))
	f.mu.unsynced[d] = append(f.mu.unsynced[d], p)
}

// tornAt reports whether the failure just injected is the first one, at
// p: the operation the crash cut in the middle. Later operations fail
// without starting.
func (f *Faulty) tornAt(p string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.ops == f.mu.failAt
}

// FailAfter arms the wrapper: the n-th mutating operation from now (n >= 1)
// and all after it fail.
func (f *Faulty) FailAfter(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.mu.ops, f.mu.failAt, f.mu.tripped = 0, n, false
}

// Reset disarms the wrapper.
func (f *Faulty) Reset() { f.FailAfter(0) }

// Tripped reports whether a failure has been injected since FailAfter.
func (f *Faulty) Tripped() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mu.tripped
}

func (f *Faulty) check(op, p string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.mu.failAt == 0 {
		return nil
	}
	f.mu.ops++
	if f.mu.tripped || f.mu.ops >= f.mu.failAt {
		f.mu.tripped = true
		return fmt.Errorf("%s %s: %w", op, p, ErrInjected)
	}
	return nil
}

// ReadFile implements FS.
func (f *Faulty) ReadFile(p string) ([]byte, error) { return f.inner.ReadFile(p) }

// WriteFile implements FS.
func (f *Faulty) WriteFile(p string, data []byte) error {
	if err := f.check("write", p); err != nil {
		return err
	}
	return f.inner.WriteFile(p, data)
}

// PutIfAbsent implements FS.
func (f *Faulty) PutIfAbsent(p string, data []byte) error {
	if err := f.check("put", p); err != nil {
		return err
	}
	return f.inner.PutIfAbsent(p, data)
}

// Delete implements FS.
func (f *Faulty) Delete(p string) error {
	if err := f.check("delete", p); err != nil {
		return err
	}
	return f.inner.Delete(p)
}

// Stage implements Stager. An injected failure leaves the first half of
// data under p, as a crash in the middle of Local's Stage may: nothing
// names a file whose Stage failed, and a test that crashes there checks
// that this stays so.
func (f *Faulty) Stage(p string, data []byte) error {
	if err := f.check("stage", p); err != nil {
		if errors.Is(err, ErrInjected) && f.tornAt(p) {
			if Stage(f.inner, p, data[:len(data)/2]) == nil {
				f.created(p)
			}
		}
		return err
	}
	if err := Stage(f.inner, p, data); err != nil {
		return err
	}
	f.created(p)
	return nil
}

// SyncDir implements Stager.
func (f *Faulty) SyncDir(dir string) error {
	if err := f.check("sync", dir); err != nil {
		return err
	}
	if err := SyncDir(f.inner, dir); err != nil {
		return err
	}
	f.mu.Lock()
	delete(f.mu.unsynced, clean(dir))
	f.mu.Unlock()
	return nil
}

// Prepare implements Preparer; Publish and Discard of the result go to
// the inner FS's prepared file, Publish counting as a mutating operation.
func (f *Faulty) Prepare(p string, data []byte) (Pending, error) {
	if err := f.check("prepare", p); err != nil {
		return nil, err
	}
	inner, err := Prepare(f.inner, p, data)
	if err != nil {
		return nil, err
	}
	return &faultyPending{f: f, inner: inner, path: p}, nil
}

type faultyPending struct {
	f     *Faulty
	inner Pending
	path  string
}

func (fp *faultyPending) Publish() error {
	if err := fp.f.check("publish", fp.path); err != nil {
		return err
	}
	if err := fp.inner.Publish(); err != nil {
		return err
	}
	fp.f.created(fp.path)
	return nil
}

func (fp *faultyPending) Discard() { fp.inner.Discard() }

// WriteHint implements Stager.
func (f *Faulty) WriteHint(p string, data []byte) error {
	if err := f.check("hint", p); err != nil {
		return err
	}
	return WriteHint(f.inner, p, data)
}

// List implements FS.
func (f *Faulty) List(dir string) ([]FileInfo, error) { return f.inner.List(dir) }

// ListDirs implements FS.
func (f *Faulty) ListDirs(dir string) ([]string, error) { return f.inner.ListDirs(dir) }

// Exists implements FS.
func (f *Faulty) Exists(p string) (bool, error) { return f.inner.Exists(p) }
