package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/stratadb/strata/internal/base"
)

// FS is the file I/O checkpoint storage needs. Names are slash-separated
// paths. The local implementation is OSFS; an object store would map
// Rename of a small file to put-if-absent and SyncDir to nothing.
type FS interface {
	// MkdirAll creates dir and its parents.
	MkdirAll(dir string) error
	// WriteFile creates or truncates name, writes data and fsyncs it.
	WriteFile(name string, data []byte) error
	// ReadFile returns the content of name; a missing file gives an error
	// wrapping base.ErrNotFound.
	ReadFile(name string) ([]byte, error)
	// ReadFileInto fills dst with the content of name, which must have
	// exactly len(dst) bytes: another size gives an error wrapping
	// base.ErrChecksum, a missing file one wrapping base.ErrNotFound.
	ReadFileInto(name string, dst []byte) error
	// CopyIn copies the local file src to name and fsyncs it, returning
	// the size written.
	CopyIn(src, name string) (int64, error)
	// CopyOut copies name to the local file dst.
	CopyOut(name, dst string) (int64, error)
	// Rename atomically replaces newname with oldname.
	Rename(oldname, newname string) error
	// SyncDir makes the directory entries of dir durable.
	SyncDir(dir string) error
	// RemoveAll removes name and anything below it; a missing name is no
	// error.
	RemoveAll(name string) error
	// List returns the names of the entries of dir, sorted; a missing dir
	// gives an empty list.
	List(dir string) ([]string, error)
	// Exists reports whether name exists.
	Exists(name string) (bool, error)
	// Size returns the size of file name; a missing file gives an error
	// wrapping base.ErrNotFound.
	Size(name string) (int64, error)
}

// OSFS is FS over the local file system.
type OSFS struct{}

var _ FS = OSFS{}

// MkdirAll implements FS.
func (OSFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

// WriteFile implements FS.
func (OSFS) WriteFile(name string, data []byte) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadFile implements FS.
func (OSFS) ReadFile(name string) ([]byte, error) {
	b, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", name, base.ErrNotFound)
	}
	return b, err
}

// ReadFileInto implements FS.
func (OSFS) ReadFileInto(name string, dst []byte) error {
	f, err := os.Open(name)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", name, base.ErrNotFound)
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if st.Size() != int64(len(dst)) {
		return fmt.Errorf("%s: %d bytes, expected %d: %w", name, st.Size(), len(dst), base.ErrChecksum)
	}
	if _, err := io.ReadFull(f, dst); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func copyFile(src, dst string, sync bool) (int64, error) {
	in, err := os.Open(src)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, fmt.Errorf("%s: %w", src, base.ErrNotFound)
		}
		return 0, err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, in)
	if err == nil && sync {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return n, err
}

// CopyIn implements FS.
func (OSFS) CopyIn(src, name string) (int64, error) { return copyFile(src, name, true) }

// CopyOut implements FS.
func (OSFS) CopyOut(name, dst string) (int64, error) { return copyFile(name, dst, false) }

// Rename implements FS.
func (OSFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

// SyncDir implements FS.
func (OSFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// RemoveAll implements FS.
func (OSFS) RemoveAll(name string) error { return os.RemoveAll(name) }

// List implements FS.
func (OSFS) List(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name()
	}
	slices.Sort(names)
	return names, nil
}

// Exists implements FS.
func (OSFS) Exists(name string) (bool, error) {
	_, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func join(parts ...string) string { return filepath.ToSlash(filepath.Join(parts...)) }

// Size implements FS.
func (OSFS) Size(name string) (int64, error) {
	st, err := os.Stat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%s: %w", name, base.ErrNotFound)
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}
