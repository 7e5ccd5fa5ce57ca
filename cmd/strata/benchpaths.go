package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// checkWritableDir reports, before a benchmark runs, whether a file can
// be created in dir: a chart or series that cannot be written should be
// refused at once, not after minutes of measuring. It creates and
// removes an empty probe file; flag names the option in the error.
func checkWritableDir(flag, dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: no directory %s", flag, dir)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", flag, dir)
	}
	f, err := os.CreateTemp(dir, ".strata-probe-*")
	if err != nil {
		return fmt.Errorf("%s: cannot create files in %s: %w", flag, dir, err)
	}
	name := f.Name()
	if err := f.Close(); err != nil {
		_ = os.Remove(name)
		return fmt.Errorf("%s: cannot create files in %s: %w", flag, dir, err)
	}
	return os.Remove(name)
}

// checkOutputFile checks, before a benchmark runs, that path can be
// written later: its directory exists and takes new files, and path is
// not a directory. ext, when not empty, is the extension path must have
// (".png"). It leaves an existing file as it is.
func checkOutputFile(flag, path, ext string) error {
	if ext != "" && !strings.EqualFold(filepath.Ext(path), ext) {
		return fmt.Errorf("%s %q: want a %s file", flag, path, ext)
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s %q: is a directory", flag, path)
	}
	return checkWritableDir(fmt.Sprintf("%s %q", flag, path), filepath.Dir(path))
}

// checkChartDir checks, before a run, that charts can be written into
// dir, creating it when it does not exist.
func checkChartDir(flag, dir string) error {
	if strings.EqualFold(filepath.Ext(dir), ".png") {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s %q: names the directory the charts are written into, not a .png file", flag, dir)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("%s %q: %w", flag, dir, err)
	}
	return checkWritableDir(fmt.Sprintf("%s %q", flag, dir), dir)
}

// checkEmptyDir refuses a data directory that holds anything: a
// benchmark that sets up its tables needs a new or empty one.
func checkEmptyDir(flag, dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		return nil
	case err != nil:
		return fmt.Errorf("%s %q: %w", flag, dir, err)
	case len(entries) > 0:
		return fmt.Errorf("%s %q is not empty (it holds %s): give a new or empty directory, or none for a temporary one", flag, dir, entries[0].Name())
	}
	return nil
}
