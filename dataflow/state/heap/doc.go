// Package heap is the in-memory state backend: an arena for value entries
// and Go maps per namespace for map and list entries,
// snapshotted in full by serialization (Flink's HashMapStateBackend).
//
// Storage: entries with an empty user key (value state, which is most of
// a keyed aggregation's state, a list's length, a map's empty key) live in
// one byte arena indexed by an open-addressing table (values), so that the
// garbage collector has no pointer per entry to scan in every cycle;
// entries with a user key (map and list elements) live in Go maps per
// namespace.
//
// Snapshots are asynchronous for the arena part (state.AsyncSnapshotter):
// the synchronous part encodes the map entries and copies the arena's
// slot table; the arena itself is never written below its length
// (invariant arena-append-only: a Set appends a new copy, a compaction
// makes a new arena), so Encode can read it on the writer goroutine while
// the subtask goes on. Backend.Snapshot does both parts at once. A general
// copy-on-write map for the map entries (Flink's CopyOnWriteStateMap) was
// not worth its complexity at the state sizes the heap backend is for;
// large state belongs in the pebble backend.
//
// Handle format (version 2; Restore also reads version 1, which had no
// value section and kept empty user keys among the namespace entries):
//
//	version:1 nns:uvarint (len:uvarint ns n:uvarint (len:uvarint key len:uvarint value)*)*
//	          nvalues:uvarint (len:uvarint ns len:uvarint value)*
//
// Namespaces and entries are written in map and slot order: sorting them
// made snapshots several times slower for no reader that needs it.
package heap
