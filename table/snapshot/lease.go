package snapshot

import (
	"sync"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

// Commit leases [commit-lease].
//
// A commit reads the latest snapshot L and publishes L+1 with
// put-if-absent, which cannot tell an id never used from one that was
// used and expired. Without more, a commit that other commits overtake by
// snapshots L+1, L+2, ... while an expiration removes everything up to
// L+1 would publish its L+1 over the expired id, report success, and be
// in no snapshot the table's latest descends from: its epoch lost.
//
// So each commit holds a lease on its parent L while it plans and
// publishes, and an expiration of the same process keeps L and every
// newer snapshot while the lease is held (Manager.LimitExpiry): no id the
// commit may publish is expired under it. The two meet under one mutex
// per table: an expiration records the earliest snapshot it keeps (the
// registry's fence) under it, after lowering it to the oldest leased
// parent, and counts itself (the generation); a commit that leases a
// parent below that fence, with an expiration counted between its read of
// the latest snapshot and its lease, learns it is stale and reads the
// latest snapshot again (Manager.LeaseLatest). An expiration counted
// before the read kept what the read found (it keeps the latest), and the
// fence may be from an earlier life of a table dropped and created again
// at the same path, above all of its snapshots.
//
// The registry is per process, keyed by the file system's identity
// (fileio.Identifier) and the table's directory: two handles of one table
// in one process share it. An expiration run by another process does not
// see this process's leases; within the defaults (10 snapshots and an
// hour retained) a commit would have to be overtaken by 100 snapshots for
// that to matter.
type leaseKey struct {
	fs    string
	table string
}

// tableLeases is one table's entry in the registry.
type tableLeases struct {
	mu sync.Mutex
	// parents counts the commits in flight by the parent each builds on
	// (0: on no snapshot); guarded by mu.
	parents map[base.SnapshotID]int
	// fence is the highest earliest snapshot an expiration of this process
	// chose to keep (snapshots below it are being deleted or gone);
	// guarded by mu.
	fence base.SnapshotID
	// gen counts the calls of LimitExpiry; guarded by mu.
	gen uint64
}

var leaseRegistry struct {
	sync.Mutex
	tables map[leaseKey]*tableLeases // guarded by the mutex
}

// leasesOf returns the registry entry of table dir on fs, or nil when fs
// cannot name its storage.
func leasesOf(fs fileio.FS, dir string) *tableLeases {
	id, ok := fs.(fileio.Identifier)
	if !ok {
		return nil
	}
	k := leaseKey{fs: id.Identity(), table: dir}
	leaseRegistry.Lock()
	defer leaseRegistry.Unlock()
	if leaseRegistry.tables == nil {
		leaseRegistry.tables = map[leaseKey]*tableLeases{}
	}
	t := leaseRegistry.tables[k]
	if t == nil {
		t = &tableLeases{parents: map[base.SnapshotID]int{}}
		leaseRegistry.tables[k] = t
	}
	return t
}

// Lease records that a commit of this process builds on snapshot parent
// (0 when the table had none) until release is called, which must be
// called exactly once [commit-lease]. Meanwhile an expiration of this
// process keeps parent and every newer snapshot. stale reports that
// parent is below the fence an expiration of this process recorded: it
// may be removed already (LeaseLatest tells, and is what a commit calls),
// or the fence may be from an earlier life of a table dropped and created
// again at the same path. A file system without an identity gives a lease
// that does nothing.
func (m *Manager) Lease(parent base.SnapshotID) (release func(), stale bool) {
	release, stale, _ = m.lease(parent)
	return release, stale
}

// lease is Lease that also returns the number of LimitExpiry calls made
// before it.
func (m *Manager) lease(parent base.SnapshotID) (release func(), stale bool, gen uint64) {
	t := m.leases
	if t == nil {
		return func() {}, false, 0
	}
	t.mu.Lock()
	t.parents[parent]++
	stale, gen = parent < t.fence, t.gen
	t.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			t.mu.Lock()
			if t.parents[parent]--; t.parents[parent] <= 0 {
				delete(t.parents, parent)
			}
			t.mu.Unlock()
		})
	}, stale, gen
}

// LimitExpiry returns earliest, the first snapshot an expiration is about
// to keep, lowered to the oldest parent leased by a commit in flight in
// this process but not below floor (the oldest snapshot present), and
// records the result as the fence that later leases are checked against
// [commit-lease]. An expiration calls it after its last look at the
// consumers and before it deletes anything, and deletes only snapshots
// below what it returns.
func (m *Manager) LimitExpiry(earliest, floor base.SnapshotID) base.SnapshotID {
	t := m.leases
	if t == nil {
		return earliest
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for p := range t.parents {
		if p < earliest {
			earliest = max(p, floor)
		}
	}
	t.fence = max(t.fence, earliest)
	t.gen++
	return earliest
}

// generation returns how many times an expiration of this process called
// LimitExpiry on the table (0 without a registry entry).
func (m *Manager) generation() uint64 {
	t := m.leases
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.gen
}

// LeaseLatest reads the latest snapshot (nil for none) and leases it as
// the parent of a commit (Lease) [commit-lease]. The lease is stale only
// when an expiration of this process chose what to keep between the read
// and the lease, and removes the snapshot read: one that chose before the
// read kept what the read found latest (an expiration keeps the latest,
// and ids only grow), and one that chooses after the lease keeps the
// parent. A stale lease is given back and the latest read again.
//
// Dropped design: lease, and when the lease is below the fence read the
// latest again, and take the lease if it is still the same snapshot. A
// table dropped and created again at the same path in the process
// inherits the fence of its earlier life, above all of its snapshots:
// every lease was below it, so a lease taken after an expiration of the
// new life chose to remove its parent was taken as well.
func (m *Manager) LeaseLatest() (*Snapshot, func(), error) {
	for {
		gen := m.generation()
		latest, err := m.Latest()
		if err != nil {
			return nil, nil, err
		}
		var id base.SnapshotID
		if latest != nil {
			id = latest.ID
		}
		release, stale, now := m.lease(id)
		if !stale || now == gen {
			return latest, release, nil
		}
		release()
	}
}
