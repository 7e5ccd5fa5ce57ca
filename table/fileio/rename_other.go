//go:build !linux

package fileio

// renameNoReplace reports errNoRenameNoReplace: renameat2 is Linux's.
func renameNoReplace(oldpath, newpath string) error { return errNoRenameNoReplace }
