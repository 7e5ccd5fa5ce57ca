// Package operator defines what the runtime runs: Operator (one subtask of
// a transformation or a sink), Source (one subtask of a source), the
// Context the runtime hands them, and the two-phase-commit sink
// (TwoPhaseCommitSink over a Committer).
//
// # Lifecycle of an operator subtask
//
//	Open                 state restored (Context.Restored) or empty
//	Process*             chunks from input i (0-based, in edge order)
//	OnEpoch(E)           every input delivered epoch barrier E: emit the
//	                     epoch's results now; the runtime forwards E after
//	Snapshot(C)          move in-memory state into Context.State; the
//	                     runtime snapshots the backend right after
//	NotifyComplete(C)    checkpoint C (and every older one) is complete;
//	                     may be skipped for some C when checkpoints follow
//	                     each other closely, so act on everything up to C
//	Finish               every input ended: emit what is left
//	Close                always last, also after a failure
//
// All calls of one subtask come from its own goroutine; an operator needs
// no locking for its own fields.
//
// Invariant (epoch-results): output emitted between OnEpoch(E-1) and the
// end of OnEpoch(E) depends only on input of epochs <= E, because the
// runtime delivers no input of epoch E+1 before OnEpoch(E) returns.
//
// Input chunks are immutable and may be kept (a sink buffers them until its
// epoch commits). An operator that never keeps one, nor any of its slices,
// past Process says so by implementing InputBorrower; the runtime then
// reuses the memory of the chunks its hash exchange made for it.
package operator
