package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/sqlerr"
)

// createKV creates table name (k BIGINT PRIMARY KEY, v BIGINT).
func createKV(t *testing.T, e *Engine, name catalog.ObjectName) {
	t.Helper()
	cols := []catalog.Column{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64}}
	if err := e.CreateTable(context.Background(), catalog.Table{Name: name, Columns: cols, PrimaryKey: []string{"k"}}, false); err != nil {
		t.Fatal(err)
	}
}

func kvRow(k, v int64) *types.Chunk {
	c := types.NewChunk([]types.Type{types.Int64, types.Int64}, 1)
	c.Append(types.Insert, types.Row{types.NewInt64(k), types.NewInt64(v)})
	return c
}

// restartJob starts the stopped job def again.
func restartJob(t *testing.T, e *Engine, job string) {
	t.Helper()
	ctx := context.Background()
	cat, err := e.meta.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	def, err := cat.Job(job)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.startJob(ctx, cat, def); err != nil {
		t.Fatal(err)
	}
}

// TestDMLCancelPointOfNoReturn: a write canceled before its append writes
// nothing and fails; one canceled after it (while it waits for its epoch)
// waits on and succeeds, and its row is there.
func TestDMLCancelPointOfNoReturn(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	createKV(t, e, tName)

	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := e.Apply(canceled, tName, kvRow(1, 10)); !errors.Is(err, context.Canceled) {
		t.Fatalf("a write canceled before it started: %v", err)
	}
	l, err := e.dmlLog(tName)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	size := l.size
	l.mu.Unlock()
	if size != 0 {
		t.Fatalf("a canceled write appended %d bytes to the DML log", size)
	}

	// With the table's writer stopped the write waits for its epoch
	// past its cancel; it returns once the writer runs again.
	e.stopJob(dmlJobName(tName))
	wctx, wcancel := context.WithCancel(ctx)
	type result struct {
		err error
	}
	done := make(chan result, 1)
	go func() {
		_, err := e.Apply(wctx, tName, kvRow(2, 20))
		done <- result{err}
	}()
	for {
		l.mu.Lock()
		size = l.size
		l.mu.Unlock()
		if size > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	wcancel()
	select {
	case r := <-done:
		t.Fatalf("a write canceled after its append returned before it committed: %v", r.err)
	case <-time.After(200 * time.Millisecond):
	}
	restartJob(t, e, dmlJobName(tName))
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatalf("a write canceled after its append: %v", r.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("a write canceled after its append never returned")
	}
	r, err := e.ReadConsistent(ctx, []catalog.ObjectName{tName}, version.Strong, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := sorted(r.Rows[tName]); got != "(2, 20)" {
		t.Fatalf("rows after both writes: %q", got)
	}
}

// TestDMLWaitEndsWhenTableDropped: a write waiting for its epoch while
// DROP TABLE ... CASCADE drops its table (and a view on it) ends with
// 42P01 naming the table.
func TestDMLWaitEndsWhenTableDropped(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	createKV(t, e, tName)
	if err := e.CreateView(ctx, v1Name, v1Query, nil, false); err != nil {
		t.Fatal(err)
	}
	e.stopJob(dmlJobName(tName))
	// The first write waits for its epoch holding the table's writer
	// lock; the second waits for the lock.
	done := make(chan error, 2)
	go func() {
		_, err := e.Apply(ctx, tName, kvRow(1, 10))
		done <- err
	}()
	l, err := e.dmlLog(tName)
	if err != nil {
		t.Fatal(err)
	}
	for {
		l.mu.Lock()
		size := l.size
		l.mu.Unlock()
		if size > 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	go func() {
		_, err := e.Apply(ctx, tName, kvRow(2, 20))
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := e.Drop(ctx, "table", tName, false, true); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		select {
		case err := <-done:
			var se *sqlerr.Error
			if !errors.As(err, &se) || se.Code != sqlerr.UndefinedTable {
				t.Fatalf("a write whose table was dropped: %v", err)
			}
			if want := `relation "t"`; !strings.Contains(err.Error(), want) {
				t.Fatalf("a write whose table was dropped: %v, want %q", err, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("a write whose table was dropped waits on")
		}
	}
}

// TestStrayLogOfDroppedTable: a statement that opened its table's log
// after a DROP removed it (it read the catalog before the DROP) ends with
// 42P01, and the stray log goes, so a table created again under the name
// does not read its record.
func TestStrayLogOfDroppedTable(t *testing.T) {
	ctx := context.Background()
	e := openTest(t, t.TempDir())
	defer e.Close()
	createKV(t, e, tName)
	if err := e.Drop(ctx, "table", tName, false, false); err != nil {
		t.Fatal(err)
	}
	l, err := e.dmlLog(tName)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.commit(ctx, l, kvRow(1, 10))
	var se *sqlerr.Error
	if !errors.As(err, &se) || se.Code != sqlerr.UndefinedTable {
		t.Fatalf("a write into a stray log: %v", err)
	}
	createKV(t, e, tName)
	if _, err := e.Apply(ctx, tName, kvRow(2, 20)); err != nil {
		t.Fatal(err)
	}
	r, err := e.ReadConsistent(ctx, []catalog.ObjectName{tName}, version.Strong, "test")
	if err != nil {
		t.Fatal(err)
	}
	if got := sorted(r.Rows[tName]); got != "(2, 20)" {
		t.Fatalf("the table created again: %q", got)
	}
}
