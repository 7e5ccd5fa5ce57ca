package snapshot

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

// Dir is the snapshot directory inside a table directory.
const Dir = "snapshot"

// Hint and marker file names inside Dir.
const (
	LatestHint     = "LATEST"
	EarliestHint   = "EARLIEST"
	CommittedEpoch = "COMMITTED-EPOCH"
)

// Manager reads and publishes the snapshots of one table. Snapshots are
// immutable, so reads need no locking, and decoded ones are kept (cache).
type Manager struct {
	fs    fileio.FS
	table string
	// decoded are the snapshots this manager read or published.
	decoded cache
	// known is the highest snapshot id this manager has seen present:
	// ids only grow and the latest snapshot is never deleted while the
	// table exists, so LatestID probes forward from it with one stat
	// when nothing is new (a caught-up reader polls LatestID).
	known atomic.Uint64
	// latest is the snapshot Latest last read: snapshots are immutable.
	latest atomic.Pointer[Snapshot]
	// listedEmpty is when a listing last found no snapshot (Unix
	// nanoseconds; 0 if none did).
	listedEmpty atomic.Int64
	// leases is the table's entry in the process's registry of commits in
	// flight (Lease); nil when the file system has no identity.
	leases *tableLeases
	// change wakes the readers of this process waiting for the table to
	// change (Changed).
	change struct {
		sync.Mutex
		// ch is closed at the next change; nil while nobody waits.
		ch chan struct{}
	}
}

// NewManager returns the snapshot manager of the table at dir.
func NewManager(fs fileio.FS, dir string) *Manager {
	return &Manager{fs: fs, table: dir, leases: leasesOf(fs, path.Clean("/"+dir))}
}

// Table returns the table directory, for error messages.
func (m *Manager) Table() string { return m.table }

// Path returns the path of snapshot id.
func (m *Manager) Path(id base.SnapshotID) string {
	return m.table + "/" + Dir + "/snapshot-" + id.String()
}

func (m *Manager) decode(p string, b []byte) (*Snapshot, error) {
	s := &Snapshot{}
	if err := fileio.DecodeJSON(p, b, s); err != nil {
		return nil, fmt.Errorf("table %s: %w", m.table, err)
	}
	if err := s.checkFormat(); err != nil {
		return nil, fmt.Errorf("table %s: snapshot file %s: %v: %w", m.table, p, err, base.ErrCorruption)
	}
	return s, nil
}

// Get reads snapshot id. A missing snapshot gives an error wrapping
// base.ErrNotFound naming table and snapshot; a bad file
// base.ErrCorruption.
//
// The manager keeps the snapshots it decoded or published (cache); for
// one of those, Get checks only that the file still exists (a stat)
// rather than reading and decoding it again. The check keeps Get exact
// when the file was deleted elsewhere than through Delete: by the
// expiration of another process or another Manager of the table, or by
// dropping the table; the readers of a snapshot, the commit's duplicate
// check and AtOrBeforeEpoch take a missing snapshot for an expired one.
// Dropped design: no check at all. A snapshot deleted elsewhere would
// then still be served, and readers would fail later on its missing
// manifests instead of looking at a newer snapshot.
//
// The caller may change the returned snapshot; the metas of its inline
// manifest lists are shared with the cache and must not be modified.
func (m *Manager) Get(id base.SnapshotID) (*Snapshot, error) {
	p := m.Path(id)
	if s, ok := m.decoded.get(id); ok {
		found, err := m.fs.Exists(p)
		if err != nil {
			return nil, fmt.Errorf("table %s: snapshot %d: %w", m.table, id, err)
		}
		if found {
			return s, nil
		}
		// Deleted elsewhere (or dropped and maybe created again): read
		// it as if it had never been cached.
		m.decoded.drop(id)
	}
	b, err := m.fs.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("table %s: snapshot %d: %w", m.table, id, err)
	}
	s, err := m.decode(p, b)
	if err != nil {
		return nil, err
	}
	if s.ID != id {
		return nil, fmt.Errorf("table %s: snapshot file %s holds id %d: %w", m.table, p, s.ID, base.ErrCorruption)
	}
	m.decoded.put(s)
	return s, nil
}

// Publish writes s as snapshot s.ID with put-if-absent ([publish-once]).
// Losing the race gives an error wrapping base.ErrConflict.
func (m *Manager) Publish(s *Snapshot) error {
	p, err := m.Prepare(s)
	if err != nil {
		return err
	}
	return p.Publish()
}

// Pending is a snapshot file written in full but not published: nothing
// can read it until Publish ([publish-once]).
type Pending struct {
	m    *Manager
	s    *Snapshot
	file fileio.Pending
}

// Prepare encodes s and writes its file durably without publishing it
// (fileio.Prepare), so that a commit can write the snapshot while it
// writes the manifests the snapshot names, and publish it, at the cost of
// its name only, once they are durable ([manifests-before-snapshot] in
// package commit).
func (m *Manager) Prepare(s *Snapshot) (*Pending, error) {
	s.Version = s.formatVersion()
	b, err := fileio.EncodeJSON(s)
	if err != nil {
		return nil, err
	}
	f, err := fileio.Prepare(m.fs, m.Path(s.ID), b)
	if err != nil {
		return nil, fmt.Errorf("table %s: prepare snapshot %d: %w", m.table, s.ID, err)
	}
	return &Pending{m: m, s: s, file: f}, nil
}

// Snapshot returns the prepared snapshot.
func (p *Pending) Snapshot() *Snapshot { return p.s }

// Publish makes the prepared snapshot snapshot s.ID with put-if-absent and
// makes its name durable (fsync of the snapshot directory) before it
// returns and wakes the readers of Changed. Losing the race gives an
// error wrapping base.ErrConflict (fileio.ErrExist).
func (p *Pending) Publish() error {
	m := p.m
	if err := p.file.Publish(); err != nil {
		return fmt.Errorf("table %s: publish snapshot %d: %w", m.table, p.s.ID, err)
	}
	if err := fileio.SyncDir(m.fs, m.table+"/"+Dir); err != nil {
		return fmt.Errorf("table %s: publish snapshot %d: %w", m.table, p.s.ID, err)
	}
	m.decoded.put(p.s)
	m.notifyChange()
	return nil
}

// Discard drops an unpublished snapshot file.
func (p *Pending) Discard() { p.file.Discard() }

// Changed returns a channel that is closed once this manager publishes a
// snapshot or raises the committed-epoch marker after the call: a reader
// in the same process that found nothing new waits on it (with a timeout)
// instead of polling on a clock, so it sees a commit as soon as the writer
// makes it. It is a wake-up, not a guarantee of news: look again after it
// fires, and keep the timeout, which is how changes made through another
// Manager or by another process are seen (invariant wake-or-poll).
func (m *Manager) Changed() <-chan struct{} {
	m.change.Lock()
	defer m.change.Unlock()
	if m.change.ch == nil {
		m.change.ch = make(chan struct{})
	}
	return m.change.ch
}

// notifyChange wakes the waiters of Changed.
func (m *Manager) notifyChange() {
	m.change.Lock()
	if m.change.ch != nil {
		close(m.change.ch)
		m.change.ch = nil
	}
	m.change.Unlock()
}

// Delete removes the file of snapshot id ([pointer-first]: callers delete
// what it references afterwards) and forgets its decoded snapshot.
func (m *Manager) Delete(id base.SnapshotID) error {
	m.decoded.drop(id)
	return m.fs.Delete(m.Path(id))
}

// IDs lists the snapshot ids present, ascending.
func (m *Manager) IDs() ([]base.SnapshotID, error) {
	files, err := m.fs.List(m.table + "/" + Dir)
	if err != nil {
		return nil, fmt.Errorf("table %s: list snapshots: %w", m.table, err)
	}
	var ids []base.SnapshotID
	for _, f := range files {
		if n, ok := strings.CutPrefix(f.Name, "snapshot-"); ok {
			if v, err := strconv.ParseUint(n, 10, 64); err == nil {
				ids = append(ids, base.SnapshotID(v))
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids, nil
}

func (m *Manager) readHint(name string) (base.SnapshotID, bool) {
	b, err := m.fs.ReadFile(m.table + "/" + Dir + "/" + name)
	if err != nil {
		return 0, false
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, false
	}
	return base.SnapshotID(v), true
}

func (m *Manager) writeHint(name string, id base.SnapshotID) error {
	return m.fs.WriteFile(m.table+"/"+Dir+"/"+name, []byte(id.String()))
}

func (m *Manager) exists(id base.SnapshotID) (bool, error) { return m.fs.Exists(m.Path(id)) }

// LatestID returns the highest snapshot id, or 0 if the table has no
// snapshot. It probes forward from the highest id the manager has seen,
// else from the LATEST hint; without either it looks for snapshot 1 and
// lists the directory (an empty table at most once a second), so a reader
// polling a table that has nothing new costs one stat.
func (m *Manager) LatestID() (base.SnapshotID, error) {
	h := base.SnapshotID(m.known.Load())
	last := m.listedEmpty.Load()
	recentlyEmpty := last != 0 && time.Since(time.Unix(0, last)) < time.Second
	if h == 0 && !recentlyEmpty {
		if hint, ok := m.readHint(LatestHint); ok && hint > 0 {
			if ok, err := m.exists(hint); err == nil && ok {
				h = hint
			}
		}
	}
	if h == 0 {
		// Nothing seen and no usable hint: an empty table (whose first
		// snapshot will be 1: one stat finds it), or one whose hint is
		// lost and whose first snapshots expired, which a listing finds;
		// an empty table is listed at most once a second.
		ok, err := m.exists(1)
		if err != nil {
			return 0, err
		}
		switch {
		case ok:
			h = 1
		case recentlyEmpty:
			return 0, nil
		default:
			ids, err := m.IDs()
			if err != nil {
				return 0, err
			}
			if len(ids) == 0 {
				m.listedEmpty.Store(time.Now().UnixNano())
				return 0, nil
			}
			h = ids[len(ids)-1]
		}
	}
	for {
		next, err := m.exists(h + 1)
		if err != nil {
			return 0, err
		}
		if !next {
			break
		}
		h++
	}
	for {
		k := m.known.Load()
		if uint64(h) <= k || m.known.CompareAndSwap(k, uint64(h)) {
			break
		}
	}
	return h, nil
}

// Latest reads the latest snapshot; nil without error if there is none.
// The snapshot is shared with the other callers of Latest: do not modify
// it.
//
// LatestID probes forward from the highest id this manager has seen, and
// stops at the first id missing: when the snapshots after that one have
// been published (through this manager, which does not count them, or
// elsewhere) and expired since, the id it returns is gone too, and not
// the latest. So Latest checks that the snapshot it returns still exists
// (Get does, for a cached one), and looks again from scratch when it does
// not, without trusting a listing that found the table empty: it was not.
// Returning the snapshot seen last made a commit build on it and publish
// the next id, which put-if-absent allowed as that id had expired, so
// that the commit's snapshot replaced an expired one beside the real
// latest, which never got the commit's epochs.
func (m *Manager) Latest() (*Snapshot, error) {
	for range 8 {
		id, err := m.LatestID()
		if err != nil || id == 0 {
			return nil, err
		}
		if c := m.latest.Load(); c != nil && c.ID == id {
			ok, err := m.exists(id)
			if err != nil {
				return nil, fmt.Errorf("table %s: snapshot %d: %w", m.table, id, err)
			}
			if ok {
				return c, nil
			}
		}
		s, err := m.Get(id)
		if errors.Is(err, base.ErrNotFound) {
			// Gone: expired after snapshots this manager did not see, or
			// the table was dropped (and maybe created again) under this
			// handle; look again from scratch.
			m.known.Store(0)
			m.listedEmpty.Store(0)
			continue
		}
		if err == nil {
			m.latest.Store(s)
		}
		return s, err
	}
	return nil, fmt.Errorf("table %s: latest snapshot keeps vanishing: %w", m.table, base.ErrConflict)
}

// EarliestID returns the smallest snapshot id present, or 0.
func (m *Manager) EarliestID() (base.SnapshotID, error) {
	ids, err := m.IDs()
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return ids[0], nil
}

// SetLatestHint records id in LATEST (best effort by callers). The write
// is atomic but not durable (fileio.WriteHint): LatestID checks the hint
// and probes forward from it, or lists the directory without one.
func (m *Manager) SetLatestHint(id base.SnapshotID) error {
	return fileio.WriteHint(m.fs, m.table+"/"+Dir+"/"+LatestHint, []byte(id.String()))
}

// EarliestFence returns the EARLIEST hint, 0 if absent. Expiration raises
// it before it deletes any snapshot (see Consumer).
func (m *Manager) EarliestFence() base.SnapshotID {
	h, _ := m.readHint(EarliestHint)
	return h
}

// SetEarliestFence writes the EARLIEST hint atomically.
func (m *Manager) SetEarliestFence(id base.SnapshotID) error { return m.writeHint(EarliestHint, id) }

// AtOrBeforeEpoch returns the newest snapshot whose epoch is <= e, or nil
// if every snapshot is newer (or there is none). It relies on
// [epoch-monotonic] and binary-searches the ids.
func (m *Manager) AtOrBeforeEpoch(e base.Epoch) (*Snapshot, error) {
	ids, err := m.IDs()
	if err != nil {
		return nil, err
	}
	var found *Snapshot
	lo, hi := 0, len(ids)-1
	for lo <= hi {
		mid := (lo + hi) / 2
		s, err := m.Get(ids[mid])
		if errors.Is(err, base.ErrNotFound) {
			// Expired under us: search the newer half.
			lo = mid + 1
			continue
		}
		if err != nil {
			return nil, err
		}
		if s.Epoch <= e {
			found = s
			lo = mid + 1
		} else {
			hi = mid - 1
		}
	}
	return found, nil
}

// marker is the committed-epoch marker file.
type marker struct {
	Version    int        `json:"version"`
	Epoch      base.Epoch `json:"epoch"`
	CommitUser string     `json:"commitUser"`
}

func (m *Manager) markerPath() string { return m.table + "/" + Dir + "/" + CommittedEpoch }

// markerEpoch reads the committed-epoch marker; 0 if absent.
func (m *Manager) markerEpoch() (base.Epoch, error) {
	p := m.markerPath()
	b, err := m.fs.ReadFile(p)
	if errors.Is(err, base.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	var mk marker
	if err := fileio.DecodeJSON(p, b, &mk); err != nil {
		return 0, fmt.Errorf("table %s: %w", m.table, err)
	}
	if mk.Version != FormatVersion {
		return 0, fmt.Errorf("table %s: %s: unknown format version %d: %w", m.table, p, mk.Version, base.ErrCorruption)
	}
	return mk.Epoch, nil
}

// CommittedEpoch returns the table's committed epoch: the larger of the
// committed-epoch marker and the latest snapshot's epoch (package doc).
func (m *Manager) CommittedEpoch() (base.Epoch, error) {
	e, err := m.markerEpoch()
	if err != nil {
		return 0, err
	}
	latest, err := m.Latest()
	if err != nil {
		return 0, err
	}
	if latest != nil && latest.Epoch > e {
		e = latest.Epoch
	}
	return e, nil
}

// AdvanceCommittedEpoch raises the marker to e; it never lowers it. The
// table has a single writer, so read-then-replace is not racy.
func (m *Manager) AdvanceCommittedEpoch(e base.Epoch, user string) error {
	cur, err := m.markerEpoch()
	if err != nil {
		return err
	}
	if e <= cur {
		return nil
	}
	b, err := fileio.EncodeJSON(marker{Version: FormatVersion, Epoch: e, CommitUser: user})
	if err != nil {
		return err
	}
	if err := m.fs.WriteFile(m.markerPath(), b); err != nil {
		return err
	}
	m.notifyChange()
	return nil
}
