// Package fileio is the one interface through which the table store touches
// storage, with a local-disk, an in-memory and a fault-injecting
// implementation, plus the checked JSON encoding every small metadata file
// uses.
//
// # Concepts
//
// A table store file is written once and never modified (Paimon's rule):
// data files, manifests, manifest lists, snapshots, schemas and tags. The
// only overwritten files are hints (LATEST, EARLIEST, the committed-epoch
// marker, consumer positions), and those are replaced whole.
//
// FS offers two kinds of write:
//
//   - WriteFile replaces a file atomically: readers see the old bytes or the
//     new bytes, never a prefix (write a temporary file, fsync, rename).
//   - PutIfAbsent publishes a file that must not exist yet, atomically; if
//     the name is taken it fails with an error wrapping ErrExist and changes
//     nothing. A snapshot is published this way, so two committers racing
//     for snapshot N cannot both win (Paimon's rename-based commit on HDFS,
//     put-if-absent on object storage). On local disk it is a temporary file,
//     fsync, then renameat2(2) with RENAME_NOREPLACE to the final name,
//     which fails if the name exists; where the file system lacks that flag,
//     link(2) to the final name (which fails the same way) and unlink(2) of
//     the temporary one.
//
// A Stager (Local, Faulty) adds cheaper writes for a commit that creates
// several files: Stage creates a file that nothing names yet (on disk,
// under its final name with no temporary one, so that it may hold a prefix
// after a crash), SyncDir
// makes the staged names durable in one step before the file that names
// them is published, and WriteHint replaces a hint atomically without
// fsync. On an FS without one the package functions of the same names fall
// back to PutIfAbsent, nothing and WriteFile. A Preparer (Local, Faulty)
// writes a file's content durably before it has a name (Prepare returns a
// Pending whose Publish is the put-if-absent of the name and costs one
// renameat2(2) on disk), so that a commit writes its snapshot file while it
// writes the manifests the snapshot names; elsewhere Prepare holds the
// bytes and Publish is one put-if-absent.
//
// # Invariants
//
//   - [no-torn-write] After a crash at any instant, every path holds either
//     nothing, its complete old content or its complete new content; stray
//     temporary files (names starting with "." and ending in ".tmp") may be
//     left behind and are removed by orphan cleanup. The exception is a
//     staged file (Stage) whose Stage had not returned: it may hold a
//     prefix of its content, but nothing names it (its referrer is written
//     only after Stage returns and its directory is synced), so no reader
//     opens it, and orphan cleanup removes it.
//     A hint written with WriteHint may be lost or unreadable after a
//     crash; its readers check it and fall back.
//   - [checked-read] Every reader of a table store file checks it: JSON
//     files carry a CRC32C of their body (EncodeJSON/DecodeJSON); binary
//     files are checked against the size and CRC32C their referrer recorded
//     (Checksum).
//
// # Implementations
//
// Local is the disk. Mem is a map guarded by a mutex, used by tests and
// benchmarks. Faulty wraps any FS and fails the Nth mutating operation, so
// crash-safety tests can cut a commit at every step (pebble's vfs/errorfs),
// and can then lose the names created since their directory's last sync
// (LoseUnsynced), as a crash of the machine may, so that tests check the
// order of the durability steps, not only where the process stopped.
package fileio
