// Package meta is the contract of Strata's meta service: the coordinator
// that knows the whole topology of jobs and tables (DESIGN.md "The meta
// service"; the MetaService of Flink's FLIP-276). It defines the Service
// interface that every part of Strata talks to; package meta/service
// implements it in process, package meta/api over HTTP with the same
// behaviour (both run the meta/metatest suite).
//
// # Packages
//
//	meta              this contract: Service, its request and answer types
//	meta/catalog      databases, tables, views, sources, jobs; name rules
//	meta/lineage      the job graph: cycles and second writers refused,
//	                  upstream and downstream, related tables
//	meta/clock        injected wall time (system and manual)
//	meta/epoch        the epoch clock: pure core and driver
//	meta/version      committed epochs, consistent versions, pins (pure)
//	meta/store        the persisted key-value state: bbolt, memory
//	meta/store/etcdstore  the same on etcd, fenced by the leader's key
//	meta/service      the in-process Service over a store
//	meta/api          the Service over HTTP+JSON: handler and client
//	meta/ha           leader election on etcd around meta/service
//	meta/metatest     the conformance suite every implementation runs
//
// # Who calls what
//
//   - DDL (the SQL layer): CreateDatabase, CreateTable (tables and
//     materialized views with their SQL text), CreateSource, the Drop
//     methods and Catalog; ApplyChange for a statement that creates or
//     drops an object together with its job (CREATE TABLE with its ingest
//     job, CREATE MATERIALIZED VIEW with its view job, CREATE SINK ...
//     INTO), so that a crash never splits them.
//   - Jobs: RegisterJob when a job is created (its reads and writes enter
//     the lineage; a cycle or a second writer to a table is refused with an
//     error naming both sides), Heartbeat while it runs (status and last
//     completed checkpoint), DropJob when it is dropped.
//   - Ingest sources: CurrentEpoch and WaitEpoch. A source injects epoch
//     barrier E at a source position once the clock has moved past E: it
//     calls WaitEpoch(ctx, E), which blocks without polling until an epoch
//     above E is open (DESIGN.md "The epoch protocol").
//   - Table sinks: CommitEpoch after each commit of a table, with the epoch
//     the commit completes (empty epochs included). Reports are idempotent
//     and must not go backwards: a report below the table's committed epoch
//     is refused (ErrEpochBackwards, wrapping base.ErrConflict) and logged.
//   - Queries: AcquireVersion for the tables a query reads, in strong or
//     weak mode; it returns one epoch per table (related tables share one)
//     and a pin that holds those epochs until ReleasePin, expiry, or the
//     holder job's loss. Long reads call RenewPin.
//   - Snapshot expiration (the table store): PinnedEpoch, the lowest epoch
//     of a table some live pin holds; snapshots needed to read at or above
//     it must stay.
//   - Operators and the UI: Freshness, Lineage, Jobs, Prometheus metrics.
//
// # Guarantees
//
// These hold for every implementation, in process, over the network,
// across restarts of the bbolt-backed service and across etcd fail-overs:
//
// Invariant (meta-epoch-monotonic): the epochs CurrentEpoch and WaitEpoch
// return never go backwards (meta/epoch invariant epoch-monotonic).
//
// Invariant (meta-committed-monotonic): a table's committed epoch never
// goes backwards (meta/version invariant version-committed-monotonic).
//
// Invariant (meta-consistent-read): AcquireVersion reads related tables
// at one epoch, no table above its committed epoch (version-consistent);
// in strong mode never below what any earlier strong read got for the same
// table (version-strong-monotonic, DESIGN.md invariant 4).
//
// Invariant (meta-change-atomic): ApplyChange persists all the steps of a
// Change in one store write (one bbolt transaction, one etcd Txn), so no
// restart or fail-over ever shows a table created by a DDL statement
// without the job the same statement registered to write it, nor the
// reverse.
//
// Invariant (meta-durable-before-visible): every change is in the store
// before any caller can observe it, so a restart or a fail-over never shows
// less than was shown.
//
// # Errors
//
// Errors wrap the markers of internal/base (ErrInvalidArgument,
// ErrNotFound, ErrConflict, ErrCorruption, ErrClosed), the lineage markers
// (lineage.ErrCycle, lineage.ErrSecondWriter) and
// version.ErrEpochBackwards; a waiting call that runs out of time wraps the
// context's error. The network client rebuilds the same markers, so
// errors.Is works the same on both sides.
package meta
