package server

import "testing"

// TestSystemTableScalarSubquery: a scalar subquery over a system table
// that computes no aggregate runs as it does over user tables, its
// result typed and named as PostgreSQL names it.
func TestSystemTableScalarSubquery(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE dg (a INT)")
	exec(t, c, "INSERT INTO dg VALUES (1)")
	wantRows(t, c, "SELECT (SELECT committed_epoch FROM strata_catalog.tables WHERE name='dg') > 0",
		"t")
	wantRows(t, c, "SELECT (SELECT name FROM strata_catalog.tables WHERE name = 'dg'), (SELECT name FROM strata_catalog.tables WHERE name = 'none')",
		"dg|NULL")
	if got := columnNames(t, c, "SELECT (SELECT name FROM strata_catalog.tables WHERE name = 'dg')"); got != "name" {
		t.Fatalf("column name %s", got)
	}
	// The same with the extended protocol and a parameter.
	var ep int64
	if err := c.QueryRow(t.Context(), "SELECT (SELECT committed_epoch FROM strata_catalog.tables WHERE name = $1)", "dg").Scan(&ep); err != nil || ep <= 0 {
		t.Fatalf("extended protocol: %d, %v", ep, err)
	}
	exec(t, c, "CREATE TABLE dh (a INT)")
	wantErr(t, c, "SELECT (SELECT name FROM strata_catalog.tables)", "more than one row")
}
