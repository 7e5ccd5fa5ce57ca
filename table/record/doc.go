// Package record holds KV, the unit the table store writes, merges and
// reads: one row with its row kind, its sequence number and, for
// primary-key tables, its memcomparable key (Paimon's KeyValue).
//
// # Invariants
//
//   - [seq-order] Within a bucket, sequence numbers are unique and grow in
//     the order the writer received the rows; for one key, the record with
//     the higher sequence number is the newer one, whatever file or level
//     holds it.
//   - [sorted-run] A data file of a primary-key table holds its records
//     sorted by (Key, Seq) with at most one record per key.
package record
