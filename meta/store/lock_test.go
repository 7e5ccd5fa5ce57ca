package store

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
)

// TestBoltLockedByAnotherOpener: a second opener of the same meta store
// (another strata process on the same data directory) gets an error that
// says so, instead of bbolt's bare timeout.
func TestBoltLockedByAnotherOpener(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	first, err := OpenBolt(path)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	_, err = OpenBolt(path)
	if err == nil || !errors.Is(err, base.ErrConflict) || !strings.Contains(err.Error(), "another strata process") {
		t.Fatalf("second open: %v", err)
	}
}
