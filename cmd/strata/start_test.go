package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestMain lets the test binary act as the strata binary: a child process
// started with STRATA_TEST_MAIN=1 runs main with its arguments.
func TestMain(m *testing.M) {
	if os.Getenv("STRATA_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// child is a `strata start` running as a child process.
type child struct {
	cmd        *exec.Cmd
	wire, http string
	out        bytes.Buffer
}

// startChild starts `strata start` over dir as a child process
// (launchChild) that is killed, if still running, when the test ends.
func startChild(t *testing.T, dir, wire, httpAddr string) *child {
	t.Helper()
	c := launchChild(t, dir, wire, httpAddr)
	t.Cleanup(func() {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	})
	return c
}

// launchChild starts `strata start` over dir as a child process listening
// on wire and httpAddr, with 50 ms epochs and 100 ms checkpoints; its
// output collects in c.out. The caller ends it.
func launchChild(t *testing.T, dir, wire, httpAddr string) *child {
	t.Helper()
	c := &child{wire: wire, http: httpAddr}
	c.cmd = exec.Command(os.Args[0], "start", "--data", dir, "--listen", wire, "--http", httpAddr,
		"--epoch-interval", "50ms", "--checkpoint-interval", "100ms")
	c.cmd.Env = append(os.Environ(), "STRATA_TEST_MAIN=1")
	c.cmd.Stdout, c.cmd.Stderr = &c.out, &c.out
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return c
}

// kill9 kills the child with SIGKILL and waits for it to exit.
func (c *child) kill9(t *testing.T) {
	t.Helper()
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = c.cmd.Wait()
}

// execAll runs each of qs on conn, failing the test at the first error.
func execAll(ctx context.Context, t *testing.T, conn *pgx.Conn, qs ...string) {
	t.Helper()
	for _, q := range qs {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// writeUntilKilled runs stmt(1), stmt(2), ... on conn, one after another,
// kills child c with SIGKILL once after statements are acknowledged, and
// returns the number of the last acknowledged one (the one in flight at the
// kill may or may not have been applied).
func writeUntilKilled(ctx context.Context, t *testing.T, c *child, conn *pgx.Conn, after int64, stmt func(int64) string) int64 {
	t.Helper()
	var acked atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := int64(1); ; i++ {
			if _, err := conn.Exec(ctx, stmt(i)); err != nil {
				return // the server was killed
			}
			acked.Store(i)
		}
	}()
	for acked.Load() < after {
		time.Sleep(10 * time.Millisecond)
	}
	c.kill9(t)
	<-done
	return acked.Load()
}

func (c *child) connect(t *testing.T) *pgx.Conn {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		conn, err := pgx.Connect(ctx, "postgres://root@"+c.wire+"/dev?sslmode=disable")
		cancel()
		if err == nil {
			return conn
		}
		if time.Now().After(deadline) {
			t.Fatalf("connect to strata start: %v\n%s", err, c.out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStartSurvivesKill9 runs `strata start` as a child process, writes
// to a table with two levels of views over it, kills the process with
// SIGKILL in the middle of the writes, starts it again on the same data
// directory and checks that every acknowledged write is there, that the
// views resume and that `strata verify` passes for both.
func TestStartSurvivesKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	wire, httpAddr := freePort(t), freePort(t)
	c := startChild(t, dir, wire, httpAddr)
	conn := c.connect(t)
	ctx := context.Background()
	execAll(ctx, t, conn,
		"CREATE TABLE orders (id BIGINT PRIMARY KEY, customer INT NOT NULL, amount BIGINT)",
		"CREATE MATERIALIZED VIEW per_customer AS SELECT customer, sum(amount) AS total, count(*) AS n FROM orders GROUP BY customer",
		"CREATE MATERIALIZED VIEW overall AS SELECT count(*) AS customers, sum(total) AS total FROM per_customer",
	)
	// A reader checks, at consistent versions, an invariant across the
	// three levels while the writes run and across the kill.
	const invariant = `SELECT o.s = p.s AND p.s = v.s, o.s FROM (SELECT coalesce(sum(amount), 0) AS s FROM orders) o,
		(SELECT coalesce(sum(total), 0) AS s FROM per_customer) p, (SELECT coalesce(sum(total), 0) AS s FROM overall) v`
	var checks, nonEmpty atomic.Int64
	checkAll := func(conn *pgx.Conn, stop <-chan struct{}) error {
		for {
			select {
			case <-stop:
				return nil
			default:
			}
			var ok bool
			var sum int64
			if err := conn.QueryRow(ctx, invariant).Scan(&ok, &sum); err != nil {
				return err
			}
			if !ok {
				return fmt.Errorf("a read mixed epochs: the three levels disagree")
			}
			checks.Add(1)
			if sum > 0 {
				nonEmpty.Add(1)
			}
		}
	}
	reader := c.connect(t)
	readerErr := make(chan error, 1)
	go func() { readerErr <- checkAll(reader, nil) }()
	last := writeUntilKilled(ctx, t, c, conn, 40, func(i int64) string {
		if i%5 == 0 {
			return fmt.Sprintf("UPDATE orders SET amount = amount + 1 WHERE id = %d", i-1)
		}
		return fmt.Sprintf("INSERT INTO orders VALUES (%d, %d, %d)", i, i%7, i*3)
	})
	if err := <-readerErr; err != nil && strings.Contains(err.Error(), "mixed epochs") {
		t.Fatal(err)
	}

	c2 := startChild(t, dir, wire, httpAddr)
	conn2 := c2.connect(t)
	defer conn2.Close(ctx)
	// Every acknowledged write is there: inserts of every id not a
	// multiple of 5 up to last, and each acknowledged update.
	rows, err := conn2.Query(ctx, "SELECT id, amount FROM orders")
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]int64{}
	for rows.Next() {
		var id, amount int64
		if err := rows.Scan(&id, &amount); err != nil {
			t.Fatal(err)
		}
		got[id] = amount
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for i := int64(1); i <= last; i++ {
		if i%5 == 0 {
			continue
		}
		want := i * 3
		if (i+1)%5 == 0 && i+1 <= last {
			want++
		}
		if got[i] != want {
			t.Fatalf("after kill -9 at write %d: order %d has amount %d, want %d", last, i, got[i], want)
		}
	}
	// The views resume: a write after the restart reaches both.
	if _, err := conn2.Exec(ctx, "INSERT INTO orders VALUES (1000000, 3, 5)"); err != nil {
		t.Fatal(err)
	}
	var n int64
	if err := conn2.QueryRow(ctx, "SELECT n FROM per_customer WHERE customer = 3").Scan(&n); err != nil {
		t.Fatal(err)
	}
	var want int64
	for id := range got {
		if id%7 == 3 {
			want++
		}
	}
	if n != want+1 {
		t.Fatalf("per_customer counts %d orders of customer 3, want %d", n, want+1)
	}
	reader2 := c2.connect(t)
	defer reader2.Close(ctx)
	stop := make(chan struct{})
	go func() { readerErr <- checkAll(reader2, stop) }()
	for i := int64(0); i < 30; i++ {
		if _, err := conn2.Exec(ctx, fmt.Sprintf("UPDATE orders SET amount = amount + %d WHERE id %% 3 = %d", i, i%3)); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	if err := <-readerErr; err != nil {
		t.Fatal(err)
	}
	if nonEmpty.Load() < 10 {
		t.Fatalf("only %d of %d consistency checks saw data", nonEmpty.Load(), checks.Load())
	}
	t.Logf("%d consistency checks across the kill, %d with data", checks.Load(), nonEmpty.Load())
	var out bytes.Buffer
	cmd := newRootCommand()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs([]string{"verify", "--http", httpAddr, "per_customer", "overall"})
	if err := cmd.Execute(); err != nil {
		t.Fatalf("verify: %v\n%s", err, out.String())
	}
	if strings.Count(out.String(), "verified at epoch") != 2 {
		t.Fatalf("verify output:\n%s", out.String())
	}
}
