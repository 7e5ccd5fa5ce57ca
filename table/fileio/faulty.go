package fileio

import (
	"errors"
	"fmt"
	"sync"
)

// ErrInjected is the error Faulty returns for an injected failure.
var ErrInjected = errors.New("fileio: injected failure")

// Faulty wraps an FS and fails mutating operations on request: after
// FailAfter(n), the n-th following WriteFile, PutIfAbsent, Delete, or
// Stager operation (Stage, SyncDir, WriteHint; Faulty is a Stager over any
// inner FS, through the package's fallbacks)
// (counting from 1) fails with ErrInjected without touching the inner FS,
// and so does every later mutating operation until Reset, as if the process
// had died there (pebble's vfs/errorfs). Reads always pass through.
type Faulty struct {
	inner FS
	mu    struct {
		sync.Mutex
		ops     int  // mutating operations seen since FailAfter; guarded by mu
		failAt  int  // 0: never fail; guarded by mu
		tripped bool // guarded by mu
	}
}

// NewFaulty wraps inner; it injects nothing until FailAfter.
func NewFaulty(inner FS) *Faulty { return &Faulty{inner: inner} }

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

// Stage implements Stager.
func (f *Faulty) Stage(p string, data []byte) error {
	if err := f.check("stage", p); err != nil {
		return err
	}
	return Stage(f.inner, p, data)
}

// SyncDir implements Stager.
func (f *Faulty) SyncDir(dir string) error {
	if err := f.check("sync", dir); err != nil {
		return err
	}
	return SyncDir(f.inner, dir)
}

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
