package pgcdc_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/pgcdc"
	"github.com/stratadb/strata/internal/pgtest"
	"github.com/stratadb/strata/internal/types"
)

var _ ingest.Reader = (*pgcdc.Stream)(nil)

// One server for the package's tests; each test has its own database,
// slot and publication.
var dbSeq atomic.Int64

var shared struct {
	once sync.Once
	srv  *pgtest.Server
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	os.Exit(code)
}

func server(t testing.TB) *pgtest.Server {
	t.Helper()
	shared.once.Do(func() { shared.srv, shared.err = pgtest.StartServer() })
	if errors.Is(shared.err, pgtest.ErrUnavailable) {
		t.Skipf("%v", shared.err)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.srv
}

// db creates database name and returns the source options for it (slot
// and publication named after it) and a connection to it.
func db(t testing.TB, name string) (pgcdc.Options, *pgconn.PgConn) {
	t.Helper()
	srv := server(t)
	name = fmt.Sprintf("%s_%d", name, dbSeq.Add(1)) // unique under -count
	dsn := srv.CreateDatabase(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return pgcdc.Options{Hostname: srv.Host, Port: srv.Port, Username: pgtest.Superuser, Database: name,
		Slot: name + "_slot", Publication: name + "_pub"}, conn
}

// run executes sql (any number of statements) and fails t on error.
func run(t testing.TB, conn *pgconn.PgConn, sql string) []*pgconn.Result {
	t.Helper()
	res, err := conn.Exec(context.Background(), sql).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return res
}

// value returns the single value sql yields.
func value(t testing.TB, conn *pgconn.PgConn, sql string) string {
	t.Helper()
	res := run(t, conn, sql)
	last := res[len(res)-1]
	if len(last.Rows) != 1 || len(last.Rows[0]) != 1 {
		t.Fatalf("%s: want one value, got %d rows", sql, len(last.Rows))
	}
	return string(last.Rows[0][0])
}

// next polls s until the transaction at pos arrives.
func next(t testing.TB, s *pgcdc.Stream, pos uint64) (*types.Chunk, uint64) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c, n, err := s.Next(pos)
		if err != nil {
			t.Fatalf("Next(%d): %v", pos, err)
		}
		if c != nil {
			if n <= pos {
				t.Fatalf("Next(%d) returned position %d", pos, n)
			}
			return c, n
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("no transaction at %d within 30 s", pos)
	return nil, 0
}

// nextErr polls s until Next(pos) fails, and returns the error.
func nextErr(t testing.TB, s *pgcdc.Stream, pos uint64) error {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		c, n, err := s.Next(pos)
		if err != nil {
			return err
		}
		if c != nil {
			pos = n
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Fatalf("Next did not fail within 30 s")
	return nil
}

// rows formats the rows of c, one line each: "table +I v1|v2|..." with
// NULL for NULL, the table being the row's Strata table name.
func rows(l *pgcdc.Layout, c *types.Chunk) []string {
	var out []string
	for r := range c.Len() {
		tag := int(c.Datum(0, r).Int64())
		off, w := l.Span(tag)
		vals := make([]string, w)
		for j := range w {
			d := c.Datum(off+j, r)
			if d.IsNull() {
				vals[j] = "NULL"
			} else {
				vals[j] = types.FormatText(d, time.UTC)
			}
		}
		out = append(out, l.Table(tag).Name+" "+c.Kind(r).String()+" "+strings.Join(vals, "|"))
	}
	return out
}

func sameLines(t testing.TB, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s:\ngot\n  %s\nwant\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
