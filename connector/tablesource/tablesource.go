package tablesource

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/scan"
)

// Config describes one table source subtask.
type Config struct {
	Table *table.Table
	// Name is the table's name, for messages.
	Name string
	// Types are the table's column types, the rows' types.
	Types []types.Type
	// Consumer, when set, registers with the table, as consumer Consumer,
	// the position of the source's last completed checkpoint, so that
	// snapshot expiration keeps what a restore may still read (invariant
	// consumer-at-checkpoint). Dropping the job must delete the consumer
	// (snapshot.Manager.DeleteConsumer); closing the source keeps it.
	Consumer string
	// ConsumerEvery is the least time between two registrations of a
	// completed checkpoint's position as the consumer's (default 0: at
	// every completed checkpoint). A skipped registration leaves an older
	// position registered, which only makes expiration keep a few more
	// snapshots: at 100 ms checkpoints, registering every one cost each
	// source two fsyncs a checkpoint on its own thread.
	ConsumerEvery time.Duration
	// UntilEpoch, when not zero, makes the source finish after closing
	// that epoch (bounded reads, tests).
	UntilEpoch base.Epoch
	// Idle is how long Next waits when the table has nothing new (default
	// 5 ms, growing to five times that while nothing changes: idleWait);
	// a commit of the table by a writer in this process ends the wait at
	// once (package doc, "Waiting"). Next never blocks longer.
	Idle time.Duration
	// StartAfter, when not zero, makes a fresh source (without restored
	// state) emit the table as it is at epoch StartAfter (the full content
	// of its newest snapshot with epoch <= StartAfter, as inserts) in epoch
	// StartAfter+1, the first epoch it closes, and stream the changelog
	// after that snapshot: a job that starts writing a table which already
	// committed StartAfter backfills its inputs' history into its first
	// epoch, whether or not their older snapshots have expired (Paimon's
	// default streaming scan: a full snapshot, then its changes).
	StartAfter base.Epoch
}

// Source reads a table's changelog; see the package doc.
type Source struct {
	cfg     Config
	ctx     *operator.Context
	stream  *scan.Stream
	pos     scan.Position
	closed  base.Epoch // last epoch whose barrier was emitted
	closeTo base.Epoch // epochs up to this may be closed now
	// held is a batch of a later epoch read while earlier epochs still
	// wait for their barriers; it is emitted after them. pos stays before
	// it until then, so a checkpoint in between re-reads it on restore.
	held *scan.Batch
	// full, when not zero, is the snapshot whose full content the source
	// is emitting (pos.Offset rows of it are out) before it streams from
	// the next snapshot; fullRows holds that content once read.
	full     base.SnapshotID
	fullRows []*types.Chunk
	// started is set once a fresh source chose where to start.
	started bool
	// checkpoints maps a checkpoint taken and not yet completed to the
	// snapshot its position needs; registered is the position last
	// registered as the consumer's.
	checkpoints map[base.CheckpointID]base.SnapshotID
	registered  base.SnapshotID
	// registeredAt is when registered was last written.
	registeredAt time.Time
	// idle counts the polls in a row that found nothing new.
	idle int
	// group, when set, holds the other table sources of the job, and
	// member is this source's name in it: an epoch closes only once every
	// member is ready to close it (invariant close-with-group).
	group  *Group
	member string
}

// idleWait is how long a source that found nothing new n polls in a row
// waits before it looks again, unless a commit in this process wakes it
// first: base for the first 20 polls, then a base more every 20 polls, up
// to five times base (25 ms by default), so that a table written by
// another process that changes every epoch is seen within base of its
// commit while a table nobody writes costs a fifth of the polls.
func idleWait(base time.Duration, n int) time.Duration {
	return min(base*time.Duration(1+n/20), 5*base)
}

// New returns a source subtask. A table has one changelog, so a table
// source runs with parallelism 1.
func New(cfg Config) *Source {
	if cfg.Idle == 0 {
		cfg.Idle = 5 * time.Millisecond
	}
	return &Source{cfg: cfg, pos: scan.Position{Snapshot: 1}, closed: cfg.StartAfter, closeTo: cfg.StartAfter,
		checkpoints: map[base.CheckpointID]base.SnapshotID{}}
}

const stateKey = "table-source"

type persisted struct {
	Position scan.Position `json:"position"`
	Closed   base.Epoch    `json:"closed"`
	CloseTo  base.Epoch    `json:"closeTo"`
	// Full is the snapshot being emitted in full (Position.Offset rows
	// out), 0 when streaming.
	Full base.SnapshotID `json:"full,omitempty"`
}

// Open implements operator.Source: resume from the checkpointed position.
func (s *Source) Open(ctx *operator.Context) error {
	s.ctx = ctx
	if ctx.Subtask != 0 {
		return fmt.Errorf("table source %s: subtask %d: run a table source with parallelism 1: %w", s.cfg.Name, ctx.Subtask, base.ErrInvalidArgument)
	}
	b, ok, err := ctx.State.OperatorValue(stateKey).Get()
	if err != nil {
		return err
	}
	if ok {
		var p persisted
		if err := json.Unmarshal(b, &p); err != nil {
			return fmt.Errorf("table source %s: checkpointed state: %v: %w", s.cfg.Name, err, base.ErrCorruption)
		}
		s.pos, s.closed, s.closeTo, s.full = p.Position, p.Closed, max(p.CloseTo, p.Closed), p.Full
		s.started = true
		if s.group != nil {
			s.group.ready(s.member, s.closed)
		}
	}
	return nil
}

// start chooses where a fresh source begins: with StartAfter, the full
// content of the newest snapshot of epoch <= StartAfter, registered as the
// consumer's position before it is read; else snapshot 1.
func (s *Source) start() error {
	s.started = true
	if s.cfg.StartAfter == 0 {
		return s.register(s.pos.Snapshot)
	}
	snaps := s.cfg.Table.Store().Snapshots
	for range 10 {
		sn, err := snaps.AtOrBeforeEpoch(s.cfg.StartAfter)
		if err != nil {
			return fmt.Errorf("table source %s: start at epoch %d: %w", s.cfg.Name, s.cfg.StartAfter, err)
		}
		if sn == nil {
			return s.register(s.pos.Snapshot) // nothing yet: stream from snapshot 1
		}
		if err := s.register(sn.ID); err != nil {
			return err
		}
		// Registered before an expiration raised its fence past sn, or
		// after: in the second case sn may be going; choose again.
		if f := snaps.EarliestFence(); f <= sn.ID {
			s.full, s.pos = sn.ID, scan.Position{Snapshot: sn.ID}
			return nil
		}
	}
	return fmt.Errorf("table source %s: no stable snapshot at epoch %d to start from while snapshots expire: %w", s.cfg.Name, s.cfg.StartAfter, base.ErrConflict)
}

// register records id as the consumer's position (no-op without a
// consumer, or when id is registered already).
func (s *Source) register(id base.SnapshotID) error {
	if s.cfg.Consumer == "" || id == s.registered {
		return nil
	}
	if err := s.cfg.Table.Store().Snapshots.SetConsumer(s.cfg.Consumer, id); err != nil {
		return fmt.Errorf("table source %s: consumer %s at snapshot %d: %w", s.cfg.Name, s.cfg.Consumer, id, err)
	}
	s.registered, s.registeredAt = id, time.Now()
	return nil
}

func (s *Source) open() error {
	if s.stream != nil {
		return nil
	}
	st, err := s.cfg.Table.StreamFrom(s.pos, "")
	if err != nil {
		return fmt.Errorf("table source %s: %w", s.cfg.Name, err)
	}
	st.Types = s.cfg.Types // batches come as chunks
	s.stream = st
	return nil
}

// nextFull returns the next piece of the snapshot emitted in full, and
// moves to streaming after it once all of it is out.
func (s *Source) nextFull() (operator.Item, error) {
	if s.fullRows == nil {
		sn, err := s.cfg.Table.Store().Snapshots.Get(s.full)
		if err != nil {
			return operator.Item{}, fmt.Errorf("table source %s: start from snapshot %d: %w", s.cfg.Name, s.full, err)
		}
		if s.fullRows, err = scan.ReadChunks(s.cfg.Table.Store(), sn); err != nil {
			return operator.Item{}, fmt.Errorf("table source %s: full read of snapshot %d: %w", s.cfg.Name, s.full, err)
		}
		if s.fullRows == nil {
			s.fullRows = []*types.Chunk{}
		}
	}
	// Skip the rows a restored checkpoint had emitted.
	skip := s.pos.Offset
	for _, c := range s.fullRows {
		n := int64(c.Len())
		if skip >= n {
			skip -= n
			continue
		}
		sel := make([]int, 0, n-skip)
		for i := skip; i < n; i++ {
			sel = append(sel, int(i))
		}
		out := c.Select(sel)
		s.pos.Offset += int64(len(sel))
		return operator.Item{Chunk: out}, nil
	}
	s.pos = scan.Position{Snapshot: s.full + 1}
	s.full, s.fullRows = 0, nil
	return operator.Item{}, nil
}

// Next implements operator.Source.
func (s *Source) Next() (operator.Item, error) {
	if s.closed < s.closeTo {
		if !s.groupAllows(s.closed + 1) {
			// Every change up to closeTo is out; the next epoch waits for
			// the group's other sources, and so does everything after it.
			return operator.Item{}, nil
		}
		s.closed++
		return operator.Item{Epoch: s.closed}, nil
	}
	if s.held != nil {
		b := s.held
		s.held = nil
		return s.emit(b), nil
	}
	if s.cfg.UntilEpoch != 0 && s.closed >= s.cfg.UntilEpoch {
		if s.group != nil {
			s.group.ready(s.member, ^base.Epoch(0)) // holds nobody back
		}
		return operator.Item{Done: true}, nil
	}
	if !s.started {
		if err := s.start(); err != nil {
			return operator.Item{}, err
		}
	}
	if s.full != 0 {
		return s.nextFull()
	}
	if err := s.open(); err != nil {
		return operator.Item{}, err
	}
	b, ok, err := s.stream.Next()
	if err != nil {
		return operator.Item{}, fmt.Errorf("table source %s: %w", s.cfg.Name, err)
	}
	if !ok {
		// Caught up. Read the committed epoch, then look once more:
		// snapshots published before the epoch was raised are visible now,
		// so if the stream is still empty, every change up to that epoch
		// has been emitted. (Reading it only here keeps the marker file off
		// the path of every batch.) The wake-up channel is taken before
		// that look, so a commit after it wakes the wait below.
		changed := s.cfg.Table.Store().Snapshots.Changed()
		committed, err := s.stream.CommittedEpoch()
		if err != nil {
			return operator.Item{}, fmt.Errorf("table source %s: %w", s.cfg.Name, err)
		}
		if b, ok, err = s.stream.Next(); err != nil {
			return operator.Item{}, fmt.Errorf("table source %s: %w", s.cfg.Name, err)
		}
		if !ok {
			if c := s.bound(committed); c > s.closeTo {
				s.closeTo = c
				s.idle = 0
				return operator.Item{}, nil
			}
			s.idle++
			s.wait(changed)
			return operator.Item{}, nil
		}
	}
	s.idle = 0
	if b.Epoch > s.closed+1 {
		// Epochs between (which changed nothing) close first: no change of
		// a later epoch goes out before their barriers.
		s.closeTo = max(s.closeTo, b.Epoch-1)
		s.held = &b
		return operator.Item{}, nil
	}
	return s.emit(&b), nil
}

// wait pauses a source that has caught up with its table: until changed
// fires (the table's next commit in this process, table/snapshot invariant
// wake-or-poll) or the idle wait passes, whichever comes first.
func (s *Source) wait(changed <-chan struct{}) {
	t := time.NewTimer(idleWait(s.cfg.Idle, s.idle))
	defer t.Stop()
	select {
	case <-changed:
	case <-t.C:
	}
}

// emit returns a batch's changes and advances the position past it.
func (s *Source) emit(b *scan.Batch) operator.Item {
	s.pos = b.Next
	if b.EndOfEpoch {
		s.closeTo = max(s.closeTo, s.bound(b.Epoch))
	}
	if b.Len() > 0 {
		return operator.Item{Chunk: b.Chunk(s.cfg.Types)}
	}
	return operator.Item{}
}

func (s *Source) bound(e base.Epoch) base.Epoch {
	if s.cfg.UntilEpoch != 0 {
		return min(e, s.cfg.UntilEpoch)
	}
	return e
}

// Snapshot implements operator.Source: keep the position, the last closed
// epoch and the epochs known complete but not closed yet.
func (s *Source) Snapshot(id base.CheckpointID) error {
	b, err := json.Marshal(persisted{Position: s.pos, Closed: s.closed, CloseTo: s.closeTo, Full: s.full})
	if err != nil {
		return err
	}
	s.checkpoints[id] = s.pos.Snapshot
	return s.ctx.State.OperatorValue(stateKey).Set(b)
}

// NotifyComplete implements operator.Source: the completed checkpoint's
// position becomes the consumer's, so expiration may take the snapshots
// before it (a restore starts there at the earliest).
func (s *Source) NotifyComplete(id base.CheckpointID) error {
	var newest base.CheckpointID
	var pos base.SnapshotID
	for cp, p := range s.checkpoints {
		if cp <= id {
			if cp > newest {
				newest, pos = cp, p
			}
			delete(s.checkpoints, cp)
		}
	}
	if newest == 0 || time.Since(s.registeredAt) < s.cfg.ConsumerEvery {
		return nil
	}
	return s.register(pos)
}

// Close implements operator.Source. The consumer stays registered: a
// restart resumes from the last completed checkpoint, whose position it
// holds.
func (s *Source) Close() error {
	if s.stream == nil {
		return nil
	}
	return s.stream.Close()
}
