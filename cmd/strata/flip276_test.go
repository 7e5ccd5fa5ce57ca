package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

var kill9Duration = flag.Duration("flip276.kill9.duration", 60*time.Second, "how long TestTopologyFLIP276Kill9 runs its change stream")

// TestTopologyFLIP276Kill9 is FLIP-276's example with the whole process
// crashing: a change stream of versions V1, V2, ... (UPDATEs of keyed rows)
// feeds T1; T2 is derived from T1; T3 joins T1 and T2. The jobs run in
// `strata start` as a child process, which a chaos loop kills with SIGKILL
// and starts again every few seconds, with 50 ms epochs. A reader in this
// process loops on one SELECT across T1, T2 and T3 at a consistent version
// and checks that, for every key, a version is visible in all three tables
// or in none. At the end `strata verify` recomputes T2 and T3 from T1.
func TestTopologyFLIP276Kill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	wire, httpAddr := freePort(t), freePort(t)
	start := func() *child { return launchChild(t, dir, wire, httpAddr) }
	var mu sync.Mutex
	cur := start()
	defer func() {
		mu.Lock()
		_ = cur.cmd.Process.Kill()
		_ = cur.cmd.Wait()
		mu.Unlock()
	}()
	ctx := context.Background()
	conn := cur.connect(t)
	const keys = 13
	execAll(ctx, t, conn,
		"CREATE TABLE t1 (k INT PRIMARY KEY, ver BIGINT NOT NULL)",
		"CREATE MATERIALIZED VIEW t2 AS SELECT k, ver * 2 AS ver2 FROM t1",
		"CREATE MATERIALIZED VIEW t3 AS SELECT t1.k, t1.ver, t2.ver2 FROM t1 JOIN t2 ON t1.k = t2.k",
	)
	conn.Close(ctx)
	// connect retries until the server answers again after a kill.
	connect := func() *pgx.Conn {
		for {
			mu.Lock()
			c := cur
			mu.Unlock()
			cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
			conn, err := pgx.Connect(cctx, "postgres://root@"+c.wire+"/dev?sslmode=disable")
			cancel()
			if err == nil {
				return conn
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	d := *kill9Duration
	if testing.Short() {
		d = 10 * time.Second
	}
	runCtx, stop := context.WithTimeout(ctx, d)
	defer stop()
	var wg sync.WaitGroup
	var versions, reads, torn, withData, kills atomic.Int64
	var tornMsg atomic.Value
	wg.Add(3)
	go func() { // the change stream: V1, V2, ... as updates of the keys
		defer wg.Done()
		conn := connect()
		for v := int64(1); runCtx.Err() == nil; v++ {
			q := fmt.Sprintf("INSERT INTO t1 VALUES (%d, %d)", v%keys, v)
			if _, err := conn.Exec(runCtx, q); err != nil {
				conn.Close(ctx)
				conn = connect()
				continue
			}
			versions.Store(v)
		}
		conn.Close(ctx)
	}()
	go func() { // the reader
		defer wg.Done()
		const q = `SELECT t1.k, t1.ver, t2.ver2, t3.ver, t3.ver2 FROM t1
			LEFT JOIN t2 ON t1.k = t2.k LEFT JOIN t3 ON t1.k = t3.k`
		conn := connect()
		for runCtx.Err() == nil {
			rows, err := conn.Query(runCtx, q)
			if err != nil {
				conn.Close(ctx)
				conn = connect()
				continue
			}
			n := 0
			for rows.Next() {
				var k, v int64
				var v2, v3, v32 *int64
				if err := rows.Scan(&k, &v, &v2, &v3, &v32); err != nil {
					break
				}
				n++
				if v2 == nil || v3 == nil || v32 == nil || *v2 != 2*v || *v3 != v || *v32 != 2*v {
					torn.Add(1)
					tornMsg.Store(fmt.Sprintf("key %d: t1 version %d, t2 %v, t3 %v/%v", k, v, deref(v2), deref(v3), deref(v32)))
				}
			}
			if rows.Err() != nil {
				conn.Close(ctx)
				conn = connect()
				continue
			}
			reads.Add(1)
			if n > 0 {
				withData.Add(1)
			}
		}
		conn.Close(ctx)
	}()
	go func() { // chaos: kill -9 the whole process every few seconds
		defer wg.Done()
		r := rand.New(rand.NewPCG(7, 7))
		for {
			select {
			case <-runCtx.Done():
				return
			case <-time.After(time.Duration(2000+r.IntN(3000)) * time.Millisecond):
			}
			mu.Lock()
			_ = cur.cmd.Process.Signal(syscall.SIGKILL)
			_ = cur.cmd.Wait()
			cur = start()
			mu.Unlock()
			kills.Add(1)
		}
	}()
	wg.Wait()
	if n := torn.Load(); n > 0 {
		t.Fatalf("%d torn reads, e.g. %s", n, tornMsg.Load())
	}
	t.Logf("%v: %d versions, %d consistent reads (%d with data), %d kills", d, versions.Load(), reads.Load(), withData.Load(), kills.Load())
	if kills.Load() < 1 || withData.Load() < 10 || versions.Load() < 20 {
		t.Fatalf("too little happened: %d kills, %d reads with data, %d versions", kills.Load(), withData.Load(), versions.Load())
	}
	// At the end every table equals a recomputation: T1 holds the last
	// acknowledged versions (or later ones, whose acknowledgement a kill
	// cut off), and T2 and T3 equal their queries over T1.
	conn = connect()
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, "SELECT k, ver FROM t1")
	if err != nil {
		t.Fatal(err)
	}
	last := versions.Load()
	for rows.Next() {
		var k, v int64
		if err := rows.Scan(&k, &v); err != nil {
			t.Fatal(err)
		}
		if v%keys != k || v < last-keys {
			t.Fatalf("t1 key %d holds version %d; the last acknowledged version is %d", k, v, last)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		cmd := newRootCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs([]string{"verify", "--http", httpAddr, "t2", "t3"})
		err := cmd.Execute()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("verify: %v\n%s", err, out.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func deref(p *int64) any {
	if p == nil {
		return "NULL"
	}
	return *p
}
