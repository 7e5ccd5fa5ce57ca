package snapshot

import (
	"runtime"
	"testing"

	"github.com/stratadb/strata/table/fileio"
)

// fencedMem returns the identity of a Mem, now unreachable, whose table
// wh/db/t had an expiration that recorded fence 50.
//
//go:noinline
func fencedMem() string {
	m := fileio.NewMem()
	NewManager(m, "wh/db/t").LimitExpiry(50, 1)
	return m.Identity()
}

// TestLeaseFenceNotInheritedByNewMem: an expiration on one Mem records
// a fence for wh/db/t; a table at wh/db/t on another Mem, created once
// the first is gone, has had no expiration, so a lease on its first
// snapshot is not stale. A Mem named by its address shares the entry of
// an earlier Mem the garbage collector freed at the same address.
func TestLeaseFenceNotInheritedByNewMem(t *testing.T) {
	oldID := fencedMem()
	runtime.GC()
	runtime.GC()
	var keep []*fileio.Mem
	for i := range 20000 {
		m := fileio.NewMem()
		if m.Identity() != oldID {
			keep = append(keep, m)
			continue
		}
		release, stale := NewManager(m, "wh/db/t").Lease(1)
		release()
		if stale {
			t.Fatalf("a new Mem (%s, allocation %d) inherits the fence of a freed Mem at the same address: a lease on snapshot 1 of its table is stale", m.Identity(), i)
		}
		return
	}
	t.Logf("none of %d new Mems shares the freed one's identity", len(keep))
}
