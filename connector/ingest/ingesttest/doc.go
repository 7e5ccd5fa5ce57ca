// Package ingesttest helps tests of ingest sources: HeldClock keeps a
// job's epoch clock short of its last epoch until the job's input has been
// read, so that a test's last epoch holds all of the input however slow
// the machine is. For kill -9 tests, WallClock is an epoch clock that the
// killed and restarted child processes share, Children starts a test's
// job in child processes and kills them with SIGKILL at random moments,
// and ReadCloses reads the (epoch, position) pairs a source told.
package ingesttest
