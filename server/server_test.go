package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/engine"
)

// TestSQLOverTheWire drives DDL, DML, views, SHOW/DESCRIBE/EXPLAIN and
// errors through a real wire connection, restarts the server and checks
// that tables and views come back and keep updating.
func TestSQLOverTheWire(t *testing.T) {
	dir := t.TempDir()
	s := startTest(t, dir)
	c := connect(t, s)
	for _, q := range []string{
		"CREATE TABLE orders (id BIGINT PRIMARY KEY, customer TEXT NOT NULL, amount NUMERIC(10,2)) WITH (bucket = 2)",
		"CREATE MATERIALIZED VIEW per_customer AS SELECT customer, sum(amount) AS total, count(*) AS n FROM orders GROUP BY customer",
		"CREATE MATERIALIZED VIEW big AS SELECT customer, total FROM per_customer WHERE total > 10",
		"INSERT INTO orders VALUES (1, 'ann', 5.50), (2, 'bob', 12), (3, 'ann', 7.25)",
	} {
		exec(t, c, q)
	}
	waitView := func(c *pgx.Conn, q, want string) { t.Helper(); waitRows(t, c, q, want, 20*time.Second) }
	wantRows(t, c, "SELECT id, customer, amount FROM orders ORDER BY id", "1|ann|5.50\n2|bob|12.00\n3|ann|7.25")
	waitView(c, "SELECT customer, total, n FROM per_customer ORDER BY customer", "ann|12.75|2\nbob|12.00|1")
	waitView(c, "SELECT customer, total FROM big ORDER BY customer", "ann|12.75\nbob|12.00")
	// A consistent join across three levels: the sum over orders equals
	// the total in per_customer at the same version.
	got := rowsText(t, c, `SELECT o.s = p.s FROM (SELECT sum(amount) AS s FROM orders) o, (SELECT sum(total) AS s FROM per_customer) p`)
	if got != "t" {
		t.Fatalf("consistency check: %s", got)
	}
	wantRows(t, c, "SELECT count(*) FROM public.orders", "3")
	// ROLLBACK of a block that only read is fine; of one that wrote it
	// says it cannot undo the writes.
	exec(t, c, "BEGIN")
	rowsText(t, c, "SELECT count(*) FROM orders")
	exec(t, c, "ROLLBACK")
	exec(t, c, "BEGIN")
	exec(t, c, "INSERT INTO orders VALUES (9, 'cy', 1.00)")
	wantErr(t, c, "ROLLBACK", "0A000", "1 statement")
	exec(t, c, "DELETE FROM orders WHERE id = 9")
	if got := rowsText(t, c, "SHOW last_read_epoch"); got == "0" || got == "" {
		t.Fatalf("last_read_epoch %q after a read", got)
	}
	wantRows(t, c, "SHOW TABLES", "orders")
	wantRows(t, c, "SHOW MATERIALIZED VIEWS", "big\nper_customer")
	wantRows(t, c, "DESCRIBE orders", "id|BIGINT|false|true\ncustomer|TEXT|false|false\namount|NUMERIC(10,2)|true|false")
	// A table's primary-key column is NOT NULL in DESCRIBE as in \d and
	// information_schema; a view's key column is not claimed NOT NULL,
	// since a view's NOT NULL is not derived (TestNullableViewKeyIsNotAPrimaryKey).
	if got := rowsText(t, c, "DESCRIBE big"); !strings.HasPrefix(got, "customer|TEXT|true|true\n") {
		t.Fatalf("DESCRIBE big:\n%s", got)
	}
	wantRows(t, c, "SELECT attname, attnotnull FROM pg_attribute WHERE attrelid = 'big'::regclass AND attnum > 0 ORDER BY attnum", "customer|f\ntotal|f")
	wantRows(t, c, "SELECT column_name, is_nullable FROM information_schema.columns WHERE table_name = 'orders' ORDER BY ordinal_position", "id|NO\ncustomer|NO\namount|YES")
	if got := rowsText(t, c, "EXPLAIN CREATE MATERIALIZED VIEW x AS SELECT customer, count(*) AS n FROM orders GROUP BY customer"); !strings.Contains(got, "Aggregate") || !strings.Contains(got, "retract") {
		t.Fatalf("EXPLAIN:\n%s", got)
	}
	wantErr(t, c, "EXPLAIN ANALYZE SELECT count(*) FROM orders", "0A000")
	for _, c2 := range []struct{ q, code string }{
		{"SELECT nope FROM orders", "42703"},
		{"CREATE MATERIALIZED VIEW bad AS SELECT customer FROM nope", "42P01"},
		{"DROP TABLE orders", "2BP01"},
		{"INSERT INTO per_customer VALUES ('x', 1, 1)", "42809"},
		{"CREATE TABLE orders (id INT PRIMARY KEY)", "42P07"},
		{"SELEC 1", "42601"},
	} {
		_, err := c.Exec(context.Background(), c2.q, pgx.QueryExecModeSimpleProtocol)
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != c2.code {
			t.Errorf("%s: %v, want SQLSTATE %s", c2.q, err, c2.code)
		}
	}
	c.Close(context.Background())
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s, c = startConnAt(t, dir)
	exec(t, c, "UPDATE orders SET amount = amount + 1 WHERE customer = 'bob'")
	exec(t, c, "DELETE FROM orders WHERE id = 1")
	waitView(c, "SELECT customer, total, n FROM per_customer ORDER BY customer", "ann|7.25|1\nbob|13.00|1")
	waitView(c, "SELECT customer, total FROM big ORDER BY customer", "bob|13.00")
	exec(t, c, "DROP MATERIALIZED VIEW big")
	exec(t, c, "DROP TABLE orders CASCADE")
	wantRows(t, c, "SHOW TABLES", "")
}

// TestSystemTables reads strata_catalog's tables after creating a table
// and a view.
func TestSystemTables(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE a (k INT PRIMARY KEY, v INT)")
	exec(t, c, "CREATE MATERIALIZED VIEW b AS SELECT v, count(*) AS n FROM a GROUP BY v")
	exec(t, c, "INSERT INTO a VALUES (1, 1), (2, 1), (3, 2)")
	wantRows(t, c, "SELECT upstream, downstream, job FROM strata_catalog.lineage ORDER BY job", "NULL|a|dml-dev-a\na|b|view-dev-b")
	wantRows(t, c, "SELECT name, kind, writer, total_records FROM strata_catalog.tables WHERE name = 'a'", "a|table|dml-dev-a|3")
	wantRows(t, c, "SELECT name, status FROM strata_catalog.jobs ORDER BY name", "dml-dev-a|RUNNING\nview-dev-b|RUNNING")
	wantRows(t, c, "SELECT current_epoch > 0, interval_ms FROM strata_catalog.epochs", "t|20")
}

// TestParameters runs statements with $n parameters through the extended
// protocol (pgx prepares them) and database/sql-style placeholders.
func TestParameters(t *testing.T) {
	_, c := startConn(t)
	ctx := context.Background()
	exec(t, c, "CREATE TABLE p (k BIGINT PRIMARY KEY, name TEXT, score NUMERIC(6,2))")
	for i := int64(1); i <= 3; i++ {
		if _, err := c.Exec(ctx, "INSERT INTO p VALUES ($1, $2, $3)", i, fmt.Sprintf("n%d", i), fmt.Sprintf("%d.5", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Exec(ctx, "UPDATE p SET score = score + $1 WHERE k = $2", "1", int64(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "DELETE FROM p WHERE name = $1", "n3"); err != nil {
		t.Fatal(err)
	}
	var name, score string
	if err := c.QueryRow(ctx, "SELECT name, score::text FROM p WHERE k = $1", int64(2)).Scan(&name, &score); err != nil {
		t.Fatal(err)
	}
	if name != "n2" || score != "3.50" {
		t.Fatalf("got %s %s, want n2 3.50", name, score)
	}
	var n int64
	if err := c.QueryRow(ctx, "SELECT count(*) FROM p WHERE k >= $1 AND name LIKE $2", int64(1), "n%").Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("count %d, want 2", n)
	}
}

var loadDuration = flag.Duration("load.duration", 30*time.Second, "how long TestConsistencyUnderLoad runs its clients")

// TestConsistencyUnderLoad: while a writer changes the base table and two
// levels of views follow at 50 ms epochs, 8 clients run a query across all
// three levels continuously; every result must satisfy an invariant that
// holds only at a consistent cut (the base table's sum equals the total of
// the view two levels down).
func TestConsistencyUnderLoad(t *testing.T) {
	d := *loadDuration
	if testing.Short() {
		d = 3 * time.Second
	}
	s, err := Start(context.Background(), Options{
		Engine: engine.Options{Dir: t.TempDir(), EpochInterval: 50 * time.Millisecond, CheckpointInterval: 200 * time.Millisecond},
		Listen: "127.0.0.1:0", HTTP: "-",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := connect(t, s)
	defer c.Close(context.Background())
	exec(t, c, "CREATE TABLE acct (id INT PRIMARY KEY, branch INT NOT NULL, balance BIGINT NOT NULL)")
	exec(t, c, "CREATE MATERIALIZED VIEW per_branch AS SELECT branch, sum(balance) AS total, count(*) AS n FROM acct GROUP BY branch")
	exec(t, c, "CREATE MATERIALIZED VIEW bank AS SELECT sum(total) AS total, sum(n) AS accounts FROM per_branch")
	// The clients run for d and then until enough happened (at least 20
	// writes and 20 reads with data), up to 4d: on a loaded machine each
	// write waits for its epoch's commit through two levels of views.
	ctx, cancel := context.WithTimeout(context.Background(), 4*d)
	defer cancel()
	var wg sync.WaitGroup
	var writes, reads, withData atomic.Int64
	go func() {
		start := time.Now()
		for ctx.Err() == nil {
			if time.Since(start) >= d && writes.Load() >= 20 && withData.Load() >= 20 {
				cancel()
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	errs := make(chan error, 16)
	wg.Add(1)
	go func() { // the writer: inserts, transfers, deletes
		defer wg.Done()
		for i := 0; ctx.Err() == nil; i++ {
			var q string
			switch {
			case i < 50 || i%3 == 0:
				q = fmt.Sprintf("INSERT INTO acct VALUES (%d, %d, %d)", i%200, i%7, i)
			case i%3 == 1:
				q = fmt.Sprintf("UPDATE acct SET balance = balance + 5 WHERE branch = %d", i%7)
			default:
				q = fmt.Sprintf("DELETE FROM acct WHERE id = %d", (i*13)%200)
			}
			if _, err := c.Exec(ctx, q); err != nil {
				if ctx.Err() == nil {
					errs <- fmt.Errorf("%s: %w", q, err)
				}
				return
			}
			writes.Add(1)
		}
	}()
	const query = `SELECT a.s, a.k, b.total, b.accounts, p.s, p.k
FROM (SELECT coalesce(sum(balance), 0) AS s, count(*) AS k FROM acct) a,
     (SELECT coalesce(sum(total), 0) AS total, coalesce(sum(accounts), 0) AS accounts FROM bank) b,
     (SELECT coalesce(sum(total), 0) AS s, coalesce(sum(n), 0) AS k FROM per_branch) p`
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cc := connect(t, s)
			defer cc.Close(context.Background())
			for ctx.Err() == nil {
				var as, ak, bt, ba, ps, pk string
				err := cc.QueryRow(ctx, query).Scan(&as, &ak, &bt, &ba, &ps, &pk)
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
				if as != bt || bt != ps || ak != ba || ba != pk {
					errs <- fmt.Errorf("a read mixed epochs: acct sum %s count %s, bank %s/%s, per_branch %s/%s", as, ak, bt, ba, ps, pk)
					return
				}
				reads.Add(1)
				if ak != "0" {
					withData.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	t.Logf("%v: %d writes, %d consistent reads (%d with data) by 8 clients", d, writes.Load(), reads.Load(), withData.Load())
	if withData.Load() < 20 || writes.Load() < 20 {
		t.Fatalf("too little happened: %d writes, %d reads with data", writes.Load(), withData.Load())
	}
}

// TestSinkIntoTable: CREATE SINK writes a query's changelog into a table
// keyed differently (by email); an email changing A -> B -> A ends with
// exactly one row for A; the table refuses DML while the sink writes it
// and takes it again after DROP SINK.
func TestSinkIntoTable(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE users (id INT PRIMARY KEY, email TEXT NOT NULL, name TEXT)")
	exec(t, c, "INSERT INTO users VALUES (1, 'a@x', 'ann'), (2, 'b@x', 'bob')")
	exec(t, c, "CREATE TABLE by_email (email TEXT PRIMARY KEY, id BIGINT, name TEXT)")
	exec(t, c, "INSERT INTO by_email VALUES ('old@x', 0, 'before')")
	exec(t, c, "CREATE SINK s INTO by_email AS SELECT email, id, name FROM users")
	for _, q := range []string{
		"UPDATE users SET email = 'b2@x' WHERE id = 1",
		"UPDATE users SET email = 'a@x' WHERE id = 1",
		"INSERT INTO users VALUES (3, 'a@x', 'ann2')",
		"DELETE FROM users WHERE id = 3",
	} {
		exec(t, c, q)
	}
	waitRows(t, c, "SELECT email, id, name FROM by_email ORDER BY email", "a@x|1|ann\nb@x|2|bob\nold@x|0|before", 20*time.Second)
	wantRows(t, c, "SHOW SINKS", "s|by_email")
	wantErr(t, c, "INSERT INTO by_email VALUES ('z@x', 9, 'z')", "42809")
	exec(t, c, "DROP SINK s")
	exec(t, c, "INSERT INTO by_email VALUES ('z@x', 9, 'z')")
	wantRows(t, c, "SELECT count(*) FROM by_email", "4")
}

// TestDropCascadeKeepsSinkTarget: dropping a table a sink reads, with
// CASCADE, drops the sink but keeps the table the sink wrote, which takes
// SQL writes again.
func TestDropCascadeKeepsSinkTarget(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE src (k INT PRIMARY KEY, v INT)")
	exec(t, c, "CREATE TABLE dst (k INT PRIMARY KEY, v INT)")
	exec(t, c, "CREATE SINK copy INTO dst AS SELECT k, v FROM src")
	wantErr(t, c, "DROP TABLE src", "sink copy")
	exec(t, c, "DROP TABLE src CASCADE")
	wantRows(t, c, "SHOW SINKS", "")
	exec(t, c, "INSERT INTO dst VALUES (1, 1)")
	wantRows(t, c, "SHOW TABLES", "dst")
}

// TestMetrics scrapes /metrics after a write and finds the engine's
// series.
func TestMetrics(t *testing.T) {
	s, err := Start(context.Background(), Options{
		Engine: engine.Options{Dir: t.TempDir(), EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond},
		Listen: "127.0.0.1:0", HTTP: "127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := connect(t, s)
	defer c.Close(context.Background())
	exec(t, c, "CREATE TABLE m (k INT PRIMARY KEY)")
	exec(t, c, "INSERT INTO m VALUES (1)")
	resp, err := http.Get("http://" + s.HTTPAddr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`strata_table_committed_epoch{table="dev.m"}`, `strata_job_running{job="dml-dev-m"} 1`,
		`strata_ingest_position{job="dml-dev-m"}`, "strata_epoch ", `strata_queue_fill{job="dml-dev-m",vertex="sink"}`, "strata_job_last_checkpoint_duration_seconds"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestCycleIsRefused: a sink that would write a table its own query reads
// through a view is a cycle; it is refused with a SQLSTATE and the
// catalog keeps what it had (the table stays writable by SQL).
func TestCycleIsRefused(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE t (k INT PRIMARY KEY, v INT)")
	exec(t, c, "CREATE MATERIALIZED VIEW v AS SELECT k, v + 1 AS v FROM t")
	_, err := c.Exec(context.Background(), "CREATE SINK loop INTO t AS SELECT k, v FROM v")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "42P17" || !strings.Contains(pe.Message, "cycle") || pe.Position != 45 {
		t.Fatalf("a cycle: %v (at %d, want 45: the view after FROM)", err, pe.Position)
	}
	wantRows(t, c, "SHOW SINKS", "")
	exec(t, c, "INSERT INTO t VALUES (1, 1)")
	wantRows(t, c, "SELECT k, v FROM v", "1|2")
}

// TestTopNAndOuterJoinViews: Top-N, deduplication and outer-join views
// get a key and keep up with changes.
func TestTopNAndOuterJoinViews(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE o (id INT PRIMARY KEY, customer TEXT NOT NULL, amount INT NOT NULL)")
	exec(t, c, "CREATE TABLE cu (name TEXT PRIMARY KEY, city TEXT)")
	exec(t, c, `CREATE MATERIALIZED VIEW top2 AS SELECT * FROM (SELECT id, customer, amount,
		ROW_NUMBER() OVER (PARTITION BY customer ORDER BY amount DESC) AS rn FROM o) t WHERE rn <= 2`)
	exec(t, c, `CREATE MATERIALIZED VIEW latest AS SELECT customer, amount FROM (SELECT customer, amount,
		ROW_NUMBER() OVER (PARTITION BY customer ORDER BY id DESC) AS rn FROM o) t WHERE rn = 1`)
	exec(t, c, "CREATE MATERIALIZED VIEW oc AS SELECT o.id, o.customer, cu.name, cu.city FROM o LEFT JOIN cu ON o.customer = cu.name AND cu.city <> 'x'")
	exec(t, c, "INSERT INTO o VALUES (1, 'ann', 5), (2, 'ann', 9), (3, 'ann', 7), (4, 'bob', 1)")
	exec(t, c, "INSERT INTO cu VALUES ('ann', 'oslo')")
	exec(t, c, "UPDATE o SET amount = 10 WHERE id = 1")
	wantRows(t, c, "SELECT id, customer, amount, rn FROM top2 ORDER BY customer, rn", "1|ann|10|1\n2|ann|9|2\n4|bob|1|1")
	wantRows(t, c, "SELECT customer, amount FROM latest ORDER BY customer", "ann|7\nbob|1")
	wantRows(t, c, "SELECT id, name, city FROM oc ORDER BY id", "1|ann|oslo\n2|ann|oslo\n3|ann|oslo\n4|NULL|NULL")
}

// TestNewViewOverOldTable: a view created over a table that committed
// many epochs starts at the table's present, and the creating session's
// next read already sees it filled.
func TestNewViewOverOldTable(t *testing.T) {
	s, c := startConn(t)
	exec(t, c, "CREATE TABLE old (k INT PRIMARY KEY, v INT)")
	exec(t, c, "INSERT INTO old VALUES (1, 10), (2, 20), (3, 30)")
	// Wait until the table has committed at least 15 epochs.
	committed := func(name string) int {
		var e string
		if err := c.QueryRow(context.Background(), "SELECT committed_epoch FROM strata_catalog.tables WHERE name = $1", name).Scan(&e); err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.Atoi(e)
		return n
	}
	waitFor(t, 30*time.Second, func() (bool, string) {
		n := committed("old")
		return n >= 15, fmt.Sprintf("table old committed only epoch %d", n)
	})
	oldEpoch := committed("old")
	exec(t, c, "CREATE MATERIALIZED VIEW fresh AS SELECT k, v * 2 AS v2 FROM old")
	// CREATE returned once the view was filled: another session, which
	// has written nothing, reads it filled too, also at weak consistency.
	c2 := connect(t, s)
	defer c2.Close(context.Background())
	exec(t, c2, "SET consistency = weak")
	wantRows(t, c2, "SELECT k, v2 FROM fresh ORDER BY k", "1|20\n2|40\n3|60")
	wantRows(t, c, "SELECT k, v2 FROM fresh ORDER BY k", "1|20\n2|40\n3|60")
	if first := committed("fresh"); first < oldEpoch {
		t.Fatalf("the view committed epoch %d below its table's %d at CREATE: it replayed the table's past epochs instead of starting at its present", first, oldEpoch)
	}
}

// TestNumericBeyondDuckDB: NUMERIC values DuckDB cannot hold (NaN, 50
// digits, sums past 38 digits) are still read exactly, by the batch
// executor, and their views verify.
func TestNumericBeyondDuckDB(t *testing.T) {
	s, c := startConn(t)
	exec(t, c, "CREATE TABLE nn (id INT PRIMARY KEY, g TEXT, v NUMERIC)")
	exec(t, c, "CREATE MATERIALIZED VIEW nns AS SELECT g, sum(v) AS s FROM nn GROUP BY g")
	exec(t, c, "INSERT INTO nn VALUES (1, 'a', 1.5), (2, 'b', 'NaN'), (3, 'a', 90000000000000000000000000000000000000), (4, 'a', 90000000000000000000000000000000000000)")
	wantRows(t, c, "SELECT g, s FROM nns ORDER BY g", "a|180000000000000000000000000000000000001.5\nb|NaN")
	wantRows(t, c, "SELECT count(*) FROM nn", "4")
	wantVerified(t, s, "nns")
}

// TestVerifyWindowView: a view over a TUMBLE window verifies (the batch
// executor recomputes it, DuckDB having no TUMBLE) and holds the expected
// windows.
func TestVerifyWindowView(t *testing.T) {
	s, c := startConn(t)
	exec(t, c, "CREATE TABLE ev (id INT PRIMARY KEY, ts TIMESTAMP NOT NULL, v INT)")
	exec(t, c, `CREATE MATERIALIZED VIEW w AS SELECT window_start, window_end, count(*) AS n, sum(v) AS s
		FROM TUMBLE(ev, ts, INTERVAL '10' SECOND) GROUP BY window_start, window_end`)
	exec(t, c, `INSERT INTO ev VALUES (1, '2024-01-01 00:00:01', 1), (2, '2024-01-01 00:00:09.999', 2),
		(3, '2024-01-01 00:00:10', 4), (4, '1969-12-31 23:59:55', 8)`)
	wantRows(t, c, "SELECT window_start, n, s FROM w ORDER BY window_start", "1969-12-31 23:59:50|1|8\n2024-01-01 00:00:00|2|3\n2024-01-01 00:00:10|1|4")
	res := Verify(context.Background(), s.Engine, "w", 0)
	if !res.OK || res.Error != "" || res.Rows != 3 {
		t.Fatalf("verify: %+v", res)
	}
}

// TestViewOverNewViewStartsAtThePresent: a view over a view created a
// moment before (which has committed nothing yet) also starts at the
// present rather than replaying the past epochs one by one.
func TestViewOverNewViewStartsAtThePresent(t *testing.T) {
	_, c := startConn(t)
	exec(t, c, "CREATE TABLE base (k INT PRIMARY KEY, v INT)")
	exec(t, c, "INSERT INTO base VALUES (1, 1), (2, 2)")
	time.Sleep(500 * time.Millisecond) // about 25 epochs pass
	var before int
	if err := c.QueryRow(context.Background(), "SELECT committed_epoch FROM strata_catalog.tables WHERE name = 'base'").Scan(&before); err != nil {
		t.Fatal(err)
	}
	exec(t, c, "CREATE MATERIALIZED VIEW l1 AS SELECT k, v + 1 AS v FROM base; CREATE MATERIALIZED VIEW l2 AS SELECT k, v * 10 AS v FROM l1")
	wantRows(t, c, "SELECT k, v FROM l2 ORDER BY k", "1|20\n2|30")
	rows := rowsText(t, c, "SELECT name, committed_epoch FROM strata_catalog.tables WHERE name = 'l2'")
	var n int
	fmt.Sscanf(strings.TrimPrefix(rows, "l2|"), "%d", &n)
	if n < before {
		t.Fatalf("l2 committed epoch %d, below base's %d when l2 was created", n, before)
	}
}
