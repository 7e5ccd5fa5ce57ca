package pebble

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
)

const handleVersion = 1

// Backend is the Pebble state backend of one subtask.
type Backend struct {
	db       *pebble.DB
	dir      string
	instance string
	// sharedName maps a local immutable file name to the shared file that
	// holds it.
	sharedName map[string]string
	key        []byte
	upper      []byte
	wo         *pebble.WriteOptions
}

var _ state.Backend = (*Backend)(nil)

func options() *pebble.Options {
	return &pebble.Options{
		DisableWAL: true,
		Logger:     quietLogger{},
		FS:         noSyncFS{vfs.Default},
	}
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...any)           {}
func (quietLogger) Errorf(string, ...any)          {}
func (quietLogger) Fatalf(format string, a ...any) { panic(fmt.Sprintf(format, a...)) }

func newInstance() string {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}

// Open returns an empty backend working in dir, which must not exist yet
// (the backend owns it and removes it on Close).
func Open(dir string) (*Backend, error) {
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("pebble state dir %s already exists: %w", dir, base.ErrInvalidArgument)
	}
	db, err := pebble.Open(dir, options())
	if err != nil {
		return nil, fmt.Errorf("pebble state dir %s: %w", dir, err)
	}
	return &Backend{db: db, dir: dir, instance: newInstance(), sharedName: map[string]string{}, wo: pebble.NoSync}, nil
}

func (b *Backend) fullKey(ns, key []byte) []byte {
	b.key = binary.AppendUvarint(b.key[:0], uint64(len(ns)))
	b.key = append(b.key, ns...)
	return append(b.key, key...)
}

// prefixRange returns the key range of namespace ns.
func (b *Backend) prefixRange(ns []byte) (lower, upper []byte) {
	lower = bytes.Clone(b.fullKey(ns, nil))
	upper = bytes.Clone(lower)
	for i := len(upper) - 1; i >= 0; i-- {
		if upper[i] != 0xff {
			upper[i]++
			return lower, upper[:i+1]
		}
	}
	return lower, nil
}

// Get implements state.Backend. The value is a copy.
func (b *Backend) Get(ns, key []byte) ([]byte, bool, error) {
	v, closer, err := b.db.Get(b.fullKey(ns, key))
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pebble state %s: %w", b.dir, err)
	}
	out := bytes.Clone(v)
	if out == nil {
		out = []byte{}
	}
	return out, true, closer.Close()
}

// Set implements state.Backend.
func (b *Backend) Set(ns, key, value []byte) error {
	return b.db.Set(b.fullKey(ns, key), value, b.wo)
}

// Delete implements state.Backend.
func (b *Backend) Delete(ns, key []byte) error {
	return b.db.Delete(b.fullKey(ns, key), b.wo)
}

// Iterate implements state.Backend.
func (b *Backend) Iterate(ns []byte, fn func(key, value []byte) error) error {
	lower, upper := b.prefixRange(ns)
	it, err := b.db.NewIter(&pebble.IterOptions{LowerBound: lower, UpperBound: upper})
	if err != nil {
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		v, err := it.ValueAndErr()
		if err != nil {
			it.Close()
			return err
		}
		if err := fn(it.Key()[len(lower):], v); err != nil {
			it.Close()
			return err
		}
	}
	return it.Close()
}

// DeleteNamespace implements state.Backend.
func (b *Backend) DeleteNamespace(ns []byte) error {
	lower, upper := b.prefixRange(ns)
	if upper == nil {
		upper = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	return b.db.DeleteRange(lower, upper, b.wo)
}

func immutable(name string) bool {
	return strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".blob")
}

// Snapshot implements state.Backend: an incremental snapshot. The
// synchronous part flushes the memtable and takes a Pebble checkpoint (hard
// links) into a directory beside the database; Upload copies the immutable
// files checkpoint storage does not hold yet and removes that directory.
func (b *Backend) Snapshot(id base.CheckpointID, files state.SnapshotFiles) (state.Snapshot, error) {
	if files == nil {
		return state.Snapshot{}, fmt.Errorf("pebble state %s: snapshots need checkpoint storage: %w", b.dir, base.ErrInvalidArgument)
	}
	if err := b.db.Flush(); err != nil {
		return state.Snapshot{}, fmt.Errorf("pebble state %s: flush: %w", b.dir, err)
	}
	tmp := b.dir + fmt.Sprintf(".chk-%d", id)
	if err := os.RemoveAll(tmp); err != nil {
		return state.Snapshot{}, err
	}
	if err := b.db.Checkpoint(tmp, pebble.WithFlushedWAL()); err != nil {
		os.RemoveAll(tmp)
		return state.Snapshot{}, fmt.Errorf("pebble state %s: checkpoint %d: %w", b.dir, id, err)
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return state.Snapshot{}, err
	}
	h := []byte{handleVersion}
	appendStr := func(s string) {
		h = binary.AppendUvarint(h, uint64(len(s)))
		h = append(h, s...)
	}
	var shared, locals, small []string
	for _, e := range entries {
		name := e.Name()
		if !immutable(name) {
			small = append(small, name)
			continue
		}
		sn, ok := b.sharedName[name]
		if !ok {
			sn = b.instance + "-" + name
			b.sharedName[name] = sn
		}
		locals = append(locals, name)
		shared = append(shared, sn)
	}
	h = binary.AppendUvarint(h, uint64(len(shared)))
	for i := range shared {
		appendStr(locals[i])
		appendStr(shared[i])
	}
	h = binary.AppendUvarint(h, uint64(len(small)))
	for _, name := range small {
		data, err := os.ReadFile(filepath.Join(tmp, name))
		if err != nil {
			os.RemoveAll(tmp)
			return state.Snapshot{}, err
		}
		appendStr(name)
		appendStr(string(data))
	}
	// Forget files that are no longer live.
	live := map[string]bool{}
	for _, name := range locals {
		live[name] = true
	}
	for n := range b.sharedName {
		if !live[n] {
			delete(b.sharedName, n)
		}
	}
	upload := func() error {
		defer os.RemoveAll(tmp)
		for i, name := range locals {
			if _, err := files.WriteShared(shared[i], filepath.Join(tmp, name)); err != nil {
				return fmt.Errorf("pebble state %s: checkpoint %d: %w", b.dir, id, err)
			}
		}
		return nil
	}
	return state.Snapshot{Handle: h, Shared: shared, Upload: upload, Discard: func() { os.RemoveAll(tmp) }}, nil
}

// Restore rebuilds a backend in dir (which must not exist) from a handle
// written by Snapshot and the shared files it names. A damaged handle gives
// an error wrapping base.ErrCorruption.
func Restore(dir string, handle []byte, files state.SnapshotFiles) (*Backend, error) {
	bad := func(what string) error {
		return fmt.Errorf("pebble state handle: %s: %w", what, base.ErrCorruption)
	}
	if len(handle) < 1 || handle[0] != handleVersion {
		return nil, bad("missing or unknown version")
	}
	p := handle[1:]
	str := func() (string, bool) {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)-k) {
			return "", false
		}
		s := string(p[k : k+int(n)])
		p = p[k+int(n):]
		return s, true
	}
	count := func() (int, bool) {
		n, k := binary.Uvarint(p)
		if k <= 0 || n > uint64(len(p)) {
			return 0, false
		}
		p = p[k:]
		return int(n), true
	}
	if _, err := os.Stat(dir); err == nil {
		return nil, fmt.Errorf("pebble state dir %s already exists: %w", dir, base.ErrInvalidArgument)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	sharedName := map[string]string{}
	n, ok := count()
	if !ok {
		return nil, bad("shared file count")
	}
	for range n {
		local, ok1 := str()
		sn, ok2 := str()
		if !ok1 || !ok2 || strings.ContainsAny(local, "/\\") {
			return nil, bad("shared file entry")
		}
		if files == nil {
			return nil, fmt.Errorf("pebble state %s: restore needs checkpoint storage: %w", dir, base.ErrInvalidArgument)
		}
		if err := files.ReadShared(sn, filepath.Join(dir, local)); err != nil {
			return nil, fmt.Errorf("pebble state %s: %w", dir, err)
		}
		sharedName[local] = sn
	}
	if n, ok = count(); !ok {
		return nil, bad("small file count")
	}
	for range n {
		name, ok1 := str()
		data, ok2 := str()
		if !ok1 || !ok2 || strings.ContainsAny(name, "/\\") {
			return nil, bad("small file entry")
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			return nil, err
		}
	}
	if len(p) != 0 {
		return nil, bad(fmt.Sprintf("%d trailing bytes", len(p)))
	}
	db, err := pebble.Open(dir, options())
	if err != nil {
		return nil, fmt.Errorf("pebble state dir %s: restore: %v: %w", dir, err, base.ErrCorruption)
	}
	return &Backend{db: db, dir: dir, instance: newInstance(), sharedName: sharedName, wo: pebble.NoSync}, nil
}

// Close implements state.Backend: it closes the database and removes its
// working directory.
func (b *Backend) Close() error {
	err := b.db.Close()
	if rerr := os.RemoveAll(b.dir); err == nil {
		err = rerr
	}
	// Snapshot directories whose upload never ran.
	left, _ := filepath.Glob(b.dir + ".chk-*")
	for _, d := range left {
		if rerr := os.RemoveAll(d); err == nil {
			err = rerr
		}
	}
	return err
}

// Factory makes the Pebble backends of a job's subtasks in working
// directories under Dir (the task package's StateBackend). Each backend
// gets a fresh directory, so a restart never meets a stale one; a
// directory left by a killed process is garbage that Dir's owner may
// delete before the job starts.
type Factory struct {
	Dir string
}

func (f Factory) dir(vertex string, i int) string {
	return filepath.Join(f.Dir, fmt.Sprintf("%s-%d-%s", vertex, i, newInstance()))
}

// New returns an empty backend for subtask i of vertex.
func (f Factory) New(vertex string, i int) (state.Backend, error) {
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return nil, err
	}
	return Open(f.dir(vertex, i))
}

// Restore rebuilds the backend of subtask i of vertex from a handle.
func (f Factory) Restore(vertex string, i int, handle []byte, files state.SnapshotFiles) (state.Backend, error) {
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return nil, err
	}
	return Restore(f.dir(vertex, i), handle, files)
}
