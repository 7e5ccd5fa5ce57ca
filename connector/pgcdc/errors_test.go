package pgcdc_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pglogrepl"

	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/pgcdc"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
)

// TestBadValues runs the error modes on a Stream against a real server:
// table s_t dead-letters its bad rows, s_u skips them. A bad row of the
// initial snapshot, a COPY whose multi-insert record holds two bad rows,
// an update under REPLICA IDENTITY FULL whose new row is bad, and a
// transaction with a bad and a good row of s_u each leave out only the
// bad images; the dead letters carry distinct positions (record LSN plus
// image index) and the row's raw text values. A rewind replays the
// transactions and hands out the same dead letters at the same positions.
func TestBadValues(t *testing.T) {
	ctx := context.Background()
	opts, conn := db(t, "badvalues")
	run(t, conn, `CREATE TABLE t (id int PRIMARY KEY, v text); ALTER TABLE t REPLICA IDENTITY FULL;
		CREATE TABLE u (id int PRIMARY KEY, n bigint);
		INSERT INTO t VALUES (1, 'in the snapshot')`)
	var mu sync.Mutex
	var letters []string
	dead, err := format.NewErrors(format.DeadLetter, func(r format.BadRecord) error {
		mu.Lock()
		defer mu.Unlock()
		letters = append(letters, fmt.Sprintf("%d|%s|%s|%s: %v", r.Position, r.Source, r.Where, r.Raw, r.Err))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	skip, err := format.NewErrors(format.Skip, nil)
	if err != nil {
		t.Fatal(err)
	}
	varchar3, err := types.VarcharType(3)
	if err != nil {
		t.Fatal(err)
	}
	s, err := pgcdc.Open(ctx, pgcdc.Config{Options: opts, Name: "pg", Tables: []pgcdc.Table{
		{Upstream: "t", Name: "s_t", PrimaryKey: []string{"id"}, Columns: []catalog.Column{col("id", types.Int32, true), col("v", varchar3, false)}, Errors: dead},
		{Upstream: "u", Name: "s_u", PrimaryKey: []string{"id"}, Columns: []catalog.Column{col("id", types.Int32, true), col("n", types.Int16, false)}, Errors: skip},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	taken := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := letters
		letters = nil
		return out
	}

	c, start := next(t, s, 0)
	if c.Len() != 0 {
		t.Fatalf("snapshot: %v, want no rows", rows(s.Layout(), c))
	}
	snap := taken()
	want := fmt.Sprintf(`%d|postgres-cdc source pg|table s_t column v: row 0 of the initial snapshot|{"id":"1","v":"in the snapshot"}: value too long for type character varying(3)`, pgcdc.SnapshotPosition(0))
	sameLines(t, "snapshot dead letters", snap, []string{want})

	if _, err := conn.CopyFrom(ctx, strings.NewReader("2\tok\n3\tlong one\n4\tlonger one\n"), "COPY t FROM STDIN"); err != nil {
		t.Fatal(err)
	}
	run(t, conn, "UPDATE t SET v = 'four' WHERE id = 2")
	run(t, conn, "BEGIN; INSERT INTO u VALUES (1, 70000), (2, 5); COMMIT")

	var got []string
	pos := start
	for range 3 {
		c, pos = next(t, s, pos)
		got = append(got, rows(s.Layout(), c)...)
	}
	sameLines(t, "good rows", got, []string{"s_t +I 2|ok", "s_t -U 2|ok", "s_u +I 2|5"})
	first := taken()
	if len(first) != 3 {
		t.Fatalf("dead letters: %q, want 3", first)
	}
	re := regexp.MustCompile(`^(\d+)\|postgres-cdc source pg\|table s_t column v: (insert|update \(new row\)) at ([0-9A-F]+/[0-9A-F]+) in the transaction committing at [0-9A-F]+/[0-9A-F]+\|(.*)$`)
	var base [3]uint64
	for i, l := range first {
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("dead letter %q", l)
		}
		lsn, err := pglogrepl.ParseLSN(m[3])
		if err != nil {
			t.Fatal(err)
		}
		base[i] = uint64(lsn)
		// The COPY's rows 3 and 4 are images 1 and 2 of one multi-insert
		// record; the update's new row is image 1 of its record.
		wantPos := []uint64{uint64(lsn) + 1, uint64(lsn) + 2, uint64(lsn) + 1}[i]
		if m[1] != fmt.Sprint(wantPos) {
			t.Fatalf("dead letter %q: position %s, want %d", l, m[1], wantPos)
		}
		wantRaw := []string{`{"id":"3","v":"long one"}`, `{"id":"4","v":"longer one"}`, `{"id":"2","v":"four"}`}[i]
		if !strings.HasPrefix(m[4], wantRaw+": value too long") {
			t.Fatalf("dead letter %q: want raw %s", l, wantRaw)
		}
	}
	if base[0] != base[1] || base[2] <= base[1] {
		t.Fatalf("record LSNs %v: want the COPY's two rows in one record, the update after", base)
	}
	if skip.Skipped() != 1 || dead.Skipped() != 4 {
		t.Fatalf("skipped: s_u %d, s_t %d; want 1 and 4", skip.Skipped(), dead.Skipped())
	}

	// A rewind to the start of streaming replays the three transactions:
	// the same rows, the same dead letters at the same positions.
	got, pos = nil, start
	for range 3 {
		c, pos = next(t, s, pos)
		got = append(got, rows(s.Layout(), c)...)
	}
	sameLines(t, "good rows after the rewind", got, []string{"s_t +I 2|ok", "s_t -U 2|ok", "s_u +I 2|5"})
	sameLines(t, "dead letters after the rewind", taken(), first)
	if skip.Skipped() != 2 {
		t.Fatalf("s_u skipped %d after the replay, want 2", skip.Skipped())
	}
}

// quarantines records the quarantines a Stream reports through
// Config.OnQuarantine, as a caller that keeps them would.
type quarantines struct {
	mu  sync.Mutex
	got []pgcdc.Quarantine
}

func (q *quarantines) record(x pgcdc.Quarantine) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.got = append(q.got, x)
	return nil
}

func (q *quarantines) list() []pgcdc.Quarantine {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]pgcdc.Quarantine(nil), q.got...)
}

// TestBadValueQuarantinesItsTable: a bad value of a table without an
// error mode quarantines that table from the transaction on (nothing of
// it from there, the error naming the source, table, column and LSNs),
// while the transaction's other table and the later transactions go on.
// A new Stream given the recorded quarantine replays the same cut without
// recording it again.
func TestBadValueQuarantinesItsTable(t *testing.T) {
	ctx := context.Background()
	opts, conn := db(t, "badfail")
	run(t, conn, "CREATE TABLE t (id int PRIMARY KEY, n numeric); CREATE TABLE u (id int PRIMARY KEY)")
	tables := []pgcdc.Table{
		{Upstream: "t", Name: "s_t", PrimaryKey: []string{"id"}, Columns: []catalog.Column{col("id", types.Int32, true), col("n", numeric(t, 4, 1), false)}},
		{Upstream: "u", Name: "s_u", PrimaryKey: []string{"id"}, Columns: []catalog.Column{col("id", types.Int32, true)}},
	}
	var rec quarantines
	s, err := pgcdc.Open(ctx, pgcdc.Config{Options: opts, Name: "pg", Tables: tables, OnQuarantine: rec.record})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, start := next(t, s, 0)
	run(t, conn, "INSERT INTO t VALUES (0, 1.5)")
	run(t, conn, "BEGIN; INSERT INTO u VALUES (1); INSERT INTO t VALUES (1, 2.5); INSERT INTO t VALUES (2, 'Infinity'); COMMIT")
	run(t, conn, "BEGIN; INSERT INTO u VALUES (2); INSERT INTO t VALUES (3, 3.5); COMMIT")
	var got []string
	pos := start
	for range 3 {
		var c *types.Chunk
		c, pos = next(t, s, pos)
		got = append(got, rows(s.Layout(), c)...)
	}
	want := []string{"s_t +I 0|1.5", "s_u +I 1", "s_u +I 2"}
	sameLines(t, "rows", got, want)
	q := s.Quarantined()
	if len(q) != 1 || q[0].Table != "s_t" {
		t.Fatalf("quarantined: %+v", q)
	}
	re := regexp.MustCompile(`^postgres-cdc source pg: table s_t column n: insert at [0-9A-F]+/[0-9A-F]+ in the transaction committing at ([0-9A-F]+/[0-9A-F]+): numeric field overflow`)
	m := re.FindStringSubmatch(q[0].Err)
	if m == nil {
		t.Fatalf("quarantine error %q", q[0].Err)
	}
	if lsn, err := pglogrepl.ParseLSN(m[1]); err != nil || uint64(lsn) != q[0].From {
		t.Fatalf("quarantined from %d, the error names commit %s", q[0].From, m[1])
	}
	if r := rec.list(); len(r) != 1 || r[0] != q[0] {
		t.Fatalf("recorded %+v, want %+v", r, q)
	}
	s.Close()

	// Another run, given the recorded quarantine, replays the same cut and
	// records nothing new.
	var rec2 quarantines
	s2, err := pgcdc.Open(ctx, pgcdc.Config{Options: opts, Name: "pg", Tables: tables, Quarantined: rec.list(), OnQuarantine: rec2.record})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, pos = nil, start
	for range 3 {
		var c *types.Chunk
		c, pos = next(t, s2, pos)
		got = append(got, rows(s2.Layout(), c)...)
	}
	sameLines(t, "rows replayed", got, want)
	if r := rec2.list(); len(r) != 0 {
		t.Fatalf("the replay recorded %+v", r)
	}
}
