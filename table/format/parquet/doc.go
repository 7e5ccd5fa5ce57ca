// Package parquet encodes the table store's data files as Apache Parquet,
// so that any Parquet reader (DuckDB, Spark, pyarrow) can open them.
//
// # Layout of a data file
//
// One column per table column, named as the column, plus two system
// columns as in Paimon's data files:
//
//	_SEQUENCE_NUMBER  INT64 (required)    the record's sequence number
//	_VALUE_KIND       INT32 as INT(8)     the row kind byte: 0 +I, 1 -U, 2 +U, 3 -D
//
// Key columns are required, the others optional. The Parquet key-value
// metadata holds "strata.format.version" (FormatVersion) and
// "strata.schema.id". Parquet orders the columns of a group by name; readers
// find columns by name, never by position.
//
// Type mapping (SQL → Parquet): BOOLEAN → BOOLEAN; SMALLINT → INT(16);
// INTEGER → INT(32); BIGINT → INT(64); REAL → FLOAT; DOUBLE → DOUBLE;
// CHAR/VARCHAR/TEXT → STRING; NUMERIC → STRING holding the exact decimal
// text (a Parquet DECIMAL cannot hold an unconstrained NUMERIC; an
// annotated DECIMAL for NUMERIC(p,s) is future work); UUID → UUID; BYTEA →
// BYTE_ARRAY; DATE → DATE; TIME → TIME(MICROS); TIMESTAMP →
// TIMESTAMP(MICROS, not UTC-adjusted); TIMESTAMPTZ → TIMESTAMP(MICROS,
// UTC-adjusted); INTERVAL → FIXED_LEN_BYTE_ARRAY(16): months int32, days
// int32, micros int64, little-endian (Parquet's INTERVAL has only
// milliseconds); JSONB → JSON.
//
// Encodings: integer columns (the two system columns, SMALLINT, INTEGER,
// BIGINT, DATE, TIME, TIMESTAMP, TIMESTAMPTZ) are DELTA_BINARY_PACKED and
// uncompressed; the others keep parquet-go's default encoding
// (DELTA_LENGTH_BYTE_ARRAY for strings and byte arrays, PLAIN otherwise)
// and are Snappy-compressed (cheaper to write than zstd; every Parquet
// reader supports it), with the faster of klauspost/compress's two Snappy
// block encoders. All of these are standard
// Parquet that DuckDB, Spark, pyarrow and parquet-go read. Files written
// before integer columns were delta-encoded have PLAIN Snappy pages
// there; readers take the encoding and codec of each column chunk from
// the file, so both kinds read the same. Files are written whole into
// memory and published with put-if-absent; their size and CRC32C go into
// the manifest entry that adds them.
//
// Min/max statistics and null counts are written per column chunk and in
// the page index (column and offset indexes), not in data page headers
// (the Parquet format deprecates those in favour of the page index).
//
// In memory a file's records are a record.Block (columns of plain
// integers, floats and strings, keys one after another): EncodeBlock fills
// each column's values for a batch of rows in a loop of its own type,
// straight from the block's vector, then hands the batch to the column's
// writer. Encode and Decode are the same over []record.KV.
//
// # Reading: the direct path and the general one
//
// DecodeBlock opens the file with parquet-go (footer, schema, metadata)
// and decodes each column chunk, the chunks of a row group in parallel,
// by one of two paths:
//
//   - directChunk, for what this package writes: version 2 data pages,
//     integers (BIGINT, INTEGER, SMALLINT, DATE, TIME, TIMESTAMP[TZ], the
//     system columns) DELTA_BINARY_PACKED or PLAIN, text
//     DELTA_LENGTH_BYTE_ARRAY, uncompressed or Snappy, required or
//     optional. It walks the chunk's page headers itself and decodes each
//     page from the file's bytes straight into the block's vectors
//     (parquet-go's delta and level decoders do the unpacking); a text
//     page is decompressed into a buffer of its own that its values then
//     share, so the text bytes are written once, by the decompressor.
//   - the general path, parquet-go's page reader, for everything else
//     (dictionaries, version 1 pages, other codecs and types, files of
//     other writers): fastPage copies the values of common types out of
//     its decoded pages, other values go through parquet.Value and a
//     datum. directChunk refuses a chunk (errNotDirect) before writing
//     anything, or after clearing what it wrote, so the general path
//     starts clean.
//
// Both give the same block for the same file ([direct-same], tested by
// TestDirectChunk against the rows written); both check value counts,
// row kinds and lengths and report a malformed page as corruption.
//
// Snappy pages on the direct path are decoded by klauspost/compress's
// s2.Decode into a buffer of their own, which the text values then point
// into. The keys of a lone BIGINT key column are encoded inline after
// decoding.
//
// # Writing: encode buffers
//
// A file is encoded into a growing in-memory buffer and copied out at its
// exact size. The buffers are reused through a free list bounded in bytes
// (invariant bounded-pool): it keeps buffers of at most 8 MiB, 32 MiB of
// them in all, and a file that outgrew that is handed out in its own
// buffer instead of copied, so the pool never holds more than its bound
// however many tables flush or compact at once.
//
// Tried and dropped: dictionary-encoding text columns whose values repeat
// (chosen per file from a sample, falling back to PLAIN past 1 MiB, as
// parquet-mr does). In a run of the table bench it made our scan of its
// files twice as fast per CPU second, and DuckDB's scan of the same files
// nearly four times as fast
// (a dictionary vector: the length of the one padding value is computed
// once), so it moved the comparison the wrong way and was left out; it
// remains a good choice for low-cardinality columns read by other engines.
package parquet
