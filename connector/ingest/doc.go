// Package ingest places epoch barriers in an ingest job's input (DESIGN.md
// "The epoch protocol", ingest jobs): a Source reads an external input
// through a Reader, one source transaction at a time, and closes epoch E
// (emits epoch barrier E) at the position where it notices that the meta
// service's epoch clock has moved past E, always between transactions, so
// one source transaction never straddles two epochs (DESIGN.md invariant 2).
//
// # Epochs
//
// The source's open epoch is one above the last it closed. It closes epochs
// one by one, without gaps, as the clock passes them: every subtask of a
// job closes the same sequence (the runtime requires it), starting at the
// job's StartEpoch. An epoch the clock passed while the input was idle is
// closed empty. A closed epoch is always below the clock's open epoch, so
// the meta service accepts the sinks' reports of it.
//
// # Replay
//
// The source keeps, in its checkpoints, its position, the last epoch it
// closed and the (epoch, position) pairs where it closed recent epochs
// (FLIP-276 keeps the same pairs). After a restore, a recorded pair above
// the restored epoch is replayed exactly: the source reads up to that
// position and closes that epoch there, whatever the clock says, so that
// a replay reproduces the epochs a first run closed. Pairs are positions
// between transactions, because barriers only go there. A StatefulReader's
// own state (datagen's start time) is kept beside the position and given
// back to the Reader when the source opens, so that the replayed rows are
// the rows of the first run.
//
// Positions are uint64 offsets of the Reader's input (a row number, a file
// offset, a log sequence number).
package ingest
