// Package version keeps every table's committed epoch and computes
// consistent versions for queries (DESIGN.md "The meta service"; FLIP-276
// "consistent version"), and keeps the pins that stop snapshot expiration
// from removing what a query still reads.
//
// It is pure: values in, values out, no clock, no goroutine, no I/O. The
// meta service persists what it changes before it publishes it.
//
// # Committed epochs
//
// A table's committed epoch is the highest epoch whose changes are all
// committed to it (empty epochs included), reported by the table's writer
// after each commit. Tracker.Commit accepts a report that moves it forward
// and a repeat of the current one (a retried report is idempotent) and
// refuses one that goes backwards with ErrEpochBackwards: a stale writer (a
// job restored from an older checkpoint, a zombie after fail-over) must not
// make readers go back.
//
// Invariant (version-committed-monotonic): a table's committed epoch never
// decreases.
//
// # Consistent versions
//
// A read of a set of tables resolves to one epoch per table. The tables are
// split into groups, the connected components of "shares an upstream
// source" (lineage.Graph.Groups); every table of a group is read at the
// group's epoch, the lowest committed epoch among its tables, which is the
// highest epoch all of them have committed (DESIGN.md vocabulary
// "consistent version"). Unrelated tables land in different groups and are
// each read at their own latest.
//
// Invariant (version-consistent): tables of one group are read at one
// epoch, and no table is read above its committed epoch.
//
// Two modes, as FLIP-276 names them:
//
//   - Weak: each read takes its groups' epochs as they are: consistent on
//     its own and as fresh as possible (no consistent assignment can read a
//     group higher than its lowest committed epoch).
//   - Strong: additionally, no read gets a table at an older epoch than any
//     read before it (DESIGN.md invariant 4, monotonic reads). The tracker
//     keeps, per table, the highest epoch any strong read has been handed
//     (its floor). Reading a group whose lowest committed epoch is below the
//     floor of one of its tables must wait until the laggard commits up to
//     the floor; Resolve reports the laggard, the meta service waits for
//     its commit (or the caller's deadline) and resolves again. Floors are
//     persisted before a read returns, so they survive restarts and
//     fail-overs.
//
// Invariant (version-strong-monotonic): once a strong read returned epoch E
// for table T, no later strong read returns an epoch below E for T.
//
// Why floors rather than "read everything at the global minimum": the
// relation is per query (FLIP-276 reads unrelated tables at their own
// latest), so a single global watermark would hold every query back to the
// slowest table of the deployment. A wait happens only when one query read
// a table alone or with fast relatives and a later query reads it with a
// slower relative; it lasts until the slower relative catches up, at most
// one commit interval in a healthy topology.
//
// # Pins
//
// A query pins the epochs it reads (Pins.Add) for a lease; the table
// store's snapshot expiration asks for each table's lowest pinned epoch
// (Pins.Min) and keeps every snapshot at or above it. Each pin has a holder
// (a session or job name) and an expiry; the holder renews it while it
// reads, and pins of a holder that dies expire (Pins.Expired) or are
// released with the holder's job (Pins.ReleaseHolder).
package version
