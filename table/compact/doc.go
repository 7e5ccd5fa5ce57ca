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
// # Invariants
//
//   - [compaction-preserves-reads] a compaction output merges its inputs
//     with the table's merge function (mergetree [remergeable]) and drops
//     retractions only when it holds the bucket's oldest run, so a read
//     after it returns what a read before it did.
//   - [compaction-loses-no-commit] the COMPACT commit only deletes files
//     that are still live (commit.Check); a writer's commit that landed
//     meanwhile keeps its files, whose sequence numbers are above those of
//     the compaction output, so they still win.
package compact
