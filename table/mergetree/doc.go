// Package mergetree is the pure logic of a primary-key table's LSM tree
// per bucket (Paimon's mergetree package): merge functions (the merge
// engines), merging sorted runs into one record per key, and the universal
// compaction picker. It does no I/O.
//
// # Concepts
//
// A bucket's data files are grouped into sorted runs: every level-0 file is
// a run of its own; each level from 1 to NumLevels-1 is one run of files
// with disjoint key ranges. Runs are ordered newest first (level-0 files by
// sequence number, then levels ascending).
//
// A merge function (Func) combines the records of one key, fed in
// sequence-number order, into one record. Its result can be fed again with
// newer records and gives the same answer as feeding all the originals
// ([remergeable]); this is why compaction, which stores merge results,
// never changes what a read returns. Retract results (-U, -D) are kept in
// files so they can cancel older records, and dropped by reads and by a
// compaction that includes the bucket's oldest run ([drop-deletes]).
//
// Engines (schema.MergeEngine):
//
//   - deduplicate: the newest record wins; a -D or a lone -U deletes.
//   - partial-update: non-NULL columns of newer records overwrite; -D
//     deletes the row; -U is ignored (its +U carries the new values).
//   - aggregation: each value column folds with its function (sum, min,
//     max, last_value, last_non_null_value); -U/-D retract through the
//     function where it allows (sum subtracts, last_value and
//     last_non_null_value become NULL); min and max cannot retract, and
//     writers refuse retractions for tables that use them.
//   - first-row: the oldest record wins; retractions are ignored.
//
// Runs are record.Blocks (records by column). Merging (MergeBlocks, and
// MergeValues for batch reads) walks one run directly, two runs with two
// cursors and more runs with a heap of cursors (BlockIterator), comparing
// keys only; the deduplicate engine's result is taken as the newest record
// of a key without feeding the function, and the surviving records are
// then gathered column by column into the output. Other engines feed the
// function with each key's records built as rows. A writer's buffer
// becomes a run through SortMerge: it sorts 32-byte entries (the first 16
// key bytes as two integers, the key length, the sequence number, the
// record's position) instead of the records, by radix on the first 8 key
// bytes for long buffers, merges each key's records, and gathers the
// survivors into a new block in key order, so that the passes that follow
// (encoding, the lookup changelog, compaction) read memory in order.
//
// MergeRuns is the streaming form of MergeBlocks, for compaction: each
// run comes a block at a time through a RunReader, a heap of cursors
// merges them, and the output goes out in blocks of bounded size (Paimon's
// SortMergeReader feeding a RollingFileWriter). It gives the records
// MergeBlocks gives.
//
// The merge functions work on record.KV rows; MergeSorted and SortKVs
// serve point lookups, which merge a handful of records.
//
// Universal compaction (Pick, RocksDB's and Paimon's universal style):
// size amplification (all newer runs over the oldest) above the limit
// compacts everything; otherwise a prefix of runs whose sizes stay within
// the size ratio of the accumulated candidate is compacted; more runs than
// the run-count trigger force a prefix long enough to get back under it.
//
// # Invariants
//
//   - [remergeable] and [drop-deletes], above.
//   - [stream-memory] MergeRuns holds, of its inputs, each run's current
//     block and the blocks runs moved past since the last key boundary
//     (two per run when runs hold one record per key), and of its output
//     one block within Limits; the output's strings are copied out of the
//     input blocks, so that no output block keeps an input alive.
package mergetree
