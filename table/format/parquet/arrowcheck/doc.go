// Package arrowcheck holds only a test: every data and changelog file the
// table store writes must open in an independent Parquet implementation,
// Apache Arrow's Go reader (arrow-go's pqarrow), with the expected column
// names, types, row counts and values. It lives apart so that the other
// packages' tests do not link arrow-go. Package duckdbcheck runs the same
// kind of check through DuckDB.
package arrowcheck
