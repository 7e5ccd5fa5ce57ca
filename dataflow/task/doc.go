// Package task runs jobs: the driver around the pure protocol cores. One
// goroutine per subtask owns the subtask's operator, state and barrier
// handler; the job goroutine owns the checkpoint coordinator core and the
// restart loop.
//
// # A subtask's loop
//
// Each round the subtask (1) applies control from the job (checkpoint
// triggers at sources, aborts, notify-complete, alignment timeouts, exit),
// (2) checks that
// every output queue has room, (3) takes one message from an input channel
// that is not blocked, round-robin, and hands it to the operator or the
// barrier handler, whose actions it executes. When the outputs are full it
// takes only unaligned barriers, which therefore pass a backpressured
// subtask (FLIP-76). When nothing can be taken it waits on one select over
// its input signal, its output signal, its control signal, the alignment
// timer and cancellation.
//
// A subtask's checkpoint files (a running source's too) are encoded,
// written and acknowledged by a writer goroutine of its own, behind a queue
// of two, so that processing goes on during the fsyncs; the subtask drains
// it before it reports that it finished. The state backend's snapshot is
// taken in the subtask's goroutine, since it must see the state at the
// barrier; a backend that is a state.AsyncSnapshotter (the heap backend)
// only freezes its state there and leaves the encoding of the handle to the
// writer goroutine, with the uploads of files (Flink's synchronous and
// asynchronous snapshot parts).
//
// Invariant (replay-first): after a restore, a channel's channel state is
// delivered before anything from its queue; an unaligned barrier arriving
// meanwhile overtakes the replayed messages too and carries them as
// overtaken.
//
// Invariant (record-before-handle): a message taken from a recording
// channel is appended to the channel state of the current checkpoint before
// the operator or the handler sees it.
//
// Invariant (chunk-recycle): the hash exchange makes a new chunk per
// target from the rows it routes; when every column is Ints-only it takes
// the memory from the edge's pool and marks the message Recyclable. The
// receiver gives such a chunk back to the pool after Process only when
// nothing else can refer to it: the operator is an operator.InputBorrower,
// the chunk was not recorded as channel state, no checkpoint is pending at
// the subtask (an unaligned barrier's overtaken messages are captured into
// a pending snapshot before they are processed), and no channel state is
// waiting on the writer goroutine. Restored channel state and chunks passed
// on as they are (all rows to one target, forward and broadcast edges) are
// never recycled: other chunks may share their slices. A chunk in the pool
// belongs to nobody; the exchange overwrites every element it reuses.
//
// Invariant (barrier-cut): under the aligned policy every source emits
// checkpoint barrier C between the same two epoch barriers. The job gives
// each trigger a cut, the newest epoch any source has taken from its
// source, computed while no source is inside Next; a source emits C once
// it has emitted the cut's barrier and before it calls Next again
// (barrierCut). A source's snapshot is thus always taken between two
// items, never between an item's chunk and its epoch barrier. Without it a source ahead of another
// by an epoch would leave C after epoch barrier E while the other leaves
// it before, and an operator reading both would find one input blocked by
// E and the other by C, which no aligned checkpoint can resolve. The
// unaligned and timeout policies emit at once instead: a crossing there
// turns the checkpoint unaligned (barrier.Handler), which a checkpoint
// waiting for the slowest source would not let it do.
//
// # The job loop
//
// An attempt builds queues and subtasks, restores them from the latest
// completed checkpoint in storage (state, barrier alignment state, channel
// state, hence source positions and a sink's prepared epochs), and runs the
// coordinator driver: ticks, acknowledgements, declines; it persists
// metadata (the commit point), fans notify-complete and aborts out through
// each subtask's control. Control is coalesced (newest abort, newest
// complete, one pending trigger), so the job loop never blocks on a slow
// subtask and control stays bounded.
//
// The metadata records the key-group hash version (state.KeyGroupHash) the
// job's keyed state and routing used; a checkpoint of another version is
// refused with an error naming it (invariant key-group-hash-fixed in
// dataflow/state), since its keys would be looked up in other key groups
// and on other subtasks than the ones that hold them.
//
// Under the timeout policy the job also measures aligned_checkpoint_timeout
// from each trigger, as Flink does since FLINK-23041: when it expires,
// a source still waiting for room to emit the barrier emits it unaligned at
// the head, an operator aligning the checkpoint turns unaligned, and an
// operator that has not seen the barrier yet promotes it in its input
// queues (queue.Promote), where it may sit in band behind full queues. The
// barrier handler's own timer, started at the first barrier, covers the
// alignment itself.
//
// When every source has finished, the job triggers a final checkpoint;
// once it is complete and notified, the sources emit end of stream, the
// operators finish in topological order and the attempt ends.
//
// Any subtask error or panic cancels the attempt (every blocking wait
// selects on cancellation) and the fixed-delay restart strategy starts a
// new one from the latest completed checkpoint, at most MaxAttempts times;
// then Run returns a *FailedError with the cause.
package task
