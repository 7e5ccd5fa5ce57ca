package server

import (
	"testing"
)

// TestViewKeysOfSemiJoinsAndUnions: views whose key comes through a
// decorrelated EXISTS or IN (the outer table's key) or through UNION ALL
// of inputs told apart by a literal column are accepted, stay right
// through inserts, updates and deletes on both sides, and verify.
func TestViewKeysOfSemiJoinsAndUnions(t *testing.T) {
	s, c := startConn(t)
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
	wantVerified(t, s, "ex", "inq", "un")
}

// TestAppendOnlyViews: a view without a unique key whose changes are
// insert-only (a filter and projection over an append table) is stored as
// an append table, can be read by other views, and verifies; one whose
// input has updates is a multiset view.
func TestAppendOnlyViews(t *testing.T) {
	s, c := startConn(t)
	exec(t, c, "CREATE TABLE clicks (user_id INT, url TEXT, ms INT)")
	exec(t, c, "CREATE TABLE users (id INT PRIMARY KEY, name TEXT)")
	exec(t, c, "CREATE MATERIALIZED VIEW slow AS SELECT user_id, url, ms / 1000 AS secs FROM clicks WHERE ms >= 1000")
	exec(t, c, "CREATE MATERIALIZED VIEW slow_per_user AS SELECT user_id, count(*) AS n, sum(secs) AS secs FROM slow GROUP BY user_id")
	exec(t, c, "INSERT INTO clicks VALUES (1, '/a', 1500), (1, '/a', 1500), (2, '/b', 20), (2, '/c', 3000)")
	exec(t, c, "INSERT INTO clicks VALUES (1, '/d', 999), (3, '/e', 1000)")
	wantRows(t, c, "SELECT user_id, url, secs FROM slow ORDER BY user_id, url", "1|/a|1\n1|/a|1\n2|/c|3\n3|/e|1")
	wantRows(t, c, "SELECT user_id, n, secs FROM slow_per_user ORDER BY user_id", "1|2|2\n2|1|3\n3|1|1")
	// An inner join of two append tables only inserts too.
	exec(t, c, "CREATE TABLE pages (url TEXT, owner TEXT)")
	exec(t, c, "CREATE MATERIALIZED VIEW owned AS SELECT c.user_id, c.url, p.owner FROM clicks c JOIN pages p ON c.url = p.url")
	exec(t, c, "INSERT INTO pages VALUES ('/a', 'ann'), ('/e', 'eve'), ('/e', 'ed')")
	exec(t, c, "INSERT INTO clicks VALUES (4, '/e', 5)")
	wantRows(t, c, "SELECT user_id, url, owner FROM owned ORDER BY user_id, owner", "1|/a|ann\n1|/a|ann\n3|/e|ed\n3|/e|eve\n4|/e|ed\n4|/e|eve")
	// A semi-join of append tables only inserts as well.
	exec(t, c, "CREATE MATERIALIZED VIEW owned_clicks AS SELECT user_id, url FROM clicks WHERE url IN (SELECT url FROM pages)")
	wantRows(t, c, "SELECT user_id, url FROM owned_clicks ORDER BY user_id, url", "1|/a\n1|/a\n3|/e\n4|/e")
	exec(t, c, "INSERT INTO pages VALUES ('/c', 'cy')")
	wantRows(t, c, "SELECT user_id, url FROM owned_clicks ORDER BY user_id, url", "1|/a\n1|/a\n2|/c\n3|/e\n4|/e")
	// A page already there changes no group: nothing to retract.
	exec(t, c, "INSERT INTO pages VALUES ('/a', 'again')")
	exec(t, c, "INSERT INTO clicks VALUES (5, '/a', 7)")
	wantRows(t, c, "SELECT user_id, url FROM owned_clicks ORDER BY user_id, url", "1|/a\n1|/a\n2|/c\n3|/e\n4|/e\n5|/a")
	wantVerified(t, s, "slow", "slow_per_user", "owned", "owned_clicks")
	// A keyless view over a keyed table retracts: it is a multiset view,
	// equal names as often as they occur, the hidden count never shown.
	exec(t, c, "CREATE MATERIALIZED VIEW names AS SELECT name FROM users")
	exec(t, c, "INSERT INTO users VALUES (1, 'ann'), (2, 'ann'), (3, 'bo')")
	exec(t, c, "UPDATE users SET name = 'bo' WHERE id = 1")
	exec(t, c, "DELETE FROM users WHERE id = 3")
	wantRows(t, c, "SELECT * FROM names ORDER BY name", "ann\nbo")
	// psql's \d reads pg_attribute.
	wantRows(t, c, "SELECT a.attname FROM pg_catalog.pg_attribute a JOIN pg_catalog.pg_class r ON a.attrelid = r.oid WHERE r.relname = 'names' AND a.attnum > 0", "name")
	wantVerified(t, s, "names")
}

// TestVolatileFunctionsInViews: a view cannot call now() or random():
// its rows would depend on when they were processed.
func TestVolatileFunctionsInViews(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE ev (id INT PRIMARY KEY, ts TIMESTAMPTZ)")
	for _, q := range []string{
		"CREATE MATERIALIZED VIEW v1 AS SELECT id, now() AS seen FROM ev",
		"CREATE MATERIALIZED VIEW v2 AS SELECT id FROM ev WHERE random() < 0.5",
		"CREATE MATERIALIZED VIEW v3 AS SELECT count(*) AS n FROM ev WHERE ts > current_timestamp - INTERVAL '1 hour'",
	} {
		wantErr(t, c, q, "0A000", "when a row is processed")
	}
	wantRows(t, c, "SHOW MATERIALIZED VIEWS", "")
}
