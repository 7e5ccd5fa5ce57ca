package operator

import (
	"encoding/binary"
	"fmt"
	"io"
	"slices"
	"sync"

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

// ConcurrentCommitter is a BatchCommitter whose CommitAll may run on a
// goroutine of its own while Prepare stages later epochs, as Flink runs a
// sink's committer apart from its writer (the committer operator of
// Paimon's Flink sink). A TwoPhaseCommitSink over one commits in the
// background: the subtask goes on processing, snapshotting and
// acknowledging checkpoints while an earlier checkpoint's epochs are
// committed, instead of holding the next barrier behind the commit.
type ConcurrentCommitter interface {
	BatchCommitter
	// CommitsConcurrently reports whether CommitAll may run concurrently
	// with Prepare (never with another CommitAll).
	CommitsConcurrently() bool
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
// With a ConcurrentCommitter, NotifyComplete hands the epochs to a commit
// goroutine and returns; they stay in prepared, and so in every snapshot,
// until their commit has returned, so a checkpoint taken meanwhile
// re-commits them after a restore (commits are idempotent). The goroutine
// takes every epoch handed over while it was busy in its next CommitAll. A
// failed commit fails the next call into the sink; Close waits for the
// commit in flight.
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
	// bg is the background commit, nil unless the committer is a
	// ConcurrentCommitter that commits concurrently.
	bg *backgroundCommit
}

// backgroundCommit is a TwoPhaseCommitSink's commit goroutine. handed is
// how many epochs of the sink's prepared prefix it was given; the
// goroutine returns one result per CommitAll on done.
type backgroundCommit struct {
	handed int
	mu     sync.Mutex
	queue  []PreparedEpoch
	wake   chan struct{}
	done   chan commitResult
	stop   chan struct{}
	exited chan struct{}
	// inflight counts the epochs queued or being committed, as the
	// subtask sees them (results not yet reaped).
	inflight int
	// failed is the first failed commit's error, returned by every later
	// call (the goroutine stopped at it).
	failed error
}

// commitResult is what one background CommitAll did: n epochs committed,
// or err.
type commitResult struct {
	n   int
	err error
}

type preparedEpoch struct {
	epoch base.Epoch
	desc  []byte
}

// NewTwoPhaseCommitSink returns a sink over c.
func NewTwoPhaseCommitSink(c Committer) *TwoPhaseCommitSink {
	return &TwoPhaseCommitSink{committer: c, covered: map[base.CheckpointID]int{}}
}

// startBackground starts the commit goroutine over bc.
func (s *TwoPhaseCommitSink) startBackground(bc BatchCommitter) {
	g := &backgroundCommit{wake: make(chan struct{}, 1), done: make(chan commitResult, 16),
		stop: make(chan struct{}), exited: make(chan struct{})}
	s.bg = g
	subtask := s.ctx.Subtask
	go func() {
		defer close(g.exited)
		for {
			select {
			case <-g.wake:
			case <-g.stop:
				return
			}
			g.mu.Lock()
			batch := g.queue
			g.queue = nil
			g.mu.Unlock()
			if len(batch) == 0 {
				continue
			}
			err := bc.CommitAll(subtask, batch)
			if err != nil {
				err = fmt.Errorf("commit of epochs %d to %d: %w", batch[0].Epoch, batch[len(batch)-1].Epoch, err)
			}
			select {
			case g.done <- commitResult{n: len(batch), err: err}:
			case <-g.stop:
				return
			}
			if err != nil {
				return // the subtask fails at its next call; nothing more commits
			}
		}
	}()
}

// reap takes the results of finished background commits: their epochs
// leave prepared. With wait, it blocks until nothing is in flight.
func (s *TwoPhaseCommitSink) reap(wait bool) error {
	g := s.bg
	if g == nil {
		return nil
	}
	if g.failed != nil {
		return g.failed // the goroutine has stopped: nothing more commits
	}
	for g.inflight > 0 {
		var r commitResult
		if wait {
			r = <-g.done
		} else {
			select {
			case r = <-g.done:
			default:
				return nil
			}
		}
		if r.err != nil {
			g.inflight = 0
			g.failed = fmt.Errorf("sink %s subtask %d: %w", s.ctx.Vertex, s.ctx.Subtask, r.err)
			return g.failed
		}
		g.inflight -= r.n
		g.handed -= r.n
		s.prepared = slices.Delete(s.prepared, 0, r.n)
		for cp, k := range s.covered {
			s.covered[cp] = max(0, k-r.n)
		}
	}
	return nil
}

const (
	sinkPreparedState = "2pc-prepared"
	sinkBufferState   = "2pc-buffer"
)

// Open implements Operator.
func (s *TwoPhaseCommitSink) Open(ctx *Context) error {
	s.ctx = ctx
	if ctx.Restored == 0 {
		if cc, ok := s.committer.(ConcurrentCommitter); ok && cc.CommitsConcurrently() {
			s.startBackground(cc)
		}
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
	if cc, ok := s.committer.(ConcurrentCommitter); ok && cc.CommitsConcurrently() {
		s.startBackground(cc)
	}
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
	var err error
	if g := s.bg; g != nil {
		// The commit in flight ends first: one still running could race
		// the next attempt's restore, which commits the same epochs.
		err = s.reap(true)
		close(g.stop)
		<-g.exited
		s.bg = nil
	}
	if c, ok := s.committer.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// Process implements Operator.
func (s *TwoPhaseCommitSink) Process(_ int, c *types.Chunk) error {
	s.buffer = append(s.buffer, c)
	return s.reap(false)
}

// Finish implements Operator: at the end of the stream the commits in
// flight end before the subtask reports that it finished.
func (s *TwoPhaseCommitSink) Finish() error { return s.reap(true) }

// OnEpoch implements Operator: pre-commit of epoch e.
func (s *TwoPhaseCommitSink) OnEpoch(e base.Epoch) error {
	if err := s.reap(false); err != nil {
		return err
	}
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
	if err := s.reap(false); err != nil {
		return err
	}
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
	if err := s.reap(false); err != nil {
		return err
	}
	n := 0
	for cp, k := range s.covered {
		if cp <= id {
			n = max(n, k)
			delete(s.covered, cp)
		}
	}
	if g := s.bg; g != nil {
		if n <= g.handed {
			return nil
		}
		g.mu.Lock()
		for _, p := range s.prepared[g.handed:n] {
			g.queue = append(g.queue, PreparedEpoch{Epoch: p.epoch, Prepared: p.desc})
		}
		g.mu.Unlock()
		g.inflight += n - g.handed
		g.handed = n
		select {
		case g.wake <- struct{}{}:
		default:
		}
		return nil
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
