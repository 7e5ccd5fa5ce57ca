package fileio

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// renameNoReplace moves oldpath to newpath unless newpath exists
// (renameat2 with RENAME_NOREPLACE): an existing newpath gives an error
// matching fs.ErrExist, and a file system without the flag
// errNoRenameNoReplace.
func renameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOSYS), errors.Is(err, unix.EOPNOTSUPP):
		return errNoRenameNoReplace
	default:
		return &os.LinkError{Op: "renameat2", Old: oldpath, New: newpath, Err: err}
	}
}
