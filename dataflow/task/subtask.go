package task

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/chanstate"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/message"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/queue"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
)

// report is what a subtask tells the job loop.
type report struct {
	task    int
	id      base.CheckpointID
	kind    reportKind
	info    checkpoint.FileInfo
	shared  []string
	chBytes int64
	// sharedBytes are the bytes of the shared files the snapshot stored.
	sharedBytes int64
	reason      string
}

type reportKind uint8

const (
	reportAck reportKind = iota + 1
	reportDecline
	reportFinished
)

// pendingSnap is what a subtask holds for a checkpoint between its Snapshot
// and Complete actions.
type pendingSnap struct {
	handle    []byte
	shared    []string
	upload    func() error
	discard   func()
	align     barrier.AlignState
	unaligned bool
	channels  [][]message.Message
	// encode, when not nil, produces handle (state.Snapshot.Encode).
	encode func() ([]byte, error)
	// sharedBytes counts the bytes of the shared files upload stored.
	sharedBytes *atomic.Int64
}

// subtask is one parallel instance of a vertex, run by one goroutine.
type subtask struct {
	a      *attempt
	task   int
	vertex *graph.Vertex
	i      int

	ctx     *operator.Context
	op      operator.Operator
	src     operator.Source
	backend state.Backend

	inputs   []*queue.Queue
	inputOf  []int
	replay   [][]message.Message
	inNotify chan struct{}
	ended    []bool
	wm       []int64
	lastWM   int64

	out       *outputs
	outNotify chan struct{}

	// inPools[ch] is the pool of the edge that makes channel ch's
	// recyclable chunks (nil: none); borrows says the operator keeps no
	// input chunk (operator.InputBorrower). chanWrites counts the
	// checkpoint writes in flight on the writer goroutine that carry
	// channel state. Invariant chunk-recycle in the package doc.
	inPools    []*chunkPool
	borrows    bool
	chanWrites atomic.Int32

	handler *barrier.Handler
	ctrl    *control
	lastAb  base.CheckpointID
	lastCo  base.CheckpointID
	lastTr  base.CheckpointID
	lastTo  base.CheckpointID
	pending map[base.CheckpointID]*pendingSnap
	// trig is a running source's trigger waiting for room in the outputs
	// (an aligned barrier goes in band and must not block the source).
	trig     base.CheckpointID
	trigMode message.Mode
	// trigCut is the epoch barrier a source emits before trig (see
	// barrierCut); lastEpoch is the last epoch barrier it emitted.
	trigCut   base.Epoch
	lastEpoch base.Epoch

	timer   *time.Timer
	timerC  <-chan time.Time
	timerCP base.CheckpointID

	// writes feeds the subtask's writer goroutine, which encodes and
	// stores completed checkpoints' files and acknowledges them, so that
	// the subtask goes on processing meanwhile; nil when writes are
	// synchronous (before start, after end of stream).
	writes     chan writeJob
	writerDone chan struct{}

	rr int
	// finished: every input ended (operators) or the source is done; the
	// subtask emitted end of stream and now only answers control until
	// exit (Flink's FLIP-147 final checkpoint).
	finished bool
	exit     bool
}

func (t *subtask) name() string { return fmt.Sprintf("%s subtask %d", t.vertex.Name, t.i) }

// run is the goroutine body.
func (t *subtask) run() (err error) {
	t.startWriter()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%s panicked: %v", t.name(), r)
		}
		t.stopWriter()
		if t.timer != nil {
			t.timer.Stop()
		}
		var cerr error
		if t.op != nil {
			cerr = t.op.Close()
		} else {
			cerr = t.src.Close()
		}
		if err == nil && cerr != nil {
			err = fmt.Errorf("%s close: %w", t.name(), cerr)
		}
		if berr := t.backend.Close(); err == nil && berr != nil {
			err = fmt.Errorf("%s state backend close: %w", t.name(), berr)
		}
	}()
	if t.op != nil {
		if err := t.op.Open(t.ctx); err != nil {
			return fmt.Errorf("%s open: %w", t.name(), err)
		}
		if err := t.runOperator(); err != nil {
			return err
		}
	} else {
		if err := t.src.Open(t.ctx); err != nil {
			return fmt.Errorf("%s open: %w", t.name(), err)
		}
		if err := t.runSource(); err != nil {
			return err
		}
	}
	return t.runFinished()
}

// runFinished serves control after end of stream: checkpoint triggers
// (snapshot and acknowledge directly, nothing flows any more),
// notify-complete, and exit.
func (t *subtask) runFinished() error {
	if t.exit {
		return nil
	}
	// Every acknowledgement goes out before the job learns that the
	// subtask finished (the job triggers finished subtasks directly for a
	// checkpoint they did not acknowledge).
	t.stopWriter()
	if err := t.report(report{kind: reportFinished}); err != nil {
		return err
	}
	for {
		if err := t.pollControl(); err != nil {
			return err
		}
		if t.exit {
			return nil
		}
		select {
		case <-t.ctrl.sig:
		case <-t.a.cancel:
			return t.cancelled()
		}
	}
}

func (t *subtask) cancelled() error {
	return fmt.Errorf("%s: cancelled: %w", t.name(), base.ErrClosed)
}

// wait blocks until something may have changed.
func (t *subtask) wait() error {
	select {
	case <-t.inNotify:
	case <-t.outNotify:
	case <-t.ctrl.sig:
	case <-t.a.cancel:
		return t.cancelled()
	case <-t.timerC:
		t.timerC = nil
		return t.exec(t.handler.OnTimeout(t.timerCP), message.Message{})
	}
	return nil
}

func (t *subtask) runOperator() error {
	for !t.finished && !t.exit {
		if err := t.pollControl(); err != nil {
			return err
		}
		ch, m, ok := t.next(t.out.available())
		if !ok {
			if err := t.wait(); err != nil {
				return err
			}
			continue
		}
		if err := t.handle(ch, m); err != nil {
			return err
		}
	}
	return nil
}

// next takes the next message round-robin from a channel that may deliver
// one. A blocked channel, or any channel while the outputs are full,
// delivers only an unaligned barrier from the head of its queue.
func (t *subtask) next(outOK bool) (int, message.Message, bool) {
	n := len(t.inputs)
	for k := range n {
		ch := (t.rr + k) % n
		if t.ended[ch] {
			continue
		}
		// An unaligned barrier overtakes the replayed channel state too
		// (invariant replay-first).
		if m, ok := t.inputs[ch].Take(true); ok {
			if len(t.replay[ch]) > 0 {
				m.Overtaken = append(append([]message.Message(nil), t.replay[ch]...), m.Overtaken...)
			}
			t.rr = ch + 1
			return ch, m, true
		}
		if !outOK || t.handler.Blocked(ch) {
			continue
		}
		if len(t.replay[ch]) > 0 {
			m := t.replay[ch][0]
			t.replay[ch] = t.replay[ch][1:]
			t.rr = ch + 1
			return ch, m, true
		}
		if m, ok := t.inputs[ch].Take(false); ok {
			t.rr = ch + 1
			return ch, m, true
		}
	}
	return 0, message.Message{}, false
}

// handle processes message m taken from channel ch.
func (t *subtask) handle(ch int, m message.Message) error {
	recorded := false
	switch m.Kind {
	case message.KindChunk, message.KindWatermark, message.KindEpochBarrier:
		if t.handler.Recording(ch) {
			recorded = true
			cp, _ := t.handler.Current()
			p := t.pending[cp]
			if p == nil {
				panic(fmt.Sprintf("%s: recording for checkpoint %d without its snapshot", t.name(), cp))
			}
			p.channels[ch] = append(p.channels[ch], m)
		}
	}
	switch m.Kind {
	case message.KindChunk:
		if err := t.op.Process(t.inputOf[ch], m.Chunk); err != nil {
			return fmt.Errorf("%s: %w", t.name(), err)
		}
		if m.Recyclable && !recorded && t.borrows && t.inPools[ch] != nil && len(t.pending) == 0 && t.chanWrites.Load() == 0 {
			t.inPools[ch].put(m.Chunk)
		}
		return nil
	case message.KindWatermark:
		t.wm[ch] = m.Watermark
		return t.forwardWatermark()
	case message.KindEpochBarrier:
		return t.exec(t.handler.OnEpochBarrier(ch, m.Epoch), m)
	case message.KindCheckpointBarrier:
		return t.exec(t.handler.OnCheckpointBarrier(ch, m.Checkpoint), m)
	case message.KindEndOfStream:
		t.ended[ch] = true
		t.replay[ch] = nil
		return t.exec(t.handler.OnEndOfStream(ch), m)
	}
	panic(fmt.Sprintf("%s: message of kind %s", t.name(), m.Kind))
}

// forwardWatermark forwards the minimum watermark of the unfinished
// channels when it advanced.
func (t *subtask) forwardWatermark() error {
	lo := int64(1<<63 - 1)
	for ch, w := range t.wm {
		if !t.ended[ch] {
			lo = min(lo, w)
		}
	}
	if lo <= t.lastWM || lo == 1<<63-1 {
		return nil
	}
	t.lastWM = lo
	return t.out.emitAll(message.Watermark(lo))
}

// exec carries out the barrier handler's actions; m is the message that
// caused them (its Overtaken feeds CaptureOvertaken).
func (t *subtask) exec(acts []barrier.Action, m message.Message) error {
	for _, a := range acts {
		switch a.Kind {
		case barrier.Snapshot:
			p, err := t.snapshot(a.Checkpoint)
			if err != nil {
				return err
			}
			p.align, p.unaligned = a.Align, a.Mode == message.Unaligned
			p.channels = make([][]message.Message, len(t.inputs))
			t.pending[a.Checkpoint] = p
		case barrier.Forward:
			if err := t.out.emitAll(message.Barrier(a.Checkpoint, a.Mode)); err != nil {
				return err
			}
		case barrier.CaptureOvertaken:
			p := t.pending[a.Checkpoint]
			p.channels[a.Channel] = append(p.channels[a.Channel], m.Overtaken...)
		case barrier.Promote:
			t.inputs[a.Channel].Promote(a.Checkpoint)
		case barrier.StartTimer:
			if t.timer != nil {
				t.timer.Stop()
			}
			t.timer = time.NewTimer(t.a.opts.AlignmentTimeout)
			t.timerC, t.timerCP = t.timer.C, a.Checkpoint
		case barrier.Complete:
			if err := t.complete(a.Checkpoint); err != nil {
				return err
			}
		case barrier.Abort:
			t.drop(a.Checkpoint)
		case barrier.Decline:
			t.drop(a.Checkpoint)
			if err := t.report(report{kind: reportDecline, id: a.Checkpoint, reason: a.Reason}); err != nil {
				return err
			}
		case barrier.CloseEpoch:
			if err := t.op.OnEpoch(a.Epoch); err != nil {
				return fmt.Errorf("%s: epoch %d: %w", t.name(), a.Epoch, err)
			}
			if err := t.out.emitAll(message.EpochBarrier(a.Epoch)); err != nil {
				return err
			}
		case barrier.EndOfStream:
			if err := t.op.Finish(); err != nil {
				return fmt.Errorf("%s: finish: %w", t.name(), err)
			}
			if err := t.out.emitAll(message.EndOfStream()); err != nil {
				return err
			}
			t.finished = true
		}
	}
	return nil
}

// drop forgets the snapshot held for checkpoint id.
func (t *subtask) drop(id base.CheckpointID) {
	if p := t.pending[id]; p != nil && p.discard != nil {
		p.discard()
	}
	delete(t.pending, id)
}

// snapshot lets the operator or source store what it keeps in memory and
// captures the state backend.
func (t *subtask) snapshot(id base.CheckpointID) (*pendingSnap, error) {
	var err error
	if t.op != nil {
		err = t.op.Snapshot(id)
	} else {
		err = t.src.Snapshot(id)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: snapshot of checkpoint %d: %w", t.name(), id, err)
	}
	var sn state.Snapshot
	written := new(atomic.Int64)
	files := t.a.countingFiles(written)
	if a, ok := t.backend.(state.AsyncSnapshotter); ok {
		sn, err = a.SnapshotAsync(id, files)
	} else {
		sn, err = t.backend.Snapshot(id, files)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: state snapshot of checkpoint %d: %w", t.name(), id, err)
	}
	return &pendingSnap{handle: sn.Handle, shared: sn.Shared, upload: sn.Upload, discard: sn.Discard, encode: sn.Encode, sharedBytes: written}, nil
}

// finishState runs the asynchronous part of a state snapshot: the upload
// of its files, then the encoding of its handle. It runs on the writer
// goroutine, or inline where writes are synchronous.
func (p *pendingSnap) finishState() error {
	if p.upload != nil {
		if err := p.upload(); err != nil {
			return err
		}
	}
	if p.encode != nil {
		h, err := p.encode()
		if err != nil {
			return err
		}
		p.handle, p.encode = h, nil
	}
	return nil
}

// complete writes the subtask's file of checkpoint id and acknowledges it.
func (t *subtask) complete(id base.CheckpointID) error {
	p := t.pending[id]
	delete(t.pending, id)
	if p == nil {
		panic(fmt.Sprintf("%s: complete of checkpoint %d without its snapshot", t.name(), id))
	}
	if t.writes == nil {
		return t.write(writeJob{id: id, p: p})
	}
	w := writeJob{id: id, p: p, channels: hasChannels(p)}
	if w.channels {
		t.chanWrites.Add(1)
	}
	select {
	case t.writes <- w:
		return nil
	case <-t.a.cancel:
		return t.cancelled()
	}
}

// hasChannels reports whether p holds channel state.
func hasChannels(p *pendingSnap) bool {
	for _, ch := range p.channels {
		if len(ch) > 0 {
			return true
		}
	}
	return false
}

// writeJob is a completed checkpoint's part of one subtask, handed to the
// writer. Its chunks are shared with the subtask (invariant
// chunk-immutable), and so may be what the backend's Encode reads (the
// heap backend's frozen arena, invariant arena-append-only); nothing else
// of it is.
type writeJob struct {
	id base.CheckpointID
	p  *pendingSnap
	// channels: p holds channel state, counted in subtask.chanWrites
	// until written.
	channels bool
}

// writerQueue bounds the checkpoints a subtask may have waiting for their
// file writes; a slower disk backpressures the subtask.
const writerQueue = 2

func (t *subtask) startWriter() {
	t.writes = make(chan writeJob, writerQueue)
	t.writerDone = make(chan struct{})
	go func() {
		defer close(t.writerDone)
		for w := range t.writes {
			// An error here is a cancellation, which the subtask sees too.
			_ = t.write(w)
			if w.channels {
				t.chanWrites.Add(-1)
			}
		}
	}()
}

// stopWriter waits until every queued write is stored and acknowledged;
// writes are synchronous afterwards.
func (t *subtask) stopWriter() {
	if t.writes == nil {
		return
	}
	close(t.writes)
	<-t.writerDone
	t.writes = nil
}

// write encodes and stores the subtask's file of a checkpoint and
// acknowledges it (or declines it when storage fails).
func (t *subtask) write(w writeJob) error {
	id, p := w.id, w.p
	if err := p.finishState(); err != nil {
		// A storage failure fails the checkpoint, not the job.
		return t.report(report{kind: reportDecline, id: id, reason: err.Error()})
	}
	st := checkpoint.SubtaskState{Handle: p.handle, Align: p.align}
	if p.unaligned {
		st.Channels = chanstate.Append(nil, p.channels)
	}
	fi, err := t.a.opts.Storage.WriteSubtask(id, t.vertex.Name, t.i, st.Encode())
	if err != nil {
		// A storage failure fails the checkpoint, not the job.
		return t.report(report{kind: reportDecline, id: id, reason: err.Error()})
	}
	return t.report(report{kind: reportAck, id: id, info: fi, shared: p.shared, chBytes: int64(len(st.Channels)), sharedBytes: p.sharedBytes.Load()})
}

func (t *subtask) report(r report) error {
	r.task = t.task
	select {
	case t.a.reports <- r:
		return nil
	case <-t.a.cancel:
		return t.cancelled()
	}
}

// pollControl applies the job's control.
func (t *subtask) pollControl() error {
	c := t.ctrl.take()
	if c.abort > t.lastAb {
		t.lastAb = c.abort
		if t.trig != 0 && t.trig <= c.abort {
			t.trig = 0 // a source's barrier not emitted yet: nothing to abort
		}
		if t.handler != nil {
			if err := t.exec(t.handler.OnAbort(c.abort), message.Message{}); err != nil {
				return err
			}
		}
	}
	if c.complete > t.lastCo {
		t.lastCo = c.complete
		var err error
		if t.op != nil {
			err = t.op.NotifyComplete(c.complete)
		} else {
			err = t.src.NotifyComplete(c.complete)
		}
		if err != nil {
			return fmt.Errorf("%s: notify complete %d: %w", t.name(), c.complete, err)
		}
	}
	if c.trigger > t.lastTr && (t.src != nil || t.finished) {
		t.lastTr = c.trigger
		if t.finished {
			if err := t.trigger(c.trigger, c.triggerMode); err != nil {
				return err
			}
		} else {
			t.trig, t.trigMode, t.trigCut = c.trigger, c.triggerMode, c.triggerCut
		}
	}
	if c.timeout > t.lastTo {
		t.lastTo = c.timeout
		if err := t.alignmentTimeout(c.timeout); err != nil {
			return err
		}
	}
	if t.trig != 0 && t.lastEpoch >= t.trigCut && (t.trigMode == message.Unaligned || t.out.available()) {
		id, mode := t.trig, t.trigMode
		t.trig = 0
		if err := t.trigger(id, mode); err != nil {
			return err
		}
	}
	if c.exit {
		t.exit = true
	}
	return nil
}

// alignmentTimeout handles checkpoint id running past
// aligned_checkpoint_timeout since its trigger (Flink measures the timeout
// from the checkpoint's start, so that a barrier stuck behind full queues
// times out too, not only one waiting for alignment): a source still
// waiting to emit it emits it unaligned; an operator aligning it turns
// unaligned; an operator that has not seen it yet promotes it in its input
// queues, where it may sit in band behind data.
func (t *subtask) alignmentTimeout(id base.CheckpointID) error {
	if t.trig == id {
		t.trigMode = message.Unaligned
		return nil
	}
	if t.handler == nil || t.finished {
		return nil
	}
	if cur, ok := t.handler.Current(); ok && cur == id {
		return t.exec(t.handler.OnTimeout(id), message.Message{})
	}
	if cur, ok := t.handler.Current(); !ok || cur < id {
		for _, q := range t.inputs {
			q.Promote(id)
		}
	}
	return nil
}

// trigger takes the part of checkpoint id of a source, or of a finished
// subtask: snapshot, emit the barrier unless finished, store and
// acknowledge. A running source leaves storing and acknowledging to its
// writer goroutine, as operators do, so that it goes on emitting during the
// file's fsyncs (it is the pipeline's first stage; a stall there stalls
// everything behind it).
func (t *subtask) trigger(id base.CheckpointID, mode message.Mode) error {
	p, err := t.snapshot(id)
	if err != nil {
		return err
	}
	if !t.finished {
		if err := t.out.emitAll(message.Barrier(id, mode)); err != nil {
			return err
		}
	}
	if t.handler != nil {
		p.align = t.handler.AlignState()
	}
	if t.writes == nil {
		return t.write(writeJob{id: id, p: p})
	}
	select {
	case t.writes <- writeJob{id: id, p: p}:
		return nil
	case <-t.a.cancel:
		return t.cancelled()
	}
}

// nextFromSource calls the source's Next. Under the aligned policy it
// does so under the job's barrierCut read lock, records an epoch it
// returns there, and does not call Next at all (ok false) when a trigger
// is waiting to be taken: the trigger's cut may be the source's last
// epoch, and its barrier must then go out before anything Next could
// return.
func (t *subtask) nextFromSource() (it operator.Item, ok bool, err error) {
	c := t.a.cut
	if c == nil {
		it, err = t.src.Next()
		return it, true, err
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	if id := t.ctrl.pendingTrigger(); id > t.lastTr {
		return it, false, nil
	}
	if it, err = t.src.Next(); err == nil && it.Epoch != base.NoEpoch {
		c.last[t.task].Store(uint64(it.Epoch))
	}
	return it, true, err
}

func (t *subtask) runSource() error {
	for !t.finished && !t.exit {
		if err := t.pollControl(); err != nil {
			return err
		}
		if t.exit {
			break
		}
		if !t.out.available() {
			if err := t.wait(); err != nil {
				return err
			}
			continue
		}
		if t.a.cut != nil && t.trig != 0 && t.lastEpoch >= t.trigCut {
			// Under the aligned policy a checkpoint barrier whose cut is
			// reached goes out before the source's Next is called again
			// (barrierCut); the outputs have room now.
			id, mode := t.trig, t.trigMode
			t.trig = 0
			if err := t.trigger(id, mode); err != nil {
				return err
			}
			continue
		}
		it, ok, err := t.nextFromSource()
		if err != nil {
			return fmt.Errorf("%s: %w", t.name(), err)
		}
		if !ok {
			continue
		}
		if it.Chunk != nil {
			if err := t.out.Emit(it.Chunk); err != nil {
				return err
			}
		}
		if it.Epoch != base.NoEpoch {
			t.lastEpoch = it.Epoch
			if err := t.out.emitAll(message.EpochBarrier(it.Epoch)); err != nil {
				return err
			}
			t.a.noteEpoch(it.Epoch)
		}
		if it.Done {
			if err := t.out.emitAll(message.EndOfStream()); err != nil {
				return err
			}
			t.finished = true
			break
		}
		if it.Chunk == nil && it.Epoch == base.NoEpoch && !it.Done {
			// Nothing available: do not spin.
			select {
			case <-time.After(time.Millisecond):
			case <-t.ctrl.sig:
				t.ctrl.signal()
			case <-t.a.cancel:
				return t.cancelled()
			}
		}
	}
	return nil
}
