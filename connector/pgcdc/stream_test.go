package pgcdc_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/connector/pgcdc"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

func col(name string, t types.Type, notNull bool) catalog.Column {
	return catalog.Column{Name: name, Type: t, NotNull: notNull}
}

func numeric(t *testing.T, p, s int) types.Type {
	nt, err := types.NumericType(p, s)
	if err != nil {
		t.Fatal(err)
	}
	return nt
}

// TestSnapshotStreamReplay takes the initial snapshot of two tables (one
// with REPLICA IDENTITY FULL, one with its key as identity), streams three
// transactions with every kind of change, then checks the replay rules: a
// rewind in the same Stream and a fresh Stream (a restarted process) give
// the same transactions at the same positions, a confirmed position
// reaches the slot, and a resume below it is refused.
func TestSnapshotStreamReplay(t *testing.T) {
	ctx := context.Background()
	opts, conn := db(t, "snapstream")
	run(t, conn, `
		CREATE TABLE accounts (id int PRIMARY KEY, name text NOT NULL, balance numeric(12,2));
		ALTER TABLE accounts REPLICA IDENTITY FULL;
		CREATE TABLE notes (id bigint PRIMARY KEY, body varchar(20), at timestamptz);
		CREATE TABLE other (x int);
		INSERT INTO accounts VALUES (1, 'ann', 10.50), (2, 'bob', NULL);
		INSERT INTO notes VALUES (7, 'hello', '2024-03-01 12:00:00+02');`)
	cfg := pgcdc.Config{Options: opts, StatusInterval: 20 * time.Millisecond, Tables: []pgcdc.Table{
		{Upstream: "public.accounts", Name: "acc", PrimaryKey: []string{"id"},
			Columns: []catalog.Column{col("id", types.Int32, true), col("name", types.Text, true), col("balance", numeric(t, 12, 2), false)}},
		{Upstream: "notes", Name: "nts", PrimaryKey: []string{"id"},
			Columns: []catalog.Column{col("id", types.Int64, true), col("body", types.Varchar, false), col("at", types.TimestampTZ, false)}},
	}}
	s, err := pgcdc.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	l := s.Layout()
	if got := l.Width(); got != 7 {
		t.Fatalf("layout width %d, want 7 (tag + 3 + 3)", got)
	}

	snap, cp := next(t, s, 0)
	snapRows := rows(l, snap)
	slices.Sort(snapRows)
	sameLines(t, "snapshot", snapRows, []string{
		"acc +I 1|ann|10.50",
		"acc +I 2|bob|NULL",
		"nts +I 7|hello|2024-03-01 10:00:00+00",
	})
	if got := value(t, conn, "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '"+opts.Slot+"'"); got != pglogrepl.LSN(cp).String() {
		t.Fatalf("snapshot ends at %s, slot's consistent point is %s", pglogrepl.LSN(cp), got)
	}

	// A change committed while the snapshot was being taken is after the
	// consistent point, so it streams; the three transactions follow.
	run(t, conn, `BEGIN;
		INSERT INTO accounts VALUES (3, 'cy', 1);
		UPDATE accounts SET balance = 11 WHERE id = 1;
		UPDATE notes SET body = 'hi' WHERE id = 7;
		COMMIT`)
	run(t, conn, "INSERT INTO other VALUES (1)") // not published: no transaction
	run(t, conn, `BEGIN;
		UPDATE accounts SET id = 4 WHERE id = 3;
		UPDATE notes SET id = 8 WHERE id = 7;
		COMMIT`)
	run(t, conn, `BEGIN;
		DELETE FROM accounts WHERE id = 2;
		DELETE FROM notes WHERE id = 8;
		INSERT INTO notes VALUES (9, NULL, NULL);
		COMMIT`)
	want := [][]string{{
		"acc +I 3|cy|1.00",
		"acc -U 1|ann|10.50",
		"acc +U 1|ann|11.00",
		"nts +U 7|hi|2024-03-01 10:00:00+00",
	}, {
		"acc -U 3|cy|1.00",
		"acc +U 4|cy|1.00",
		"nts -D 7|NULL|NULL",
		"nts +I 8|hi|2024-03-01 10:00:00+00",
	}, {
		"acc -D 2|bob|NULL",
		"nts -D 8|NULL|NULL",
		"nts +I 9|NULL|NULL",
	}}
	positions := []uint64{cp}
	var got [][]string
	for i := range want {
		c, n := next(t, s, positions[i])
		got = append(got, rows(l, c))
		sameLines(t, "transaction", got[i], want[i])
		positions = append(positions, n)
	}

	// A rewind (a restored checkpoint) replays the same transactions.
	for _, from := range []int{1, 0} {
		for i := from; i < len(want); i++ {
			c, n := next(t, s, positions[i])
			sameLines(t, "replayed transaction", rows(l, c), want[i])
			if n != positions[i+1] {
				t.Fatalf("replayed transaction %d ends at %d, first read at %d", i, n, positions[i+1])
			}
		}
	}
	// So does a rewind to the snapshot, held until confirmed.
	c, n := next(t, s, 0)
	if n != cp || c.Len() != 3 {
		t.Fatalf("snapshot replay: %d rows ending at %d, want 3 ending at %d", c.Len(), n, cp)
	}

	// Confirm the first transaction: the slot learns it.
	s.Confirm(positions[1])
	c, _ = next(t, s, positions[1]) // a session runs and reports
	sameLines(t, "after confirm", rows(l, c), want[1])
	waitConfirmed(t, conn, opts.Slot, positions[1])
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// A fresh Stream (a restarted process) resumes at a confirmed
	// position with the same transactions.
	s2, err := pgcdc.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	for i := 1; i < len(want); i++ {
		c, n := next(t, s2, positions[i])
		sameLines(t, "transaction after a restart", rows(l, c), want[i])
		if n != positions[i+1] {
			t.Fatalf("transaction %d ends at %d after a restart, %d before", i, n, positions[i+1])
		}
	}
	// Below the confirmed position the WAL may be gone: refused.
	if err := nextErr(t, s2, cp); !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("resume below the confirmed position: %v, want ErrCorruption", err)
	}

	// DROP SOURCE: the slot goes, and a resume then says so.
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s2.Next(positions[1]); !errors.Is(err, base.ErrClosed) {
		t.Fatalf("Next after Close: %v, want ErrClosed", err)
	}
	if err := s2.DropSlot(ctx); err != nil {
		t.Fatal(err)
	}
	if got := value(t, conn, "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '"+opts.Slot+"'"); got != "0" {
		t.Fatalf("%s slots left after DropSlot", got)
	}
	if err := s2.DropSlot(ctx); err != nil {
		t.Fatalf("dropping a dropped slot: %v", err)
	}
	s3, err := pgcdc.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s3.Close()
	if err := nextErr(t, s3, positions[1]); !errors.Is(err, base.ErrNotFound) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("resume without the slot: %v, want ErrNotFound", err)
	}
}

// waitConfirmed waits until the slot's confirmed position is pos.
func waitConfirmed(t *testing.T, conn *pgconn.PgConn, slot string, pos uint64) {
	t.Helper()
	want := pglogrepl.LSN(pos).String()
	var got string
	for range 500 {
		got = value(t, conn, "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '"+slot+"'")
		if got == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("slot %s confirmed %s, want %s", slot, got, want)
}
