package commit

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// maxBaseManifests is how many manifests a base list may name before the
// committer merges them into one (Paimon's manifest full compaction).
const maxBaseManifests = 16

// hintEvery is how often, in snapshots, a commit rewrites the LATEST hint
// (see the package doc).
const hintEvery = 16

// maxParallelWrites bounds the files a commit writes at once.
const maxParallelWrites = 8

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
	var top base.Epoch
	user := ""
	// inSnapshot: the top epoch has a snapshot of its own, whose epoch
	// already makes the committed epoch (the larger of the marker and the
	// latest snapshot's epoch) reach it; only epochs that changed nothing
	// need the marker, which saves two fsyncs a commit.
	inSnapshot := false
	var work []*Message
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
		work = append(work, m)
	}
	ids, err := c.commitAll(work)
	if err != nil {
		return ids, err
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

// commitAll commits the messages that change the table, in order, as one
// batch: each attempt plans a snapshot per message not yet committed on
// top of the latest snapshot, writes them all (tryCommit), and goes back
// to the latest snapshot after a lost publish race.
func (c *Committer) commitAll(work []*Message) ([]base.SnapshotID, error) {
	var ids []base.SnapshotID
	for attempt := 0; len(work) > 0; attempt++ {
		latest, published, err := c.leasedAttempt(work)
		ids = append(ids, published...)
		if err == nil {
			return ids, nil
		}
		if attempt >= c.retries || !c.retryable(err, latest) {
			return ids, err
		}
		// The next attempt skips what this one published: the messages
		// are committed ([idempotent-commit]).
	}
	return ids, nil
}

// leasedAttempt is one attempt of commitAll: it leases the latest
// snapshot as its parent ([commit-lease], snapshot.Manager.LeaseLatest),
// commits work on top of it (tryCommit) and gives the lease back, also
// when the attempt panics, so that a failed commit never holds
// expiration back. It returns the snapshot it built on.
func (c *Committer) leasedAttempt(work []*Message) (*snapshot.Snapshot, []base.SnapshotID, error) {
	latest, release, err := c.st.Snapshots.LeaseLatest()
	if err != nil {
		return nil, nil, err
	}
	defer release()
	ids, err := c.tryCommit(latest, work)
	return latest, ids, err
}

// tryCommit plans the snapshots of work on top of latest and writes them:
// every manifest file and snapshot file at once, then one fsync of the
// manifest directory (none when every manifest is inline), then each
// snapshot published in order, its name made durable before the next
// ([manifests-before-snapshot], [snapshots-in-order]). It returns the ids
// it published.
func (c *Committer) tryCommit(latest *snapshot.Snapshot, work []*Message) ([]base.SnapshotID, error) {
	p := parent{snap: latest}
	if latest != nil {
		var err error
		if p.live, err = c.st.LiveFiles(latest); err != nil {
			return nil, err
		}
		for _, ref := range []manifest.FileRef{latest.BaseManifestList, latest.DeltaManifestList} {
			metas, err := c.st.Manifests.ReadList(ref)
			if err != nil {
				return nil, err
			}
			p.metas = append(p.metas, metas...)
		}
	}
	schemaIDs, err := c.st.Schemas.IDs()
	if err != nil {
		return nil, err
	}
	var latestSchema = work[0].SchemaID
	if n := len(schemaIDs); n > 0 {
		latestSchema = schemaIDs[n-1]
	}
	now := c.st.Now().UnixMilli()
	var plans []planned
	for _, m := range work {
		if m.Kind == snapshot.Append {
			done, err := c.committed(latest, m.CommitUser, m.Epoch)
			if err != nil {
				return nil, err
			}
			if done || plannedBy(plans, m.CommitUser, m.Epoch) {
				continue
			}
			if p.snap != nil && m.Epoch < p.snap.Epoch {
				return nil, fmt.Errorf("table %s: commit of epoch %d by %s after snapshot %d of epoch %d: epochs go backwards: %w",
					c.st.Dir, m.Epoch, m.CommitUser, p.snap.ID, p.snap.Epoch, base.ErrInvalidArgument)
			}
		}
		pl, err := plan(c.st.Dir, p, m, latestSchema, now, c.st.Manifests)
		if err != nil {
			return nil, err
		}
		plans = append(plans, pl)
		p = pl.next
	}
	if len(plans) == 0 {
		return nil, nil
	}
	pending, err := c.writeFiles(plans)
	if err != nil {
		return nil, err
	}
	// [manifests-before-snapshot]: no snapshot is published before the
	// names of every file it names are durable. Inline manifests are
	// part of the snapshot file.
	if wroteFiles(plans) {
		if err := c.st.Manifests.Sync(); err != nil {
			discard(pending)
			return nil, err
		}
	}
	var ids []base.SnapshotID
	for i, pd := range pending {
		// Publish makes the name durable before it returns, so a crash
		// never keeps snapshot N+1 without N ([snapshots-in-order]).
		if err := pd.Publish(); err != nil {
			discard(pending[i:])
			return ids, err
		}
		pl := plans[i]
		ids = append(ids, pl.snap.ID)
		c.st.RememberLive(pl.snap, pl.next.live)
		for _, f := range pl.files {
			c.st.Manifests.Remember(f.meta, f.entries)
		}
	}
	first, last := plans[0].snap.ID, plans[len(plans)-1].snap.ID
	if (first-1)/hintEvery != last/hintEvery {
		_ = c.st.Snapshots.SetLatestHint(last) // a hint: failure is harmless
	}
	return ids, nil
}

// wroteFiles reports whether plans write a manifest file.
func wroteFiles(plans []planned) bool {
	for _, pl := range plans {
		if len(pl.files) > 0 {
			return true
		}
	}
	return false
}

// plannedBy reports whether plans hold a snapshot by user of commit
// identifier >= e (a message repeated in one commit).
func plannedBy(plans []planned, user string, e base.Epoch) bool {
	for _, pl := range plans {
		if pl.snap.CommitKind == snapshot.Append && pl.snap.CommitUser == user && base.Epoch(pl.snap.CommitIdentifier) >= e {
			return true
		}
	}
	return false
}

// writeFiles writes the manifest files of plans (staged: content
// durable, names not yet) and prepares their snapshot files, all at once,
// at most maxParallelWrites at a time: each file's fsync is most of its
// cost, and the file system overlaps them. It returns the prepared
// snapshots in plan order; after an error nothing is left prepared.
func (c *Committer) writeFiles(plans []planned) ([]*snapshot.Pending, error) {
	pending := make([]*snapshot.Pending, len(plans))
	var jobs []func() error
	for i, pl := range plans {
		for _, f := range pl.files {
			jobs = append(jobs, func() error { return c.st.Manifests.Stage(f.name, f.data) })
		}
		jobs = append(jobs, func() (err error) {
			pending[i], err = c.st.Snapshots.Prepare(pl.snap)
			return err
		})
	}
	errs := parallel(maxParallelWrites, jobs...)
	for _, err := range errs {
		if err != nil {
			discard(pending)
			return nil, err
		}
	}
	return pending, nil
}

// discard drops prepared snapshots (nil ones are skipped).
func discard(pending []*snapshot.Pending) {
	for _, p := range pending {
		if p != nil {
			p.Discard()
		}
	}
}

// parallel runs fns, at most limit at once, and returns their errors in
// fns' order.
func parallel(limit int, fns ...func() error) []error {
	errs := make([]error, len(fns))
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, fn := range fns {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
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
