// Package store ties the file-level pieces of one table together: paths,
// the schema, snapshot and manifest managers, reading and writing data
// files, and the live files of a snapshot. The verbs (write, commit, scan,
// compact, maintain) all work through a *Store.
//
// # Layout
//
//	<table>/schema/schema-<id>
//	<table>/snapshot/snapshot-<id>, LATEST, EARLIEST, COMMITTED-EPOCH
//	<table>/manifest/manifest-<rand>, manifest-list-<rand>
//	<table>/bucket-<n>/data-<rand>.parquet, changelog-<rand>.parquet
//	<table>/tag/tag-<name>, <table>/consumer/consumer-<id>
//
// # Caches
//
// Files are immutable, so decoded data files and the live file sets of
// snapshots are cached by name and id (bounded, least recently added
// evicted first). A cache hit never skips a check: only checked reads and
// the records a writer has just encoded into a file fill the caches.
package store
