package snapshot

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/table/fileio"
)

// TestLocalIdentityThroughSymlink: a Local over a directory and one over
// a symbolic link to it reach the same files, so an expiration through
// one keeps the parent a commit through the other leased.
func TestLocalIdentityThroughSymlink(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "warehouse")
	link := filepath.Join(dir, "link")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Skipf("no symbolic links here: %v", err)
	}
	l1, err := fileio.NewLocal(real)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := fileio.NewLocal(link)
	if err != nil {
		t.Fatal(err)
	}
	rel3, _ := NewManager(l2, "db/t").Lease(3)
	defer rel3()
	if got := NewManager(l1, "db/t").LimitExpiry(6, 1); got != 3 {
		t.Fatalf("LimitExpiry through %s while %s leased snapshot 3 = %d, want 3 (identities %q and %q)",
			real, link, got, l1.Identity(), l2.Identity())
	}
}
