// Package topology joins Strata's parts into the mechanism the product
// exists for (FLIP-276): independent jobs that read and write tables of the
// table store, with the epoch carried from the sources through every
// table, so that any set of tables can be read at one consistent version.
//
// The write side is made of the connectors: ingest sources place epoch
// barriers as the meta service's clock moves (connector/ingest), table
// sinks commit one snapshot per epoch and report committed epochs
// (connector/tablesink), and table sources replay a table's changelog
// epoch by epoch into the jobs downstream (connector/tablesource); the
// SQL planner builds view jobs over them. This package holds:
//
//   - RunJob, a job's lifecycle under the meta service: it registers the
//     job's reads and writes before it starts (a cycle or a second writer
//     is refused and the job never runs), heartbeats with its status and
//     last checkpoint while it runs, and reports FINISHED or FAILED;
//   - ReadConsistent, the read side: it asks the meta service for a
//     consistent version of a set of tables (related tables at one epoch,
//     in strong or weak mode), pins it while it reads, and reads each table
//     at its epoch.
//
// TestTopologyFLIP276 runs FLIP-276's example end to end: a change stream
// into T1, T2 derived from T1, T3 joining T1 and T2, three independent jobs
// with injected failures, and a reader that never sees a torn version
// (-flip276.duration sets how long it feeds changes).
//
// Invariant (read-consistent): the rows ReadConsistent returns for related
// tables are those tables at one epoch E, each committed at E, so a change
// of an upstream table and all of its consequences downstream are read
// together or not at all (DESIGN.md invariant 2).
package topology
