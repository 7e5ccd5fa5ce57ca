package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratadb/strata/connector/pgsink"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/pgtest"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/sqlerr"
)

// pgRows returns the rows of sql as strata rows of ts, text values parsed
// by types.ParseText, in the form sorted gives.
func pgRows(t *testing.T, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, ts []types.Type, sql string) string {
	t.Helper()
	rows, err := q.Query(context.Background(), sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var out []types.Row
	for rows.Next() {
		var row types.Row
		for i, v := range rows.RawValues() {
			if v == nil {
				row = append(row, types.Null)
				continue
			}
			d, err := types.ParseText(ts[i], string(v), nil)
			if err != nil {
				t.Fatalf("%s: %q: %v", sql, v, err)
			}
			row = append(row, d)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return sorted(out)
}

// TestPostgresSinkRestartsAndFailures keeps a Postgres table equal to an
// aggregate view while the view's table changes with inserts, updates
// and deletes (groups appear and vanish), the engine restarts, and the
// sink's Postgres connections are killed (pg_terminate_backend) several
// times. Every read of the sink's progress row and the table in one
// Postgres snapshot must find the table equal to the view at the epoch
// the row names; at the end the table equals the view.
func TestPostgresSinkRestartsAndFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pg := pgtest.Start(t)
	ctx := context.Background()
	up, err := pgx.Connect(ctx, pg.CreateDatabase(t, "sinkdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close(ctx)
	if _, err := up.Exec(ctx, "CREATE TABLE totals (g bigint PRIMARY KEY, s numeric, n bigint NOT NULL)"); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	e := openTest(t, dir)
	defer func() { e.Close() }()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	if err := e.CreateTable(ctx, catalog.Table{Name: tName, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
	const view = "SELECT k % 7 AS g, sum(v) AS s, count(*) AS n FROM t WHERE v < 60 GROUP BY k % 7"
	if err := e.CreateView(ctx, v1Name, view, nil, false); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(7, 8))
	state := map[int64]int64{}
	apply := func(n int) base.Epoch {
		t.Helper()
		ep, err := e.Apply(ctx, tName, changes(r, state, 25, n))
		if err != nil {
			t.Fatal(err)
		}
		return ep
	}
	for range 5 {
		apply(6)
	}
	opts := func(table string) map[string]string {
		return map[string]string{"connector": "postgres", "hostname": pg.Host, "port": fmt.Sprint(pg.Port), "username": pgtest.Superuser,
			"database": "sinkdb", "table": table}
	}
	// A target that does not fit is refused up front, naming it.
	err = e.CreateExternalSink(ctx, catalog.Name(DefaultDatabase, "out"), v1Name, opts("public.nope"), false)
	if sqlerr.Code(err) != sqlerr.InvalidParameterValue || !strings.Contains(err.Error(), "table public.nope does not exist in database sinkdb") {
		t.Fatalf("sink into a missing table: %v", err)
	}
	if err := e.CreateExternalSink(ctx, catalog.Name(DefaultDatabase, "out"), v1Name, opts("totals"), false); err != nil {
		t.Fatal(err)
	}
	sinks, err := e.Sinks(ctx, DefaultDatabase)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("[[out postgres %s:%d/sinkdb table totals]]", pg.Host, pg.Port); fmt.Sprint(sinks) != want {
		t.Fatalf("sinks: %v, want %s", sinks, want)
	}

	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	vt, err := cat.Table(v1Name)
	if err != nil {
		t.Fatal(err)
	}
	vts := columnTypes(vt.Columns)
	// check reads the progress row and the table in one snapshot and
	// compares the table with the view at the recorded epoch.
	var (
		mu     sync.Mutex
		checks int
		eng    = e
	)
	check := func(conn *pgx.Conn) (base.Epoch, error) {
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return 0, err
		}
		defer tx.Rollback(ctx)
		var ep int64
		err = tx.QueryRow(ctx, "SELECT epoch FROM strata_sink_progress WHERE sink = 'sink-dev-out' AND subtask = 0").Scan(&ep)
		if errors.Is(err, pgx.ErrNoRows) {
			return 0, nil
		}
		if err != nil {
			return 0, err
		}
		got := pgRows(t, tx, vts, "SELECT g, s, n FROM totals")
		mu.Lock()
		cur := eng
		mu.Unlock()
		tb, err := cur.Table(v1Name)
		if err != nil {
			return 0, err
		}
		rows, err := tb.ReadAtEpoch(base.Epoch(ep))
		if err != nil {
			return 0, err
		}
		if want := sorted(rows); got != want {
			return 0, fmt.Errorf("Postgres at epoch %d:\n%s\nview:\n%s", ep, got, want)
		}
		mu.Lock()
		checks++
		mu.Unlock()
		return base.Epoch(ep), nil
	}
	checker, err := pgx.Connect(ctx, pg.DSN("sinkdb"))
	if err != nil {
		t.Fatal(err)
	}
	defer checker.Close(ctx)
	stop := make(chan struct{})
	checkErr := make(chan error, 1)
	go func() {
		defer close(checkErr)
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			if _, err := check(checker); err != nil && !strings.Contains(err.Error(), "closed") {
				checkErr <- err
				return
			}
		}
	}()
	kill := func() {
		t.Helper()
		var n int
		err := up.QueryRow(ctx, "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = $1", pgsink.ApplicationName).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 20 {
		apply(4)
		if i%5 == 4 {
			kill()
		}
	}
	// A restart in the middle of the stream.
	mu.Lock()
	if err := e.Close(); err != nil {
		mu.Unlock()
		t.Fatal(err)
	}
	e = openTest(t, dir)
	eng = e
	mu.Unlock()
	for i := range 15 {
		apply(4)
		if i%5 == 2 {
			kill()
		}
	}
	last := apply(4)
	if err := e.WaitCommitted(ctx, v1Name, last); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ep, err := check(up)
		if err != nil {
			t.Fatal(err)
		}
		if ep >= last {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sink's progress is at epoch %d, the view at %d", ep, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	if err := <-checkErr; err != nil {
		t.Fatal(err)
	}
	restarts := 0
	for _, j := range e.Jobs() {
		if j.Name == "sink-dev-out" {
			restarts = j.Restarts
		}
	}
	t.Logf("%d consistent reads; the sink job restarted %d times since the engine restart", checks, restarts)
	if restarts == 0 {
		t.Fatalf("killing the sink's connections did not fail its job")
	}
	if err := e.DropSink(ctx, catalog.Name(DefaultDatabase, "out"), false); err != nil {
		t.Fatal(err)
	}
}
