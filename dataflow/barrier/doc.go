// Package barrier is the barrier-handling state machine of one subtask with
// one or more input channels: which inputs are blocked, when to snapshot,
// when to forward a barrier, which inputs' messages are channel state, when
// an epoch is closed. It is pure (STYLE.md "Protocols are pure state
// machines"): events go in (a barrier, an end of stream, a timer firing, an
// abort), actions come out; it starts no goroutine, reads no clock and does
// no I/O. The task package is its driver.
//
// The design follows Flink's SingleCheckpointBarrierHandler with its
// BarrierHandlerState (waiting for the first barrier, collecting barriers,
// aligned with a timeout switching to unaligned), and RisingWave's
// barrier_align executor for the epoch barriers that Flink lacks.
//
// # Epoch barriers
//
// Epoch barriers are always aligned: a channel that delivered epoch barrier
// E is blocked until every unfinished channel has; then the handler emits
// CloseEpoch(E), the driver lets the operator emit the epoch's results and
// forwards E, and every channel unblocks. Invariant (epoch-sequence): all
// channels deliver the same sequence of epochs, each larger than the last;
// a channel delivering another epoch than the one being aligned is a bug
// upstream and panics.
//
// # Checkpoint barriers
//
// The handler has one current checkpoint at most, in one of three phases:
//
//	idle        no checkpoint in progress
//	aligning    an aligned barrier arrived; channels that delivered it are
//	            blocked; when all have: Snapshot, Forward, Complete
//	unaligned   the snapshot was taken at the first barrier (or when the
//	            alignment timed out, or an unaligned barrier arrived); no
//	            channel is blocked for the checkpoint; channels that have
//	            not delivered the barrier yet are recording: every message
//	            taken from them is channel state, until their barrier
//	            arrives; when all have: Complete
//
// A barrier of a newer checkpoint aborts the current one (subsumption); a
// barrier of a checkpoint not newer than the newest one seen is stale and
// ignored, so the late barriers of an aborted checkpoint change nothing.
// Abort unblocks everything the checkpoint blocked.
//
// Channel state of an unaligned checkpoint, per channel, is the messages
// recorded while the channel was recording, followed by the messages its
// barrier overtook in the queue (CaptureOvertaken; the queue copied them
// into the barrier when it jumped to the head).
//
// # Crossed barriers
//
// Sources inject epoch and checkpoint barriers in one order on all their
// channels, so aligned barriers do not cross. When they do anyway (a
// checkpoint barrier before epoch E on one channel and after it on another)
// every channel ends up blocked, by the epoch or by the checkpoint, and
// neither can complete. The handler resolves the deadlock: with a policy
// that allows unaligned checkpoints the checkpoint turns unaligned (only
// checkpoints may overtake, never epochs); with the aligned policy it
// declines the checkpoint.
//
// # Snapshot of the handler itself
//
// An unaligned checkpoint taken while an epoch is being aligned captures
// inputs that delivered the epoch barrier together with their later
// messages as channel state. After a restore those channels must be blocked
// again until the others deliver the epoch, or the replay would mix two
// epochs. AlignState is therefore part of every checkpoint (invariant
// restore-blocks).
package barrier
