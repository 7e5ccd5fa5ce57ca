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
// strings are length random lower-case letters (CHAR(n) padded to n);
// BYTEA is length random bytes; UUID is a random version-4 UUID; BOOLEAN
// is true or false. With a null-rate, each value is NULL with that
// probability. INTERVAL and JSONB columns are refused.
//
// The rows end at the row count (number-of-rows), or where the first
// sequence with an end runs out, whichever comes first; with neither, the
// source does not end.
//
// # Invariants
//
//   - row-purity: row n depends only on the seed, n and the columns'
//     configuration. Every value has its own pseudo-random stream,
//     SplitMix64 started from a mix of the seed, the column's position
//     and n, so a column's values do not even depend on the other
//     columns' options. A Reader resumes at any row without generating
//     the ones before.
//   - transaction-purity: the transaction at a position is rows
//     [pos, e) with e decided by pos, the chunk size, the row limit and the
//     rate only, never by the clock, so a replay after a restore meets
//     the same transaction boundaries (connector/ingest, Replay).
//
// # Rate
//
// With a rate R > 0 rows/s, a transaction holds at most max(1, R/100)
// rows (10 ms), and Next returns nil until its last row is due: row n is
// due (n-a)/R seconds after the Reader's first call, a being that call's
// position. A consumer that falls behind is never held back.
//
// # Options
//
// ParseOptions reads a WITH clause for a given column list, with Flink's
// option names:
//
//	connector              datagen (optional; another value is an error)
//	rows-per-second        rate; 0 = as fast as possible (default 10000, as in Flink)
//	number-of-rows         row count; 0 or absent = unbounded
//	seed                   unsigned 64-bit seed (default 0)
//	fields.<col>.kind      random (default) or sequence
//	fields.<col>.start     a sequence's first value (required for a sequence)
//	fields.<col>.end       a sequence's last value (default: the type's largest,
//	                       for VARCHAR(n) the largest n-digit number)
//	fields.<col>.min       a random column's smallest value
//	fields.<col>.max       a random column's largest value
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
// scale of its options, else 2); 2000-01-01 to 2030-12-31 for DATE and
// TIMESTAMP(TZ) (to 23:59:59 of the last day); 00:00:00 to 23:59:59 for TIME.
//
// An unknown option, an option of a column that does not exist, an option
// that does not apply to the column's kind or type (min on a string, start
// on a random column, a sequence of timestamps), a bad value, a range with
// min above max: each gives an error wrapping base.ErrInvalidArgument that
// names the option.
package datagen
