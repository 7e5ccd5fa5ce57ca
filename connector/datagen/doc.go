// Package datagen is a source of random rows for any schema, modelled on
// Flink's datagen connector: each column is a sequence or random values
// in a range, at a given rate, for a given number of rows or without end.
// It is for demos, tests and load: a relation whose content is known from
// its options alone.
//
// # Rows
//
// Rows are numbered 0, 1, 2, ... A sequence column gives row n the value
// start + n (NUMERIC: start + n whole units; DATE: start + n days; a
// string column: the decimal text of the integer start + n). A random
// column draws each value uniformly from its range: integers, NUMERIC
// (at the column's scale), DATE, TIME and TIMESTAMP(TZ) (at the column's
// precision) from [min, max]; REAL and DOUBLE PRECISION from [min, max);
// a DATE or TIMESTAMP(TZ) column given neither min nor max is a time
// column, whose values lie at or shortly before their row's generation
// time (see Time); strings are length random lower-case letters (CHAR(n)
// padded to n); BYTEA is length random bytes; UUID is a random version-4
// UUID; BOOLEAN is true or false. With a null-rate, each value is NULL with that
// probability. INTERVAL and JSONB columns are refused.
//
// The rows end at the row count (number-of-rows), or where the first
// sequence with an end runs out, whichever comes first; with neither, the
// source does not end.
//
// # Invariants
//
//   - row-purity: row n depends only on the seed, n, the columns'
//     configuration and, with time columns, the Reader's start time
//     (see Time). Every value has its own pseudo-random stream,
//     SplitMix64 started from a mix of the seed, the column's position
//     and n, so a column's values do not even depend on the other
//     columns' options. A Reader resumes at any row without generating
//     the ones before.
//   - transaction-purity: the transaction at a position is rows
//     [pos, e) with e decided by pos, the chunk size, the row limit and the
//     rate only, never by the clock, so a replay after a restore meets
//     the same transaction boundaries (connector/ingest, Replay).
//
// # Time
//
// Flink's datagen gives a random TIMESTAMP or TIMESTAMP_LTZ the current
// time of the machine minus a random duration of up to
// fields.#.max-past (default 0: the current time), so that a table with
// WATERMARK FOR ts AS ts - INTERVAL '5' SECOND sees times that advance
// as the rows are made instead of dropping most of them as late. Time
// columns follow it, with the current time replaced by the row's
// generation time, which replays the same:
//
//   - The Reader's start time is the wall time (Config.Now) of its first
//     Next, together with that call's position p: row p's generation
//     time. Row n's is start + (n-p)/rows-per-second seconds, which is
//     when rate limiting makes row n due (see Rate), so a row is never
//     handed out before its time; without a rate every row's is the
//     start time.
//   - A time column's value is drawn uniformly from [t - max-past, t], t
//     being the generation time: at the column's precision for
//     TIMESTAMP(p) (t truncated to it when max-past is shorter than the
//     unit), as a UTC day for DATE (an extension: Flink's DATE is always
//     the current date). TIMESTAMP without time zone takes UTC's wall
//     time.
//   - The start time is the Reader's state (ingest.StatefulReader): the
//     ingest source keeps it in its checkpoints beside the position and
//     restores it, so a replay from a checkpointed position, in the same
//     process or after a kill -9, gives the rows the first run gave.
//     Without a checkpoint the start time is chosen again; nothing made
//     before was committed.
//
// With max-past 0 the generation times, and so the values, never
// decrease along the rows, and a watermark of any delay drops none of
// them; with max-past M a delay of at least M drops none either (a value
// lies at most M below the generation time of its row, which is at least
// that of every earlier row, which is at least every earlier value).
//
// Tried and dropped: the wall time at which a row is made, as Flink
// does. A replay after a restore would then give rows other values than
// the first run, which exactly-once survives today (nothing past a
// checkpoint's position is committed) but the planned commit ahead of
// the checkpoint (DESIGN.md) does not: it replays epochs already
// committed and needs the same rows. Re-anchoring the start time at each
// checkpoint or restore fails the same way. The price of a fixed start
// time: the times follow the rows' schedule, not the clock, so they fall
// behind the wall clock when the consumer does, across a stop of the
// job (a restart resumes the schedule, not the clock), and, without a
// rate, all rows carry the start time; give rows-per-second for times
// that advance.
//
// # Seed
//
// Every random value derives from the seed. Flink's datagen seeds each
// source from a random source, so two tables get independent values;
// with one fixed default seed, two tables created without a seed held the
// same values, and joining them on a random column matched every row.
// The seed is still part of the options, because row-purity needs it
// fixed for the life of the relation: CREATE TABLE and CREATE SOURCE
// (engine) give a relation created without a seed option a random one
// (WithSeed) and store it with its options in the catalog. A restart, a
// job restart and a replay after a crash read the stored seed and make
// the same rows, and SHOW CREATE shows it, so the values can be made
// again elsewhere. An explicit seed is kept as given.
//
// Options without a seed take DefaultSeed (0). Only relations created
// before CREATE chose seeds are stored so: they keep generating what
// they generated before, and an upgrade replays them identically.
//
// Considered and dropped: drawing the seed when a Reader opens, as
// Flink does. A restart would continue the relation with another seed's
// rows, and a replay of epochs already committed (the planned commit
// ahead of the checkpoint, DESIGN.md) would not give the rows committed.
//
// # Checkpointed state
//
// A Reader with time columns keeps its start time as the bytes:
//
//	version      1 byte, 1
//	position     uvarint, the row whose generation time is the start time
//	start time   varint, µs since 1970-01-01 00:00:00 UTC
//
// A Reader without time columns keeps nothing (nil), and ignores state
// given to it. Other bytes fail the restore with base.ErrCorruption.
//
// # Rate
//
// With a rate R > 0 rows/s, a transaction holds at most max(1, R/100)
// rows (10 ms), and Next returns nil until its last row is due: row n is
// due (n-a)/R seconds after the Reader's first call, a being that call's
// position. A consumer that falls behind is never held back. With time
// columns, a restore that sets another start time starts the schedule
// again at the next call, and never before row a's generation time.
//
// # Options
//
// ParseOptions reads a WITH clause for a given column list, with Flink's
// option names:
//
//	connector              datagen (optional; another value is an error)
//	rows-per-second        rate; 0 = as fast as possible (default 10000, as in Flink)
//	number-of-rows         row count; 0 or absent = unbounded
//	seed                   unsigned 64-bit seed (default DefaultSeed, 0;
//	                       CREATE stores a random one, see Seed)
//	fields.<col>.kind      random (default) or sequence
//	fields.<col>.start     a sequence's first value (required for a sequence)
//	fields.<col>.end       a sequence's last value (default: the type's largest,
//	                       for VARCHAR(n) the largest n-digit number)
//	fields.<col>.min       a random column's smallest value
//	fields.<col>.max       a random column's largest value
//	fields.<col>.max-past  a time column's (random DATE or TIMESTAMP(TZ)
//	                       without min and max) longest distance before
//	                       its row's generation time: a Flink Duration,
//	                       a whole number and a unit ('5 s', '1 min',
//	                       '2 h', '1 d'; ms without one), default 0
//	fields.<col>.length    a random string's or BYTEA's length (default 100,
//	                       at most the type's length; CHAR(n) and VARCHAR(n)
//	                       default to min(n, 100))
//	fields.<col>.null-rate probability of NULL, 0 to 1 (default 0; must be 0
//	                       for a NOT NULL column)
//
// Values are SQL text of the column's type (types.ParseText, UTC for
// TIMESTAMPTZ). Defaults of min and max: the type's whole range for
// integers; [0, 1) for floats; [0, 999999.99...] for NUMERIC (fewer
// integer digits when p-s is smaller; an unconstrained NUMERIC takes the
// scale of its options, else 2); 00:00:00 to 23:59:59 for TIME. A DATE or
// TIMESTAMP(TZ) column without min and max is a time column (see Time);
// given only one of them, the other defaults to 2000-01-01 (00:00:00) or
// 2030-12-31 (23:59:59).
//
// An unknown option, an option of a column that does not exist, an option
// that does not apply to the column's kind or type (min on a string, start
// on a random column, a sequence of timestamps, max-past beside min or max
// or on another type), a bad value, a range with min above max: each gives an error wrapping base.ErrInvalidArgument that
// names the option.
package datagen
