package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/epoch"
)

// Reader reads an external input by position, a transaction at a time.
type Reader interface {
	// Next returns the rows of the transaction at pos and the position
	// after it, or a nil chunk when nothing new is available yet. It must
	// not block for long.
	Next(pos uint64) (*types.Chunk, uint64, error)
}

// Backlogger is a Reader that can say where the input it can see now
// ends, so that a caller can wait until what existed at a moment is read
// (CREATE TABLE of a file table returns once the files present at the
// CREATE are committed, as CREATE TABLE on a CDC source returns after its
// snapshot). Backlog returns that position: once Next has returned it
// (or a later one), every record present at the call has been read.
// Positions must grow as the Reader reads. Errors are those of looking
// at the input (listing a directory).
type Backlogger interface {
	Backlog() (uint64, error)
}

// StatefulReader is a Reader whose rows depend, besides the position, on
// a little state of its own that it chooses when it starts reading
// (connector/datagen's start time, from which its "now" timestamps are
// derived). The Source keeps that state in its checkpoints beside the
// position and hands it back on restore, so that a replay from a
// checkpointed position reads the same rows as the run that wrote the
// checkpoint (the deterministic replay DESIGN.md's "commit ahead of the
// checkpoint" plan relies on).
type StatefulReader interface {
	Reader
	// SnapshotState returns the state to keep with the current position;
	// nil when there is none yet.
	SnapshotState() ([]byte, error)
	// RestoreState sets the state a checkpoint kept. It is called when
	// the Source opens, with nil when there is no checkpoint or the
	// checkpoint kept no state: the Reader then chooses its state afresh.
	// An error (a state it cannot read) fails the Source's Open.
	RestoreState(state []byte) error
}

// SnapshotState returns r's state when r is a StatefulReader, and nil
// otherwise. Readers that wrap another forward to it with this.
func SnapshotState(r Reader) ([]byte, error) {
	if s, ok := r.(StatefulReader); ok {
		return s.SnapshotState()
	}
	return nil, nil
}

// RestoreState gives state to r when r is a StatefulReader; otherwise it
// does nothing. Readers that wrap another forward to it with this.
func RestoreState(r Reader, state []byte) error {
	if s, ok := r.(StatefulReader); ok {
		return s.RestoreState(state)
	}
	return nil
}

// Clock is the part of the meta service an ingest source needs
// (meta.Service's CurrentEpoch and WaitEpoch).
type Clock interface {
	CurrentEpoch(ctx context.Context) (epoch.Info, error)
	WaitEpoch(ctx context.Context, after base.Epoch) (epoch.Info, error)
}

// Config describes an ingest source subtask.
type Config struct {
	Reader Reader
	Clock  Clock
	// Name is the source's name, for messages.
	Name string
	// StartEpoch is the first epoch the job closes (default 1); every
	// subtask of a job must use the same.
	StartEpoch base.Epoch
	// UntilEpoch, when not zero, makes the source finish after closing it.
	UntilEpoch base.Epoch
	// Hold, when set, keeps a source that reached UntilEpoch from
	// finishing while it returns true (it idles instead), so that tests can
	// make failures happen before the job ends.
	Hold func() bool
	// Idle is how long Next first waits when the input has nothing new
	// (default 1 ms). While the input stays empty the wait doubles, up to
	// MaxIdle, and the first chunk read sets it back to Idle; a wait ends
	// early when the clock opens a new epoch, so that closing an epoch is
	// never delayed by it.
	Idle time.Duration
	// MaxIdle is the longest wait of an idle input (default 16 × Idle):
	// the most a chunk that arrives on an input idle for a while waits
	// before it is read.
	MaxIdle time.Duration
	// KeepPairs is how many recent (epoch, position) pairs the checkpoint
	// keeps (default 64).
	KeepPairs int
	// OnClose, when set, is told every (epoch, position) at which the
	// source closes an epoch (for tests and tracing). After a restore an
	// epoch may be told again; the last telling is the one that counts.
	OnClose func(Pair)
}

// Pair records that epoch Epoch was closed at Position.
type Pair struct {
	Epoch    base.Epoch `json:"epoch"`
	Position uint64     `json:"position"`
}

// Source is one subtask of an ingest source; see the package doc.
type Source struct {
	cfg    Config
	ctx    *operator.Context
	pos    uint64
	closed base.Epoch
	pairs  []Pair // ascending epochs
	clock  atomic.Uint64
	// tick receives a value when the clock opens a new epoch, so that an
	// idle wait ends at once (capacity 1: ticks that nobody waited for
	// collapse into one).
	tick chan struct{}
	// idle is the next idle wait (Config.Idle to Config.MaxIdle); timer
	// times it.
	idle  time.Duration
	timer *time.Timer
	stop  context.CancelFunc
	wg    sync.WaitGroup
}

// New returns an ingest source subtask.
func New(cfg Config) *Source {
	if cfg.StartEpoch == 0 {
		cfg.StartEpoch = 1
	}
	if cfg.Idle == 0 {
		cfg.Idle = time.Millisecond
	}
	if cfg.MaxIdle < cfg.Idle {
		cfg.MaxIdle = 16 * cfg.Idle
	}
	if cfg.KeepPairs == 0 {
		cfg.KeepPairs = 64
	}
	return &Source{cfg: cfg, closed: cfg.StartEpoch - 1, tick: make(chan struct{}, 1), idle: cfg.Idle}
}

const stateKey = "ingest-source"

type persisted struct {
	Position uint64     `json:"position"`
	Closed   base.Epoch `json:"closed"`
	Pairs    []Pair     `json:"pairs,omitempty"`
	// Reader is the Reader's own state (StatefulReader), absent for
	// readers without any.
	Reader []byte `json:"reader,omitempty"`
}

// Open implements operator.Source: restore the position, the pairs and
// the Reader's own state (StatefulReader), and start following the epoch
// clock.
func (s *Source) Open(ctx *operator.Context) error {
	s.ctx = ctx
	b, ok, err := ctx.State.OperatorValue(stateKey).Get()
	if err != nil {
		return err
	}
	var readerState []byte
	if ok {
		var p persisted
		if err := json.Unmarshal(b, &p); err != nil {
			return fmt.Errorf("ingest source %s: checkpointed state: %v: %w", s.cfg.Name, err, base.ErrCorruption)
		}
		s.pos, s.closed, s.pairs = p.Position, p.Closed, p.Pairs
		readerState = p.Reader
	}
	if err := RestoreState(s.cfg.Reader, readerState); err != nil {
		return fmt.Errorf("ingest source %s: checkpointed reader state: %w", s.cfg.Name, err)
	}
	cctx, cancel := context.WithCancel(context.Background())
	s.stop = cancel
	info, err := s.cfg.Clock.CurrentEpoch(cctx)
	if err != nil {
		cancel()
		return fmt.Errorf("ingest source %s: epoch clock: %w", s.cfg.Name, err)
	}
	s.clock.Store(uint64(info.Epoch))
	s.wg.Add(1)
	go s.follow(cctx, info.Epoch)
	return nil
}

// follow keeps s.clock at the clock's open epoch, waiting without polling.
func (s *Source) follow(ctx context.Context, cur base.Epoch) {
	defer s.wg.Done()
	for {
		info, err := s.cfg.Clock.WaitEpoch(ctx, cur)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			time.Sleep(10 * time.Millisecond) // the service is away; retry
			continue
		}
		cur = info.Epoch
		s.clock.Store(uint64(cur))
		select {
		case s.tick <- struct{}{}:
		default:
		}
	}
}

// wait waits while the input has nothing new: s.idle, doubled for the next
// wait up to Config.MaxIdle, or until the clock opens an epoch. Waiting
// longer as an input stays empty keeps an idle job from waking its source
// a thousand times a second; ending the wait on a tick keeps epochs closing
// on time.
func (s *Source) wait() {
	d := s.idle
	s.idle = min(2*s.idle, s.cfg.MaxIdle)
	if s.timer == nil {
		s.timer = time.NewTimer(d)
	} else {
		s.timer.Reset(d)
	}
	select {
	case <-s.timer.C:
	case <-s.tick:
		// Since Go 1.23 a stopped timer delivers no stale value, so
		// the next Reset starts clean.
		s.timer.Stop()
	}
}

// replayPair returns the recorded pair of the next epoch to close, if a
// previous run recorded one.
func (s *Source) replayPair() (Pair, bool) {
	for _, p := range s.pairs {
		if p.Epoch == s.closed+1 {
			return p, true
		}
	}
	return Pair{}, false
}

// closeEpoch closes the open epoch at the current position and records
// the pair (a replayed pair is recorded already; record keeps one).
func (s *Source) closeEpoch() operator.Item {
	s.closed++
	p := Pair{Epoch: s.closed, Position: s.pos}
	s.record(p)
	if s.cfg.OnClose != nil {
		s.cfg.OnClose(p)
	}
	return operator.Item{Epoch: s.closed}
}

func (s *Source) record(p Pair) {
	n := len(s.pairs)
	if n > 0 && s.pairs[n-1].Epoch >= p.Epoch {
		return
	}
	s.pairs = append(s.pairs, p)
	if len(s.pairs) > s.cfg.KeepPairs {
		s.pairs = append(s.pairs[:0], s.pairs[len(s.pairs)-s.cfg.KeepPairs:]...)
	}
}

// Next implements operator.Source.
func (s *Source) Next() (operator.Item, error) {
	if s.cfg.UntilEpoch != 0 && s.closed >= s.cfg.UntilEpoch {
		if s.cfg.Hold != nil && s.cfg.Hold() {
			time.Sleep(s.cfg.Idle)
			return operator.Item{}, nil
		}
		return operator.Item{Done: true}, nil
	}
	if p, ok := s.replayPair(); ok {
		switch {
		case s.pos == p.Position:
			return s.closeEpoch(), nil
		case s.pos > p.Position:
			return operator.Item{}, fmt.Errorf("ingest source %s: replay passed position %d where epoch %d was closed (at %d): %w",
				s.cfg.Name, p.Position, p.Epoch, s.pos, base.ErrCorruption)
		}
		return s.read() // read up to the recorded position
	}
	if base.Epoch(s.clock.Load()) > s.closed+1 {
		return s.closeEpoch(), nil
	}
	return s.read()
}

func (s *Source) read() (operator.Item, error) {
	c, next, err := s.cfg.Reader.Next(s.pos)
	if err != nil {
		return operator.Item{}, fmt.Errorf("ingest source %s at position %d: %w", s.cfg.Name, s.pos, err)
	}
	if c == nil {
		s.wait()
		return operator.Item{}, nil
	}
	s.idle = s.cfg.Idle
	s.pos = next
	return operator.Item{Chunk: c}, nil
}

// Snapshot implements operator.Source.
func (s *Source) Snapshot(base.CheckpointID) error {
	rs, err := SnapshotState(s.cfg.Reader)
	if err != nil {
		return fmt.Errorf("ingest source %s: reader state: %w", s.cfg.Name, err)
	}
	b, err := json.Marshal(persisted{Position: s.pos, Closed: s.closed, Pairs: s.pairs, Reader: rs})
	if err != nil {
		return err
	}
	return s.ctx.State.OperatorValue(stateKey).Set(b)
}

// NotifyComplete implements operator.Source.
func (s *Source) NotifyComplete(base.CheckpointID) error { return nil }

// Close implements operator.Source: stop following the clock.
func (s *Source) Close() error {
	if s.stop != nil {
		s.stop()
		s.wg.Wait()
	}
	return nil
}
