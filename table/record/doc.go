// Package record holds KV, the unit the table store writes, merges and
// reads: one row with its row kind, its sequence number and, for
// primary-key tables, its memcomparable key (Paimon's KeyValue); and
// Block, a run of such records stored by column, which is how the store
// holds them in memory from a writer's buffer to a decoded file: the
// keys one after another in one byte slice, and a types.Vector per
// column, so that a million records are a handful of allocations of plain
// integers and string headers rather than a million rows of 56-byte
// datums. KVs are built from a block (KV, KVs) only where a caller wants
// rows: merge functions other than deduplicate, point lookups, streams,
// and the store's row-returning reads.
//
// # Invariants
//
//   - [seq-order] Within a bucket, sequence numbers are unique and grow in
//     the order the writer received the rows; for one key, the record with
//     the higher sequence number is the newer one, whatever file or level
//     holds it.
//   - [sorted-run] A data file of a primary-key table holds its records
//     sorted by (Key, Seq) with at most one record per key.
//   - [mem-bytes] Block.Bytes is the measure of memory every bound in the
//     table store is stated in (the store's file cache, a compaction's
//     rolling output): the records' values, keys, sequence numbers and
//     row kinds as they would lie in a block of their own, string bytes
//     included.
package record
