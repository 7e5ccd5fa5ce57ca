package fileio

import (
	"fmt"
	"path"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/base"
)

// Mem is an in-memory FS for tests and benchmarks. Writes copy their input
// and reads return copies, so callers may reuse buffers.
type Mem struct {
	mu struct {
		sync.Mutex
		files map[string]memFile // guarded by mu
	}
	// Now gives modification times; nil means time.Now.
	Now func() time.Time
	// id names this Mem for Identity (0 for one not made by NewMem).
	id uint64
}

// storageIDs numbers the Mems of the process, and the Faulty wrappers of
// a file system without an identity: an address, once its value is
// freed, may name the next one, which would then share its registries.
var storageIDs atomic.Uint64

type memFile struct {
	data []byte
	mod  int64
}

// NewMem returns an empty in-memory FS.
func NewMem() *Mem {
	m := &Mem{id: storageIDs.Add(1)}
	m.mu.files = map[string]memFile{}
	return m
}

// Identity implements Identifier: each Mem is its own storage, named by
// a number NewMem gives it (never reused in the process, as an address
// is once the Mem is freed).
func (m *Mem) Identity() string {
	if m.id == 0 {
		return fmt.Sprintf("mem:%p", m)
	}
	return fmt.Sprintf("mem:%d", m.id)
}

func clean(p string) string { return strings.TrimPrefix(path.Clean("/"+p), "/") }

func (m *Mem) now() int64 {
	if m.Now != nil {
		return m.Now().UnixMilli()
	}
	return time.Now().UnixMilli()
}

// ReadFile implements FS.
func (m *Mem) ReadFile(p string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f, ok := m.mu.files[clean(p)]
	if !ok {
		return nil, fmt.Errorf("file %s: %w", p, base.ErrNotFound)
	}
	return append([]byte(nil), f.data...), nil
}

// WriteFile implements FS.
func (m *Mem) WriteFile(p string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mu.files[clean(p)] = memFile{data: append([]byte(nil), data...), mod: m.now()}
	return nil
}

// PutIfAbsent implements FS.
func (m *Mem) PutIfAbsent(p string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.mu.files[clean(p)]; ok {
		return fmt.Errorf("file %s: %w", p, ErrExist)
	}
	m.mu.files[clean(p)] = memFile{data: append([]byte(nil), data...), mod: m.now()}
	return nil
}

// Delete implements FS.
func (m *Mem) Delete(p string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.mu.files, clean(p))
	return nil
}

// List implements FS.
func (m *Mem) List(dir string) ([]FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prefix := clean(dir) + "/"
	if prefix == "/" {
		prefix = ""
	}
	var out []FileInfo
	for name, f := range m.mu.files {
		if rest, ok := strings.CutPrefix(name, prefix); ok && !strings.Contains(rest, "/") {
			out = append(out, FileInfo{Name: rest, Size: int64(len(f.data)), ModUnixMilli: f.mod})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ListDirs implements FS.
func (m *Mem) ListDirs(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prefix := clean(dir) + "/"
	if prefix == "/" {
		prefix = ""
	}
	seen := map[string]bool{}
	for name := range m.mu.files {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			if i := strings.IndexByte(rest, '/'); i > 0 {
				seen[rest[:i]] = true
			}
		}
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	sort.Strings(out)
	return out, nil
}

// Exists implements FS.
func (m *Mem) Exists(p string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.mu.files[clean(p)]
	return ok, nil
}

// Corrupt flips one byte of path at off (tests of [checked-read]); it
// panics if the file does not exist.
func (m *Mem) Corrupt(p string, off int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.mu.files[clean(p)]
	f.data[off] ^= 0xff
}

// Truncate cuts path to n bytes (tests of [checked-read]).
func (m *Mem) Truncate(p string, n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	f := m.mu.files[clean(p)]
	f.data = f.data[:n]
	m.mu.files[clean(p)] = f
}
