package snapshot

import (
	"slices"
	"sync"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/manifest"
)

// maxCached bounds the decoded snapshots a Manager keeps. It covers the
// default retention (snapshot.num-retained.max is 100), so that an
// expiration run, which reads every retained snapshot, decodes only the
// snapshots committed since the previous run.
const maxCached = 128

// cache holds decoded snapshots by id. Snapshot files are immutable once
// published ([publish-once]), so an entry stays right for as long as its
// file exists; Manager.Get checks that it does before it uses one (see
// Get). When full, the lowest id goes: readers and expiration mostly read
// the newest snapshots, and the oldest are the next to expire.
//
// Entries are never handed out: get and put copy (clone), so that a
// caller changing a snapshot it was given changes no other reader's.
type cache struct {
	mu struct {
		sync.Mutex
		// snaps are the decoded snapshots by id, at most maxCached;
		// guarded by mu.
		snaps map[base.SnapshotID]*Snapshot
	}
}

// get returns a copy of snapshot id if it is cached.
func (c *cache) get(id base.SnapshotID) (*Snapshot, bool) {
	c.mu.Lock()
	s, ok := c.mu.snaps[id]
	c.mu.Unlock()
	if !ok {
		return nil, false
	}
	return s.clone(), true
}

// put caches a copy of s, dropping the lowest id when the cache is full.
func (c *cache) put(s *Snapshot) {
	s = s.clone()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.mu.snaps == nil {
		c.mu.snaps = make(map[base.SnapshotID]*Snapshot)
	}
	c.mu.snaps[s.ID] = s
	if len(c.mu.snaps) <= maxCached {
		return
	}
	lowest := s.ID
	for id := range c.mu.snaps {
		lowest = min(lowest, id)
	}
	delete(c.mu.snaps, lowest)
}

// drop forgets snapshot id.
func (c *cache) drop(id base.SnapshotID) {
	c.mu.Lock()
	delete(c.mu.snaps, id)
	c.mu.Unlock()
}

// len returns the number of cached snapshots.
func (c *cache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.mu.snaps)
}

// clone returns a copy of s that shares only the metas of its inline
// manifest lists (manifest.FileRef.Metas), which nothing modifies: a
// commit builds new lists for every snapshot. The copy's lists are
// clipped, so that appending to one copies it.
func (s *Snapshot) clone() *Snapshot {
	c := *s
	if s.Watermark != nil {
		w := *s.Watermark
		c.Watermark = &w
	}
	for _, ref := range []*manifest.FileRef{&c.BaseManifestList, &c.DeltaManifestList, &c.ChangelogManifestList} {
		ref.Metas = slices.Clip(ref.Metas)
	}
	return &c
}
