// Package topology joins Strata's parts into the mechanism the product
// exists for (FLIP-276): independent jobs that read and write tables of the
// table store, with the epoch carried from the sources through every
// table, so that any set of tables can be read at one consistent version.
//
// Today it holds ReadConsistent, the read side: it asks the meta service
// for a consistent version of a set of tables (related tables at one
// epoch, in strong or weak mode), pins it while it reads, and reads each
// table at its epoch. The write side is the table sink and source
// connectors (connector/tablesink, connector/tablesource) and the jobs the
// SQL planner builds over them.
//
// Invariant (read-consistent): the rows ReadConsistent returns for related
// tables are those tables at one epoch E, each committed at E, so a change
// of an upstream table and all of its consequences downstream are read
// together or not at all (DESIGN.md invariant 2).
package topology
