package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// metaFile is the meta store of a data directory (engine.Open makes it):
// its presence is what tells a Strata data directory.
const metaFile = "meta.db"

// requireDataDir refuses dir unless it is a Strata data directory, one
// with a meta store. A command that reads an existing instance's data
// (strata verify --data) checks it before it opens the directory, since
// opening creates whatever is missing: a mistyped path would otherwise
// become a fresh, empty instance. strata start does not check: it makes
// a new directory.
func requireDataDir(dir string) error {
	_, err := os.Stat(filepath.Join(dir, metaFile))
	if err == nil {
		return nil
	}
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return fmt.Errorf("%s is not a Strata data directory (no %s); start a server there first or pass the right --data", dir, metaFile)
	}
	return fmt.Errorf("data directory %s: %w", dir, err)
}
