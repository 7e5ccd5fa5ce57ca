// Package fstest is the conformance suite every fileio.FS implementation
// runs (NATS store_test.go style): the same cases for local disk, memory,
// the fault-injecting wrapper and S3.
package fstest
