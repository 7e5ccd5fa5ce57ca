package base

import "strconv"

// Epoch is the logical time of the topology: a number that only grows, opened
// by the meta service's epoch clock every epoch_interval and carried by epoch
// barriers from the sources through every job and table (DESIGN.md "The
// epoch protocol"; FLIP-276's timestamp barrier). Zero means "no epoch".
type Epoch uint64

// NoEpoch is the zero Epoch: nothing has been opened or committed yet.
const NoEpoch Epoch = 0

// Next returns e+1. It panics on overflow, which would take 29 billion years
// at one epoch per 50 ms.
func (e Epoch) Next() Epoch {
	if e == ^Epoch(0) {
		panic("base: epoch overflow")
	}
	return e + 1
}

// String returns the epoch in decimal.
func (e Epoch) String() string { return strconv.FormatUint(uint64(e), 10) }

// CheckpointID numbers a job's checkpoints: 1 for the first triggered
// checkpoint, then one more per trigger, aborted ones included (Flink's
// checkpoint id). Zero means "no checkpoint".
type CheckpointID uint64

// String returns the id in decimal.
func (c CheckpointID) String() string { return strconv.FormatUint(uint64(c), 10) }

// SnapshotID numbers a table's snapshots densely from 1 (Paimon's snapshot
// id). Zero means "no snapshot" (an empty, never committed table).
type SnapshotID uint64

// String returns the id in decimal.
func (s SnapshotID) String() string { return strconv.FormatUint(uint64(s), 10) }

// SeqNum orders the records of one bucket of a primary-key table: a record
// with a higher sequence number is newer and wins a merge with an older
// record of the same key (pebble's base.SeqNum, Paimon's sequence number).
type SeqNum uint64

// String returns the sequence number in decimal.
func (s SeqNum) String() string { return strconv.FormatUint(uint64(s), 10) }
