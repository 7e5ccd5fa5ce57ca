// Package duckdbcheck holds only a test: DuckDB's read_parquet opens every
// data and changelog file the table store writes, with the expected row
// counts and values. It lives apart because DuckDB is costly to build and
// link; the other packages' tests never link it.
package duckdbcheck
