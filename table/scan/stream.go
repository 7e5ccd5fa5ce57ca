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
	// Changes are records of the epoch, in changelog order; empty when the
	// stream has Types, which gives them as a chunk instead (Chunk).
	Changes []Change
	// chunk holds the changes when the stream has Types.
	chunk *types.Chunk
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
	// Types, when set (the table's column types, in order), makes Next
	// give each batch's changes as a chunk of these types (Batch.Chunk)
	// and leave Changes empty: the records are copied column by column
	// out of the decoded files (types.Vector.AppendRange), not into rows
	// of datums and back into columns. A table source reading bid at
	// 100K records/s spent 7% of its process's CPU, and allocated 3 GB a
	// minute, going through rows.
	Types   []types.Type
	cur     changelog // of pos.Snapshot, listed lazily
	curSnap *snapshot.Snapshot
}

// changelog is the changelog of one snapshot, read a file at a time
// (invariant one-file): the files are listed when the stream reaches the
// snapshot, and only the file that holds the stream's offset is decoded,
// then dropped once its records are returned. A snapshot's changelog is
// the concatenation of its files in manifest order, so the record at
// offset o is record o - start of the file whose [start, start+Rows)
// holds it, whatever the batches' bounds were: a Position saved in a
// checkpoint resumes at the same record.
//
// Loading a whole snapshot's changelog as rows before returning its first
// piece was tried first; a view that lagged behind its input by a few
// epochs of large snapshots then held hundreds of MB of rows per stream.
type changelog struct {
	read  *schema.Schema // the schema the files are read with
	files []manifest.Entry
	total int64 // records of all files
	// file is the index in files of the decoded block blk, whose first
	// record is at offset start of the changelog; blk is nil when no
	// file is decoded.
	file  int
	start int64
	blk   *record.Block
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
		if s.pos.Offset > s.cur.total {
			return b, false, fmt.Errorf("table %s: snapshot %d: offset %d past its %d changelog records: %w",
				s.st.Dir, s.curSnap.ID, s.pos.Offset, s.cur.total, base.ErrOutOfRange)
		}
		end := min(s.cur.total, s.pos.Offset+int64(max(s.MaxRows, 1)))
		if end > s.pos.Offset {
			if s.Types != nil {
				b.chunk = types.NewChunk(s.Types, int(end-s.pos.Offset))
			} else {
				b.Changes = make([]Change, 0, end-s.pos.Offset)
			}
		}
		for s.pos.Offset < end {
			blk, lo, err := s.block()
			if err != nil {
				return Batch{}, false, err
			}
			hi := min(int64(blk.Len()), lo+end-s.pos.Offset)
			if b.chunk != nil {
				if err := appendColumns(b.chunk, blk, int(lo), int(hi)); err != nil {
					return Batch{}, false, fmt.Errorf("table %s: snapshot %d: %w", s.st.Dir, s.curSnap.ID, err)
				}
			} else {
				b.Changes = appendChanges(b.Changes, blk, int(lo), int(hi))
			}
			s.pos.Offset += hi - lo
		}
		if s.pos.Offset == s.cur.total {
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
	s.cur, s.curSnap = changelog{}, nil
	if s.consumer != "" {
		return s.st.Snapshots.SetConsumer(s.consumer, s.pos.Snapshot)
	}
	return nil
}

// load lists the changelog files of snapshot sn: its changelog files,
// or for a table without them (append tables), its new data files. No
// file is read until Next needs its records (invariant one-file).
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
	cl := changelog{read: read}
	for _, e := range entries {
		if e.Kind != manifest.Add || (!input && (e.File.Level != 0 || read.HasPrimaryKey())) || e.File.Rows == 0 {
			continue
		}
		cl.files = append(cl.files, e)
		cl.total += e.File.Rows
	}
	s.cur, s.curSnap = cl, sn
	return nil
}

// block returns the decoded file that holds the record at s.pos.Offset
// and that record's index in it, decoding the file (and dropping the one
// decoded before) when the offset has moved past the decoded one.
// s.pos.Offset must be below s.cur.total.
func (s *Stream) block() (*record.Block, int64, error) {
	c := &s.cur
	if c.blk == nil || s.pos.Offset < c.start {
		// A stream that starts or resumes inside the snapshot skips the
		// files before its offset by their record counts alone.
		c.file, c.start, c.blk = 0, 0, nil
	}
	for c.start+c.files[c.file].File.Rows <= s.pos.Offset {
		c.start += c.files[c.file].File.Rows
		c.file++
		c.blk = nil
	}
	if c.blk == nil {
		e := c.files[c.file]
		// Changelog files and the files of append tables are read once
		// per stream: they do not go into the store's cache.
		blk, err := s.st.ReadBlockOnce(e.Bucket, e.File, c.read)
		if err != nil {
			return nil, 0, fmt.Errorf("snapshot %d: %w", s.curSnap.ID, err)
		}
		c.blk = blk
	}
	return c.blk, s.pos.Offset - c.start, nil
}

// appendChanges appends records [lo, hi) of blk to dst, their rows carved
// from one new block of datums (string values alias the block's memory,
// as Block.KVs's do).
func appendChanges(dst []Change, blk *record.Block, lo, hi int) []Change {
	n, w := hi-lo, len(blk.Cols)
	slab := make([]types.Datum, n*w)
	for c := range blk.Cols {
		v := &blk.Cols[c]
		for i := 0; i < n; i++ {
			slab[i*w+c] = v.Get(lo + i)
		}
	}
	for i := 0; i < n; i++ {
		dst = append(dst, Change{Kind: blk.Kinds[lo+i], Row: types.Row(slab[i*w : (i+1)*w : (i+1)*w])})
	}
	return dst
}

// appendColumns appends records [lo, hi) of blk to c column by column
// (string values alias the block's memory, as appendChanges's do). A
// block whose columns are not of c's types, by number or family, gives an
// error wrapping base.ErrInvalidArgument.
func appendColumns(c *types.Chunk, blk *record.Block, lo, hi int) error {
	if len(blk.Cols) != len(c.Cols) {
		return fmt.Errorf("changelog records of %d columns, the stream's types give %d: %w", len(blk.Cols), len(c.Cols), base.ErrInvalidArgument)
	}
	for i := range c.Cols {
		if !c.Cols[i].Type.SameFamily(blk.Cols[i].Type) {
			return fmt.Errorf("changelog column %d is %s, the stream's types give %s: %w", i+1, blk.Cols[i].Type, c.Cols[i].Type, base.ErrInvalidArgument)
		}
	}
	c.Kinds = append(c.Kinds, blk.Kinds[lo:hi]...)
	for i := range c.Cols {
		c.Cols[i].AppendRange(&blk.Cols[i], lo, hi)
	}
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

// Len returns the number of changes in the batch.
func (b *Batch) Len() int {
	if b.chunk != nil {
		return b.chunk.Len()
	}
	return len(b.Changes)
}

// Chunk returns the batch's changes as a chunk of columns of types ts (the
// table's column types): the chunk Next built when the stream has Types
// (of the same types), else a new one from Changes.
func (b *Batch) Chunk(ts []types.Type) *types.Chunk {
	if b.chunk != nil {
		return b.chunk
	}
	c := types.NewChunk(ts, len(b.Changes))
	for _, ch := range b.Changes {
		c.Append(ch.Kind, ch.Row)
	}
	return c
}
