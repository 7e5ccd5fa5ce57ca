package operator

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Committer is the external system behind a TwoPhaseCommitSink (the table
// store's sink later). Both methods may be called again for the same epoch
// after a restore and must be idempotent: a snapshot knows the epoch and
// the job that made it (DESIGN.md "Recovery").
type Committer interface {
	// Prepare stages the changes of epoch e written by subtask (durable,
	// not visible) and returns a small descriptor of what it staged (file
	// names, a transaction id), stored in checkpoints until the commit.
	// Epochs without changes are prepared too (chunks is empty).
	Prepare(subtask int, e base.Epoch, chunks []*types.Chunk) ([]byte, error)
	// Commit makes a prepared epoch visible.
	Commit(subtask int, e base.Epoch, prepared []byte) error
}

// PreparedEpoch is one epoch a Committer prepared: the epoch and the
// descriptor Prepare returned for it.
type PreparedEpoch struct {
	Epoch    base.Epoch
	Prepared []byte
}

// BatchCommitter is a Committer that can make several prepared epochs
// visible in one call, sharing the fixed cost of a commit (a metadata
// write and its fsyncs, a report to a coordinator) among them, as Flink's
// Committer receives every committable of a checkpoint at once. A
// TwoPhaseCommitSink whose committer implements it commits the epochs a
// completed checkpoint covers with one CommitAll instead of one Commit each.
type BatchCommitter interface {
	Committer
	// CommitAll makes the prepared epochs visible, in the order given
	// (ascending epochs), with the effect of calling Commit on each in
	// turn: what it returns nil for is visible, and it is idempotent as
	// Commit is. On an error, a prefix of the epochs may be visible.
	CommitAll(subtask int, epochs []PreparedEpoch) error
}

// TwoPhaseCommitSink is the exactly-once sink (Flink's
// TwoPhaseCommitSinkFunction, with epochs as the unit of commit as in
// DESIGN.md "The epoch protocol"):
//
//   - Process buffers the chunks of the open epoch;
//   - OnEpoch(E) pre-commits: Committer.Prepare stages epoch E;
//   - Snapshot(C) stores the prepared epochs and the open epoch's buffered
//     chunks (a checkpoint can land mid-epoch) in operator state, and
//     remembers that C covers the epochs prepared so far;
//   - NotifyComplete(C) commits, in epoch order, every prepared epoch that
//     a checkpoint <= C covers (in one call when the committer is a
//     BatchCommitter);
//   - Open after a restore commits every prepared epoch in the restored
//     state (the restored checkpoint is complete, so it covers them all)
//     and restores the open epoch's buffer.
//
// Invariant (commit-after-checkpoint): an epoch is committed only once a
// checkpoint taken after its barrier is complete, so a replay after any
// failure re-creates exactly the uncommitted epochs.
type TwoPhaseCommitSink struct {
	Base
	committer Committer
	ctx       *Context
	buffer    []*types.Chunk
	prepared  []preparedEpoch
	// covered maps a checkpoint id to the number of prepared epochs (a
	// prefix of prepared) it covers.
	covered map[base.CheckpointID]int
}

type preparedEpoch struct {
	epoch base.Epoch
	desc  []byte
}

// NewTwoPhaseCommitSink returns a sink over c.
func NewTwoPhaseCommitSink(c Committer) *TwoPhaseCommitSink {
	return &TwoPhaseCommitSink{committer: c, covered: map[base.CheckpointID]int{}}
}

const (
	sinkPreparedState = "2pc-prepared"
	sinkBufferState   = "2pc-buffer"
)

// Open implements Operator.
func (s *TwoPhaseCommitSink) Open(ctx *Context) error {
	s.ctx = ctx
	if ctx.Restored == 0 {
		return nil
	}
	b, ok, err := ctx.State.OperatorValue(sinkPreparedState).Get()
	if err != nil {
		return err
	}
	if ok {
		if s.prepared, err = decodePrepared(b); err != nil {
			return fmt.Errorf("sink %s subtask %d: %w", ctx.Vertex, ctx.Subtask, err)
		}
	}
	if err := s.commit(s.prepared); err != nil {
		return fmt.Errorf("sink %s subtask %d: after restore: %w", ctx.Vertex, ctx.Subtask, err)
	}
	s.prepared = nil
	b, ok, err = ctx.State.OperatorValue(sinkBufferState).Get()
	if err != nil || !ok {
		return err
	}
	for len(b) > 0 {
		c, rest, err := types.DecodeChunk(b)
		if err != nil {
			return fmt.Errorf("sink %s subtask %d buffer: %w", ctx.Vertex, ctx.Subtask, err)
		}
		s.buffer = append(s.buffer, c)
		b = rest
	}
	return nil
}

// Close implements Operator: a committer that is an io.Closer (one that
// runs work of its own beside the stream, such as a table writer's
// background compaction) is closed, so that nothing it started outlives
// the subtask attempt.
func (s *TwoPhaseCommitSink) Close() error {
	if c, ok := s.committer.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Process implements Operator.
func (s *TwoPhaseCommitSink) Process(_ int, c *types.Chunk) error {
	s.buffer = append(s.buffer, c)
	return nil
}

// OnEpoch implements Operator: pre-commit of epoch e.
func (s *TwoPhaseCommitSink) OnEpoch(e base.Epoch) error {
	desc, err := s.committer.Prepare(s.ctx.Subtask, e, s.buffer)
	if err != nil {
		return fmt.Errorf("sink %s subtask %d: prepare epoch %d: %w", s.ctx.Vertex, s.ctx.Subtask, e, err)
	}
	s.prepared = append(s.prepared, preparedEpoch{epoch: e, desc: desc})
	s.buffer = nil
	return nil
}

// Snapshot implements Operator.
func (s *TwoPhaseCommitSink) Snapshot(id base.CheckpointID) error {
	s.covered[id] = len(s.prepared)
	if err := s.ctx.State.OperatorValue(sinkPreparedState).Set(encodePrepared(s.prepared)); err != nil {
		return err
	}
	var buf []byte
	for _, c := range s.buffer {
		buf = types.AppendChunk(buf, c)
	}
	return s.ctx.State.OperatorValue(sinkBufferState).Set(buf)
}

// NotifyComplete implements Operator: commit every epoch a checkpoint <= id
// covers.
func (s *TwoPhaseCommitSink) NotifyComplete(id base.CheckpointID) error {
	n := 0
	for cp, k := range s.covered {
		if cp <= id {
			n = max(n, k)
			delete(s.covered, cp)
		}
	}
	if err := s.commit(s.prepared[:n]); err != nil {
		return fmt.Errorf("sink %s subtask %d: %w", s.ctx.Vertex, s.ctx.Subtask, err)
	}
	s.prepared = slices.Delete(s.prepared, 0, n)
	for cp, k := range s.covered {
		s.covered[cp] = k - n
	}
	return nil
}

// commit makes ps visible: with one CommitAll when the committer is a
// BatchCommitter, else with one Commit per epoch, in order.
func (s *TwoPhaseCommitSink) commit(ps []preparedEpoch) error {
	if len(ps) == 0 {
		return nil
	}
	if bc, ok := s.committer.(BatchCommitter); ok {
		all := make([]PreparedEpoch, len(ps))
		for i, p := range ps {
			all[i] = PreparedEpoch{Epoch: p.epoch, Prepared: p.desc}
		}
		if err := bc.CommitAll(s.ctx.Subtask, all); err != nil {
			return fmt.Errorf("commit of epochs %d to %d: %w", ps[0].epoch, ps[len(ps)-1].epoch, err)
		}
		return nil
	}
	for _, p := range ps {
		if err := s.committer.Commit(s.ctx.Subtask, p.epoch, p.desc); err != nil {
			return fmt.Errorf("commit epoch %d: %w", p.epoch, err)
		}
	}
	return nil
}

func encodePrepared(ps []preparedEpoch) []byte {
	b := binary.AppendUvarint(nil, uint64(len(ps)))
	for _, p := range ps {
		b = binary.AppendUvarint(b, uint64(p.epoch))
		b = binary.AppendUvarint(b, uint64(len(p.desc)))
		b = append(b, p.desc...)
	}
	return b
}

func decodePrepared(b []byte) ([]preparedEpoch, error) {
	bad := fmt.Errorf("prepared epochs: %w", base.ErrCorruption)
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return nil, bad
	}
	b = b[k:]
	out := make([]preparedEpoch, 0, n)
	for range n {
		e, k1 := binary.Uvarint(b)
		if k1 <= 0 {
			return nil, bad
		}
		b = b[k1:]
		l, k2 := binary.Uvarint(b)
		if k2 <= 0 || l > uint64(len(b)-k2) {
			return nil, bad
		}
		b = b[k2:]
		out = append(out, preparedEpoch{epoch: base.Epoch(e), desc: append([]byte(nil), b[:l]...)})
		b = b[l:]
	}
	if len(b) != 0 {
		return nil, bad
	}
	return out, nil
}
