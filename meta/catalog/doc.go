// Package catalog holds the meta service's catalog: the databases, tables,
// materialized views, sources and jobs of a Strata deployment, as plain
// value types with the rules that keep them valid.
//
// # Concepts
//
//   - A Database is a namespace; its name is the first directory level of
//     the warehouse (<warehouse>/<database>/<table>, DESIGN.md "The table
//     store").
//   - A Table is a named, versioned relation in the table store: columns
//     with SQL types, an optional primary key and string options. A
//     materialized view is a Table whose Kind is KindView and whose Query
//     holds the SQL text that defines it; its rows are written by a view job.
//     A plain table's non-key TIMESTAMPTZ column may be a processing-time
//     column (Column.Generated = GeneratedProcTime): the table's writer
//     stamps it with the ingestion time and stores it; views and sources
//     have none, and a keyed table that has one keeps a changelog producer
//     other than 'input' (an input delete would carry a new stamp).
//   - A Source is an external stream that is not stored (a Kafka topic, a
//     Postgres CDC slot, a generator). It lives in a database's namespace
//     beside tables, so tables, views and sources of one database have
//     distinct names, as relations do in Postgres.
//   - A Job is one streaming dataflow (DESIGN.md vocabulary): an ingest job
//     reads sources and writes tables, a view job reads tables and writes
//     the table of a materialized view. Its Reads and Writes are the edges
//     of the lineage graph (package meta/lineage), which checks cycles and
//     second writers; the catalog only checks that the named objects exist.
//
// # Versions
//
// A Catalog is an immutable value. Every change (CreateTable, DropJob, ...)
// returns a new Catalog whose Version is one higher and leaves the receiver
// untouched, so a reader holding a Catalog sees one consistent version while
// the meta service moves on, and the service can persist a change before it
// publishes the new value (copy-on-write, as etcd's and Paimon's catalogs
// publish whole schema versions). Each object records the catalog version
// that created it. Catalogs are small (hundreds of objects), so copying the
// maps on a change costs microseconds.
//
// # Names
//
// Every name that may become a path component (database, table, source,
// job, column) passes ValidateName before it enters the catalog:
//
// Invariant (catalog-safe-names): a catalog name is 1..MaxNameLength bytes
// of valid UTF-8 that starts with a letter or '_' and continues with letters,
// digits, '_', '-' or '$'. It therefore never holds a path separator, a dot
// (so never "." or ".."), a NUL, a space or a control character, and
// "db.name" splits unambiguously at its only dot.
//
// Invariant (catalog-references): every object a job reads or writes exists
// in the catalog, and an object that a job reads or writes cannot be
// dropped until the job is; a database cannot be dropped while it holds
// objects.
//
// Errors wrap base.ErrInvalidArgument (bad names, bad schemas, a reference
// to a missing object), base.ErrNotFound (dropping or looking up what does
// not exist) and base.ErrConflict (creating what exists, dropping what is in
// use), always naming the object.
package catalog
