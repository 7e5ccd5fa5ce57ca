// Package tablesource is the table store's source for the dataflow
// runtime: it reads a table's changelog epoch by epoch (table/scan.Stream)
// and closes each epoch with an epoch barrier once all of the epoch's
// changes were emitted and the table has committed it (DESIGN.md "The
// epoch protocol": view jobs read their input tables' changelogs epoch by
// epoch; epochs travel from the sources through every table).
//
// # Epochs
//
// Every APPEND snapshot is one epoch; epochs that changed nothing have no
// snapshot. The source closes epochs in order without gaps (the runtime's
// invariant epoch-sequence): at the end of a snapshot of epoch E it closes
// every epoch up to E, and when it has caught up it closes every epoch up
// to the table's committed epoch. Once caught up it reads the committed
// epoch and then asks the stream once more, so an epoch is closed only
// after the snapshots published before the epoch was marked committed have
// been delivered.
//
// A job that reads several tables has a source per table; the operators
// that join them align epoch barriers on all inputs, so their output for
// epoch E waits until every input table has committed E.
//
// # Checkpoints
//
// The source's state is the stream position (snapshot, offset) after the
// last batch it emitted and the last epoch it closed. A checkpoint may fall
// in the middle of an epoch; after a restore the stream resumes at the
// position, so nothing is emitted twice or skipped.
//
// Reading ahead of the barriers is allowed; emitting ahead is not: a
// batch's changes are emitted before its end-of-epoch barrier, and no
// change of epoch E+1 is emitted before barrier E.
package tablesource
