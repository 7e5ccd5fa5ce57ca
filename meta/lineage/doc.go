// Package lineage is the graph of jobs and the tables and sources they read
// and write (DESIGN.md vocabulary "lineage"), with the two constraints
// FLIP-276 puts on it and the relation that consistent versions are built
// on.
//
// # Concepts
//
// Nodes are catalog objects (catalog.ObjectName): tables, views and sources.
// A job is a set of edges: from every node it reads to every node it writes.
// A node that no job writes is a root: a source, or a table filled from
// outside any job. The roots of a node are the roots reachable upstream from
// it (a root's only root is itself).
//
// Two tables are related when their root sets intersect: they share an
// upstream source (FLIP-276 "related tables"). A change from that source
// reaches both, so a consistent read must read both at one epoch. Relation
// is not transitive (T1 from S1, T2 from S1 and S2, T3 from S2: T1~T2,
// T2~T3, not T1~T3), but a read of all three must still read them at one
// epoch, so Groups returns the connected components of the relation over
// the tables a query names.
//
// # Invariants
//
// Invariant (lineage-acyclic): the graph has no cycle; AddJob refuses a job
// whose edges would close one, and names the cycle with every job on it.
//
// Invariant (lineage-one-writer): every node has at most one writing job;
// AddJob refuses a second writer and names both jobs.
//
// AddJob checks everything before it changes anything, so a refused job
// leaves the graph as it was. Both errors wrap base.ErrConflict through
// ErrCycle and ErrSecondWriter.
//
// # Concurrency
//
// A Graph is not safe for concurrent use, reads included (Roots fills a
// cache). The meta service guards it with its mutex and gives readers
// Clones.
package lineage
