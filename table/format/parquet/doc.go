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
// writer; DecodeBlock reads the pages of common types straight from their
// decoded buffers into the block's vectors and encodes a lone BIGINT key
// inline. Encode and Decode are the same over []record.KV.
package parquet
