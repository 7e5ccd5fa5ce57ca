// Package metatest is the conformance suite of meta.Service: every
// implementation (the in-process service over each store, the HTTP client
// against the HTTP server) runs the same cases (STYLE.md "Every
// implementation of an interface runs the same test suite"; NATS's
// store_test.go runs file and memory stores through every case).
//
// A Harness gives the suite a fresh service on an empty store, running a
// short epoch interval on the real clock (the suite waits on epochs, it
// never sleeps), and optionally a way to restart it on the same store. The
// cases assert values, error markers (errors.Is must work the same through
// the network client) and the meta invariants: epochs and committed epochs
// never go back, related tables read at one epoch, strong reads never go
// back, across restarts too.
package metatest
