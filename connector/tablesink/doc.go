// Package tablesink is the table store's sink for the dataflow runtime:
// the two-phase-commit Committer (dataflow/operator.TwoPhaseCommitSink)
// that writes a job's changelog into a table of the table store, one
// snapshot per epoch that changed the table, and reports each committed
// epoch, empty ones included, to the meta service (DESIGN.md "The epoch
// protocol", the sink's part).
//
// # Protocol
//
//   - Prepare(E), at epoch barrier E: the epoch's rows go through the
//     table's writer (write.Writer) and PrepareCommit(E) turns them into
//     commit messages (data and changelog files, durable, invisible). The
//     messages, JSON, are the descriptor the sink keeps in its checkpoint.
//   - Commit(E), once a checkpoint taken after barrier E is complete:
//     table.Commit publishes one snapshot per epoch that changed the
//     table and raises the committed epoch to E; then the meta service
//     hears CommitEpoch(table, E). The Committer is a batch committer
//     (operator.BatchCommitter): when one completed checkpoint covers
//     epochs E1..Ek, they go to the table in one table.Commit and the meta
//     service hears CommitEpoch(table, Ek) once, so a sink that fell
//     behind catches up with one report per checkpoint, not per epoch.
//   - After a restore the runtime re-commits every prepared epoch of the
//     restored checkpoint. Commits are idempotent by (commit user, epoch),
//     so a re-commit adds nothing (table/commit). A checkpoint taken before
//     an older checkpoint's commit holds epochs committed since, so the
//     report names the table's committed epoch, which never goes back;
//     the meta service refuses reports that do.
//
// A Committer belongs to one attempt of one sink subtask: the writer it
// opens on its first Prepare reads the table's latest snapshot, which the
// re-commits of the restore have already brought up to date. The table
// store takes one writer per table (sequence numbers are per bucket), so a
// table sink runs with parallelism 1.
package tablesink
