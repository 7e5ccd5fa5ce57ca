package server

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/pgtest"
)

// startTest starts a server over dir with 20 ms epochs and checkpoints,
// listening on a free local port, without the HTTP server.
func startTest(t *testing.T, dir string) *Server {
	t.Helper()
	s, err := Start(context.Background(), Options{
		Engine: engine.Options{Dir: dir, EpochInterval: 20 * time.Millisecond, CheckpointInterval: 20 * time.Millisecond},
		Listen: "127.0.0.1:0", HTTP: "-",
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// connect opens a wire connection to s as root, database dev.
func connect(t *testing.T, s *Server) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, "postgres://root@"+s.Addr().String()+"/dev?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// startConn starts a server over a fresh directory and connects to it
// (startConnAt).
func startConn(t *testing.T) (*Server, *pgx.Conn) {
	t.Helper()
	return startConnAt(t, t.TempDir())
}

// startConnAt starts a server over dir (startTest) and connects to it;
// the connection, then the server, close when the test ends. A test that
// restarts the server closes both itself and calls it again.
func startConnAt(t *testing.T, dir string) (*Server, *pgx.Conn) {
	t.Helper()
	s := startTest(t, dir)
	t.Cleanup(func() { s.Close() })
	c := connect(t, s)
	t.Cleanup(func() { c.Close(context.Background()) })
	return s, c
}

// rowsText runs q and renders its rows as "a|b" lines.
func rowsText(t *testing.T, c *pgx.Conn, q string) string {
	t.Helper()
	rows, err := c.Query(context.Background(), q, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	var out []string
	for rows.Next() {
		vals := rows.RawValues()
		parts := make([]string, len(vals))
		for i, v := range vals {
			if v == nil {
				parts[i] = "NULL"
			} else {
				parts[i] = string(v)
			}
		}
		out = append(out, strings.Join(parts, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return strings.Join(out, "\n")
}

// exec runs q with the simple protocol and fails the test on an error.
func exec(t *testing.T, c *pgx.Conn, q string) {
	t.Helper()
	if _, err := c.Exec(context.Background(), q, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// wantRows fails the test unless q's rows render (rowsText) as want.
func wantRows(t *testing.T, c *pgx.Conn, q, want string) {
	t.Helper()
	if got := rowsText(t, c, q); got != want {
		t.Fatalf("%s:\n%s\nwant\n%s", q, got, want)
	}
}

// waitFor calls check every 20 ms until it reports done, for at most
// within; then it fails the test with what check said last.
func waitFor(t *testing.T, within time.Duration, check func() (done bool, why string)) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		done, why := check()
		if done {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("still after %v: %s", within, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitRows runs q until its rows render as want, for at most within: how
// tests wait for views and connector tables to catch up.
func waitRows(t *testing.T, c *pgx.Conn, q, want string, within time.Duration) {
	t.Helper()
	waitFor(t, within, func() (bool, string) {
		got := rowsText(t, c, q)
		return got == want, fmt.Sprintf("%s:\n%s\nwant\n%s", q, got, want)
	})
}

// wantErr runs q (extended protocol) and fails the test unless it fails
// with an error whose text holds every one of words (a SQLSTATE, a name).
func wantErr(t *testing.T, c *pgx.Conn, q string, words ...string) {
	t.Helper()
	_, err := c.Exec(context.Background(), q)
	if err == nil {
		t.Fatalf("%s: no error, want one saying %q", q, words)
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Fatalf("%s: %v, want it to say %q", q, err, w)
		}
	}
}

// wantVerified fails the test unless Verify finds each of views equal to
// its query recomputed.
func wantVerified(t *testing.T, s *Server, views ...string) {
	t.Helper()
	for _, v := range views {
		if res := Verify(context.Background(), s.Engine, v, 0); !res.OK || res.Error != "" {
			t.Fatalf("verify %s: %+v", v, res)
		}
	}
}

// upstreamPG starts a private PostgreSQL (skipped with -short), creates
// database db in it, runs setup there and returns the server and a
// connection to db that closes when the test ends.
func upstreamPG(t *testing.T, db string, setup ...string) (*pgtest.Server, *pgx.Conn) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pg := pgtest.Start(t)
	ctx := context.Background()
	up, err := pgx.Connect(ctx, pg.CreateDatabase(t, db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close(ctx) })
	for _, q := range setup {
		if _, err := up.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return pg, up
}
