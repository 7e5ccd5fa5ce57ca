// Package types owns Strata's data model: the SQL types (Type, Kind), their
// values (Datum), rows and row kinds (Row, RowKind), the columnar batch that
// operators exchange (Chunk), the exact row codec, and the memcomparable key
// encoding used for state keys and table-store keys.
//
// # Semantics
//
// Types and values follow PostgreSQL: the same type names and modifiers
// (NUMERIC(p,s), VARCHAR(n), TIMESTAMP(p), ...), the same text input and
// output formats, the same comparison rules (NaN equals NaN and sorts above
// every number; '1 mon' equals '30 days'; CHAR ignores trailing spaces;
// jsonb's ordering) and the same casts with the same errors. Text compares
// bytewise, which is Postgres's C collation. NUMERIC is an exact decimal
// (github.com/cockroachdb/apd/v3, which also carries NaN and ±Infinity as
// Postgres 14+ does), never a float.
//
// NULL is the zero Datum. Compare orders NULL first (keys and ORDER BY
// NULLS FIRST); CompareSQL gives SQL's unknown instead.
//
// # Encodings
//
// Two byte encodings, with specs beside the code:
//
//   - The row codec (codec.go, codec.md) is exact: DecodeRow(AppendRow(r))
//     gives r back bit for bit. It carries a version byte and a column
//     count, so rows written before a nullable column was added still decode.
//   - The key encoding (keyenc.go, keyenc.md) is memcomparable: byte order
//     equals Compare order, NULLs first (invariant keyenc-order), and values
//     equal under Compare encode identically (invariant keyenc-canonical).
//
// Both invariants are property-tested over every type with
// pgregory.net/rapid (types_rapid_test.go).
//
// # Ownership
//
// Datums and Rows are values. A Chunk belongs to one goroutine at a time:
// putting it on a queue hands it over.
package types
