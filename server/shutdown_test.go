package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestCloseTellsClients: closing the server (strata start on SIGINT or
// SIGTERM) ends a statement in flight and an idle session with FATAL
// 57P01, as PostgreSQL does, not with a connection that just drops.
func TestCloseTellsClients(t *testing.T) {
	s := startTest(t, t.TempDir())
	busy, idle := connect(t, s), connect(t, s)
	ctx := context.Background()
	exec(t, idle, "SELECT 1")
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := busy.Exec(ctx, "SELECT pg_sleep(30)", pgx.QueryExecModeSimpleProtocol)
		done <- err
	}()
	waitFor(t, 10*time.Second, func() (bool, string) {
		return s.wire.Conns() == 2, "connections"
	})
	time.Sleep(200 * time.Millisecond) // the sleep has begun
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{"busy": <-done, "idle": func() error { _, err := idle.Exec(ctx, "SELECT 1"); return err }()} {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "57P01" || pe.Message != "terminating connection due to administrator command" {
			t.Errorf("%s session after Close: %v, want FATAL 57P01", name, err)
		}
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("Close took %v with a statement in flight", d)
	}
}
