package server

import (
	"context"
	"slices"
	"testing"
)

// TestParameterTypes: over the extended protocol, parameters take the
// types Postgres gives them from their context (a column compared with
// them, the column an UPDATE assigns them to), so drivers encode Go
// values without casts in the SQL.
func TestParameterTypes(t *testing.T) {
	_, c := startConn(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE acct (id INT PRIMARY KEY, n BIGINT, amount NUMERIC(10,2), ok BOOLEAN)")
	exec(t, c, "INSERT INTO acct VALUES (1, 10, 2.50, true), (2, 20, 7.25, false)")
	for _, q := range []struct {
		sql  string
		oids []uint32
	}{
		{"SELECT count(*) FROM acct WHERE amount > $1", []uint32{1700}},
		{"SELECT count(*) FROM acct WHERE id > $1", []uint32{23}},
		{"UPDATE acct SET n = $1 WHERE id = $2", []uint32{20, 23}},
		{"UPDATE acct SET amount = $1, ok = $2 WHERE id = $3", []uint32{1700, 16, 23}},
	} {
		sd, err := c.Prepare(ctx, "", q.sql)
		if err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
		if !slices.Equal(sd.ParamOIDs, q.oids) {
			t.Errorf("%s: parameter OIDs %v, want %v", q.sql, sd.ParamOIDs, q.oids)
		}
	}
	if _, err := c.Exec(ctx, "UPDATE acct SET n = $1, ok = $2 WHERE id = $3", 99, false, 1); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM acct WHERE amount > $1 AND n = $2", 1, 99).Scan(&n); err != nil || n != 1 {
		t.Fatalf("count: %d, %v", n, err)
	}
	// A parameter compared with a NUMERIC(10,2) column keeps its own
	// precision, as in Postgres: 2.495 < 2.50 and 7.251 > 7.25.
	if err := c.QueryRow(ctx, "SELECT count(*) FROM acct WHERE amount > $1", "2.495").Scan(&n); err != nil || n != 2 {
		t.Fatalf("amount > 2.495: %d, %v", n, err)
	}
	if err := c.QueryRow(ctx, "SELECT count(*) FROM acct WHERE amount = $1", "7.251").Scan(&n); err != nil || n != 0 {
		t.Fatalf("amount = 7.251: %d, %v", n, err)
	}
	// Wide values in pgx's binary numeric format (one base-10000 digit
	// of a high weight) decode.
	var big string
	if err := c.QueryRow(ctx, "SELECT count(*) FROM acct WHERE amount > $1", 1e20).Scan(&n); err != nil || n != 0 {
		t.Fatalf("amount > 1e20: %d, %v", n, err)
	}
	if err := c.QueryRow(ctx, "SELECT ($1::numeric)::text", -1e300).Scan(&big); err != nil || len(big) != 302 {
		t.Fatalf("SELECT -1e300::numeric: %q, %v", big, err)
	}
	// An assignment rounds to the column, as in Postgres.
	if _, err := c.Exec(ctx, "UPDATE acct SET amount = $1 WHERE id = $2", "12.345", 2); err != nil {
		t.Fatal(err)
	}
	wantRows(t, c, "SELECT amount FROM acct WHERE id = 2", "12.35")
}
