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
	// Consumer, when set, registers the stream's position with the table so
	// that snapshot expiration keeps what the source still needs.
	Consumer string
	// UntilEpoch, when not zero, makes the source finish after closing
	// that epoch (bounded reads, tests).
	UntilEpoch base.Epoch
	// Idle is how long Next waits when the table has nothing new (default
	// 5 ms); Next never blocks longer.
	Idle time.Duration
	// StartAfter, when not zero, makes a fresh source (without restored
	// state) count every change of epochs up to StartAfter into epoch
	// StartAfter+1, the first epoch it closes: a job that starts writing a
	// table which already committed StartAfter backfills its inputs'
	// history into its first epoch.
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
}

// New returns a source subtask. A table has one changelog, so a table
// source runs with parallelism 1.
func New(cfg Config) *Source {
	if cfg.Idle == 0 {
		cfg.Idle = 5 * time.Millisecond
	}
	return &Source{cfg: cfg, pos: scan.Position{Snapshot: 1}, closed: cfg.StartAfter, closeTo: cfg.StartAfter}
}

const stateKey = "table-source"

type persisted struct {
	Position scan.Position `json:"position"`
	Closed   base.Epoch    `json:"closed"`
	CloseTo  base.Epoch    `json:"closeTo"`
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
		s.pos, s.closed, s.closeTo = p.Position, p.Closed, max(p.CloseTo, p.Closed)
	}
	return nil
}

func (s *Source) open() error {
	if s.stream != nil {
		return nil
	}
	st, err := s.cfg.Table.StreamFrom(s.pos, s.cfg.Consumer)
	if err != nil {
		return fmt.Errorf("table source %s: %w", s.cfg.Name, err)
	}
	s.stream = st
	return nil
}

// Next implements operator.Source.
func (s *Source) Next() (operator.Item, error) {
	if s.closed < s.closeTo {
		s.closed++
		return operator.Item{Epoch: s.closed}, nil
	}
	if s.held != nil {
		b := s.held
		s.held = nil
		return s.emit(b), nil
	}
	if s.cfg.UntilEpoch != 0 && s.closed >= s.cfg.UntilEpoch {
		return operator.Item{Done: true}, nil
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
		// the path of every batch.)
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
				return operator.Item{}, nil
			}
			time.Sleep(s.cfg.Idle)
			return operator.Item{}, nil
		}
	}
	if b.Epoch > s.closed+1 {
		// Epochs between (which changed nothing) close first: no change of
		// a later epoch goes out before their barriers.
		s.closeTo = max(s.closeTo, b.Epoch-1)
		s.held = &b
		return operator.Item{}, nil
	}
	return s.emit(&b), nil
}

// emit returns a batch's changes and advances the position past it.
func (s *Source) emit(b *scan.Batch) operator.Item {
	s.pos = b.Next
	if b.EndOfEpoch {
		s.closeTo = max(s.closeTo, s.bound(b.Epoch))
	}
	if len(b.Changes) > 0 {
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
func (s *Source) Snapshot(base.CheckpointID) error {
	b, err := json.Marshal(persisted{Position: s.pos, Closed: s.closed, CloseTo: s.closeTo})
	if err != nil {
		return err
	}
	return s.ctx.State.OperatorValue(stateKey).Set(b)
}

// NotifyComplete implements operator.Source.
func (s *Source) NotifyComplete(base.CheckpointID) error { return nil }

// Close implements operator.Source.
func (s *Source) Close() error {
	if s.stream == nil {
		return nil
	}
	return s.stream.Close()
}
