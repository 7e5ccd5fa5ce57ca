// Package store ties the file-level pieces of one table together: paths,
// the schema, snapshot and manifest managers, reading and writing data
// files, and the live files of a snapshot. The verbs (write, commit, scan,
// compact, maintain) all work through a *Store.
//
// # Layout
//
//	<table>/schema/schema-<id>
//	<table>/snapshot/snapshot-<id>, LATEST, EARLIEST, COMMITTED-EPOCH
//	<table>/manifest/manifest-<rand> (small ones are inline in snapshots), manifest-list-<rand> (lists of version-1 snapshots)
//	<table>/bucket-<n>/data-<rand>.parquet, changelog-<rand>.parquet
//	<table>/tag/tag-<name>, <table>/consumer/consumer-<id>
//
// # Caches
//
// Files are immutable, so decoded data files (record.Blocks, shared with
// every reader: ReadBlock's callers must not modify them; ReadFile builds
// the caller's own rows) and the live file sets of snapshots are cached
// by name and id. Decoded files go into a Cache that the stores of a
// process share (DefaultCache, 256 MiB, unless SetCache gives a store
// another), keyed by the store they were read through: a fresh handle of
// a table starts with nothing cached. The cache evicts the least recently
// used file first, anyone's, when it holds more bytes than its capacity,
// and a store's own when that store holds more than CacheRows records; a
// compaction drops the files it merged away (Forget), which nothing reads
// at newer snapshots, and reads its inputs without adding them
// (ReadBlockOnce). (It evicted in insertion order before: a writer reads
// every older file of a bucket at each epoch for the lookup changelog,
// and the large compacted files, inserted early, were the first to go and
// the next to be decoded again. It was bounded per store in records only
// before, 2M of them: a table of 500-byte rows could keep 1 GB, and every
// table of a process as much again.) The snapshot cache keeps the last
// few snapshots added. A cache hit never skips a check: only checked reads
// and the records a writer has just encoded into a file fill the caches.
//
// # Invariants
//
//   - [cache-bytes] the decoded files a Cache holds take at most its
//     capacity in record.Block.Bytes (record [mem-bytes]), whatever the
//     number of tables and handles sharing it; a file larger than the
//     capacity is read but not kept.
package store
