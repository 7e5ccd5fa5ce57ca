package fileio

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"

	"github.com/stratadb/strata/internal/base"
)

// ErrExist marks a PutIfAbsent whose target already exists. It wraps
// base.ErrConflict: losing a publish race is a conflict, retried by the
// committer.
var ErrExist = fmt.Errorf("fileio: file exists: %w", base.ErrConflict)

// FileInfo describes one file found by List.
type FileInfo struct {
	// Name is the base name, without directory.
	Name string
	// Size is the length in bytes.
	Size int64
	// ModUnixMilli is the modification time in Unix milliseconds; orphan
	// cleanup uses it to leave young files of running writers alone.
	ModUnixMilli int64
}

// FS is the storage interface of the table store. Paths are slash-separated
// and relative to the implementation's root; directories are created as
// needed by writes. All methods are safe for concurrent use. No method
// keeps a reference to a data slice it is given once it returns: callers
// reuse the memory.
type FS interface {
	// ReadFile returns the whole content of path. A missing file gives an
	// error wrapping base.ErrNotFound that names the path.
	ReadFile(path string) ([]byte, error)
	// WriteFile atomically replaces path with data ([no-torn-write]).
	WriteFile(path string, data []byte) error
	// PutIfAbsent atomically creates path with data; it fails with an error
	// wrapping ErrExist, changing nothing, if path already exists.
	PutIfAbsent(path string, data []byte) error
	// Delete removes path; a missing path is not an error.
	Delete(path string) error
	// List returns the files (not directories) directly inside dir, sorted
	// by name; a missing dir gives an empty list.
	List(dir string) ([]FileInfo, error)
	// ListDirs returns the names of the directories directly inside dir,
	// sorted; a missing dir gives an empty list.
	ListDirs(dir string) ([]string, error)
	// Exists reports whether path is an existing file.
	Exists(path string) (bool, error)
}

// Identifier is implemented by the file systems that can name the storage
// they reach: two FS values with the same Identity reach the same files
// (two Local values over one directory, an FS and the Faulty wrapping
// it). The snapshot package keys its registry of the commits in flight in
// this process by it; an FS without it has no such registry.
type Identifier interface {
	// Identity names the storage: "local:<absolute root>",
	// "mem:<address>", "s3://<bucket>/<prefix>".
	Identity() string
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Checksum returns the CRC32C (Castagnoli) of data, the checksum every
// referrer records for the files it points to.
func Checksum(data []byte) uint32 { return crc32.Checksum(data, castagnoli) }

// ReadChecked reads path and checks its length and CRC32C against what the
// referrer recorded. A mismatch gives an error wrapping base.ErrChecksum
// (a truncated file: base.ErrCorruption) naming the path.
func ReadChecked(f FS, path string, size int64, crc uint32) ([]byte, error) {
	data, err := f.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != size {
		return nil, fmt.Errorf("file %s: size %d, recorded %d: %w", path, len(data), size, base.ErrCorruption)
	}
	if got := Checksum(data); got != crc {
		return nil, fmt.Errorf("file %s: crc32c %08x, recorded %08x: %w", path, got, crc, base.ErrChecksum)
	}
	return data, nil
}

func notFound(path string, err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file %s: %w", path, base.ErrNotFound)
	}
	return fmt.Errorf("file %s: %w", path, err)
}
