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
// Each DDL statement, read (its pin and any floors it raises, together),
// pin renewal or release and job-state change is one store transaction:
// one fsync with bbolt, one round trip with etcd, taken while the mutex is
// held. A statement that changes several objects (ApplyChange: a table or
// view with the job that writes it, a writer swapped, an object dropped
// with its writer) is one transaction too: the catalog document, the job
// records, pins, committed epochs and floors it touches are one batch, so
// no crash or fail-over splits it (meta invariant meta-change-atomic). Heartbeats and commit reports that change nothing write nothing.
// That every read writes its pin is also what fences a deposed etcd leader
// (meta/ha).
//
// Invariant (commit-reports-grouped): committed-epoch reports are group
// committed, as bbolt's DB.Batch and a database's log group commit do.
// Reports that arrive while a batch is being written gather into the next
// batch; one reporter at a time leads a batch: it writes the batch in one
// store transaction with the mutex released, then takes the mutex again to
// publish it (still durable before visible), and hands any batch gathered
// meanwhile to a new leader. With a report per table per checkpoint, many
// tables on a short epoch interval would otherwise queue one fsync each
// behind the mutex, and every read behind them. Store writes stay in the
// order of the changes: applyMu is held around every store write, and the
// leader takes it before it releases the mutex (lock order: mu, applyMu).
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
