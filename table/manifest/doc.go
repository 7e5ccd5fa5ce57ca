// Package manifest holds the value types that describe a table's files and
// their Avro codecs: data file metadata, manifest entries (a data file added
// to or deleted from a bucket), manifest files (lists of entries) and
// manifest lists (lists of manifest files).
//
// # Concepts (Paimon's manifest/ package)
//
// A snapshot holds manifest lists, inline or as files of their own
// (FileRef); a manifest list names manifest files or holds small manifests
// inline (FileMeta.Entries); a manifest holds entries; an entry adds or
// deletes one data file of one bucket. Replaying the entries of a snapshot's base and delta
// lists in order (Merge) yields the snapshot's live data files.
//
// Every reference records the referenced file's size and CRC32C (FileRef,
// FileMeta.Size/CRC, DataFile.Size/CRC), so every file read is checked
// ([checked-read] in fileio).
//
// # Invariants
//
//   - [entry-order] Within a snapshot, entries are applied in the order of
//     the manifest list and of each manifest; a DELETE always follows the
//     ADD of the same file.
//   - [immutable-manifest] manifest files and lists are written once under
//     fresh random names and never changed; snapshots share manifest files
//     (and copy inline manifests, which are as immutable as the snapshot
//     files that hold them).
//
// The byte formats and their version fields are in ../FORMAT.md.
package manifest
