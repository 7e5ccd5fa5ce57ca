package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratadb/strata/internal/pgtest"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/sqlerr"
)

// TestCDCTableFilledAtCreate: CREATE TABLE ... FROM a postgres-cdc source
// returns once the table's initial snapshot is committed, so a read right
// after it sees the upstream rows; a CREATE canceled while it waits
// leaves no table behind.
func TestCDCTableFilledAtCreate(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pg := pgtest.Start(t)
	ctx := context.Background()
	up, err := pgx.Connect(ctx, pg.CreateDatabase(t, "filled"))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE notes (id int PRIMARY KEY, s text)",
		"INSERT INTO notes VALUES (1, 'a'), (2, 'b')",
		"CREATE TABLE late (id int PRIMARY KEY)",
		"INSERT INTO late VALUES (7)",
	} {
		if _, err := up.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Long epochs: the snapshot takes an epoch to commit, so the CREATE
	// canceled below is still waiting when it is canceled.
	e, err := Open(ctx, Options{Dir: t.TempDir(), EpochInterval: time.Second, CheckpointInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	src := catalog.Source{Name: catalog.Name(DefaultDatabase, "shop"), Connector: PostgresCDC, Options: map[string]string{
		"connector": PostgresCDC, "hostname": pg.Host, "port": fmt.Sprint(pg.Port), "username": pgtest.Superuser,
		"database": "filled", "slot": "filled_slot", "publication": "filled_pub"}}
	if err := e.CreateSource(ctx, src, false); err != nil {
		t.Fatal(err)
	}
	notes := catalog.Name(DefaultDatabase, "notes")
	if err := e.CreateTable(ctx, catalog.Table{Name: notes, PrimaryKey: []string{"id"},
		Columns: []catalog.Column{{Name: "id", Type: types.Int32}, {Name: "s", Type: types.Text}},
		Options: map[string]string{OptionSource: src.Name.String(), OptionSourceTable: "public.notes"}}, false); err != nil {
		t.Fatal(err)
	}
	r, err := e.ReadConsistent(ctx, []catalog.ObjectName{notes}, version.Strong, "test")
	if err != nil {
		t.Fatal(err)
	}
	if rows := r.Rows[notes]; len(rows) != 2 || rows[0][1].Str()+rows[1][1].Str() != "ab" && rows[0][1].Str()+rows[1][1].Str() != "ba" {
		t.Fatalf("notes right after CREATE: %s, want both upstream rows", sorted(rows))
	}

	// A CREATE canceled while it waits for the snapshot leaves nothing.
	late := catalog.Name(DefaultDatabase, "late")
	cctx, cancel := context.WithCancel(ctx)
	go func() {
		// Cancel once the source's new job (feeding late too) runs: the
		// CREATE then waits for late's snapshot.
		for cctx.Err() == nil {
			e.mu.Lock()
			rj := e.jobs[cdcJobName(src.Name)]
			e.mu.Unlock()
			if rj != nil && slices.Contains(rj.def.Writes, late) {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	err = e.CreateTable(cctx, catalog.Table{Name: late, PrimaryKey: []string{"id"},
		Columns: []catalog.Column{{Name: "id", Type: types.Int32}},
		Options: map[string]string{OptionSource: src.Name.String(), OptionSourceTable: "public.late"}}, false)
	cancel()
	if sqlerr.Code(err) != sqlerr.QueryCanceled {
		t.Fatalf("canceled CREATE TABLE late: %v, want 57014", err)
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cat.Table(late); err == nil {
		t.Fatal("late is in the catalog after its CREATE was canceled")
	}
	if _, err := e.Table(late); err == nil {
		t.Fatal("late's storage is still open")
	}
	// The source goes on feeding notes.
	if _, err := up.Exec(ctx, "INSERT INTO notes VALUES (3, 'c')"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := e.ReadConsistent(ctx, []catalog.ObjectName{notes}, version.Strong, "test")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Rows[notes]) == 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("notes after the insert: %s", sorted(r.Rows[notes]))
		}
		time.Sleep(50 * time.Millisecond)
	}
	// DROP SOURCE names every table of the source and what is built on
	// them.
	if err := e.CreateView(ctx, catalog.Name(DefaultDatabase, "nv"), "SELECT count(*) AS n FROM notes", nil, false); err != nil {
		t.Fatal(err)
	}
	_, err = e.DropSource(ctx, src.Name, false)
	se := &sqlerr.Error{}
	if !errors.As(err, &se) || se.Code != sqlerr.DependentObjectsStillExist ||
		!strings.Contains(se.Message, "cannot drop source shop because table notes is created from it, and nv depends on them") ||
		se.Detail != "table notes depends on source shop\nmaterialized view nv depends on table notes" {
		t.Fatalf("DROP SOURCE shop: %v (detail %q)", err, se.Detail)
	}
}
