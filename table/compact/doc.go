// Package compact rewrites the sorted runs of a bucket (Rewrite) and runs
// dedicated compaction of a whole table (Table), the way Paimon's
// dedicated compaction job does: it reads the latest snapshot, compacts
// every bucket the universal picker selects (or all of them with Full),
// and commits a COMPACT snapshot whose data reads the same.
//
// Run dedicated compaction only on tables whose writers are write-only
// (write-only=true), as in Paimon: a writer that compacts too would replace
// the same files, and one of the two commits would fail with a conflict.
// Write-only writers refresh their view of the bucket files from the latest
// snapshot before each prepare (write package).
//
// # Streaming rewrite
//
// A rewrite never holds a bucket whole, as Paimon's
// MergeTreeCompactRewriter does not: the unit's files are split into
// chains of files with disjoint key ranges (Chains; one per sorted run,
// fewer when level-0 files lie side by side), each chain is read a file
// at a time (the format decodes a file whole), and a heap of cursors
// merges them (mergetree.MergeRuns, Paimon's sort-merge reader) into
// output blocks that are written as files as soon as they reach
// target-file-rows records or TargetFileBytes (Paimon's
// RollingFileWriter). The inputs are read without filling the store's
// cache of decoded files, and leave it after the rewrite (store.Forget).
// It replaced a rewrite that decoded every input file, merged them into
// one block and cut that into files: three copies of the bucket at once,
// which for a table that only grows (the demo's auction and person
// tables, one bucket each) meant memory growing with the table.
//
// # Upgrades
//
// A file of a unit that overlaps no other input is merged with nothing
// when it is rewritten; rewriting it only joins it to its neighbours. As
// Paimon's MergeTreeCompactTask does, Rewrite moves such a file to the
// output level without rewriting it (an upgrade: a DELETE and an ADD of
// the same file at the new level; none when it is there already), and
// merges the stretches of files between the kept ones, each on its own.
// Which files are kept (upgradable) follows a size rule: a table whose
// keys only grow (the demo's auction and person tables) writes a small
// file an epoch beside the files of earlier epochs, and merging all of
// them at every compaction rewrote each record about five times in a
// test where upgrades cut it to two (TestRewriteOfGrowingTableIsLinear).
// A compaction merges at most mergeBudget bytes of such files, smallest
// first, and moves the others, so that its time stays bounded. A full
// compaction (Table with full set) still rewrites every file into one
// sorted run.
//
// # Invariants
//
//   - [rewrite-memory] a rewrite holds at most two decoded input files
//     per chain (the current one and the one just passed, until the
//     next key boundary), one output block of at most target-file-rows
//     records and about TargetFileBytes bytes (record [mem-bytes]), and
//     that block's encoding while it is written: a bound set by the
//     number of chains and the file size, not by the bucket's size.
//   - [compaction-preserves-reads] a compaction output merges its inputs
//     with the table's merge function (mergetree [remergeable]) and drops
//     retractions only when it holds the bucket's oldest run, so a read
//     after it returns what a read before it did.
//   - [compaction-loses-no-commit] the COMPACT commit only deletes files
//     that are still live (commit.Check); a writer's commit that landed
//     meanwhile keeps its files, whose sequence numbers are above those of
//     the compaction output, so they still win.
package compact
