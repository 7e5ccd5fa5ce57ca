package server

import (
	"testing"
	"time"
)

// TestNullableViewKeyIsNotAPrimaryKey creates a view grouped by a column
// that holds NULL: DESCRIBE, pg_attribute and \d's catalog queries must
// not claim its key column NOT NULL nor show a primary key (a client or
// ORM would trust them); the key shows as PostgreSQL 15's UNIQUE NULLS NOT
// DISTINCT, the semantics of a view's key (NULL keys are one group). A
// view's NOT NULL is not derived through its query, so a view grouped by a
// NOT NULL column shows the same, and a table keeps its primary key.
func TestNullableViewKeyIsNotAPrimaryKey(t *testing.T) {
	_, c := startConn(t)
	for _, q := range []string{
		"CREATE TABLE ord (id BIGINT PRIMARY KEY, cid BIGINT, shop TEXT NOT NULL)",
		"CREATE MATERIALIZED VIEW per_cid AS SELECT cid, count(*) AS n FROM ord GROUP BY cid",
		"CREATE MATERIALIZED VIEW per_shop AS SELECT shop, count(*) AS n FROM ord GROUP BY shop",
		"INSERT INTO ord VALUES (1, NULL, 'a'), (2, 7, 'a'), (3, NULL, 'b')",
	} {
		exec(t, c, q)
	}
	waitRows(t, c, "SELECT cid, n FROM per_cid ORDER BY cid NULLS FIRST", "NULL|2\n7|1", 20*time.Second)
	wantRows(t, c, "DESCRIBE per_cid", "cid|BIGINT|true|true\nn|BIGINT|true|false")
	wantRows(t, c, "SELECT attname, attnotnull FROM pg_attribute WHERE attrelid = 'per_cid'::regclass AND attnum > 0 ORDER BY attnum", "cid|f\nn|f")
	for _, v := range []string{"per_cid", "per_shop"} {
		wantRows(t, c, "SELECT i.indisprimary, i.indisunique, i.indnullsnotdistinct FROM pg_index i WHERE i.indrelid = '"+v+"'::regclass", "f|t|t")
	}
	wantRows(t, c, "SELECT conname, contype FROM pg_constraint WHERE conrelid = 'per_cid'::regclass", "per_cid_key|u")
	wantRows(t, c, "SELECT i.indisprimary, i.indnullsnotdistinct FROM pg_index i WHERE i.indrelid = 'ord'::regclass", "t|f")
	wantRows(t, c, "SELECT attname, attnotnull FROM pg_attribute WHERE attrelid = 'ord'::regclass AND attnum > 0 ORDER BY attnum", "id|t\ncid|f\nshop|t")
}
