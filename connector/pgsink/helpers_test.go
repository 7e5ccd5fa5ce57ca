package pgsink_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratadb/strata/connector/pgsink"
	"github.com/stratadb/strata/internal/pgtest"
)

// One server for the package's tests; each test has its own database.
var (
	dbSeq  atomic.Int64
	shared struct {
		once sync.Once
		srv  *pgtest.Server
		err  error
	}
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.srv != nil {
		shared.srv.Stop()
	}
	os.Exit(code)
}

// db creates a database and returns sink options for it (table
// public.out) and a connection to it.
func db(t testing.TB, name string) (pgsink.Options, *pgx.Conn) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	shared.once.Do(func() { shared.srv, shared.err = pgtest.StartServer() })
	if errors.Is(shared.err, pgtest.ErrUnavailable) {
		t.Skipf("%v", shared.err)
	}
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	srv := shared.srv
	name = fmt.Sprintf("%s_%d", name, dbSeq.Add(1))
	dsn := srv.CreateDatabase(t, name)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	o, err := pgsink.ParseOptions(map[string]string{"hostname": srv.Host, "port": fmt.Sprint(srv.Port), "username": pgtest.Superuser,
		"database": name, "table": "public.out"})
	if err != nil {
		t.Fatal(err)
	}
	return o, conn
}

// exec runs statements and fails t on error.
func exec(t testing.TB, conn *pgx.Conn, sqls ...string) {
	t.Helper()
	for _, q := range sqls {
		if _, err := conn.Exec(context.Background(), q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}
