// Package store persists the meta service's state: a small key-value map
// written in atomic batches and read back whole at start.
//
// # Model
//
// The meta service keeps its whole state in memory (catalogs, committed
// epochs and pins are small) and writes through: every change becomes a
// Batch of puts and deletes that the Store applies atomically before the
// change becomes visible (meta invariant meta-durable-before-visible). At
// start the service calls Load once and rebuilds its state from the map.
// This is the shape both backends offer cheaply: one bbolt read-write
// transaction, or one etcd transaction guarded by the leader's key.
//
// Backends:
//
//   - Bolt (this package): the embedded default, one bbolt file beside the
//     warehouse (go.etcd.io/bbolt, the B+tree store etcd itself uses). A
//     write is durable when Apply returns (fsync on commit).
//   - meta/store/etcdstore: etcd, for high availability; writes are fenced
//     by the leader's election key so a deposed leader cannot write.
//   - Memory (this package): for tests; it can be handed to a second
//     service instance to model a restart.
//
// # Records
//
// Every value is wrapped in an envelope (FORMAT.md): a format byte and a
// CRC-32C of the payload. bbolt checksums only its meta pages; the envelope
// catches a scribbled data page, and the format byte lets a later version
// change payloads.
//
// The bbolt file also keeps a digest of its whole content, updated in
// each write's transaction (FORMAT.md): envelopes protect values, the
// digest protects the set of keys, against a damaged page that hides,
// renames or resurrects keys while every value still checks.
//
// Invariant (store-checked-reads): Load returns only values whose envelope
// checks, and from bbolt only a content that matches its digest; anything
// else is an error wrapping base.ErrCorruption (or base.ErrChecksum) that
// names the key or the file.
//
// Invariant (store-no-panic-on-corruption): opening a damaged bbolt file
// (truncated, scribbled over, empty) returns an error wrapping
// base.ErrCorruption; it does not panic or crash the process. Bolt reads
// the file through an mmap: a truncated file faults (SIGBUS) when bbolt
// touches a page past its end, and a scribbled page can make bbolt panic.
// Open therefore checks the file size against the size bbolt's meta page
// records, and walks every key once in the opening goroutine with
// runtime/debug.SetPanicOnFault on and a recover, turning either failure
// into a corruption error before the database is used.
package store
