// Package filesink is the exactly-once file sink: CREATE SINK k FROM v
// WITH (connector = 'file', path = 'DIR', format = 'csv' | 'json') writes
// v's changelog into DIR, one file per epoch and sink subtask, each change
// with its row kind, published by an atomic rename when the checkpoint
// that covers the epoch completes.
//
// # Files
//
//	DIR/<name>-<epoch, 20 digits>-<subtask, 3 digits>.csv|json    committed
//	DIR/.<committed name>.<attempt token>.tmp                     prepared
//
// Names sort in epoch order, so reading the committed files of a sink in
// name order replays its changelog in order. An epoch that changed nothing
// has no file. A file holds the changes of one epoch in the order the sink
// received them:
//
//   - csv: a header record naming the fields (op, then the columns), then
//     one record per change: the row kind (+I, -U, +U, -D), then the
//     values in Postgres text form; NULL is an empty field and the empty
//     string a quoted empty field "", fields with a comma, a quote or a
//     line break are quoted (RFC 4180). connector/format's csv decoder,
//     and so the file source with csv.header, reads them back.
//   - json: one object per line, {"op": "+I", "col": value, ...}; numbers
//     and booleans as JSON literals (NUMERIC exactly), JSONB as it is,
//     every other value as its Postgres text in a string.
//
// The field that holds the row kind is named op (option op.field to
// choose another); a column with that name is refused.
//
// # Exactly once
//
// Sink is the operator.Committer of a two-phase-commit sink
// (operator.TwoPhaseCommitSink; NewSinkOperator runs it), in the manner
// of Flink's FileSink with epochs as the unit of commit:
//
//   - Prepare(E), at epoch barrier E: the epoch's changes are written to a
//     hidden temporary file named after the epoch, the subtask and a
//     token of the attempt, synced, and its directory entry synced. The
//     descriptor kept in the checkpoint is the temporary and final names.
//   - Commit(E), when a checkpoint taken after barrier E completes, or
//     again after a restore: rename to the final name, then sync the
//     directory. A final file that exists means the epoch was committed
//     before, so a re-commit changes nothing (invariant commit-once: a
//     committed file is never written again).
//   - Clean-up: the first Prepare of an attempt removes the temporary
//     files of its subtask. The operator re-commits the restored
//     checkpoint's epochs before any Prepare, so the temporary files left
//     then belong to aborted attempts, whose epochs the replay prepares
//     again under new names.
//
// Readers must ignore hidden files (a leading dot), as Hadoop and Spark
// readers do; a committed file is complete and never changes.
//
// # Options
//
//	connector   file (optional here; the engine selects the package by it)
//	path        the directory (required; CREATE SINK creates it, CreateDir;
//	            a directory that vanishes later fails the job)
//	format      csv (default) or json
//	op.field    the name of the row-kind field (default op)
//
// One directory may hold several sinks' files (the names start with the
// sink's name); unknown options and bad values are refused with an error
// wrapping base.ErrInvalidArgument that names the option.
package filesink
