package scan

import (
	"errors"
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/record"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/table/snapshot"
	"github.com/stratadb/strata/table/store"
)

// Position is where a stream resumes: the next snapshot to read and how
// many of its changelog records were already returned. It is a plain
// value; sources keep it in their checkpoints.
type Position struct {
	Snapshot base.SnapshotID `json:"snapshot"`
	Offset   int64           `json:"offset"`
}

// Change is one changelog record.
type Change struct {
	Kind types.RowKind
	Row  types.Row
}

// Batch is what Next returns.
type Batch struct {
	// Snapshot and Epoch say where the changes come from.
	Snapshot base.SnapshotID
	Epoch    base.Epoch
	// Changes are records of the epoch, in changelog order.
	Changes []Change
	// EndOfEpoch is set on the last batch of a snapshot: every change of
	// Epoch has been returned, and epoch barrier Epoch may follow.
	EndOfEpoch bool
	// Next is the position after this batch.
	Next Position
}

// Stream reads a table's changelog. It is not safe for concurrent use.
type Stream struct {
	st       *store.Store
	pos      Position
	consumer string
	// MaxRows bounds the changes of one batch.
	MaxRows int
	cur     []record.KV // changelog of pos.Snapshot, loaded lazily
	curSnap *snapshot.Snapshot
}

// ErrExpired marks a stream whose next snapshot was expired; it wraps
// base.ErrNotFound.
var ErrExpired = fmt.Errorf("scan: snapshot expired before the stream read it: %w", base.ErrNotFound)

// NewStream returns a stream from pos. With a non-empty consumer id, the
// stream registers and updates a consumer so that expiration keeps the
// snapshots it still needs.
func NewStream(st *store.Store, pos Position, consumer string) (*Stream, error) {
	if pos.Snapshot == 0 {
		pos.Snapshot = 1
	}
	if err := streamable(st); err != nil {
		return nil, err
	}
	s := &Stream{st: st, pos: pos, consumer: consumer, MaxRows: 4096}
	if consumer != "" {
		if err := st.Snapshots.SetConsumer(consumer, pos.Snapshot); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// FromEarliest returns a stream from the earliest snapshot, registered as
// consumer id; it follows the expiry fence protocol (snapshot.SetConsumer)
// so that the start cannot be expired under it.
func FromEarliest(st *store.Store, consumer string) (*Stream, error) {
	if err := streamable(st); err != nil {
		return nil, err
	}
	for attempt := 0; attempt < 100; attempt++ {
		start, err := st.Snapshots.EarliestID()
		if err != nil {
			return nil, err
		}
		if f := st.Snapshots.EarliestFence(); f > start {
			start = f
		}
		if start == 0 {
			start = 1
		}
		if err := st.Snapshots.SetConsumer(consumer, start); err != nil {
			return nil, err
		}
		if f := st.Snapshots.EarliestFence(); f > start {
			continue // an expiration is passing start: try again
		}
		return &Stream{st: st, pos: Position{Snapshot: start}, consumer: consumer, MaxRows: 4096}, nil
	}
	return nil, fmt.Errorf("table %s: consumer %s cannot find a stable earliest snapshot: %w", st.Dir, consumer, base.ErrConflict)
}

// Position returns the current position.
func (s *Stream) Position() Position { return s.pos }

// Close unregisters the stream's consumer, if any.
func (s *Stream) Close() error {
	if s.consumer == "" {
		return nil
	}
	return s.st.Snapshots.DeleteConsumer(s.consumer)
}

// CommittedEpoch is the table's committed epoch: once Next reports no
// more data, every change of epochs up to it has been returned.
func (s *Stream) CommittedEpoch() (base.Epoch, error) { return s.st.Snapshots.CommittedEpoch() }

// Next returns the next batch; ok is false when the stream is caught up
// with the latest snapshot. A snapshot that no longer exists while newer
// ones do gives ErrExpired.
func (s *Stream) Next() (b Batch, ok bool, err error) {
	for {
		if s.curSnap == nil {
			// Latest first: a snapshot missing at or below the latest id
			// read before it is expired, not yet to come.
			latest, err := s.st.Snapshots.LatestID()
			if err != nil {
				return b, false, err
			}
			if latest < s.pos.Snapshot {
				return b, false, nil
			}
			sn, err := s.st.Snapshots.Get(s.pos.Snapshot)
			if errors.Is(err, base.ErrNotFound) {
				return b, false, fmt.Errorf("table %s: snapshot %d: %w", s.st.Dir, s.pos.Snapshot, ErrExpired)
			}
			if err != nil {
				return b, false, err
			}
			if sn.CommitKind != snapshot.Append {
				if err := s.advance(); err != nil {
					return b, false, err
				}
				continue
			}
			if err := s.load(sn); err != nil {
				return b, false, err
			}
		}
		b = Batch{Snapshot: s.curSnap.ID, Epoch: s.curSnap.Epoch}
		start := s.pos.Offset
		end := min(int64(len(s.cur)), start+int64(s.MaxRows))
		for _, kv := range s.cur[start:end] {
			b.Changes = append(b.Changes, Change{Kind: kv.Kind, Row: kv.Row})
		}
		s.pos.Offset = end
		if end == int64(len(s.cur)) {
			b.EndOfEpoch = true
			if err := s.advance(); err != nil {
				return b, false, err
			}
		}
		b.Next = s.pos
		return b, true, nil
	}
}

func (s *Stream) advance() error {
	s.pos = Position{Snapshot: s.pos.Snapshot + 1}
	s.cur, s.curSnap = nil, nil
	if s.consumer != "" {
		return s.st.Snapshots.SetConsumer(s.consumer, s.pos.Snapshot)
	}
	return nil
}

// load reads the changelog of snapshot sn: its changelog files, or for a
// table without them (append tables), the rows of its new data files.
func (s *Stream) load(sn *snapshot.Snapshot) error {
	read, err := s.st.Schemas.Latest()
	if err != nil {
		return err
	}
	ref := sn.ChangelogManifestList
	input := !ref.IsZero()
	if !input {
		ref = sn.DeltaManifestList
	}
	entries, err := s.st.Manifests.ReadEntries(ref)
	if err != nil {
		return fmt.Errorf("snapshot %d: %w", sn.ID, err)
	}
	var cur []record.KV
	for _, e := range entries {
		if e.Kind != manifest.Add || (!input && (e.File.Level != 0 || read.HasPrimaryKey())) {
			continue
		}
		kvs, err := s.st.ReadFile(e.Bucket, e.File, read)
		if err != nil {
			return fmt.Errorf("snapshot %d: %w", sn.ID, err)
		}
		cur = append(cur, kvs...)
	}
	s.cur, s.curSnap = cur, sn
	return nil
}

// streamable refuses streams over primary-key tables that write no
// changelog (changelog-producer=none): their data files alone cannot give
// the retractions a reader needs.
func streamable(st *store.Store) error {
	sc, err := st.Schemas.Latest()
	if err != nil {
		return err
	}
	o, err := schema.ParseOptions(sc)
	if err != nil {
		return err
	}
	if sc.HasPrimaryKey() && o.ChangelogProducer == schema.ChangelogNone {
		return fmt.Errorf("table %s: streaming read of a primary-key table with changelog-producer=none: %w", st.Dir, base.ErrInvalidArgument)
	}
	return nil
}

// Chunk returns the batch's changes as a chunk of columns of types ts (the
// table's column types).
func (b *Batch) Chunk(ts []types.Type) *types.Chunk {
	c := types.NewChunk(ts, len(b.Changes))
	for _, ch := range b.Changes {
		c.Append(ch.Kind, ch.Row)
	}
	return c
}
