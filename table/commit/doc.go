// Package commit publishes prepared files as snapshots: the commit message
// a writer prepares (serializable, so a sink can keep it in a checkpoint)
// and the committer that turns each message into one snapshot with
// optimistic conflict detection (Paimon's FileStoreCommitImpl).
//
// # Protocol
//
// Commit(messages) handles the messages in epoch order. For each message
// that changes the table it loops, at most Options.CommitRetries+1 times:
//
//  1. read the latest snapshot L;
//  2. if a snapshot by the same commit user with commit identifier >= the
//     message's epoch exists, the message was committed before: skip it
//     ([idempotent-commit]);
//  3. check conflicts against L's live files (Check): every file the
//     message deletes must still be live, and every new file's sequence
//     numbers must be above those already in its bucket (otherwise a
//     second writer races the bucket); a conflict is final and returned;
//  4. write the delta manifest, a base manifest list (L's base and delta
//     manifests, merged into one manifest when there are many), a
//     changelog manifest list, and publish snapshot L.id+1 with
//     put-if-absent; losing that race goes back to 1 (so does a missing
//     file when a newer snapshot appeared meanwhile: an expiration may have
//     removed what the attempt read).
//
// The manifests and lists of step 4 are staged (fileio.Stage: written and
// fsynced, their names not yet durable) and their directory is synced once
// just before the snapshot is published ([manifests-before-snapshot]), so a
// commit costs one directory fsync for all of them instead of one each; the
// LATEST hint after it is written without fsync (a hint that readers check).
//
// After the last message it advances the committed-epoch marker to the
// highest epoch among the messages when that epoch changed nothing (the
// snapshot package doc); when it has a snapshot, that snapshot's epoch
// already makes the committed epoch reach it, and the marker is left alone.
//
// # Invariants
//
//   - [idempotent-commit] committing a message twice adds one snapshot.
//   - [one-snapshot-per-epoch] an APPEND message makes exactly one
//     snapshot, whose epoch is the message's epoch; an empty message makes
//     none.
//   - [manifests-before-snapshot] every manifest and list a snapshot names
//     is durable, content and name, before the snapshot is published.
//   - [commit-never-swallows] every error is returned; files written by a
//     failed attempt are orphans, never referenced, removed by orphan
//     cleanup.
//
// Check is a pure function over the live files and the message, so the
// conflict rules are tested without I/O.
package commit
