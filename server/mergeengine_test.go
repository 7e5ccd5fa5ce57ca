package server

import (
	"testing"
)

// TestDMLOnMergeEngineTables: UPDATE and DELETE on tables whose merge
// engine is not deduplicate are refused up front (0A000), so no
// retraction the table refuses reaches its DML job, and INSERTs go on
// working.
func TestDMLOnMergeEngineTables(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE ag (id INT PRIMARY KEY, m INT) WITH ('merge-engine' = 'aggregation', 'fields.m.aggregate-function' = 'max')")
	exec(t, c, "CREATE TABLE fr (id INT PRIMARY KEY, v TEXT) WITH ('merge-engine' = 'first-row')")
	exec(t, c, "INSERT INTO ag VALUES (1, 10)")
	exec(t, c, "INSERT INTO fr VALUES (1, 'first')")
	for _, q := range []string{"DELETE FROM ag WHERE id = 1", "UPDATE ag SET m = 3 WHERE id = 1", "UPDATE fr SET v = 'upd' WHERE id = 1", "DELETE FROM fr"} {
		wantErr(t, c, q, "0A000", "merge-engine")
	}
	wantErr(t, c, "CREATE TABLE pu (id INT, v TEXT) WITH ('merge-engine' = 'partial-update')", "42P16")
	exec(t, c, "INSERT INTO ag VALUES (1, 5), (2, 7)")
	exec(t, c, "INSERT INTO fr VALUES (1, 'second'), (2, 'other')")
	wantRows(t, c, "SELECT id, m FROM ag ORDER BY id", "1|10\n2|7")
	wantRows(t, c, "SELECT id, v FROM fr ORDER BY id", "1|first\n2|other")
}
