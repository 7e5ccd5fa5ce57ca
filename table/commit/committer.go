package commit

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// maxBaseManifests is how many manifests a base list may name before the
// committer merges them into one (Paimon's manifest full compaction).
const maxBaseManifests = 16

// Committer publishes messages of one table.
type Committer struct {
	st      *store.Store
	retries int
}

// New returns a committer for st that retries a lost publish race up to
// retries times.
func New(st *store.Store, retries int) *Committer { return &Committer{st: st, retries: retries} }

// Commit publishes msgs (see the package doc for the protocol). Messages
// may come in any order; they are committed by epoch. It returns the ids of
// the snapshots it published.
func (c *Committer) Commit(msgs []Message) ([]base.SnapshotID, error) {
	sorted := append([]Message(nil), msgs...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Epoch < sorted[j].Epoch })
	var ids []base.SnapshotID
	var top base.Epoch
	user := ""
	// inSnapshot: the top epoch has a snapshot of its own, whose epoch
	// already makes the committed epoch (the larger of the marker and the
	// latest snapshot's epoch) reach it; only epochs that changed nothing
	// need the marker, which saves two fsyncs a commit.
	inSnapshot := false
	for i := range sorted {
		m := &sorted[i]
		if m.Kind == "" {
			m.Kind = snapshot.Append
		}
		if m.Kind == snapshot.Append && m.Epoch > top {
			top, user, inSnapshot = m.Epoch, m.CommitUser, false
		}
		if m.Empty() {
			continue
		}
		if m.Kind == snapshot.Append && m.Epoch == top {
			inSnapshot = true
		}
		id, err := c.commitOne(m)
		if err != nil {
			return ids, err
		}
		if id != 0 {
			ids = append(ids, id)
		}
	}
	if top > 0 && !inSnapshot {
		if err := c.st.Snapshots.AdvanceCommittedEpoch(top, user); err != nil {
			return ids, fmt.Errorf("table %s: committed epoch %d: %w", c.st.Dir, top, err)
		}
	}
	return ids, nil
}

// committed reports whether user already committed epoch e, scanning back
// from latest while snapshot epochs are >= e ([epoch-monotonic]).
func (c *Committer) committed(latest *snapshot.Snapshot, user string, e base.Epoch) (bool, error) {
	for s := latest; s != nil; {
		if s.CommitKind == snapshot.Append && s.CommitUser == user && base.Epoch(s.CommitIdentifier) >= e {
			return true, nil
		}
		if s.Epoch < e || s.ID <= 1 {
			return false, nil
		}
		prev, err := c.st.Snapshots.Get(s.ID - 1)
		if errors.Is(err, base.ErrNotFound) {
			return false, nil // expired: nothing older can be e's snapshot
		}
		if err != nil {
			return false, err
		}
		s = prev
	}
	return false, nil
}

func (c *Committer) commitOne(m *Message) (base.SnapshotID, error) {
	for attempt := 0; ; attempt++ {
		latest, err := c.st.Snapshots.Latest()
		if err != nil {
			return 0, err
		}
		if m.Kind == snapshot.Append {
			done, err := c.committed(latest, m.CommitUser, m.Epoch)
			if err != nil {
				return 0, err
			}
			if done {
				return 0, nil
			}
			if latest != nil && m.Epoch < latest.Epoch {
				return 0, fmt.Errorf("table %s: commit of epoch %d by %s after snapshot %d of epoch %d: epochs go backwards: %w",
					c.st.Dir, m.Epoch, m.CommitUser, latest.ID, latest.Epoch, base.ErrInvalidArgument)
			}
		}
		id, err := c.tryCommit(latest, m)
		if err == nil {
			return id, nil
		}
		if attempt >= c.retries || !c.retryable(err, latest) {
			return 0, err
		}
	}
}

func (c *Committer) tryCommit(latest *snapshot.Snapshot, m *Message) (base.SnapshotID, error) {
	var live []manifest.Entry
	var baseMetas []manifest.FileMeta
	next := base.SnapshotID(1)
	var total int64
	epoch := m.Epoch
	if latest != nil {
		var err error
		if live, err = c.st.LiveFiles(latest); err != nil {
			return 0, err
		}
		for _, ref := range []manifest.FileRef{latest.BaseManifestList, latest.DeltaManifestList} {
			metas, err := c.st.Manifests.ReadList(ref)
			if err != nil {
				return 0, err
			}
			baseMetas = append(baseMetas, metas...)
		}
		next, total = latest.ID+1, latest.TotalRecordCount
		if m.Kind != snapshot.Append {
			epoch = latest.Epoch
		}
	}
	if err := Check(live, m); err != nil {
		return 0, fmt.Errorf("table %s: commit of epoch %d by %s on snapshot %d: %w", c.st.Dir, m.Epoch, m.CommitUser, next-1, err)
	}
	entries := m.Entries()
	var delta int64
	for _, e := range entries {
		if e.Kind == manifest.Add {
			delta += e.File.Rows
		} else {
			delta -= e.File.Rows
		}
	}
	cl := m.ChangelogEntries()
	var clRows int64
	for _, e := range cl {
		clRows += e.File.Rows
	}
	// The base, delta and changelog manifests (each a manifest, then the
	// list naming it) are written at once: each file is fsynced before it
	// is renamed into place, and in sequence those fsyncs were most of a
	// commit's time. None is named by anything until the snapshot is
	// published, after Sync, so their order does not matter
	// ([manifests-before-snapshot]).
	var baseRef, deltaRef, clRef manifest.FileRef
	errs := parallel(
		func() error {
			if len(baseMetas) > maxBaseManifests {
				meta, err := c.st.Manifests.WriteManifest(live, int64(m.SchemaID))
				if err != nil {
					return err
				}
				baseMetas = []manifest.FileMeta{meta}
			}
			var err error
			baseRef, err = c.st.Manifests.WriteList(baseMetas)
			return err
		},
		func() (err error) {
			deltaRef, err = c.writeManifest(entries, m.SchemaID)
			return err
		},
		func() (err error) {
			clRef, err = c.writeManifest(cl, m.SchemaID)
			return err
		})
	for _, err := range errs {
		if err != nil {
			return 0, err
		}
	}
	// A writer opened before a schema change commits with its older
	// schema; the snapshot takes the table's newest schema, under which
	// older files read with NULL in the added columns.
	schemaIDs, err := c.st.Schemas.IDs()
	if err != nil {
		return 0, err
	}
	schemaID := m.SchemaID
	if n := len(schemaIDs); n > 0 && schemaIDs[n-1] > schemaID {
		schemaID = schemaIDs[n-1]
	}
	s := &snapshot.Snapshot{
		ID: next, SchemaID: schemaID,
		BaseManifestList: baseRef, DeltaManifestList: deltaRef, ChangelogManifestList: clRef,
		CommitUser: m.CommitUser, CommitIdentifier: uint64(m.Epoch), CommitKind: m.Kind,
		TimeMillis: c.st.Now().UnixMilli(), TotalRecordCount: total + delta, DeltaRecordCount: delta,
		ChangelogRecordCount: clRows, Watermark: m.Watermark, Epoch: epoch,
	}
	if err := c.st.Manifests.Sync(); err != nil {
		return 0, err
	}
	if err := c.st.Snapshots.Publish(s); err != nil {
		return 0, err
	}
	_ = c.st.Snapshots.SetLatestHint(s.ID) // a hint: failure is harmless
	return s.ID, nil
}

// writeManifest writes entries as a manifest and a list naming it, and
// returns the list; no entries give the zero reference.
func (c *Committer) writeManifest(entries []manifest.Entry, schemaID schema.ID) (manifest.FileRef, error) {
	if len(entries) == 0 {
		return manifest.FileRef{}, nil
	}
	meta, err := c.st.Manifests.WriteManifest(entries, int64(schemaID))
	if err != nil {
		return manifest.FileRef{}, err
	}
	return c.st.Manifests.WriteList([]manifest.FileMeta{meta})
}

// parallel runs fns at once and returns their errors, in fns' order.
func parallel(fns ...func() error) []error {
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = fn()
		}()
	}
	wg.Wait()
	return errs
}

// retryable decides whether a failed attempt on top of latest may be
// retried: a lost publish race always may; a missing file only if the
// latest snapshot moved on meanwhile (an expiration may then have removed
// the files of the snapshot the attempt built on). Everything else is
// final ([commit-never-swallows]).
func (c *Committer) retryable(err error, latest *snapshot.Snapshot) bool {
	if errors.Is(err, fileio.ErrExist) {
		return true
	}
	if !errors.Is(err, base.ErrNotFound) || latest == nil {
		return false
	}
	now, lerr := c.st.Snapshots.LatestID()
	return lerr == nil && now != latest.ID
}
