package barrier

import (
	"fmt"
	"strings"

	"github.com/stratadb/strata/dataflow/message"
	"github.com/stratadb/strata/internal/base"
)

// Policy is the job's checkpoint mode.
type Policy uint8

const (
	// PolicyAligned aligns every checkpoint (Flink's default).
	PolicyAligned Policy = iota
	// PolicyUnaligned takes every checkpoint unaligned (FLIP-76).
	PolicyUnaligned
	// PolicyAlignedTimeout starts aligned and turns unaligned when the
	// alignment outlasts aligned_checkpoint_timeout (Flink's
	// execution.checkpointing.aligned-checkpoint-timeout).
	PolicyAlignedTimeout
)

// String returns "aligned", "unaligned" or "timeout".
func (p Policy) String() string {
	switch p {
	case PolicyUnaligned:
		return "unaligned"
	case PolicyAlignedTimeout:
		return "timeout"
	}
	return "aligned"
}

// ParsePolicy parses the names String returns.
func ParsePolicy(s string) (Policy, error) {
	switch s {
	case "aligned":
		return PolicyAligned, nil
	case "unaligned":
		return PolicyUnaligned, nil
	case "timeout":
		return PolicyAlignedTimeout, nil
	}
	return 0, fmt.Errorf("checkpoint policy %q is not aligned, unaligned or timeout: %w", s, base.ErrInvalidArgument)
}

// BarrierMode returns the mode in which sources emit barriers under p.
func (p Policy) BarrierMode() message.Mode {
	if p == PolicyUnaligned {
		return message.Unaligned
	}
	return message.Aligned
}

// ActionKind says what the driver must do.
type ActionKind uint8

// The actions.
const (
	// Snapshot: snapshot the operator's state, with Align, for
	// Checkpoint, in Mode.
	Snapshot ActionKind = iota + 1
	// Forward: send barrier Checkpoint downstream in Mode (unaligned: at the
	// head of every output queue).
	Forward
	// CaptureOvertaken: append the Overtaken messages of the barrier just
	// taken from Channel to Channel's channel state of Checkpoint.
	CaptureOvertaken
	// Promote: ask Channel's queue to move its aligned barrier of
	// Checkpoint to the head (queue.Promote); when it is not queued yet it
	// arrives in band and the channel records until then.
	Promote
	// StartTimer: start the alignment timer of Checkpoint; deliver
	// OnTimeout(Checkpoint) when it fires.
	StartTimer
	// Complete: every channel delivered Checkpoint; its snapshot and
	// channel state are final; acknowledge it to the coordinator.
	Complete
	// Abort: drop everything held for Checkpoint (subsumed or aborted).
	Abort
	// Decline: the checkpoint cannot complete here (Reason); tell the
	// coordinator, which aborts it everywhere.
	Decline
	// CloseEpoch: every channel delivered epoch barrier Epoch; let the
	// operator emit the epoch's results, then forward the barrier.
	CloseEpoch
	// EndOfStream: every channel has ended; forward end of stream.
	EndOfStream
)

var actionNames = map[ActionKind]string{
	Snapshot: "snapshot", Forward: "forward", CaptureOvertaken: "capture-overtaken",
	Promote: "promote", StartTimer: "start-timer", Complete: "complete", Abort: "abort",
	Decline: "decline", CloseEpoch: "close-epoch", EndOfStream: "end-of-stream",
}

// Action is one instruction to the driver. Only the fields its Kind
// documents are set.
type Action struct {
	Kind       ActionKind
	Checkpoint base.CheckpointID
	Mode       message.Mode
	Channel    int
	Epoch      base.Epoch
	Reason     string
	// Align is, for Snapshot, the handler's AlignState at the instant of
	// the snapshot, to be stored with it (invariant restore-blocks).
	Align AlignState
}

// String formats the action for traces, e.g. "snapshot cp=2 unaligned".
func (a Action) String() string {
	s := actionNames[a.Kind]
	switch a.Kind {
	case Snapshot, Forward:
		return fmt.Sprintf("%s cp=%d %s", s, a.Checkpoint, a.Mode)
	case CaptureOvertaken, Promote:
		return fmt.Sprintf("%s ch=%d cp=%d", s, a.Channel, a.Checkpoint)
	case StartTimer, Complete, Abort:
		return fmt.Sprintf("%s cp=%d", s, a.Checkpoint)
	case Decline:
		return fmt.Sprintf("%s cp=%d: %s", s, a.Checkpoint, a.Reason)
	case CloseEpoch:
		return fmt.Sprintf("%s e=%d", s, a.Epoch)
	}
	return s
}

type phase uint8

const (
	idle phase = iota
	aligning
	unaligned
)

func (p phase) String() string {
	return [...]string{"idle", "aligning", "unaligned"}[p]
}

// AlignState is the part of the handler that a checkpoint must keep: the
// epoch being aligned and the channels that already delivered it
// (invariant restore-blocks). Channels are numbered 0..n-1.
type AlignState struct {
	// LastEpoch is the last epoch closed on every channel.
	LastEpoch base.Epoch
	// PendingEpoch is the epoch being aligned, or NoEpoch.
	PendingEpoch base.Epoch
	// Arrived lists the channels that delivered PendingEpoch.
	Arrived []int
}

// Handler is the barrier handler of one subtask. The zero value is not
// usable; call New.
type Handler struct {
	policy   Policy
	finished []bool
	nFin     int
	ended    bool

	lastEpoch    base.Epoch
	pendingEpoch base.Epoch
	epochArrived []bool
	nEpoch       int

	// cur is the current checkpoint (meaningful unless phase is idle);
	// newest is the newest checkpoint id seen in a barrier or an abort.
	phase     phase
	cur       base.CheckpointID
	newest    base.CheckpointID
	cpArrived []bool
	nCP       int

	out []Action
}

// New returns a handler for a subtask with inputs channels (at least 1)
// under policy, restored from st (the zero AlignState for a fresh start).
func New(inputs int, policy Policy, st AlignState) *Handler {
	if inputs < 1 {
		panic(fmt.Sprintf("barrier: %d input channels", inputs))
	}
	h := &Handler{
		policy:       policy,
		finished:     make([]bool, inputs),
		epochArrived: make([]bool, inputs),
		cpArrived:    make([]bool, inputs),
		lastEpoch:    st.LastEpoch,
		pendingEpoch: st.PendingEpoch,
	}
	for _, ch := range st.Arrived {
		h.epochArrived[ch] = true
		h.nEpoch++
	}
	return h
}

// AlignState returns the state a snapshot must keep.
func (h *Handler) AlignState() AlignState {
	st := AlignState{LastEpoch: h.lastEpoch, PendingEpoch: h.pendingEpoch}
	for ch, ok := range h.epochArrived {
		if ok {
			st.Arrived = append(st.Arrived, ch)
		}
	}
	return st
}

// Inputs returns the number of input channels.
func (h *Handler) Inputs() int { return len(h.finished) }

// Blocked reports whether channel ch is held back: it delivered the epoch
// being aligned or the aligned checkpoint being aligned. A blocked channel
// still delivers unaligned barriers from the head of its queue.
func (h *Handler) Blocked(ch int) bool {
	return (h.pendingEpoch != base.NoEpoch && h.epochArrived[ch]) ||
		(h.phase == aligning && h.cpArrived[ch])
}

// Recording reports whether messages taken from channel ch are channel
// state of the current unaligned checkpoint (the checkpoint's barrier has
// not arrived on ch yet).
func (h *Handler) Recording(ch int) bool {
	return h.phase == unaligned && !h.cpArrived[ch] && !h.finished[ch]
}

// Current returns the checkpoint in progress and whether there is one.
func (h *Handler) Current() (base.CheckpointID, bool) { return h.cur, h.phase != idle }

// LastEpoch returns the last epoch closed on all channels.
func (h *Handler) LastEpoch() base.Epoch { return h.lastEpoch }

func (h *Handler) emit(a Action) { h.out = append(h.out, a) }

func (h *Handler) flush() []Action {
	out := h.out
	h.out = nil
	return out
}

// OnCheckpointBarrier handles barrier b taken from channel ch.
func (h *Handler) OnCheckpointBarrier(ch int, b message.CheckpointBarrier) []Action {
	h.checkChannel(ch)
	switch {
	case h.phase != idle && b.ID == h.cur:
		if h.cpArrived[ch] {
			panic(fmt.Sprintf("barrier: channel %d delivered checkpoint %d twice", ch, b.ID))
		}
	case b.ID <= h.newest:
		return nil // stale: aborted, subsumed or declined
	default:
		if h.phase != idle {
			h.abortCurrent()
		}
		h.start(b.ID)
	}
	h.cpArrived[ch] = true
	h.nCP++
	if b.Mode == message.Unaligned || h.policy == PolicyUnaligned {
		if h.phase == aligning {
			h.toUnaligned(ch)
		}
		if b.Mode == message.Unaligned {
			h.emit(Action{Kind: CaptureOvertaken, Channel: ch, Checkpoint: h.cur})
		}
	} else if h.phase == aligning && h.nCP == 1 && h.policy == PolicyAlignedTimeout {
		h.emit(Action{Kind: StartTimer, Checkpoint: h.cur})
	}
	h.settle()
	return h.flush()
}

// start begins checkpoint id in the aligning phase.
func (h *Handler) start(id base.CheckpointID) {
	h.cur, h.newest = id, id
	h.phase = aligning
	clear(h.cpArrived)
	h.nCP = 0
	for ch, fin := range h.finished {
		if fin {
			h.cpArrived[ch] = true
			h.nCP++
		}
	}
}

// toUnaligned switches the current checkpoint from aligning to unaligned:
// snapshot now, forward at the head, promote the barriers still queued
// behind data on the channels that have not delivered them (not needed
// under PolicyUnaligned, where every barrier jumps the queue). except is the
// channel whose barrier causes the switch (already arrived).
func (h *Handler) toUnaligned(except int) {
	h.phase = unaligned
	h.emit(Action{Kind: Snapshot, Checkpoint: h.cur, Mode: message.Unaligned, Align: h.AlignState()})
	h.emit(Action{Kind: Forward, Checkpoint: h.cur, Mode: message.Unaligned})
	for ch, ok := range h.cpArrived {
		if !ok && ch != except && h.policy != PolicyUnaligned {
			h.emit(Action{Kind: Promote, Channel: ch, Checkpoint: h.cur})
		}
	}
}

func (h *Handler) abortCurrent() {
	h.emit(Action{Kind: Abort, Checkpoint: h.cur})
	h.phase = idle
	clear(h.cpArrived)
	h.nCP = 0
}

// settle completes whatever the last event made complete: the checkpoint,
// the epoch, the end of all input, and resolves crossed barriers.
func (h *Handler) settle() {
	n := len(h.finished)
	if h.phase != idle && h.nCP == n {
		if h.phase == aligning {
			h.emit(Action{Kind: Snapshot, Checkpoint: h.cur, Mode: message.Aligned, Align: h.AlignState()})
			h.emit(Action{Kind: Forward, Checkpoint: h.cur, Mode: message.Aligned})
		}
		h.emit(Action{Kind: Complete, Checkpoint: h.cur})
		h.phase = idle
		clear(h.cpArrived)
		h.nCP = 0
	}
	if h.pendingEpoch != base.NoEpoch && h.nEpoch == n {
		e := h.pendingEpoch
		h.lastEpoch, h.pendingEpoch = e, base.NoEpoch
		clear(h.epochArrived)
		h.nEpoch = 0
		for ch, fin := range h.finished {
			if fin {
				h.epochArrived[ch] = true
				h.nEpoch++
			}
		}
		h.emit(Action{Kind: CloseEpoch, Epoch: e})
	}
	if h.phase == aligning && h.pendingEpoch != base.NoEpoch {
		for ch := range h.finished {
			if !h.Blocked(ch) {
				return
			}
		}
		// Every channel is blocked, some by the epoch and some by the
		// checkpoint: the barriers crossed.
		if h.policy == PolicyAligned {
			h.emit(Action{Kind: Decline, Checkpoint: h.cur,
				Reason: fmt.Sprintf("aligned checkpoint barrier crossed epoch barrier %d", h.pendingEpoch)})
			h.phase = idle
			clear(h.cpArrived)
			h.nCP = 0
			return
		}
		h.toUnaligned(-1)
	}
	if h.nFin == n && h.phase == idle && !h.ended {
		h.emit(Action{Kind: EndOfStream})
		h.ended = true
	}
}

// OnEpochBarrier handles epoch barrier e taken from channel ch.
func (h *Handler) OnEpochBarrier(ch int, e base.Epoch) []Action {
	h.checkChannel(ch)
	if h.epochArrived[ch] {
		panic(fmt.Sprintf("barrier: channel %d delivered epoch %d while blocked for epoch %d (invariant epoch-sequence)", ch, e, h.pendingEpoch))
	}
	switch {
	case h.pendingEpoch == base.NoEpoch:
		if e <= h.lastEpoch {
			panic(fmt.Sprintf("barrier: channel %d delivered epoch %d after epoch %d closed (invariant epoch-sequence)", ch, e, h.lastEpoch))
		}
		h.pendingEpoch = e
	case e != h.pendingEpoch:
		panic(fmt.Sprintf("barrier: channel %d delivered epoch %d while epoch %d is being aligned (invariant epoch-sequence)", ch, e, h.pendingEpoch))
	}
	h.epochArrived[ch] = true
	h.nEpoch++
	h.settle()
	return h.flush()
}

// OnEndOfStream handles the end of channel ch: it counts as having
// delivered every barrier from now on.
func (h *Handler) OnEndOfStream(ch int) []Action {
	h.checkChannel(ch)
	if h.finished[ch] {
		panic(fmt.Sprintf("barrier: channel %d ended twice", ch))
	}
	h.finished[ch] = true
	h.nFin++
	if h.phase != idle && !h.cpArrived[ch] {
		h.cpArrived[ch] = true
		h.nCP++
	}
	if !h.epochArrived[ch] {
		h.epochArrived[ch] = true
		h.nEpoch++
	}
	h.settle()
	return h.flush()
}

// OnTimeout handles the alignment timer of checkpoint id firing. A timer of
// a checkpoint no longer aligning (completed, aborted, already unaligned)
// changes nothing.
func (h *Handler) OnTimeout(id base.CheckpointID) []Action {
	if h.phase != aligning || id != h.cur {
		return nil
	}
	h.toUnaligned(-1)
	h.settle()
	return h.flush()
}

// OnAbort handles the coordinator aborting checkpoint id: the current
// checkpoint is dropped and unblocks its channels if it is id; later
// barriers of id (and of older checkpoints) are ignored.
func (h *Handler) OnAbort(id base.CheckpointID) []Action {
	if h.phase != idle && h.cur == id {
		h.abortCurrent()
	}
	if id > h.newest {
		h.newest = id
	}
	h.settle()
	return h.flush()
}

func (h *Handler) checkChannel(ch int) {
	if ch < 0 || ch >= len(h.finished) {
		panic(fmt.Sprintf("barrier: channel %d of %d", ch, len(h.finished)))
	}
	if h.finished[ch] {
		panic(fmt.Sprintf("barrier: message on channel %d after its end of stream", ch))
	}
}

// String describes the handler's state for traces: phase, checkpoint,
// pending epoch, blocked and recording channels.
func (h *Handler) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s", h.phase)
	if h.phase != idle {
		fmt.Fprintf(&b, " cp=%d", h.cur)
	}
	fmt.Fprintf(&b, " epoch=%d", h.lastEpoch)
	if h.pendingEpoch != base.NoEpoch {
		fmt.Fprintf(&b, " aligning-epoch=%d", h.pendingEpoch)
	}
	list := func(name string, f func(int) bool) {
		var chs []string
		for ch := range h.finished {
			if f(ch) {
				chs = append(chs, fmt.Sprint(ch))
			}
		}
		if len(chs) > 0 {
			fmt.Fprintf(&b, " %s=[%s]", name, strings.Join(chs, " "))
		}
	}
	list("blocked", func(ch int) bool { return !h.finished[ch] && h.Blocked(ch) })
	list("recording", h.Recording)
	list("finished", func(ch int) bool { return h.finished[ch] })
	return b.String()
}
