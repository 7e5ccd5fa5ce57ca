// Package state is the keyed and operator state of one subtask, over a
// small key-value Backend with two implementations run through one test
// suite (statetest): heap (an arena and Go maps in memory, snapshots that
// write the arena's new bytes to shared files) and pebble (an LSM on
// local disk, incremental snapshots sharing SST files).
//
// # Keys and key groups
//
// Keyed state is partitioned into key groups, Flink's unit of rescaling: a
// key's group is a hash of its bytes modulo the job's maximum parallelism
// (KeyGroupOf), and subtask i of p owns a contiguous range of groups
// (RangeOf, SubtaskOf). The hash exchange sends a row to the subtask that
// owns its key's group, so a subtask only ever touches keys in its range,
// and a later rescale can hand whole groups to other subtasks.
//
// HashKeys computes the same hashes for a whole chunk (the exchange's
// path), HashInt64Keys for the values of a key of one 8-byte integer
// column without NULLs (Int64Keys), and HashInt64Key for one such value.
// HashInt64Keys, and HashKeys for such a column with or without NULLs,
// hash eight values a step with AVX-512 where the processor has it
// (hashvec_amd64.s; golang.org/x/sys/cpu detects it), the scalar steps
// lane by lane. All must agree with Hash64 of EncodeKey on every row,
// since key groups are persisted in checkpoints, which record the hash's
// version (KeyGroupHash); the tests check both paths on every machine that
// has the kernel, and the portable one everywhere (build tag purego turns
// the kernel off).
//
// Every entry is stored under a namespace and a user key:
//
//	namespace = key group (2 bytes, big endian) | kind (1 byte) |
//	            len(name) (1 byte) | name | key of the row (keyed state)
//	user key  = empty for value state; the map key for map state
//
// Operator (non-keyed) state, such as a source's position or a sink's
// prepared epochs, lives in the reserved group OperatorGroup and is not
// split on rescale.
//
// # Values
//
// State values are bytes; operators encode them (types.AppendRow is the
// usual codec). Bytes returned by a Get stay valid until the next write to
// the same backend (pebble's rule for iterators; the heap backend returns
// its own copy, which a write replaces).
//
// # Snapshots
//
// Backend.Snapshot captures the state at one instant, synchronously, and
// returns a handle (bytes stored in the subtask's checkpoint file) plus
// files to store beside it; Restore rebuilds a backend from them. The task
// driver calls Snapshot when its barrier handler says so and nothing
// changes the state in between.
package state
