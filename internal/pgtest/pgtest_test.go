package pgtest_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/internal/pgtest"
)

// query returns the single text value of sql.
func query(t *testing.T, conn *pgconn.PgConn, sql string) string {
	t.Helper()
	res, err := conn.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	if len(res) != 1 || len(res[0].Rows) != 1 || len(res[0].Rows[0]) != 1 {
		t.Fatalf("%s: want one value, got %v", sql, res)
	}
	return string(res[0].Rows[0][0])
}

// TestTwoServersAtOnce starts two servers concurrently, as two test
// packages do, and checks that each is its own cluster, configured for
// logical replication, and that Stop removes its directory.
func TestTwoServersAtOnce(t *testing.T) {
	var (
		wg   sync.WaitGroup
		srvs [2]*pgtest.Server
		errs [2]error
	)
	for i := range srvs {
		wg.Go(func() { srvs[i], errs[i] = pgtest.StartServer() })
	}
	wg.Wait()
	for i := range srvs {
		if errs[i] != nil {
			t.Fatalf("server %d: %v", i, errs[i])
		}
		defer srvs[i].Stop()
	}
	if srvs[0].Port == srvs[1].Port || srvs[0].Dir == srvs[1].Dir {
		t.Fatalf("servers share port %d or directory %s", srvs[0].Port, srvs[0].Dir)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, s := range srvs {
		dsn := s.CreateDatabase(t, "db_one")
		conn, err := pgconn.Connect(ctx, dsn)
		if err != nil {
			t.Fatal(err)
		}
		if got := query(t, conn, "SHOW wal_level"); got != "logical" {
			t.Fatalf("server %d: wal_level %q", i, got)
		}
		if got := query(t, conn, "SHOW max_replication_slots"); got != "16" {
			t.Fatalf("server %d: max_replication_slots %q", i, got)
		}
		if got := query(t, conn, "SELECT current_database()"); got != "db_one" {
			t.Fatalf("server %d: database %q", i, got)
		}
		// Each server is its own cluster: a table made in one is not in
		// the other.
		if i == 0 {
			if _, err := conn.Exec(ctx, "CREATE TABLE only_here (x int)").ReadAll(); err != nil {
				t.Fatal(err)
			}
		} else if got := query(t, conn, "SELECT count(*) FROM pg_class WHERE relname = 'only_here'"); got != "0" {
			t.Fatalf("server 1 sees server 0's table")
		}
		// A replication connection works.
		rconn, err := pgconn.Connect(ctx, dsn+" replication=database")
		if err != nil {
			t.Fatalf("server %d: replication connection: %v", i, err)
		}
		if _, err := rconn.Exec(ctx, "IDENTIFY_SYSTEM").ReadAll(); err != nil {
			t.Fatalf("server %d: IDENTIFY_SYSTEM: %v", i, err)
		}
		rconn.Close(ctx)
		conn.Close(ctx)
	}
	dir := srvs[0].Dir
	if err := srvs[0].Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("directory %s left after Stop: %v", dir, err)
	}
	if err := srvs[0].Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
}

// TestStaleServerRemoved leaves a server whose owner process is gone, as
// a killed test process does, and checks that the next start stops it
// and removes its directory.
func TestStaleServerRemoved(t *testing.T) {
	stale, err := pgtest.StartServer()
	if errors.Is(err, pgtest.ErrUnavailable) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer stale.Stop()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(stale.Dir, "owner.pid"), []byte(strconv.Itoa(dead.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := pgtest.Start(t)
	if _, err := os.Stat(stale.Dir); !os.IsNotExist(err) {
		t.Fatalf("stale directory %s still there: %v", stale.Dir, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if c, err := pgconn.Connect(ctx, stale.DSN("postgres")); err == nil {
		c.Close(ctx)
		t.Fatal("the stale server still answers")
	}
	c, err := pgconn.Connect(ctx, fresh.DSN("postgres"))
	if err != nil {
		t.Fatalf("the fresh server: %v", err)
	}
	c.Close(ctx)
}
