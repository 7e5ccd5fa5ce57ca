package fileio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/stratadb/strata/internal/base"
)

// Local is an FS over a directory of the local disk.
type Local struct {
	root string
	seq  atomic.Uint64 // makes temporary names unique within the process
	// linkOnly is set once the file system refused renameat2's
	// RENAME_NOREPLACE: publish then links and unlinks (publish).
	linkOnly atomic.Bool
}

// errNoRenameNoReplace is renameNoReplace's answer on a system or file
// system without an atomic rename that refuses to replace.
var errNoRenameNoReplace = errors.New("fileio: no rename without replace")

// NewLocal returns an FS rooted at dir, creating dir if needed.
func NewLocal(dir string) (*Local, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("fileio: root %s: %w", dir, err)
	}
	return &Local{root: dir}, nil
}

// Identity implements Identifier: the root made absolute with its
// symbolic links resolved, so that two Local values over one directory
// share their table registries however the root is spelled.
func (l *Local) Identity() string {
	a, err := filepath.Abs(l.root)
	if err != nil {
		a = l.root
	}
	if r, err := filepath.EvalSymlinks(a); err == nil {
		a = r
	}
	return "local:" + a
}

func (l *Local) abs(p string) string { return filepath.Join(l.root, filepath.FromSlash(p)) }

// Path returns the operating system's path of file p (slash-separated,
// relative to the root), for readers outside the FS interface such as a
// query engine that opens Parquet files itself.
func (l *Local) Path(p string) string { return l.abs(p) }

// ReadFile implements FS.
func (l *Local) ReadFile(p string) ([]byte, error) {
	b, err := os.ReadFile(l.abs(p))
	if err != nil {
		return nil, notFound(p, err)
	}
	return b, nil
}

// writeTemp writes data to a fresh temporary file beside p and fsyncs it.
func (l *Local) writeTemp(p string, data []byte) (string, error) {
	return l.writeTempSync(p, data, true)
}

// writeTempSync writes data to a fresh temporary file beside p, fsynced
// when sync is set.
func (l *Local) writeTempSync(p string, data []byte, sync bool) (string, error) {
	final := l.abs(p)
	dir := filepath.Dir(final)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("file %s: %w", p, err)
	}
	tmp := filepath.Join(dir, "."+filepath.Base(final)+"."+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(l.seq.Add(1), 10)+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return "", fmt.Errorf("file %s: %w", p, err)
	}
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("file %s: %w", p, err)
	}
	return tmp, nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// WriteFile implements FS: temporary file, fsync, rename, fsync of the
// directory.
func (l *Local) WriteFile(p string, data []byte) error {
	tmp, err := l.writeTemp(p, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, l.abs(p)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("file %s: %w", p, err)
	}
	syncDir(filepath.Dir(l.abs(p)))
	return nil
}

// PutIfAbsent implements FS: temporary file, fsync, move to the final
// name unless it exists (publish), then an fsync of the directory.
func (l *Local) PutIfAbsent(p string, data []byte) error {
	tmp, err := l.writeTemp(p, data)
	if err != nil {
		return err
	}
	if err := l.publish(tmp, p); err != nil {
		return err
	}
	syncDir(filepath.Dir(l.abs(p)))
	return nil
}

// publish gives the temporary file tmp the name p unless p exists, in
// which case it fails with an error wrapping ErrExist; tmp is gone either
// way. It is one renameat2 with RENAME_NOREPLACE, which moves tmp into
// place atomically or fails. Where the file system does not support the
// flag (or the system has no renameat2), it links tmp to p, which fails
// if p exists, and removes tmp: one system call more, and a crash between
// the two leaves tmp behind for orphan cleanup.
func (l *Local) publish(tmp, p string) error {
	final := l.abs(p)
	err := errNoRenameNoReplace
	if !l.linkOnly.Load() {
		err = renameNoReplace(tmp, final)
	}
	switch {
	case errors.Is(err, errNoRenameNoReplace):
		l.linkOnly.Store(true)
		err = os.Link(tmp, final)
		os.Remove(tmp) // linked or not, the temporary name goes
	case err != nil:
		os.Remove(tmp)
	}
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("file %s: %w", p, ErrExist)
		}
		return fmt.Errorf("file %s: %w", p, err)
	}
	return nil
}

// Stage implements Stager: the file is created under its final name
// (O_EXCL, so that an existing name fails with ErrExist), written and
// fsynced, with no temporary name. A crash before Stage returns may leave
// a prefix of data under the name; nothing names a staged file before
// Stage has returned and its directory has been synced, so that prefix is
// never read, and orphan cleanup removes it. On a journaling file system
// the file's fsync also commits its directory entry, so the SyncDir that
// follows has little left to write (a temporary name moved to the final
// one made that SyncDir commit the directory a second time).
func (l *Local) Stage(p string, data []byte) error {
	final := l.abs(p)
	if err := os.MkdirAll(filepath.Dir(final), 0o755); err != nil {
		return fmt.Errorf("file %s: %w", p, err)
	}
	f, err := os.OpenFile(final, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("file %s: %w", p, ErrExist)
		}
		return fmt.Errorf("file %s: %w", p, err)
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(final)
		return fmt.Errorf("file %s: %w", p, err)
	}
	return nil
}

// Prepare implements Preparer: a temporary file beside path, written and
// fsynced; Publish moves it to path unless path exists (Local.publish).
func (l *Local) Prepare(p string, data []byte) (Pending, error) {
	tmp, err := l.writeTemp(p, data)
	if err != nil {
		return nil, err
	}
	return &localPending{l: l, tmp: tmp, path: p}, nil
}

// localPending is a prepared file of Local: its temporary name.
type localPending struct {
	l    *Local
	tmp  string // "" once published or discarded
	path string
}

func (lp *localPending) Publish() error {
	if lp.tmp == "" {
		return fmt.Errorf("file %s: published or discarded already: %w", lp.path, base.ErrInvalidArgument)
	}
	tmp := lp.tmp
	lp.tmp = ""
	return lp.l.publish(tmp, lp.path)
}

func (lp *localPending) Discard() {
	if lp.tmp != "" {
		os.Remove(lp.tmp)
		lp.tmp = ""
	}
}

// SyncDir implements Stager. A missing directory has nothing to sync.
func (l *Local) SyncDir(dir string) error {
	d, err := os.Open(l.abs(dir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("dir %s: %w", dir, err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("dir %s: sync: %w", dir, err)
	}
	return nil
}

// WriteHint implements Stager: a temporary file renamed over path, with
// no fsync.
func (l *Local) WriteHint(p string, data []byte) error {
	tmp, err := l.writeTempSync(p, data, false)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, l.abs(p)); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("file %s: %w", p, err)
	}
	return nil
}

// Delete implements FS.
func (l *Local) Delete(p string) error {
	if err := os.Remove(l.abs(p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file %s: %w", p, err)
	}
	return nil
}

func (l *Local) entries(dir string) ([]os.DirEntry, error) {
	es, err := os.ReadDir(l.abs(dir))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, fmt.Errorf("dir %s: %w", dir, err)
	}
	return es, nil
}

// List implements FS.
func (l *Local) List(dir string) ([]FileInfo, error) {
	es, err := l.entries(dir)
	if err != nil {
		return nil, err
	}
	var out []FileInfo
	for _, e := range es {
		if e.IsDir() {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, FileInfo{Name: e.Name(), Size: info.Size(), ModUnixMilli: info.ModTime().UnixMilli()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ListDirs implements FS.
func (l *Local) ListDirs(dir string) ([]string, error) {
	es, err := l.entries(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range es {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	return out, nil
}

// Exists implements FS.
func (l *Local) Exists(p string) (bool, error) {
	_, err := os.Stat(l.abs(p))
	if err == nil {
		return true, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("file %s: %w", p, err)
}
