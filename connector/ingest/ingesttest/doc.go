// Package ingesttest helps tests of ingest sources: HeldClock keeps a
// job's epoch clock short of its last epoch until the job's input has been
// read, so that a test's last epoch holds all of the input however slow
// the machine is.
package ingesttest
