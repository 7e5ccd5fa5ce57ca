package server

import (
	"context"
	"testing"
)

// TestViewKeysOfSemiJoinsAndUnions: views whose key comes through a
// decorrelated EXISTS or IN (the outer table's key) or through UNION ALL
// of inputs told apart by a literal column are accepted, stay right
// through inserts, updates and deletes on both sides, and verify.
func TestViewKeysOfSemiJoinsAndUnions(t *testing.T) {
	s := startTest(t, t.TempDir())
	defer s.Close()
	c := connect(t, s)
	defer c.Close(context.Background())
	exec(t, c, "CREATE TABLE cust (id INT PRIMARY KEY, name TEXT)")
	exec(t, c, "CREATE TABLE ord (id INT PRIMARY KEY, cust_id INT, amount INT)")
	exec(t, c, "CREATE MATERIALIZED VIEW ex AS SELECT id, amount FROM ord o WHERE EXISTS (SELECT 1 FROM cust c WHERE c.id = o.cust_id)")
	exec(t, c, "CREATE MATERIALIZED VIEW inq AS SELECT o.id, o.cust_id FROM ord o WHERE o.cust_id IN (SELECT id FROM cust WHERE name <> 'x')")
	exec(t, c, "CREATE MATERIALIZED VIEW un AS SELECT id, 'order' AS kind, amount AS n FROM ord UNION ALL SELECT id, 'customer' AS kind, 0 AS n FROM cust")
	exec(t, c, "INSERT INTO cust VALUES (1, 'a'), (2, 'x'), (3, 'c')")
	exec(t, c, "INSERT INTO ord VALUES (1, 1, 10), (2, 2, 20), (3, 4, 30), (4, 3, 40)")
	exec(t, c, "UPDATE ord SET cust_id = 1 WHERE id = 3")
	exec(t, c, "DELETE FROM cust WHERE id = 3")
	exec(t, c, "UPDATE cust SET name = 'b' WHERE id = 2")
	for _, q := range []struct{ sql, want string }{
		{"SELECT id, amount FROM ex ORDER BY id", "1|10\n2|20\n3|30"},
		{"SELECT id, cust_id FROM inq ORDER BY id", "1|1\n2|2\n3|1"},
		{"SELECT kind, id, n FROM un ORDER BY kind, id", "customer|1|0\ncustomer|2|0\norder|1|10\norder|2|20\norder|3|30\norder|4|40"},
	} {
		if got := rowsText(t, c, q.sql); got != q.want {
			t.Fatalf("%s:\n%s\nwant\n%s", q.sql, got, q.want)
		}
	}
	for _, v := range []string{"ex", "inq", "un"} {
		if res := Verify(context.Background(), s.Engine, v, 0); !res.OK || res.Error != "" {
			t.Fatalf("verify %s: %+v", v, res)
		}
	}
}
