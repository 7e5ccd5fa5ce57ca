// Package coordinator is the pure core of a job's checkpoint coordinator
// (DESIGN.md "The checkpoint protocol"; Flink's CheckpointCoordinator, cut
// down to one checkpoint in flight and split as STYLE.md asks: this core
// takes events and returns actions, the job driver in the task package
// does the I/O and owns the clock).
//
// # Lifecycle of a checkpoint
//
//	Tick            idle and Interval passed since the last trigger:
//	                Trigger(C) at the sources
//	Ack             every subtask acknowledged C: Persist(C) (the driver
//	                writes the metadata, the commit point)
//	Persisted ok    NotifyComplete(C) to every subtask (sinks commit)
//	Persisted err,  Abort(C): the driver discards C's files and tells the
//	Decline, or     subtasks; a failure counts against
//	Tick past       TolerableFailures
//	Timeout
//
// Invariants:
//   - one-in-flight: no Trigger while a checkpoint is pending;
//   - ids-grow: checkpoint ids grow by one per trigger, aborted ones
//     included, starting after the restored checkpoint's id;
//   - tolerable-failures: more than TolerableFailures consecutive failed
//     checkpoints give FailJob; a completed checkpoint resets the count;
//   - epoch-triggered (Config.OnEpoch): a checkpoint starts when a source
//     emits an epoch barrier, not on a clock of its own, so that its
//     barrier follows the epoch barrier at once. A sink commits epoch E on
//     the first checkpoint completed after barrier E (DESIGN.md); with
//     triggers on a clock unrelated to the epochs, E waits half an
//     interval on average for that checkpoint to start, at every level of
//     a topology of views. The clock still triggers after one and a half
//     intervals without an epoch. An epoch barrier that goes out while a
//     checkpoint is in flight, or less than three quarters of Interval
//     after the last trigger, is remembered: the next checkpoint starts
//     when the one in flight completes, or at the first tick after the
//     three quarters, not at the epoch after (with checkpoints that take
//     about an interval, most epoch barriers meet one in flight, and each
//     epoch would wait a whole interval more). A trigger that followed no
//     epoch barrier (the clock's) covers nothing new and does not hold
//     back the next epoch's.
//   - restored-checkpoint-soon: a job restored from a checkpoint triggers
//     its first checkpoint a tenth of Interval after it starts, not a
//     whole Interval. What it produces until then replays what it
//     produced before the crash, which readers have been waiting for
//     since (sinks commit only on a completed checkpoint), and the
//     restore has already cost its time. RisingWave likewise commits a
//     first barrier as soon as recovery is done; Flink waits a random
//     delay up to the interval. With incremental state snapshots this
//     early checkpoint writes little.
package coordinator
