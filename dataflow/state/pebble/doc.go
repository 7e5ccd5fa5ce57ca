// Package pebble is the on-disk state backend: a Pebble LSM
// (github.com/cockroachdb/pebble/v2) per subtask in a local working
// directory, with incremental checkpoints that share unchanged SST files
// between checkpoints (Flink's RocksDB incremental checkpoints).
//
// # Keys
//
// An entry (namespace, user key) is stored under
// uvarint(len(namespace)) | namespace | user key, so a namespace's entries
// are one contiguous, ordered key range (Iterate, DeleteNamespace).
//
// # Durability
//
// The local database is a cache of the last checkpoint plus what changed
// since: the WAL is off and its file system never syncs (nosync.go).
// Durability comes from checkpoints only, whose copies of the files are
// synced by checkpoint storage, and a crash restores from the last
// completed one.
//
// # Incremental snapshots
//
// Snapshot flushes the memtable and asks Pebble for a checkpoint of the
// database (hard links of the live SSTs and a copy of the manifest) in a
// directory beside it: that is the synchronous part, cheap whatever the
// state's size. Then, in the handle and in Upload, which the runtime runs
// off the subtask's goroutine:
//
//   - stores every SST and blob file that checkpoint storage does not hold
//     yet as a shared file named <instance>-<file>, where instance is
//     random per opened database (Pebble file numbers are unique within
//     one database, and immutable files never change), and re-uses the
//     shared name of files that came from a restore or an earlier snapshot;
//   - puts the small files (MANIFEST, OPTIONS, markers) into the handle.
//
// A checkpoint after a small change therefore stores the few new SSTs a
// flush or compaction wrote, not the whole state.
//
// Handle format (version 1):
//
//	version:1 nshared:uvarint (local shared)* nsmall:uvarint (name bytes)*
//
// with every string and byte slice as len:uvarint then bytes. Restore
// copies the shared files to their local names, writes the small files and
// opens the database.
package pebble
