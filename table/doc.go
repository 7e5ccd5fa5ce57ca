// Package table is the public face of Strata's table store: versioned
// primary-key and append tables, modelled on Apache Paimon, that streaming
// jobs write epoch by epoch and that queries and other jobs read at an
// exact epoch. It imports nothing from the runtime, SQL or meta packages.
//
// # Using a table from a sink
//
//	t, _ := table.Open(fs, "warehouse/db/orders")
//	w, _ := t.NewWriter("job-7/sink")          // after re-committing restored messages
//	w.Write(epoch, types.Insert, row)          // or w.WriteChunk(epoch, chunk)
//	msgs, _ := w.PrepareCommit(epoch)          // at the checkpoint barrier after epoch
//	b, _ := commit.Marshal(msgs)               // store b in the checkpoint
//	t.Commit(msgs)                             // when the checkpoint completes; idempotent
//
// A checkpoint in the middle of an epoch also stores w.Checkpoint() (the
// spilled files of unprepared epochs); after a restore the sink re-commits
// the stored messages, opens a new writer and calls Restore with it.
//
// # Reading
//
//	t.ReadLatest(), t.ReadSnapshot(id), t.ReadAtEpoch(e)   // merge on read
//	t.ReadLatestChunks()                                   // the same as chunks, no datum per value
//	s, _ := t.StreamFrom(scan.Position{Snapshot: 1}, "")   // changelog, resumable
//
// # Parts (one package each; nouns apart from verbs)
//
//	fileio          storage interface: local, memory, fault-injecting; checked JSON
//	fileio/s3       S3-compatible storage (conditional put-if-absent)
//	fileio/fstest   the conformance suite every storage implementation runs
//	schema          columns, primary key, options, schema files, evolution
//	snapshot        snapshot files, hints, committed epoch, tags, consumers
//	manifest        data file metadata, manifest entries, Avro codecs
//	format/parquet  Parquet data files
//	record          the KV record, and Block: records stored by column
//	mergetree       merge engines, run merging, universal compaction picker
//	store           one table's files and caches
//	write           the writer (buckets, level-0 runs, lookup changelog)
//	commit          commit messages and the committer
//	compact         run rewriting and dedicated compaction
//	scan            batch and streaming reads
//	maintain        expiration, tags and rollback, orphan files
//	bench           write, scan and point-lookup figures for `strata bench table`
//	bench/duckscan  DuckDB's scan of the compacted files (duckdb_scan_rows_per_sec)
//	format/parquet/arrowcheck   test: Apache Arrow's reader opens every file
//	format/parquet/duckdbcheck  test: DuckDB's read_parquet opens every file
//
// The on-disk formats are specified in FORMAT.md beside this file.
//
// # Tests that hold the store to its promises
//
//	metamorphic_test.go   seeded histories × configurations == an in-memory model;
//	                      the changelog replayed == the batch read at every snapshot
//	crash_test.go         a failure at every file write leaves the old or new table
//	lifecycle_test.go     expiry with tags and consumers; 1 writer, 1 expirer, 50 readers
//	compact_race_test.go  dedicated compaction racing commits loses nothing
//	testdata/*.txt        scripted stories (go test -run TestScripts -rewrite)
package table
