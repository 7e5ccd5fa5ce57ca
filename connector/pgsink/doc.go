// Package pgsink is the exactly-once PostgreSQL sink, with
// github.com/jackc/pgx/v5: CREATE SINK k FROM v WITH (connector =
// 'postgres', hostname = ..., port = ..., username = ..., password = ...,
// database = ..., table = 'schema.table') keeps a Postgres table equal to
// v, upserting v's changelog by v's primary key.
//
// # Target table
//
// The table must exist before the sink starts (Check at CREATE SINK, and
// Connect whenever a sink subtask opens): it must have a column of the
// same name for every sink column, of a type that holds the column's
// values (Accepts: the Postgres type of the Strata type, a wider integer,
// numeric for integers and floats, or any string type for the value's
// text form; connector/pgcdc maps the other way), no other NOT NULL
// column without a default, and a primary key or unique index on exactly
// the key columns, which INSERT ... ON CONFLICT needs. Each refusal names
// the table and the column; a missing table comes with a CREATE TABLE
// that fits. The sink never creates or truncates the target: rows it
// already holds for keys the view does not have stay.
//
// # Writes
//
// Values travel as their Postgres text form in text[] parameters, one
// array per column, unnested into rows and cast to the column's type
// without modifiers, so that the insert's assignment applies the
// modifiers as Postgres always does (a value too long for varchar(n) is
// an error, not cut):
//
//	DELETE FROM s.t AS t USING unnest($1::text[]) AS u(id) WHERE t.id = u.id::bigint
//	INSERT INTO s.t (id, v) SELECT u.id::bigint, u.v::text
//	  FROM unnest($1::text[], $2::text[]) AS u(id, v)
//	  ON CONFLICT (id) DO UPDATE SET v = EXCLUDED.v
//
// in batches of up to 5000 rows. The connection sets TimeZone UTC,
// DateStyle ISO and IntervalStyle postgres, the forms types.FormatText
// writes.
//
// # Exactly once
//
// Sink is the operator.Committer of a two-phase-commit sink
// (operator.TwoPhaseCommitSink; NewSinkOperator runs it). Postgres's own
// two-phase commit (PREPARE TRANSACTION) is off by default
// (max_prepared_transactions = 0), so the sink does what Flink's
// GenericWriteAheadSink does, with idempotent commits:
//
//   - Prepare(E), at epoch barrier E, folds the epoch's changes into each
//     touched key's last state, an upsert of its last row or a delete (a
//     -U then a +U of the same key is one upsert; an insert then a delete
//     is a delete), sorted by key, and returns them as the descriptor:
//     the checkpoint holds them until the commit (write-ahead).
//   - Commit(E), when a checkpoint taken after barrier E completes, or
//     again after a restore, runs one Postgres transaction: lock the
//     subtask's row of the progress table; if it holds E or a later epoch,
//     stop (the epoch was applied); else delete, upsert and set the row to
//     E. The changes and the progress row commit together, so a crash
//     anywhere leaves either both or neither, and a re-commit changes
//     nothing (invariant apply-once).
//   - An epoch without changes only records E, in one statement.
//
// The progress table (option progress.table, default
// strata_sink_progress in the target's schema; created when missing) has
// one row per sink and subtask:
//
//	sink text, subtask integer, epoch bigint, committed_at timestamptz,
//	PRIMARY KEY (sink, subtask)
//
// DROP SINK leaves the row: it does no harm, since a sink created again
// under the same name starts at a later epoch. Its epoch is the sink's
// committed epoch in Postgres: the target table
// then equals the view at that epoch (for a sink of parallelism 1; with
// several subtasks, each subtask's keys at its epoch). Reading the table
// and the progress row in one transaction gives a consistent pair.
//
// # Options
//
//	connector       postgres
//	hostname        host name, address or unix socket directory (required)
//	port            default 5432
//	username        (required)
//	password        default none
//	database        (required)
//	table           schema.table or table (schema public) (required)
//	progress.table  schema.table of the progress table
//
// Names are taken as written (no case folding, no quotes). Unknown
// options and bad values are refused with an error wrapping
// base.ErrInvalidArgument that names the option.
package pgsink
