package engine

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratadb/strata/internal/pgtest"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestDropSourceDropsSlot: DROP SOURCE of a postgres-cdc source drops its
// replication slot upstream, and its publication when the source created
// it; a publication the user created stays. A DROP whose upstream drop
// was cut short by a crash is finished by the next start (the intent),
// and one whose upstream cannot be reached succeeds with a notice naming
// the slot to drop by hand.
func TestDropSourceDropsSlot(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pg := pgtest.Start(t)
	ctx := context.Background()
	up, err := pgx.Connect(ctx, pg.CreateDatabase(t, "dropsrc"))
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close(ctx)
	for _, q := range []string{
		"CREATE TABLE orders (id int PRIMARY KEY, qty int)",
		"INSERT INTO orders VALUES (1, 10)",
		"CREATE PUBLICATION mine FOR TABLE orders",
	} {
		if _, err := up.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	e, err := Open(ctx, Options{Dir: t.TempDir(), EpochInterval: 50 * time.Millisecond, CheckpointInterval: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	count := func(q string) string {
		t.Helper()
		var n int
		if err := up.QueryRow(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return fmt.Sprint(n)
	}
	// upstream is "slots publications" named after name.
	upstream := func(name string) string {
		return count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = '"+name+"_slot'") + " " +
			count("SELECT count(*) FROM pg_publication WHERE pubname = '"+name+"_pub'")
	}
	// source creates source name over publication pub and a table fed by
	// it (which makes the slot), then drops the table, which leaves the
	// slot inactive.
	source := func(name, pub string) catalog.ObjectName {
		t.Helper()
		src := catalog.Source{Name: catalog.Name(DefaultDatabase, name), Connector: PostgresCDC, Options: map[string]string{
			"connector": PostgresCDC, "hostname": pg.Host, "port": fmt.Sprint(pg.Port), "username": pgtest.Superuser,
			"database": "dropsrc", "slot": name + "_slot", "publication": pub}}
		if err := e.CreateSource(ctx, src, false); err != nil {
			t.Fatal(err)
		}
		tb := catalog.Name(DefaultDatabase, name+"_orders")
		if err := e.CreateTable(ctx, catalog.Table{Name: tb, PrimaryKey: []string{"id"},
			Columns: []catalog.Column{{Name: "id", Type: types.Int32}, {Name: "qty", Type: types.Int32}},
			Options: map[string]string{OptionSource: src.Name.String(), OptionSourceTable: "public.orders"}}, false); err != nil {
			t.Fatal(err)
		}
		if err := e.Drop(ctx, "table", tb, false, false); err != nil {
			t.Fatal(err)
		}
		return src.Name
	}

	// The source made its publication: both go.
	own := source("own", "own_pub")
	if got := upstream("own"); got != "1 1" {
		t.Fatalf("own: %s slots and publications before DROP SOURCE, want 1 1", got)
	}
	if n, err := e.DropSource(ctx, own, false); err != nil || n != nil {
		t.Fatalf("DROP SOURCE own: notice %v, error %v", n, err)
	}
	if got := upstream("own"); got != "0 0" {
		t.Fatalf("own: %s slots and publications after DROP SOURCE, want 0 0", got)
	}

	// The user's publication stays; the slot goes.
	user := source("user", "mine")
	if n, err := e.DropSource(ctx, user, false); err != nil || n != nil {
		t.Fatalf("DROP SOURCE user: notice %v, error %v", n, err)
	}
	if got := count("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'user_slot'") + " " +
		count("SELECT count(*) FROM pg_publication WHERE pubname = 'mine'"); got != "0 1" {
		t.Fatalf("user: %s slots and publications named mine after DROP SOURCE, want 0 1", got)
	}

	// A crash after the catalog change: the next start drops the slot.
	cut := source("cut", "cut_pub")
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := planUpstreamDrop(cat, cut)
	if err != nil || plan == nil {
		t.Fatalf("plan of DROP SOURCE cut: %v, %v", plan, err)
	}
	intent, err := e.writeSourceDropIntent(*plan)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.replayDropIntents(ctx); err != nil {
		t.Fatal(err)
	}
	if got := upstream("cut"); got != "1 1" {
		t.Fatalf("cut: %s slots and publications after replaying the intent of a DROP that did not commit, want 1 1", got)
	}
	if intent, err = e.writeSourceDropIntent(*plan); err != nil {
		t.Fatal(err)
	}
	if err := e.meta.DropSource(ctx, cut); err != nil {
		t.Fatal(err)
	}
	if err := e.replayDropIntents(ctx); err != nil {
		t.Fatal(err)
	}
	if got := upstream("cut"); got != "0 0" {
		t.Fatalf("cut: %s slots and publications after replaying the intent of a committed DROP, want 0 0", got)
	}
	if _, err := os.Stat(intent); !os.IsNotExist(err) {
		t.Fatalf("the intent is left after its replay: %v", err)
	}

	// An upstream that cannot be reached: the DROP succeeds and says
	// which slot to drop by hand.
	gone := source("gone", "gone_pub")
	up.Close(ctx)
	if err := pg.Stop(); err != nil {
		t.Fatal(err)
	}
	n, err := e.DropSource(ctx, gone, false)
	if err != nil {
		t.Fatalf("DROP SOURCE gone with the upstream stopped: %v", err)
	}
	if n == nil || !strings.Contains(n.Message, "replication slot gone_slot of source dev.gone could not be dropped") ||
		!strings.Contains(n.Message, "SELECT pg_drop_replication_slot('gone_slot')") || !strings.Contains(n.Hint, "DROP PUBLICATION gone_pub") {
		t.Fatalf("DROP SOURCE gone with the upstream stopped: notice %+v", n)
	}
	if cat, err = e.Catalog(ctx); err != nil {
		t.Fatal(err)
	}
	if cat.IsSource(gone) {
		t.Fatal("source gone is still in the catalog")
	}
}
