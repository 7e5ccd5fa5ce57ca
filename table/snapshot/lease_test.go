package snapshot

import (
	"path/filepath"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

// noIdentity is an FS that cannot name its storage.
type noIdentity struct{ fileio.FS }

// TestLeaseLimitsExpiry: an expiration keeps the oldest leased parent
// and what follows (not below the oldest snapshot present), a lease taken
// below the fence an expiration recorded is stale, a released lease
// limits nothing, and two handles of one table share the registry.
func TestLeaseLimitsExpiry(t *testing.T) {
	mem := fileio.NewMem()
	a, b := NewManager(mem, "wh/db/t"), NewManager(mem, "/wh/db/t/")
	rel5, stale := a.Lease(5)
	if stale {
		t.Fatal("a lease with no expiration recorded is stale")
	}
	rel7, _ := a.Lease(7)
	if got := b.LimitExpiry(9, 3); got != 5 {
		t.Fatalf("LimitExpiry(9, floor 3) with parents 5 and 7 leased = %d, want 5", got)
	}
	if got := b.LimitExpiry(4, 3); got != 4 {
		t.Fatalf("LimitExpiry(4, floor 3) with parents 5 and 7 leased = %d, want 4", got)
	}
	rel5()
	rel5() // a second call does nothing
	if got := b.LimitExpiry(9, 3); got != 7 {
		t.Fatalf("LimitExpiry(9) with parent 7 leased = %d, want 7", got)
	}
	rel7()
	if got := b.LimitExpiry(9, 3); got != 9 {
		t.Fatalf("LimitExpiry(9) with nothing leased = %d, want 9", got)
	}
	// The fence is now 9: a commit that read snapshot 8 as the latest
	// before this expiration chose to remove it learns so.
	rel8, stale := a.Lease(8)
	if !stale {
		t.Fatal("a lease below the fence is not stale")
	}
	rel8()
	rel9, stale := a.Lease(9)
	if stale {
		t.Fatal("a lease at the fence is stale")
	}
	rel9()
	// A lease on no snapshot (an empty table) keeps everything.
	rel0, _ := a.Lease(0)
	if got := b.LimitExpiry(12, 10); got != 10 {
		t.Fatalf("LimitExpiry(12, floor 10) with parent 0 leased = %d, want the floor 10", got)
	}
	rel0()
	// Another table, and another Mem, do not share the entry.
	if got := NewManager(mem, "wh/db/u").LimitExpiry(9, 1); got != 9 {
		t.Fatalf("another table's LimitExpiry = %d, want 9", got)
	}
	if got := NewManager(fileio.NewMem(), "wh/db/t").LimitExpiry(9, 1); got != 9 {
		t.Fatalf("another Mem's LimitExpiry = %d, want 9", got)
	}
	// Without an identity a lease limits nothing.
	n := NewManager(noIdentity{mem}, "wh/db/t")
	reln, stale := n.Lease(1)
	if stale {
		t.Fatal("a lease without an identity is stale")
	}
	if got := n.LimitExpiry(base.SnapshotID(20), 1); got != 20 {
		t.Fatalf("LimitExpiry without an identity = %d, want 20", got)
	}
	reln()
}

// TestLocalIdentity: two Local values over one directory, one reached
// through a relative path, name the same storage.
func TestLocalIdentity(t *testing.T) {
	dir := t.TempDir()
	l1, err := fileio.NewLocal(dir)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(mustWd(t), dir)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := fileio.NewLocal(rel)
	if err != nil {
		t.Fatal(err)
	}
	if l1.Identity() != l2.Identity() {
		t.Fatalf("identities %q and %q of one directory differ", l1.Identity(), l2.Identity())
	}
	rel3, _ := NewManager(l1, "t").Lease(3)
	defer rel3()
	if got := NewManager(l2, "t").LimitExpiry(6, 1); got != 3 {
		t.Fatalf("LimitExpiry through the other Local = %d, want 3", got)
	}
}

func mustWd(t *testing.T) string {
	t.Helper()
	wd, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	return wd
}
