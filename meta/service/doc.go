// Package service is the meta service in process: it implements
// meta.Service over a meta/store.Store (bbolt by default, etcd for high
// availability) by composing the catalog (meta/catalog), the lineage graph
// (meta/lineage), the epoch clock (meta/epoch) and the committed epochs,
// consistent versions and pins (meta/version).
//
// # Lifecycle
//
// Open loads the store once, rebuilds every part from it (re-validating
// the catalog and re-registering every job's lineage; anything that does
// not check is an error wrapping base.ErrCorruption), starts the epoch
// clock (which reserves a range of epochs above every epoch any earlier
// instance opened) and a sweeper goroutine, and returns. Close stops both
// and closes nothing it did not open: the caller owns the Store.
//
// # Concurrency
//
// One mutex (Meta.mu) guards the state; every change is written to the
// store while it is held and published only after the write succeeded
// (meta invariant meta-durable-before-visible). The epoch clock runs on its
// own goroutine and persists its reservations itself; WaitEpoch blocks on
// the clock, not on the mutex. A strong read that must wait for a laggard
// releases the mutex and blocks on a broadcast channel that every commit
// and every lineage change closes, then resolves again.
//
// Each commit report that moves an epoch, DDL statement, read (its pin and
// any floors it raises, together), pin renewal or release and job-state
// change is one store transaction: one fsync with bbolt, one round trip
// with etcd, taken while the mutex is held. Heartbeats and commit reports
// that change nothing write nothing. That every read writes its pin is
// also what fences a deposed etcd leader (meta/ha). Group commit (one
// transaction for the changes of many callers) is the next step if commit
// or read rates demand it; bbolt's DB.Batch shows the shape.
//
// # Liveness
//
// A job is lost when it is CREATED, RUNNING or RESTARTING and no heartbeat
// arrived for HeartbeatTimeout (counted from its last heartbeat, its
// registration, or the service's start, whichever is latest, so a restart
// gives every job a full timeout to reach the new instance). A lost job is
// shown as FAILED at once; its pins stop counting at once; the sweeper
// then persists the FAILED status and deletes its pins. A pin whose expiry
// passed stops counting at once too and is deleted by the sweeper. So
// snapshot expiration never waits for the sweeper, and the sweeper's period
// only bounds how long dead records stay in the store.
package service
