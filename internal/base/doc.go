// Package base is the leaf of Strata's import graph: the identifier types
// that every other package exchanges and the error markers they classify
// failures with.
//
// # Identifiers
//
// Each kind of identifier is its own type so that the compiler refuses an
// epoch where a snapshot id is expected (pebble's base.SeqNum does the same):
//
//   - Epoch: the logical time of the topology (DESIGN.md "The epoch
//     protocol"; FLIP-276 calls it the timestamp barrier). Epochs only grow.
//     Epoch 0 is "no epoch yet"; the first real epoch is 1.
//   - CheckpointID: a job's checkpoint number, starting at 1, growing by one
//     per triggered checkpoint (Flink's checkpoint id).
//   - SnapshotID: a table snapshot's number, starting at 1, dense per table
//     (Paimon's snapshot id).
//   - SeqNum: the sequence number of a record inside a primary-key table's
//     bucket; a later write of the same key has a higher one and wins a merge.
//
// # Errors
//
// Errors are classified with errors.Is against the markers in errors.go.
// Narrow errors wrap broad ones (ErrChecksum wraps ErrCorruption), so a
// caller can ask either question. Every producer adds context with %w: the
// table, file, snapshot or column that was wrong.
//
// A marker's own text ("strata: invalid argument") only classifies; a
// message that leaves the process (a wire error, an HTTP answer, the CLI's
// last line, the error column of strata_catalog.jobs) goes through
// UserMessage (usermessage.go), which cuts it out or says it in plain
// words, while the error value keeps the marker for errors.Is.
//
// Invariant (base-leaf): this package imports nothing from Strata.
package base
