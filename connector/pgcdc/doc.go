// Package pgcdc is the postgres-cdc source: the changes of several
// Postgres tables, read from one logical replication stream (the pgoutput
// plugin, protocol version 1, through github.com/jackc/pglogrepl), ingested
// into Strata tables so that a Postgres transaction is never split across
// epochs (DESIGN.md invariant 2 and "The epoch protocol").
//
//	CREATE SOURCE pg WITH (connector='postgres-cdc', hostname=..., port=...,
//	    username=..., password=..., database=..., slot=..., publication=...);
//	CREATE TABLE t (...) FROM pg TABLE 'schema.table';
//
// ParseOptions reads the WITH clause; the caller lists the tables (Table:
// the upstream schema.table, the Strata name, columns and primary key).
//
// # One source, many tables
//
// One replication connection serves all tables of a source, and the
// tables must commit each Postgres transaction's whole effect at one
// epoch. Per-table readers, each with its own ingest source, would close
// their epochs at different transactions. So a source is ONE ingest source
// (connector/ingest) whose Reader, the Stream, emits the rows of all its
// tables, and the job splits them afterwards:
//
//	ingest source (Stream) --forward--> Route(0) --> sink of table 0
//	                       --forward--> Route(1) --> sink of table 1
//	                       ...
//
// A source vertex's output goes to every out edge; each Route keeps its
// table's rows. Epoch barriers are placed once, between transactions, by
// the one source, and travel through every Route, so epoch E of every
// table holds exactly the transactions before the position where E was
// closed (invariant one-cut).
//
// # The union layout
//
// The chunks of a Stream have one column layout for all tables (Layout):
// column 0 is the tag, the row's table as its index in Config.Tables
// (INTEGER, never NULL); then every table's columns in list order. A row
// fills its own table's columns and leaves the others NULL. Layout.Project
// (used by Route) selects a table's rows and columns. This keeps the
// chunk columnar and typed; it costs a NULL flag per foreign column and
// row, which is small for a handful of tables. Encoding each row into a
// BYTEA column was the alternative: narrower for many wide tables, but
// every row is encoded and decoded once more.
//
// # Positions
//
// A position is a WAL location (LSN). The transaction at position p is
// the first whose commit record starts at or after p (pgoutput's Begin
// final LSN, Commit's commit LSN); the position after it is the end of its
// commit record (Commit's end LSN). So positions only grow, consecutive
// transactions meet at their boundaries, and the server's own rule for a
// restarted slot, to send transactions whose commit starts at or after the
// confirmed position, is the same rule: a position confirmed to the
// server is a position the Stream can resume at.
//
// Position 0 is the initial snapshot (below), whose position after is
// the slot's consistent point.
//
// # Initial snapshot
//
// Next(0) creates the replication slot with an exported snapshot
// (CREATE_REPLICATION_SLOT ... EXPORT_SNAPSHOT), reads every table in a
// REPEATABLE READ transaction set to that snapshot, and returns the rows
// as +I in ONE transaction, from position 0 to the consistent point; then
// streaming starts at the consistent point. One transaction, because the
// snapshot is one Postgres state: an epoch shows all of it or none, like
// any transaction. A slot that already exists when Next(0) is called is
// dropped first: position 0 means nothing of the source was committed.
//
// Invariant snapshot-held: the exported snapshot dies when streaming
// starts, so the Stream keeps the snapshot's chunk in memory until a
// position past it is confirmed, and serves it again on a rewind to 0 in
// the same process. A process that restarts at a position inside the
// snapshot does not exist: positions are 0 or at least the consistent
// point, and at 0 the snapshot is taken anew.
//
// # Rewinds
//
// Invariant rewind-is-restart: when the ingest source asks for a position
// other than where the last transaction ended (it restored a checkpoint),
// the Stream closes its replication connection and starts a new one at
// that position; the server re-decodes from the slot's confirmed
// position and the Stream skips transactions committed before the asked
// position. Decoding is deterministic, so a replay gives the same
// transactions at the same positions, and the ingest source closes its
// recorded epochs at the same places. A restart at a position below the
// slot's confirmed one is refused (base.ErrCorruption): the WAL in between
// may be gone.
//
// # Confirmed position
//
// The server keeps the WAL from the slot's confirmed position on. The
// Stream reports (standby status updates, every StatusInterval and when
// the server asks) only what Confirm was given, which the caller computes
// from committed epochs (Confirmer): a position where an epoch was closed
// that every table of the source has committed. A restore always goes to
// a checkpoint at or after such a position, so what a replay needs is
// still there.
//
// # Row kinds
//
// Insert gives +I. With REPLICA IDENTITY FULL, Update gives -U (old row)
// then +U (new row) and Delete gives -D with the whole old row: a retract
// changelog. With a key identity (DEFAULT, the primary key, or USING
// INDEX) Postgres sends no old row unless the key changed: Update gives
// +U (the key kept), or -D of the old key then +I (the key changed), and
// Delete gives -D carrying only the key, other columns NULL: an upsert
// changelog, which Open accepts only for a Strata table whose primary key
// is the identity's columns and whose other columns are nullable. An
// unchanged TOASTed value (not sent by Postgres) is taken from the old row
// under FULL and refused otherwise. TRUNCATE of a source table is refused
// (ErrUnsupported), naming the table: it would need a delete of every
// row, which the source cannot list. Changes of tables the publication
// has but the source does not map are skipped.
//
// # Types
//
// Values arrive in Postgres's text format (pgoutput without binary) under
// the session settings the connections ask for (TimeZone UTC, DateStyle
// ISO, IntervalStyle postgres, hex bytea, shortest exact floats) and are
// read with types.ParseText into the declared Strata column type:
// boolean, smallint, integer, bigint, real, double precision, numeric,
// text, varchar, char, date, time, timestamp, timestamptz, interval,
// json and jsonb (as JSONB), bytea and uuid; any of them also feeds a
// string column. Arrays and other types are refused by Check, and
// quarantine their table when Open or a Relation message announcing a
// changed table finds them (below), with an error naming the Strata table
// and column. A value of a supported type that the declared column cannot
// hold is a bad value (below).
//
// # Bad values
//
// A value Postgres sends that the declared Strata column cannot hold (a
// varchar(n) or char(n) overflow, a numeric beyond the declared precision,
// an integer out of a smaller Strata integer's range, NaN or infinity
// where the Strata type has none) makes its row image bad. The decoder
// leaves a bad image out of the transaction's chunk and lists it in
// Txn.Bad (BadRow: table, column, position, where, the row's raw text
// values as a JSON object of the declared columns, the parse error). The
// Stream applies the error mode of the image's table (Table.Errors, a
// connector/format.Errors) each time it hands the transaction out:
//
//   - fail (the default, also for a nil Errors): the image's table is
//     quarantined from this transaction on (below), with an error naming
//     the source, the table, the column, the change's LSN and the commit
//     LSN. The rest of the transaction, in the source's other tables, is
//     handed out, and so are the later transactions.
//   - skip: the image is counted (Errors.Skipped) and dropped.
//   - dead-letter: the image goes to the Errors' DeadLetterFunc with its
//     position, place, raw values and error, then is dropped.
//
// In skip and dead-letter mode only the bad image is dropped: the rest of
// its transaction, in every table, is handed out as one transaction and
// commits at one epoch.
//
// Invariant bad-rows-absent: a Strata table with a primary key holds the
// upstream rows whose current version fits its columns, and no version
// of the others. An image is one row version, so with REPLICA IDENTITY
// FULL an update whose new row is bad keeps its -U (the row leaves the
// table) and one whose old row is bad keeps its +U (the row, absent
// until now, comes back); a key change whose new row is bad keeps its
// -D. Under a key identity an update sends no old row, so one whose new
// row is bad gives a -D of its key (other columns NULL, as a delete
// under that identity) instead of leaving the version before in place.
//
// The mode is the table's (CREATE TABLE ... FROM src TABLE '...' WITH
// (errors = '...')), not the source's: whether a value fits is a matter of
// the table's declared types, and one table may tolerate what another
// must not. ParseOptions refuses errors on the source and says where it
// goes.
//
// Invariant bad-position: a bad image's Position is the same on every
// replay, so that dead letters keyed by it are kept once. For a streamed
// change it is the LSN of the change's WAL record (the XLogData's
// WALStart, which pgoutput sets to the change's record) plus the index of
// the image among those that record gives: an update under FULL gives two
// images (old +0, new +1), a multi-insert record (COPY) one per row.
// Decoding is deterministic, so a replay gives the same records with the
// same images. Positions of two records never meet: a WAL record is
// longer than the number of images it holds. Row n of the initial
// snapshot has SnapshotPosition(n), 2^62 + n, past any WAL location. A
// snapshot is numbered anew each time one is taken (position 0 after a
// restart before the first commit, or a new slot when the engine changes
// the source's set of tables); its rows may then be numbered differently
// and the dead letters of its bad rows kept again.
//
// # Quarantine
//
// One table the source cannot follow must not stop the others, as Flink
// CDC and RisingWave keep a source's other tables going: a table is
// quarantined when
//
//   - a bad value of it arrives in fail mode (above);
//   - the decoder cannot read its changes (Txn.Failed): a Relation
//     message whose declared columns no longer exist or no longer fit
//     (an upstream ALTER TABLE), a TRUNCATE, an unchanged TOASTed value
//     without an old row, a change without its row;
//   - Open's inspection of it fails (the upstream table dropped, a column
//     changed while the source was down): from the first position Next
//     is asked for.
//
// Invariant quarantine-cut: a table quarantined from position From gets
// every transaction committing before From whole and nothing of the
// transactions from From on, in particular nothing of the one that
// failed; it stays as it was just before that transaction. Its epochs
// still close with the source's (empty), so the source's confirmed
// position moves on and its other tables commit as before. The decision
// is a function of the WAL, so a replay from an earlier position makes
// the same one at the same transaction; to outlive the process, each new
// quarantine goes to Config.OnQuarantine, which records it durably,
// before the transaction that starts it is handed out, and comes back in
// Config.Quarantined, applied from the same From. A quarantine is never
// lifted: the caller ends it by making a new source for a new set of
// tables (the engine drops and re-creates the table), which takes a
// fresh snapshot. Quarantined returns them, with their errors, for the
// caller to show; Check tests a table before it joins a source, so that
// CREATE TABLE refuses what would be quarantined at once.
//
// # Lifecycle
//
//	errs, _ := format.NewErrors(mode, dl)   // per table: Table.Errors
//	s, err := pgcdc.Open(ctx, cfg)          // checks tables, types, publication
//	conf := pgcdc.NewConfirmer(s)
//	ingest.New(ingest.Config{Reader: s, OnClose: conf.OnClose, ...})
//	... pgcdc.Route(s.Layout(), i) per table, then its sink
//	conf.Committed(minCommittedEpoch)       // as the tables commit
//	s.Close()                               // the slot stays; DropSlot removes it
//	pgcdc.DropUpstream(ctx, opts, false)    // DROP SOURCE: the slot, and the publication it created
//
// Known limits: a quarantined table's changes still come through the
// slot (the publication keeps it) and are dropped; the snapshot is held
// in memory until confirmed; one
// transaction becomes one chunk, however large; a schema change upstream
// is followed only as far as the declared columns stay there with
// fitting types.
package pgcdc
