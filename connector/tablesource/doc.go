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
// Invariant (close-with-group): the sources of one job form a Group, and
// each closes epoch E only once every source of the group is ready to:
// has given out all of its changes up to E, its table having committed E,
// as DESIGN.md's epoch protocol says of view jobs. The changes of the epoch
// after the last closed one may go out before that; nothing later does.
// So the sources close each epoch together: no source runs epochs ahead of
// the others, and a checkpoint triggered by one source's barrier E finds
// the others at E too, so that it covers E in every input and the sink can
// commit E when it completes (Group says which designs fell short).
//
// # Waiting
//
// A source that has caught up waits for its table's next commit on the
// table's change notification (table/snapshot invariant wake-or-poll): a
// commit by the writer in the same process wakes it at once; otherwise it
// looks again after the idle wait (Config.Idle, growing while nothing
// changes), which is how commits of other processes are seen. A source
// waiting for its group wakes when another member becomes ready. Either
// wait ends after the idle wait at the latest, so that the runtime can
// pass checkpoint barriers meanwhile.
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
//
// # Start
//
// A fresh source (no restored state) of a job that starts after epoch S
// (Config.StartAfter) emits the table as it is at S, the full content of
// its newest snapshot of epoch <= S read as inserts, in epoch S+1, then the
// changelog of the snapshots after it: the table's older snapshots may have
// expired (Paimon's default streaming scan, a full snapshot and then its
// changes). A checkpoint in the middle of the full content stores how many
// rows of it are out; the restored source reads the snapshot again and
// skips them (the merged read's order is deterministic).
//
// # Consumer
//
// Invariant (consumer-at-checkpoint): the position the source registers
// with the table as its consumer (snapshot expiration keeps every snapshot
// from it on) is the one of a completed checkpoint (the last one, or an
// earlier one when the last registration is less than ConsumerEvery old),
// or its start before any completed: a restore resumes at a completed checkpoint's
// position, never before the registered one, so expiration never removes a
// snapshot a restore reads. Registering per read, as a plain stream does,
// would let expiration take snapshots between the last checkpoint and the
// read position. Closing the source keeps the consumer (a restart needs
// it); the engine removes consumers of dropped jobs.
package tablesource
