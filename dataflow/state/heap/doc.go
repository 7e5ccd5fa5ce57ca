// Package heap is the in-memory state backend: Go maps per namespace,
// snapshotted in full by serialization (Flink's HashMapStateBackend).
//
// Snapshot serializes the whole state synchronously into the handle bytes
// (format below, versioned); the task driver stores them in the subtask's
// checkpoint file, which carries the checksum. Serialization runs at memory
// speed (a few hundred MB/s); the slow part, writing the file, happens
// after the subtask has resumed processing. A copy-on-write map that made
// the serialization itself asynchronous (Flink's CopyOnWriteStateMap) was
// not worth its complexity at the state sizes the heap backend is for;
// large state belongs in the pebble backend.
//
// Handle format (version 1):
//
//	version:1 nns:uvarint (len:uvarint ns n:uvarint (len:uvarint key len:uvarint value)*)*
//
// Namespaces and entries are written in map order: sorting them made
// snapshots several times slower for no reader that needs it.
package heap
