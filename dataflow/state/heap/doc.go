// Package heap is the in-memory state backend: an arena for value entries
// and Go maps per namespace for map and list entries (Flink's
// HashMapStateBackend), with incremental snapshots of the arena.
//
// Storage: entries with an empty user key (value state, which is most of
// a keyed aggregation's state, a list's length, a map's empty key) live in
// one byte arena indexed by an open-addressing table (values), so that the
// garbage collector has no pointer per entry to scan in every cycle;
// entries with a user key (map and list elements) live in Go maps per
// namespace.
//
// Snapshots are asynchronous for the arena part (state.AsyncSnapshotter):
// the synchronous part encodes the map entries (with shared files, only
// those changed since the last snapshot) and copies the arena's
// slot table; the arena itself is never written below its length
// (invariant arena-append-only: a Set appends a new copy, a compaction
// makes a new arena), so Encode can read it on the writer goroutine while
// the subtask goes on. Backend.Snapshot does both parts at once. A general
// copy-on-write map for the map entries (Flink's CopyOnWriteStateMap) was
// not worth its complexity at the state sizes the heap backend is for;
// large state belongs in the pebble backend.
//
// # Incremental arena snapshots
//
// With checkpoint storage that takes shared files from memory
// (state.SharedBytes, the runtime's case) the arena is not copied into the
// handle: it is stored as shared files, each a range of the arena
// (segments.go), and the handle lists the files and the live slots
// (offset and lengths). Invariant arena-append-only makes a range final
// once written, so a snapshot writes only the bytes appended since the
// previous one; less than inlineTail of them (256 KiB) the handle carries
// itself, so that a small state needs no file and a checkpoint of a large
// one that changed little writes none either; small files at the tail
// merge as a binary counter does, which keeps their number logarithmic in
// the snapshots taken. A
// compaction starts a new arena generation, written whole by the next
// snapshot. The state of a 1 GB keyed aggregation thus costs 1 GB of
// writes once, then its changes; Flink's heap backend writes it whole at
// every checkpoint unless a changelog backend is put in front of it.
//
// Restore reads the arena files straight into one arena allocated at its
// final size, several files at once (one per core) with their checksums,
// then hashes the slots' namespaces on every core and places them in a
// table sized for them: no per-entry allocation, no copy beyond the read,
// no growth of the table. A restored backend's first snapshot references
// the files it was restored from and writes next to nothing.
//
// The slot table hashes namespaces with seeded XXH3 (github.com/zeebo/xxh3,
// already in the module graph through parquet-go; not in the vetted list):
// hash/maphash, used before, hashed a 1 KB namespace at 1.2 GB/s on the
// benchmark machine, XXH3 at 7.7 GB/s, and a restore hashes every live
// namespace.
//
// # Incremental map snapshots
//
// Map and list entries have no arena: with such storage they are written
// as a base (every entry, once) and change records (each entry changed
// since the snapshot before, as it is at the snapshot), after Flink's
// changelog state backend (FLIP-158); a new base comes when the changes
// outweigh it (maplog.go, invariant map-changelog). A join's state, most
// of it map entries, thus costs its changes per checkpoint, not its size.
//
// # Incremental slot tables
//
// The live slots are written the same way from slotInline (4096) entries
// up (slotlog.go, invariant slot-changelog): a base file listing every
// slot, then change records of the slots added, set or removed since, so
// that a keyed aggregation of many groups, checkpointed every 100 ms,
// writes the slots it changed rather than its whole slot table.
//
// Handle formats: version 2 (without such storage; Restore also reads
// version 1, which had no value section and kept empty user keys among
// the namespace entries), version 3 and version 4 (still read) and version
// 5: version 4 is version 3 with the map section replaced by the map part
// of maplog.go (an inline map section, or a base file, change files and a
// tail of change records), and version 5 is version 4 with the slot list
// replaced by the slot section of slotlog.go (1 and the list, or 0, a
// base file, change files and a tail of change records):
//
//	v2: version:1 maps nvalues:uvarint (len:uvarint ns len:uvarint value)*
//	v3: version:1 maps nfiles:uvarint (len:uvarint name size:uvarint crc32c:4)*
//	              len:uvarint tail nvalues:uvarint (off:uvarint nslen:uvarint voff:uvarint vlen:uvarint)*
//	maps = nns:uvarint (len:uvarint ns n:uvarint (len:uvarint key len:uvarint value)*)*
//
// In v3 the arena is the files' bytes in order then the tail, and an
// entry's namespace is arena[off:off+nslen], its value
// arena[voff:voff+vlen] (a rewritten value is appended alone, away from
// its namespace).
//
// Namespaces and entries are written in map and slot order: sorting them
// made snapshots several times slower for no reader that needs it.
package heap
