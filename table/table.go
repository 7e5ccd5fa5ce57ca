package table

import (
	"time"

	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/compact"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
	"github.com/stratadb/strata/table/scan"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
	"github.com/stratadb/strata/table/write"
)

// Table is an opened table. It is safe for concurrent use; writers and
// streams it returns are not.
type Table struct {
	st *store.Store
}

// Create makes a new table at dir with schema 0 built from fields, the
// primary key (empty: an append table) and options (schema.Options keys).
// An existing table gives an error wrapping base.ErrConflict.
func Create(fs fileio.FS, dir string, fields []schema.Field, primaryKey []string, options map[string]string) (*Table, error) {
	sc, err := schema.New(fields, primaryKey, options)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", dir, err)
	}
	st := store.New(fs, dir)
	sc.TimeMillis = st.Now().UnixMilli()
	if err := st.Schemas.Commit(sc); err != nil {
		return nil, err
	}
	return &Table{st: st}, nil
}

// Open opens the table at dir. A directory without a schema gives an error
// wrapping base.ErrNotFound.
func Open(fs fileio.FS, dir string) (*Table, error) {
	st := store.New(fs, dir)
	if _, err := st.Schemas.Latest(); err != nil {
		return nil, err
	}
	return &Table{st: st}, nil
}

// Store gives the lower-level parts (maintenance, tests).
func (t *Table) Store() *store.Store { return t.st }

// Schema returns the latest schema.
func (t *Table) Schema() (*schema.Schema, error) { return t.st.Schemas.Latest() }

// Options returns the latest schema's parsed options.
func (t *Table) Options() (schema.Options, error) {
	sc, err := t.Schema()
	if err != nil {
		return schema.Options{}, err
	}
	return schema.ParseOptions(sc)
}

// NewWriter opens a writer for commit user user (write package doc).
func (t *Table) NewWriter(user string) (*write.Writer, error) { return write.New(t.st, user) }

// Commit publishes prepared messages idempotently, one snapshot per epoch
// that changed the table, and advances the committed epoch (commit
// package doc). It returns the new snapshot ids.
func (t *Table) Commit(msgs []commit.Message) ([]base.SnapshotID, error) {
	o, err := t.Options()
	if err != nil {
		return nil, err
	}
	return commit.New(t.st, o.CommitRetries).Commit(msgs)
}

// Latest returns the latest snapshot, nil if there is none.
func (t *Table) Latest() (*snapshot.Snapshot, error) { return t.st.Snapshots.Latest() }

// CommittedEpoch returns the table's committed epoch.
func (t *Table) CommittedEpoch() (base.Epoch, error) { return t.st.Snapshots.CommittedEpoch() }

// ReadSnapshot returns the rows of snapshot id (merge on read).
func (t *Table) ReadSnapshot(id base.SnapshotID) ([]types.Row, error) {
	sn, err := t.st.Snapshots.Get(id)
	if err != nil {
		return nil, err
	}
	return scan.Read(t.st, sn)
}

// ReadLatest returns the rows of the latest snapshot (none if empty).
func (t *Table) ReadLatest() ([]types.Row, error) {
	sn, err := t.Latest()
	if err != nil || sn == nil {
		return nil, err
	}
	return scan.Read(t.st, sn)
}

// ReadLatestChunks returns the rows of the latest snapshot (none if
// empty) as chunks, every row kind +I: the batch read without a datum per
// value (scan.ReadChunks).
func (t *Table) ReadLatestChunks() ([]*types.Chunk, error) {
	sn, err := t.Latest()
	if err != nil || sn == nil {
		return nil, err
	}
	return scan.ReadChunks(t.st, sn)
}

// ReadAtEpoch returns the rows of the table at epoch e: the newest
// snapshot with epoch <= e. An epoch above the committed epoch gives an
// error wrapping base.ErrOutOfRange: the table cannot answer for it yet.
func (t *Table) ReadAtEpoch(e base.Epoch) ([]types.Row, error) {
	ce, err := t.CommittedEpoch()
	if err != nil {
		return nil, err
	}
	if e > ce {
		return nil, fmt.Errorf("table %s: epoch %d is above the committed epoch %d: %w", t.st.Dir, e, ce, base.ErrOutOfRange)
	}
	sn, err := scan.AtEpoch(t.st, e)
	if err != nil || sn == nil {
		return nil, err
	}
	return scan.Read(t.st, sn)
}

// StreamFrom returns a changelog stream from pos; a non-empty consumer id
// registers it against expiration.
func (t *Table) StreamFrom(pos scan.Position, consumer string) (*scan.Stream, error) {
	return scan.NewStream(t.st, pos, consumer)
}

// StreamFromEarliest returns a changelog stream from the earliest
// snapshot, registered as consumer.
func (t *Table) StreamFromEarliest(consumer string) (*scan.Stream, error) {
	return scan.FromEarliest(t.st, consumer)
}

// Compact runs a dedicated compaction (all buckets with full) and commits
// it as a COMPACT snapshot; it returns the snapshot id, 0 if nothing was
// compacted. A concurrent commit that removed an input makes it fail with
// base.ErrConflict; nothing is lost.
func (t *Table) Compact(user string, full bool) (base.SnapshotID, error) {
	msg, err := compact.Table(t.st, user, full)
	if err != nil || msg.Empty() {
		return 0, err
	}
	ids, err := t.Commit([]commit.Message{msg})
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	return ids[0], nil
}

// AddColumn evolves the schema with a nullable column. Writers opened
// before keep the old schema; open a new writer afterwards.
func (t *Table) AddColumn(name string, typ types.Type) (*schema.Schema, error) {
	sc, err := t.Schema()
	if err != nil {
		return nil, err
	}
	next, err := sc.AddColumn(name, typ)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", t.st.Dir, err)
	}
	next.TimeMillis = t.st.Now().UnixMilli()
	if err := t.st.Schemas.Commit(next); err != nil {
		return nil, err
	}
	return next, nil
}

// Expire expires snapshots under the table's retention options
// (snapshot.num-retained.min/max, snapshot.time-retained); see package
// maintain.
func (t *Table) Expire() (maintain.ExpireResult, error) { return t.ExpireKeeping(0) }

// ExpireKeeping is Expire that also keeps snapshot keep and every newer
// one (maintain.ExpireOptions.KeepFrom; 0 keeps nothing more).
func (t *Table) ExpireKeeping(keep base.SnapshotID) (maintain.ExpireResult, error) {
	o, err := t.Options()
	if err != nil {
		return maintain.ExpireResult{}, err
	}
	return maintain.Expire(t.st, maintain.ExpireOptions{RetainMin: o.RetainMin, RetainMax: o.RetainMax, TimeRetained: o.TimeRetained, KeepFrom: keep})
}

// CreateTag pins snapshot id as tag name.
func (t *Table) CreateTag(name string, id base.SnapshotID) error {
	return t.st.Snapshots.CreateTag(name, id)
}

// RollbackToTag makes tag name's content the table's latest version.
func (t *Table) RollbackToTag(name, user string) (base.SnapshotID, error) {
	return maintain.RollbackToTag(t.st, name, user)
}

// OrphanFiles lists, and unless dry deletes, unreferenced files older
// than grace.
func (t *Table) OrphanFiles(grace time.Duration, dry bool) ([]string, error) {
	return maintain.OrphanFiles(t.st, grace, dry)
}

// Lookup returns the latest row of primary key key (key columns in key
// order), or nil if it is absent.
func (t *Table) Lookup(key types.Row) (types.Row, error) {
	sn, err := t.Latest()
	if err != nil || sn == nil {
		return nil, err
	}
	return scan.Lookup(t.st, sn, key)
}
