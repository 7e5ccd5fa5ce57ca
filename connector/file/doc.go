// Package file reads CSV and JSON-lines files into an ingest job
// (connector/ingest): one file, or every file of a directory in name
// order, bounded (the source finishes after the files it listed) or
// watching the directory for new files.
//
// # Positions
//
// An ingest position is one uint64; a file source's position names a file
// and a byte offset in it: the file's ordinal (its index in the source's
// name-ordered list of files) in the high 24 bits and the offset in the
// low 40 (Pack, Unpack). Limits: 16,777,216 files per source and 1 TiB
// per file; the Reader refuses more rather than wrap. Positions grow as
// the source reads, which the ingest source's replay check relies on.
//
// The transaction at a position is the next chunk.rows records of its
// file (default 1024), fewer where the file ends; a transaction never
// spans two files, and one that reaches the end of its file returns the
// start of the next file as the next position. Blank lines count as
// records that give no row. The transaction at a position thus depends
// only on the files' bytes (invariant file-purity), so a replay after a
// restore meets the positions where the first run closed epochs.
//
// # Invariants the input must keep
//
//   - files-complete: a file is whole when it appears: write it aside
//     (names starting with "." or "_" are ignored) and rename it in. A
//     file is never changed after it appeared; the last record of a file
//     may lack its line break.
//   - files-append: files are only added to a directory, with names that
//     sort after every file already there (timestamps, sequence numbers),
//     and are not removed while a checkpoint may still name them: the
//     ordinals in checkpointed positions must keep meaning the same files.
//     A watching Reader checks this at every listing and fails with an
//     error naming the file when it is broken; a file that shrank below a
//     checkpointed offset is reported as corruption.
//
// Ordinals rather than names keep positions in one uint64 without a side
// table; a persisted table of names (as Flink's file source keeps its
// split assignments in state) would lift files-append, and is left for
// when the ingest source can checkpoint a Reader's own state.
//
// # Reading
//
// A Reader keeps the file at the last position open with a buffered
// reader, so sequential Next calls read on; a Next elsewhere (a restore)
// reopens and skips to the offset, counting lines on the way for
// messages. A CSV record may span lines inside quotes. With csv.header,
// the first record of every file is its header, mapping fields to columns
// by name (connector/format, CSV). A watched directory is listed again at
// most every 20 ms while the source waits at the end of its last file.
// Exhausted(pos) tells a driver that a bounded Reader has read everything.
//
// # Bad input
//
// The errors option: 'fail' (default) fails the job with an error naming
// the file, the line, the byte offset and the field (`file data/a.jsonl
// line 2 (byte 10): field "id": value "one": invalid input syntax for
// type bigint: "one"`); 'skip' drops the record and counts it
// (Reader.Errors().Skipped()); 'dead-letter' hands its bytes, position
// and error to the caller's receiver. After a restore the same bad
// records are met again; a receiver keeps dead letters once by position.
//
// # Options
//
//	connector       file (optional; another value is an error)
//	path            a file or a directory (required)
//	format          csv, json (JSON lines) or debezium-json (required), with
//	                csv.header, csv.delimiter, csv.quote
//	watch           true to keep reading new files of a directory (default false)
//	chunk.rows      most records per transaction (default 1024)
//	errors          fail (default), skip or dead-letter
//
// Unknown options and bad values are refused with an error wrapping
// base.ErrInvalidArgument that names the option.
package file
