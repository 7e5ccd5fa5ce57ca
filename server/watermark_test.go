package server

import "testing"

// TestWatermarkOnKeyedTableRefused: a WATERMARK on a table with a primary
// key is refused at CREATE (0A000) and creates nothing; on a table
// without a key it is accepted.
func TestWatermarkOnKeyedTableRefused(t *testing.T) {
	_, c := startConn(t)
	wantErr(t, c, "CREATE TABLE kt (id INT PRIMARY KEY, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)", "0A000", "belongs on a table without a key")
	wantErr(t, c, "SELECT * FROM kt", "42P01", "kt")
	exec(t, c, "CREATE TABLE st (id INT, ts TIMESTAMP, WATERMARK FOR ts AS ts - INTERVAL '5' SECOND)")
	wantRows(t, c, "SELECT count(*) FROM st", "0")
}
