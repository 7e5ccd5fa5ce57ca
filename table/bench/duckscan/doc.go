// Package duckscan measures DuckDB's read_parquet over the table store's
// compacted data files, the reference `strata bench table` compares our
// merge-on-read scan with (duckdb_scan_rows_per_sec). It is a package of
// its own because DuckDB is costly to build and link.
package duckscan
