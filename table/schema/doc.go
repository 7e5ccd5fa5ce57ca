// Package schema holds a table's schema: its columns with stable field IDs,
// its primary key and its options, the versioned schema files that store
// them, and schema evolution by adding nullable columns.
//
// # Concepts
//
// A schema is immutable and numbered from 0. Evolving a table writes
// schema-<id+1> beside the older ones (Paimon's SchemaManager); data files
// record the schema id they were written with, and readers map their
// columns to the current schema by field ID, filling columns added later
// with NULL. Only adding nullable columns is supported, so an old file's
// columns are always a subset of the new schema's.
//
// # Invariants
//
//   - [field-id-stable] A field keeps its ID in every later schema; IDs of
//     new fields are above every ID used before (HighestFieldID).
//   - [schema-publish-once] schema-<id> is written with put-if-absent, so
//     two concurrent evolutions cannot both claim the same id.
//   - [schema-ids-dense] schema-<id> is published only while
//     schema-<id-1> exists (Commit checks it), and schema files are
//     removed only with the whole table, so the ids of a table are
//     0..n-1. A Manager relies on it: it lists the directory once and then
//     finds new schemas by probing the ids after the newest it knows.
//   - [key-not-null] primary-key columns are NOT NULL, unless the option
//     primary-key.nullable is true (OptionNullableKey).
//
// The file format is in ../FORMAT.md ("Schema files").
package schema
