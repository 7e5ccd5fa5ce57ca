// Package duckdb embeds DuckDB (github.com/duckdb/duckdb-go/v2, DuckDB
// 1.5) as Strata's OLAP engine and test oracle: batch queries over a
// table's Parquet files, and the independent re-computation of a view's SQL
// that tests and `strata verify` compare streaming results with.
//
// The package converts DuckDB's result values to Strata's types.Datum so
// results compare with types.Compare: BOOLEAN, the integer types (unsigned
// and HUGEINT widen to the next signed type or to NUMERIC), FLOAT, DOUBLE,
// DECIMAL(p,s) as NUMERIC(p,s), VARCHAR as TEXT, BLOB as BYTEA, DATE, TIME,
// TIMESTAMP (any unit) as TIMESTAMP(6), TIMESTAMPTZ, INTERVAL, UUID and
// JSON as JSONB. Other types (lists, structs, maps) are an error naming the
// column.
//
// DuckDB is opened with extension auto-install and auto-load off: this
// machine has no network, and parquet, json and icu are built in.
//
// Linking DuckDB costs about a minute of build time, so only the packages
// that need it import this one.
package duckdb
