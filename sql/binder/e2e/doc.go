// Package e2e checks the binder's plans end to end: SQL is parsed, bound
// (package binder), compiled into a streaming job (package planner), run
// over a changelog with inserts, updates and deletes, and the view's rows
// are compared with DuckDB running the same SELECT over the same rows.
// It holds only tests; it is a package of its own so that the binder's
// unit tests do not link DuckDB and the runtime.
//
// Invariant checked (DESIGN.md invariant 1, epoch consistency): after
// every epoch of the input, the view equals the query over the input's
// rows at that epoch.
package e2e
