// Package snapshot holds the snapshot files that version a table, the hints
// beside them, the committed-epoch marker, tags and consumer positions.
//
// # Concepts
//
// A snapshot (snapshot/snapshot-<id>, checked JSON) is an immutable version
// of a table: its schema id, three manifest lists (base: the files of the
// previous snapshot; delta: the changes of this commit; changelog: the
// changelog files of this commit; each inline or, in older files, a list
// file, and their small manifests inline too), who made it (commit user and commit
// identifier, the epoch), its kind (APPEND for written data, COMPACT for a
// rewrite that changes no row, ROLLBACK), record counts, a watermark and
// the epoch it completes. Ids are consecutive from 1.
//
// Snapshot files never change once published, so a Manager keeps the
// snapshots it decoded or published (the newest 128) and, asked for one
// again, only checks that its file still exists (Manager.Get).
//
// LATEST and EARLIEST are hints only; the snapshot files are the truth
// (Paimon). LatestID probes forward from LATEST, which commits rewrite
// only every few snapshots (package commit). EARLIEST also serves as the
// expiry fence, see Consumer.
//
// Publishing is two steps when the commit wants it (Prepare, then
// Pending.Publish): the snapshot file is written and fsynced under no name
// while the manifests it names are written, and published once they are
// durable; Publish returns only after the new name is durable too.
//
// The committed-epoch marker (snapshot/COMMITTED-EPOCH) records the highest
// epoch committed by the table's writer, including epochs that changed
// nothing and so made no snapshot. CommittedEpoch is the larger of the
// marker and the latest snapshot's epoch: the marker is advanced after the
// snapshots of a commit are published, so a crash between the two is
// repaired by the idempotent re-commit, and a marker lost or behind never
// hides a published snapshot.
//
// A tag (tag/tag-<name>) is a copy of a snapshot file that pins its files
// against expiration. A consumer (consumer/consumer-<id>) is a streaming
// reader's persisted position, the next snapshot it will read; expiration
// keeps every snapshot from the smallest consumer position on.
//
// # Change notification
//
// A streaming reader that has caught up waits for the next commit. Within
// the process that writes the table (the engine shares one Manager per
// table between the table's writer and its readers), Manager.Changed hands
// it a channel that the next Publish or marker advance closes, so the
// reader sees the commit at once instead of at its next poll. Readers
// elsewhere keep polling (invariant wake-or-poll).
//
// # Invariants
//
//   - [publish-once] snapshot-<id> is published with put-if-absent; of two
//     committers racing for id, exactly one wins and the other retries.
//   - [pointer-first] expiration and rollback delete a snapshot file before
//     any file it references, so a reader that can read a snapshot file
//     can read its manifests unless the snapshot is being expired, which
//     consumers and tags prevent.
//   - [epoch-monotonic] snapshot epochs never decrease with the id.
//   - [wake-or-poll] Manager.Changed wakes the readers of this process when
//     the same Manager publishes a snapshot or raises the marker; a change
//     made elsewhere (another process, another Manager of the table) wakes
//     nobody, so a reader waiting on Changed also looks again after a
//     timeout, and it treats a wake-up only as a reason to look.
package snapshot
