// Package write is a table's writer: it takes rows with their epoch and
// row kind, buffers them per bucket, spills sorted runs to level-0 files,
// and at PrepareCommit turns each epoch into a commit.Message with the
// epoch's data files, changelog files and compaction results (Paimon's
// TableWriteImpl with MergeTreeWriter per bucket).
//
// # Lifecycle
//
//	w := write.New(st, user)        // one writer per table (and per commit user)
//	w.Write(epoch, kind, row) ...   // epochs never decrease
//	msgs := w.PrepareCommit(upTo)   // everything of epochs <= upTo
//	committer.Commit(msgs)          // after the checkpoint holding msgs completes
//
// A sink restoring from a checkpoint first re-commits the messages it
// stored (commit is idempotent), then opens a new writer, which reads the
// latest snapshot to learn each bucket's files and next sequence number.
//
// # Buffers
//
// A bucket buffers the records of each epoch in a record.Block: keys one
// after another in one byte slice, sequence numbers, row kinds and a
// vector per column, so that a buffered record costs a few words of plain
// integers and string headers, not a row of datums for the collector to
// scan and copy. A spill turns the buffer into a sorted run with
// mergetree.SortMerge (one record per key, gathered in key order into a
// new block) and encodes it; the run shares no mutable memory with the
// buffer, which is emptied and reused by the bucket's next buffer. For the lookup changelog, an epoch that wrote one file per
// bucket is walked directly, and under the deduplicate engine a key's
// value before and after the epoch is its newest record, found without
// feeding the merge function.
//
// # Buckets and sequence numbers
//
// A primary-key row goes to bucket hash(key) mod Buckets, where hash is
// FNV-1a over the memcomparable key (types.EncodeKey), so every record of
// a key lives in one bucket. Each bucket numbers its records from one
// above the highest sequence number in its files (record [seq-order]).
// Append tables write everything to bucket 0.
//
// # Changelog (the lookup producer)
//
// With changelog-producer=lookup (the default for primary-key tables), at
// PrepareCommit the writer looks up, for every key the epoch touched, its
// merged value before the epoch (over the bucket's files) and after it,
// and writes a changelog file per bucket: +I for a new key, -D for a key
// gone, -U old then +U new for a changed value, nothing for an unchanged
// one. This is Paimon's lookup producer at epoch granularity: the
// changelog is exact for every merge engine, and applying it epoch by
// epoch reproduces the batch read at every snapshot ([changelog-exact]).
// When every record of the epoch's one new file of a bucket inserts a new
// key (+I over nothing), the changelog is that file record for record,
// and the commit names the data file as its changelog file instead of
// writing a copy ([changelog-shares-data]): a table whose keys only grow,
// such as an ingested stream of new orders, writes one file an epoch
// rather than two. Expiration and orphan cleanup count a file referenced
// either way as referenced (maintain), so it stays while either a data
// manifest or a changelog manifest of a retained snapshot names it.
// changelog-producer=input stores the rows as written instead (exact only
// if the input is a full retract changelog); append tables always use
// input.
//
// # Checkpoints inside an epoch
//
// Checkpoint spills the buffered rows of epochs not yet prepared and
// returns a State (their files, serializable) for the checkpoint; Restore
// re-attaches it to a fresh writer after the prepared messages were
// re-committed, so a checkpoint may fall anywhere in an epoch.
//
// # Write-only writers
//
// With write-only=true the writer never compacts; a dedicated compactor
// does (package compact). Before each prepare such a writer rebuilds its
// view of the bucket files from the latest snapshot plus its own files of
// uncommitted epochs, so that its lookups never read files the compactor
// replaced and expiration removed.
//
// # Background compaction
//
// By default a prepare that picks a compaction runs it before it returns
// (the epoch's message carries the result). SetAsyncCompaction makes the
// writer run it on a goroutine instead, at most one per bucket, as
// Paimon's writer hands compactions to an executor: the prepare of a
// later epoch that touches the bucket puts the finished result in its
// message, and waits for a running one only when the bucket holds more
// than the compaction trigger plus stopTriggerExtra sorted runs (Paimon's
// num-sorted-run.stop-trigger). The table sink turns it on: at 100K rows/s
// rewriting a bucket took 10-250 ms, and the epoch that triggered it
// waited that long to be committed, and every view over it with it.
//
// # Invariants
//
//   - [epoch-files] a data file holds records of one epoch only, so one
//     epoch's files commit as one snapshot.
//   - [names-before-message] the data and changelog files of an epoch are
//     staged (fileio.Stage: content fsynced, name not yet durable), and
//     each bucket directory they went to is fsynced once, all at once,
//     before PrepareCommit or Checkpoint hands out the messages or state
//     that name them: a checkpoint never names a file a crash can lose.
//     Before, each file's put-if-absent synced its directory by itself.
//   - [async-compaction] a background compaction reads only files that
//     stay live until its result is committed (nothing else compacts a
//     writer's buckets), writes only new files, which it makes durable,
//     name included, before it finishes, and touches no bucket state; its
//     result goes into exactly one message, of an epoch after the one
//     that started it, so the files it merged and the files it wrote
//     change places in one snapshot. A failed background compaction fails
//     the prepare that finds it.
//   - [changelog-shares-data] a changelog entry may name a data file of
//     the same epoch and bucket, only when the file's records are the
//     epoch's exact changelog (every one a +I of a key that had no live
//     value); its sequence numbers are then the data records', where a
//     changelog file's own are not read by anything.
//   - [one-writer-per-bucket] sequence numbers are only unique with a
//     single writer per bucket; the committer refuses a second writer's
//     files (commit.Check).
package write
