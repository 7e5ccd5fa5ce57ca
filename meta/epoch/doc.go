// Package epoch is the meta service's epoch clock (DESIGN.md "The epoch
// protocol"): it opens epoch E+1 every interval, records the wall time at
// which each epoch began, and lets ingest jobs wait for the next epoch
// without polling.
//
// # Structure
//
// Clock is the pure core (STYLE.md "Protocols are pure state machines with
// a thin driver"; etcd raft's Tick/Ready/Advance): Tick(now) returns a Ready
// that says whether an epoch opens, what must be persisted first and when to
// tick again; Advance(ready) applies it. Clock reads no clock, starts no
// goroutine and does no I/O. Driver is the goroutine around it: it arms a
// timer from an injected clock.Source, persists through an injected
// function, publishes each opened epoch and wakes waiters.
//
// # Schedule
//
// Epochs open on a drift-free schedule: epoch k+1 is due one interval after
// epoch k was due, not after it actually opened, so scheduling delays do not
// accumulate and the rate over a long run equals 1/interval. When the driver
// falls behind by a whole interval or more (the process was paused, the
// store was slow), it opens one epoch at once and restarts the schedule from
// there instead of opening the missed epochs in a burst: an epoch is a unit
// of work for every job, and a burst of empty ones helps nobody.
//
// The schedule is computed from times that carry Go's monotonic clock
// reading (time.Now), so a step of the wall clock neither stalls the clock
// nor makes it burst; recorded start times are wall times and may step
// with it.
//
// # Persistence: reserved ranges
//
// Persisting every epoch would cost a durable write every 50 ms. Instead
// the clock reserves a range of epochs with one write, as TiDB's timestamp
// oracle saves a time window ahead: State.Ceiling is the highest epoch the
// clock may open without another write. When the next epoch would pass the
// ceiling, Tick asks the driver to persist a new State whose ceiling lies
// Reserve epochs further before the epoch opens. A restarted clock (or an
// etcd follower taking over) resumes at Ceiling+1, skipping at most Reserve
// epochs that were never opened. Epochs only have to grow, not be dense.
//
// Invariant (epoch-monotonic): an epoch opened by any clock restored from a
// State is greater than every epoch opened by any earlier clock that
// persisted that State or an older one. It follows from opening only epochs
// at or below a persisted ceiling and resuming above it.
//
// # Start times
//
// The start time of each epoch is recorded in memory for the last RingSize
// epochs and persisted sparsely: every reserved range records an Anchor (the
// first epoch of the range and the time it opened). StartOf answers exactly
// from memory and, for older epochs or epochs opened before a restart,
// estimates from the nearest anchor below: anchor time + (epoch - anchor
// epoch) * interval, capped at the start of the next known epoch. With the
// drift-free schedule the estimate is exact unless the clock stalled inside
// the range.
//
// # Waiting
//
// Driver.Wait(ctx, e) returns as soon as an epoch above e is open. Each
// published epoch closes a channel that waiters block on, then replaces it
// (a broadcast without polling, as Go's context cancellation works), so an
// idle waiter costs nothing and a thousand waiters wake together.
package epoch
