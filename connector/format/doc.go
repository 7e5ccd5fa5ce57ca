// Package format decodes the bytes of external records into rows of a
// table's columns, for the connectors that read files and logs
// (connector/file, connector/kafka). A Decoder turns one record (a Kafka
// message value, a line of a file) into zero or more changes, each a row
// kind and a row: an append-only format gives +I rows, a CDC envelope gives
// +I, -U, +U and -D (Flink's changelog formats: json, debezium-json, csv,
// avro).
//
// # Formats
//
//   - json: one JSON object per record; a column takes the field of its
//     name (an exact match first, else the one field whose name equals it
//     ignoring case). Fields that name no column are ignored. A missing
//     field or a JSON null is NULL; NULL in a NOT NULL column is an error.
//     Values convert by the column's type (Value conversion below).
//   - debezium-json: the Debezium change-event envelope, either whole
//     ({"schema": ..., "payload": {...}}) or bare ({"before", "after",
//     "op", ...}). op "c" (create) and "r" (snapshot read) give +I of
//     after; "u" gives -U of before then +U of after (only +U when before
//     is null, as Postgres sends it without REPLICA IDENTITY FULL); "d"
//     gives -D of before. A null value (the Kafka tombstone Debezium writes
//     after a delete) or a null payload gives no change. Any other op is an
//     error that names it. When the envelope carries its schema, the
//     Debezium semantic type names of integer fields choose the unit of
//     temporal values (io.debezium.time.Date days, Timestamp milliseconds,
//     MicroTimestamp microseconds, NanoTimestamp nanoseconds), and a
//     Kafka Connect Decimal field (Debezium's default for NUMERIC columns:
//     the base64 of the unscaled value's big-endian two's complement) is
//     read exactly with the scale its schema gives. Without the schema
//     such a field is an error in a numeric column (the base64 text is no
//     number): configure Debezium with decimal.handling.mode=string, or
//     keep the schema in the envelope.
//   - csv: one delimited record per line, the delimiter (default ",") and
//     quote (default '"') configurable; a quoted field may hold delimiters,
//     doubled quotes and line breaks. Fields map to columns in order, or by
//     name through a header record (CSV.WithHeader). As in Postgres's COPY
//     ... CSV, an empty unquoted field is NULL and "" is the empty string.
//     A record with too few or too many fields is an error.
//   - avro: Avro binary data of a writer schema given inline as JSON
//     (option avro.schema), decoded with github.com/hamba/avro/v2; the
//     record's fields map to columns by name as in json. With
//     avro.wire='confluent' each value starts with the Confluent schema
//     registry header (a zero byte and a four-byte schema id), which is
//     checked and skipped; the schema itself still comes from avro.schema.
//
// # Value conversion
//
// Text goes through types.ParseText with Postgres's input rules, so a
// string "12.50" fills a NUMERIC(10,2) exactly and "2024-01-02 03:04:05"
// a TIMESTAMP. JSON numbers keep their literal text (never a float64 on
// the way), so 0.1 is exactly 0.1 in a NUMERIC column and an integer
// column refuses 1.5. A boolean fills a BOOLEAN column, and a string
// column as "true" or "false"; an object or array fills a JSONB column
// (or a string column with its JSON text). A number in a DATE column
// counts days since 1970-01-01 and in a TIMESTAMP or TIMESTAMPTZ column
// milliseconds since 1970-01-01 00:00:00 UTC, unless a Debezium schema
// says otherwise. Avro values convert the same way from their Go form
// (logical types included: timestamp-millis and -micros, date, decimal,
// uuid).
//
// # Errors
//
// A Decoder does no I/O, so every error it returns is about the record:
// it wraps base.ErrInvalidArgument (or base.ErrOutOfRange for a value
// outside its type) and names the field and the value, e.g.
// `field "price": value "abc": invalid input syntax for type numeric:
// "abc"`. The caller adds where the record was (file and line, topic,
// partition and offset) and applies its error mode (Errors).
//
// # Invariants
//
//   - decode-atomic: Decode returns either every change of a record or an
//     error and none; a bad record never leaves half of itself behind.
//   - decode-pure: the changes of a record depend only on its bytes and
//     the Decoder's configuration, so re-reading a record after a restore
//     gives the same rows.
package format
