// Package maintain keeps a table's history bounded and its directory
// clean: snapshot expiration, rollback to a tag, and orphan-file cleanup
// (Paimon's ExpireSnapshots, RollbackHelper and OrphanFilesClean).
//
// # Expiration
//
// Expire keeps the newest RetainMin snapshots always, at most RetainMax,
// and in between those younger than TimeRetained. It never expires a
// snapshot at or after the smallest consumer position, and never deletes a
// file a tag references. The protocol, against readers that register as
// consumers (snapshot.SetConsumer):
//
//  1. read the consumers and choose the new earliest snapshot N;
//  2. raise the EARLIEST fence to N;
//  3. read the consumers again and lower N (and the fence) to any
//     consumer below it: a reader that registered before step 2 is seen
//     here, and one that registers after step 2 sees the fence and moves
//     up to it; then lower N to the oldest parent a commit in flight in
//     this process builds on, and record N where those commits check it
//     (snapshot.Manager.LimitExpiry, [commit-lease]): a commit publishes
//     its snapshot with put-if-absent, which would succeed on an id that
//     was used and expired, so no id above a commit's parent may be
//     expired while it runs;
//  4. delete the snapshot files below N, oldest first ([pointer-first]);
//  5. delete the manifest files, manifest list files, data and changelog
//     files that only the expired snapshots referenced (an inline manifest
//     or list goes with its snapshot file).
//
// A crash between 4 and 5 leaves unreferenced files, which orphan cleanup
// removes.
//
// # Rollback
//
// RollbackToTag publishes a new ROLLBACK snapshot whose content is the
// tag's (its base manifests; no delta). Snapshot ids keep growing and no
// snapshot file is deleted, unlike Paimon, which deletes the newer
// snapshots: that keeps [publish-once] and the epoch order intact for
// readers that hold snapshot ids. The rollback snapshot carries the latest
// epoch, since it is the table's content from then on. Streaming readers
// skip it and must be restarted after a rollback.
//
// # Orphan files
//
// OrphanFiles lists (and unless dry, deletes) files in manifest/ and
// bucket-*/ that no snapshot or tag references, and leftover temporary
// files, older than a grace period. The grace period protects files that
// writers prepared but have not committed yet (they live in a checkpoint
// until the commit); it must exceed the longest checkpoint-to-commit gap.
//
// # Invariants
//
//   - [expire-keeps-needed] no file referenced by a retained snapshot
//     (from the new earliest on), a tag, or needed by a registered
//     consumer is deleted.
//   - [orphans-unreferenced] OrphanFiles never lists a file that an
//     existing snapshot or tag references.
package maintain
