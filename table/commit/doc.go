// Package commit publishes prepared files as snapshots: the commit message
// a writer prepares (serializable, so a sink can keep it in a checkpoint)
// and the committer that turns each message into one snapshot with
// optimistic conflict detection (Paimon's FileStoreCommitImpl).
//
// # Protocol
//
// Commit(messages) handles the messages that change the table, in epoch
// order, as one batch. It loops, at most Options.CommitRetries+1 times:
//
//  1. read the latest snapshot L and lease it as the attempt's parent
//     ([commit-lease], snapshot.Manager.LeaseLatest): until the attempt ends no
//     expiration of this process removes L or anything newer, so the
//     put-if-absent of step 5 cannot land on an id that others used and
//     an expiration removed meanwhile (it would succeed, and the epoch
//     would be in no snapshot the latest descends from);
//  2. plan, in memory and in order (plan), one snapshot per message on top
//     of L or of the snapshot planned before it: a message for which a
//     snapshot by the same commit user with commit identifier >= its epoch
//     exists was committed before and is skipped ([idempotent-commit]);
//     conflicts are checked against the parent's live files (Check): every
//     file the message deletes must still be live, and every new file's
//     sequence numbers must be above those already in its bucket
//     (otherwise a second writer races the bucket); a conflict is final
//     and returned; the plan encodes the delta manifest, a base manifest
//     list (the parent's base and delta manifests: its inline manifests
//     written out as files once they hold many entries, its manifest
//     files merged into one when there are many), a changelog manifest,
//     and the snapshot, which holds its three lists inline
//     (manifest.FileRef) and the delta and changelog manifests inline too
//     when they are small (manifest.FileMeta), and computes the live files
//     after the message;
//  3. write every planned file at once (at most maxParallelWrites at a
//     time): the manifest files staged (fileio.Stage: content written and
//     fsynced, names not yet durable), the snapshot files prepared
//     (fileio.Prepare: content fsynced under no name yet);
//  4. sync the manifest directory once ([manifests-before-snapshot]), if
//     a manifest file was written;
//  5. publish the snapshots one after another, each with put-if-absent and
//     an fsync of the snapshot directory before the next
//     ([snapshots-in-order]); losing a race goes back to 1, where the
//     snapshots already published count as committed (so does a missing
//     file when a newer snapshot appeared meanwhile: an expiration may have
//     removed what the attempt read).
//
// A snapshot thus costs, on the path to its visibility, the fsyncs of its
// files overlapped with each other and with those of the other snapshots
// of the batch, one directory fsync shared by the batch, and the link and
// directory fsync of its own name. With small commits most snapshots are
// one file: their manifests are inline, and a manifest file (with the
// manifest directory's fsync) comes every dozen or so commits, when the
// inline manifests of the base list are written out. Before (one message after another, each
// manifest then its list, then the snapshot file) a snapshot's files were
// written in up to four rounds and a commit of two epochs took twice as
// long as one. Every snapshot of a batch still gets its own directory
// fsync: linking them all and syncing once would let a crash keep a later
// snapshot without an earlier one (a gap that streaming readers and the
// idempotence check cannot see through).
//
// The committer keeps what it computed: the live files of each published
// snapshot go to the store's cache of live files and the manifests it
// wrote to the manifest cache, so the next commit does not read them back.
// The LATEST hint is rewritten (without fsync) only when a batch crosses a
// multiple of hintEvery snapshots: it is a hint, which readers probe
// forward from, and each rewrite creates a file, which costs this machine's
// file system about as much as an fsync.
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
//   - [manifests-before-snapshot] every manifest file a snapshot names is
//     durable, content and name, before the snapshot is published (inline
//     manifests and lists are part of the snapshot file).
//   - [snapshots-in-order] snapshot N+1's name is created only after
//     snapshot N's name is durable, so a crash leaves the snapshots of a
//     prefix of a batch, with no gap in the ids.
//   - [commit-lease] no snapshot at or above the parent of a commit in
//     flight is expired by an expiration of the same process.
//   - [commit-never-swallows] every error is returned; files written by a
//     failed attempt are orphans, never referenced, removed by orphan
//     cleanup.
//
// Check and plan are pure functions over the parent's state and the
// message (plan also encodes the files), so the conflict rules and the
// manifests are tested without I/O; a driver (Committer) does the I/O.
//
// Crash safety is tested in package table (crash_test.go): a failure at
// every mutating operation, also with every name not yet made durable by a
// directory fsync lost (fileio.Faulty.LoseUnsynced), of a single- and a
// multi-epoch commit.
package commit
