package engine

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pglogrepl"
	"github.com/jackc/pgx/v5"

	"github.com/stratadb/strata/internal/pgtest"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/sql/sqlerr"
)

// The bad-input tests of postgres-cdc share one transaction: it inserts
// two rows into a (the second's name is too long for Strata's
// VARCHAR(5)), inserts into b and updates b's snapshot row, and inserts
// into c. Table a has the errors mode under test; b and c fail (the
// default) but get no bad row.
var (
	cdcErrTables = []catalog.ObjectName{catalog.Name(DefaultDatabase, "a"), catalog.Name(DefaultDatabase, "b"), catalog.Name(DefaultDatabase, "c")}
	// What a consistent read of a, b, c shows before the transaction
	// (the initial snapshot) and after it (without a's bad row).
	cdcErrBefore = "a: \nb: 0|0\nc: "
	cdcErrAfter  = "a: 1|ok\nb: 0|5 1|10\nc: 1|2.50"
)

const cdcErrTxn = `BEGIN;
INSERT INTO a VALUES (1, 'ok'), (2, 'far too long');
INSERT INTO b VALUES (1, 10);
UPDATE b SET qty = 5 WHERE id = 0;
INSERT INTO c VALUES (1, 2.50);
COMMIT`

// cdcErrSetup makes database db upstream with tables a, b and c, and
// returns a connection to it.
func cdcErrSetup(t *testing.T, pg *pgtest.Server, db string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	up, err := pgx.Connect(ctx, pg.CreateDatabase(t, db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close(context.Background()) })
	for _, q := range []string{
		"CREATE TABLE a (id int PRIMARY KEY, name varchar(40))",
		"CREATE TABLE b (id int PRIMARY KEY, qty bigint)",
		"CREATE TABLE c (id int PRIMARY KEY, amount numeric(12,2))",
		"INSERT INTO b VALUES (0, 0)",
	} {
		if _, err := up.Exec(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return up
}

// cdcErrCreate creates source pg over database db and Strata tables a
// (errors = mode, "" for none), b and c fed by it.
func cdcErrCreate(t *testing.T, e *Engine, pg *pgtest.Server, db, mode string) {
	t.Helper()
	ctx := context.Background()
	src := catalog.Source{Name: catalog.Name(DefaultDatabase, "pg"), Connector: PostgresCDC, Options: map[string]string{
		"connector": PostgresCDC, "hostname": pg.Host, "port": fmt.Sprint(pg.Port), "username": pgtest.Superuser,
		"database": db, "slot": db + "_slot", "publication": db + "_pub"}}
	if err := e.CreateSource(ctx, src, false); err != nil {
		t.Fatal(err)
	}
	typ := func(s string) types.Type {
		ty, err := types.ParseType(s)
		if err != nil {
			t.Fatal(err)
		}
		return ty
	}
	defs := []struct {
		name, col, colType string
	}{{"a", "name", "VARCHAR(5)"}, {"b", "qty", "INTEGER"}, {"c", "amount", "NUMERIC(12,2)"}}
	for _, d := range defs {
		opts := map[string]string{OptionSource: src.Name.String(), OptionSourceTable: "public." + d.name}
		if d.name == "a" && mode != "" {
			opts["errors"] = mode
		}
		tb := catalog.Table{Name: catalog.Name(DefaultDatabase, d.name), PrimaryKey: []string{"id"}, Options: opts,
			Columns: []catalog.Column{{Name: "id", Type: types.Int32}, {Name: d.col, Type: typ(d.colType)}}}
		if err := e.CreateTable(ctx, tb, false); err != nil {
			t.Fatal(err)
		}
	}
}

// cdcErrRead reads a, b and c at one consistent version, each table as
// "name: row row ..." with rows "v|v" sorted.
func cdcErrRead(t *testing.T, e *Engine) string {
	t.Helper()
	r, err := e.ReadConsistent(context.Background(), cdcErrTables, version.Strong, "cdc-errors-test")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, n := range cdcErrTables {
		var rows []string
		for _, row := range r.Rows[n] {
			vals := make([]string, len(row))
			for i, d := range row {
				vals[i] = types.FormatText(d, time.UTC)
			}
			rows = append(rows, strings.Join(vals, "|"))
		}
		slices.Sort(rows)
		lines = append(lines, n.Name+": "+strings.Join(rows, " "))
	}
	return strings.Join(lines, "\n")
}

// cdcErrWait polls consistent reads until they show want, failing t when
// a read shows anything but one of allowed or want: the transaction is
// seen whole or not at all.
func cdcErrWait(t *testing.T, e *Engine, want string, allowed ...string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		got := cdcErrRead(t, e)
		if got == want {
			return
		}
		if !slices.Contains(allowed, got) {
			t.Fatalf("a consistent read shows\n%s\nwant\n%s\nor one of %q", got, want, allowed)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 60 s a consistent read shows\n%s\nwant\n%s", got, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// walLSN returns the server's current WAL insert location.
func walLSN(t *testing.T, up *pgx.Conn) pglogrepl.LSN {
	t.Helper()
	var s string
	if err := up.QueryRow(context.Background(), "SELECT pg_current_wal_insert_lsn()::text").Scan(&s); err != nil {
		t.Fatal(err)
	}
	l, err := pglogrepl.ParseLSN(s)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// deadLetterLines returns the number of lines of dir's dead-letter file.
func deadLetterLines(t *testing.T, dir string) int {
	t.Helper()
	f, err := os.Open(dir + "/dead_letters.jsonl")
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		n++
	}
	return n
}

// TestCDCBadInput runs the error modes of postgres-cdc against one
// private PostgreSQL, each in its own database, source and engine.
func TestCDCBadInput(t *testing.T) {
	if testing.Short() {
		t.Skip("starts PostgreSQL")
	}
	pg := pgtest.Start(t)
	for _, tc := range []struct {
		name string
		run  func(*testing.T, *pgtest.Server)
	}{
		{"quarantine", cdcBadRowQuarantines}, {"skip", cdcBadRowSkips}, {"dead-letter", cdcBadRowDeadLetter}, {"option", cdcErrorsOption},
		{"unreachable", cdcSourceUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.run(t, pg)
		})
	}
}

// cdcBadRowQuarantines: by default a row whose value does not fit
// quarantines its table only: nothing of its transaction (or later ones)
// reaches that table, a read of it fails naming the source, table,
// column and commit LSN, strata_catalog.jobs shows the error, and the
// transaction's other tables and later transactions go on. The
// quarantine outlives a restart. An upstream column whose type changes to
// one the source cannot map quarantines its table the same way.
func cdcBadRowQuarantines(t *testing.T, pg *pgtest.Server) {
	ctx := context.Background()
	up := cdcErrSetup(t, pg, "errfail")
	dir := t.TempDir()
	e := openTest(t, dir)
	defer func() { e.Close() }()
	cdcErrCreate(t, e, pg, "errfail", "")
	cdcErrWait(t, e, cdcErrBefore, "a: \nb: \nc: ")
	before := walLSN(t, up)
	if _, err := up.Exec(ctx, cdcErrTxn); err != nil {
		t.Fatal(err)
	}
	after := walLSN(t, up)
	// b and c take the transaction; a keeps what it had before it.
	cdcErrWait(t, e, "a: \nb: 0|5 1|10\nc: 1|2.50", cdcErrBefore)

	a := catalog.Name(DefaultDatabase, "a")
	err := e.SourceTableError(ctx, a)
	if sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState {
		t.Fatalf("a read of a: %v, want 55000", err)
	}
	msg := err.Error()
	for _, w := range []string{"table a no longer follows source pg", "postgres-cdc source pg: table a column name: insert at ", `value too long for type character varying(5)`, "DROP TABLE a"} {
		if !strings.Contains(msg, w) {
			t.Fatalf("read error %q does not say %q", msg, w)
		}
	}
	m := regexp.MustCompile(`in the transaction committing at ([0-9A-F]+/[0-9A-F]+)`).FindStringSubmatch(msg)
	if m == nil {
		t.Fatalf("read error %q names no commit LSN", msg)
	}
	lsn, err := pglogrepl.ParseLSN(m[1])
	if err != nil || lsn < before || lsn >= after {
		t.Fatalf("commit LSN %s (%v) is not that of the transaction, in [%s, %s)", m[1], err, before, after)
	}
	for _, n := range []string{"b", "c"} {
		if err := e.SourceTableError(ctx, catalog.Name(DefaultDatabase, n)); err != nil {
			t.Fatalf("a read of %s: %v", n, err)
		}
	}
	job := cdcJobName(catalog.Name(DefaultDatabase, "pg"))
	jobError := func() string {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for {
			rows, err := e.systemRows(ctx, "jobs")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				if r[0].Str() == job && !r[10].IsNull() {
					return r[10].Str()
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("strata_catalog.jobs shows no error for %s: %v", job, rows)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	if got := jobError(); !strings.Contains(got, "table a is quarantined") || !strings.Contains(got, "table a column name") {
		t.Fatalf("strata_catalog.jobs error of %s: %q", job, got)
	}
	skipped, err := e.systemRows(ctx, "skipped")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range skipped {
		if r[1].Int64() != 0 {
			t.Fatalf("fail mode skipped rows: %v", skipped)
		}
	}

	// Later transactions: a takes nothing, b goes on.
	if _, err := up.Exec(ctx, "BEGIN; INSERT INTO a VALUES (3, 'x'); INSERT INTO b VALUES (2, 20); COMMIT"); err != nil {
		t.Fatal(err)
	}
	cdcErrWait(t, e, "a: \nb: 0|5 1|10 2|20\nc: 1|2.50", "a: \nb: 0|5 1|10\nc: 1|2.50")

	// The quarantine outlives a restart.
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := up.Exec(ctx, "BEGIN; INSERT INTO a VALUES (4, 'y'); INSERT INTO b VALUES (3, 30); COMMIT"); err != nil {
		t.Fatal(err)
	}
	e = openTest(t, dir)
	cdcErrWait(t, e, "a: \nb: 0|5 1|10 2|20 3|30\nc: 1|2.50", "a: \nb: 0|5 1|10 2|20\nc: 1|2.50")
	if err := e.SourceTableError(ctx, a); sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState {
		t.Fatalf("a read of a after the restart: %v", err)
	}

	// A column type the source cannot map quarantines c alone.
	if _, err := up.Exec(ctx, "ALTER TABLE c ALTER COLUMN amount TYPE text"); err != nil {
		t.Fatal(err)
	}
	if _, err := up.Exec(ctx, "BEGIN; INSERT INTO c VALUES (2, 'two'); INSERT INTO b VALUES (4, 40); COMMIT"); err != nil {
		t.Fatal(err)
	}
	cdcErrWait(t, e, "a: \nb: 0|5 1|10 2|20 3|30 4|40\nc: 1|2.50", "a: \nb: 0|5 1|10 2|20 3|30\nc: 1|2.50")
	err = e.SourceTableError(ctx, catalog.Name(DefaultDatabase, "c"))
	if sqlerr.Code(err) != sqlerr.ObjectNotInPrerequisiteState || !strings.Contains(err.Error(), "table c column amount: Postgres type text cannot feed a column of type NUMERIC(12,2)") {
		t.Fatalf("a read of c after its column changed type: %v", err)
	}
}

// cdcBadRowSkips: with errors = 'skip' the bad row is counted and
// left out, and the rest of its transaction commits in all three tables
// at one epoch; later transactions go on, and an update to a bad value
// takes its row out.
func cdcBadRowSkips(t *testing.T, pg *pgtest.Server) {
	up := cdcErrSetup(t, pg, "errskip")
	e := openTest(t, t.TempDir())
	defer e.Close()
	cdcErrCreate(t, e, pg, "errskip", "skip")
	cdcErrWait(t, e, cdcErrBefore, "a: \nb: \nc: ")
	if _, err := up.Exec(context.Background(), cdcErrTxn); err != nil {
		t.Fatal(err)
	}
	cdcErrWait(t, e, cdcErrAfter, cdcErrBefore)
	if _, err := up.Exec(context.Background(), "INSERT INTO a VALUES (3, 'next')"); err != nil {
		t.Fatal(err)
	}
	cdcErrWait(t, e, "a: 1|ok 3|next\nb: 0|5 1|10\nc: 1|2.50", cdcErrAfter)
	// An update to a value that does not fit takes the row out (the key
	// identity sends no old row: the source deletes the key) rather than
	// leave the version before.
	if _, err := up.Exec(context.Background(), "UPDATE a SET name = 'now too long' WHERE id = 1"); err != nil {
		t.Fatal(err)
	}
	cdcErrWait(t, e, "a: 3|next\nb: 0|5 1|10\nc: 1|2.50", "a: 1|ok 3|next\nb: 0|5 1|10\nc: 1|2.50")
	skipped, err := e.systemRows(context.Background(), "skipped")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, r := range skipped {
		got[r[0].Str()] = r[1].Int64()
	}
	if fmt.Sprint(got) != "map[a:2 b:0 c:0]" {
		t.Fatalf("strata_catalog.skipped: %v, want a:2 b:0 c:0", got)
	}
	if n := deadLetterLines(t, e.Dir()); n != 0 {
		t.Fatalf("skip mode wrote %d dead letters", n)
	}
}

// cdcBadRowDeadLetter: with errors = 'dead-letter' the bad row is
// kept in strata_catalog.dead_letters with its raw text values and error,
// and the rest of its transaction commits at one epoch. A restart that
// replays the transaction (the engine stopped before a checkpoint
// covered it) writes the dead letter again, and the system table still
// shows it once.
func cdcBadRowDeadLetter(t *testing.T, pg *pgtest.Server) {
	up := cdcErrSetup(t, pg, "errdead")
	dir := t.TempDir()
	e := openTest(t, dir)
	cdcErrCreate(t, e, pg, "errdead", "dead-letter")
	cdcErrWait(t, e, cdcErrBefore, "a: \nb: \nc: ")
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// While Strata is down the transaction commits upstream. The next run
	// takes no checkpoint: it reads the transaction, writes the dead
	// letter, and stops without committing anything of it.
	if _, err := up.Exec(context.Background(), cdcErrTxn); err != nil {
		t.Fatal(err)
	}
	e, err := Open(context.Background(), Options{Dir: dir, EpochInterval: 20 * time.Millisecond, CheckpointInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for deadLetterLines(t, dir) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no dead letter within 60 s")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if got := cdcErrRead(t, e); got != cdcErrBefore {
		t.Fatalf("without a checkpoint a consistent read shows\n%s\nwant\n%s", got, cdcErrBefore)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}

	// The run after restores the checkpoint before the transaction and
	// reads it again.
	e = openTest(t, dir)
	defer e.Close()
	cdcErrWait(t, e, cdcErrAfter, cdcErrBefore)
	if n := deadLetterLines(t, dir); n != 2 {
		t.Fatalf("%d lines in the dead-letter file, want 2 (the transaction was read twice)", n)
	}
	rows, err := e.systemRows(context.Background(), "dead_letters")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 {
		t.Fatalf("strata_catalog.dead_letters has %d rows, want 1: %v", len(rows), rows)
	}
	r := rows[0]
	if r[0].Str() != "a" || r[1].Str() != "postgres-cdc source pg" {
		t.Fatalf("dead letter of table %q source %q, want a and postgres-cdc source pg", r[0].Str(), r[1].Str())
	}
	where := r[3].Str()
	for _, w := range []string{"table a column name: insert at ", " in the transaction committing at "} {
		if !strings.Contains(where, w) {
			t.Fatalf("dead letter location %q does not say %q", where, w)
		}
	}
	// Its position is the insert's WAL record (the LSN the location
	// names) plus the image's index in that record: 0, the record holds
	// one row.
	m := regexp.MustCompile(`insert at ([0-9A-F]+/[0-9A-F]+)`).FindStringSubmatch(where)
	if lsn, err := pglogrepl.ParseLSN(m[1]); err != nil || uint64(lsn) != uint64(r[2].Int64()) {
		t.Fatalf("dead letter position %d, location %q", r[2].Int64(), where)
	}
	if !strings.Contains(r[4].Str(), "value too long for type character varying(5)") {
		t.Fatalf("dead letter error %q", r[4].Str())
	}
	if raw := string(r[5].Bytes()); raw != `{"id":"2","name":"far too long"}` {
		t.Fatalf("dead letter raw %s", raw)
	}
	skipped, err := e.systemRows(context.Background(), "skipped")
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 3 {
		t.Fatalf("strata_catalog.skipped: %v", skipped)
	}
	for _, s := range skipped {
		if want := map[bool]int64{true: 1, false: 0}[s[0].Str() == "a"]; s[1].Int64() != want {
			t.Fatalf("strata_catalog.skipped: %v, want a:1 b:0 c:0", skipped)
		}
	}
}

// cdcErrorsOption: errors is a table option of a source's table (one
// mode per table); a bad value is refused naming it, and the source
// refuses it, pointing at the table.
func cdcErrorsOption(t *testing.T, pg *pgtest.Server) {
	cdcErrSetup(t, pg, "erropt")
	e := openTest(t, t.TempDir())
	defer e.Close()
	ctx := context.Background()
	opts := map[string]string{"connector": PostgresCDC, "hostname": pg.Host, "port": fmt.Sprint(pg.Port), "username": pgtest.Superuser,
		"database": "erropt", "slot": "erropt_slot", "publication": "erropt_pub", "errors": "skip"}
	err := e.CreateSource(ctx, catalog.Source{Name: catalog.Name(DefaultDatabase, "pg"), Connector: PostgresCDC, Options: opts}, false)
	if sqlerr.Code(err) != sqlerr.InvalidParameterValue || !strings.Contains(err.Error(), `option "errors" is set per table`) {
		t.Fatalf("errors on the source: %v", err)
	}
	delete(opts, "errors")
	if err := e.CreateSource(ctx, catalog.Source{Name: catalog.Name(DefaultDatabase, "pg"), Connector: PostgresCDC, Options: opts}, false); err != nil {
		t.Fatal(err)
	}
	tb := catalog.Table{Name: catalog.Name(DefaultDatabase, "a"), PrimaryKey: []string{"id"},
		Options: map[string]string{OptionSource: "dev.pg", OptionSourceTable: "public.a", "errors": "ignore"},
		Columns: []catalog.Column{{Name: "id", Type: types.Int32}, {Name: "name", Type: types.Text}}}
	err = e.CreateTable(ctx, tb, false)
	if sqlerr.Code(err) != sqlerr.InvalidParameterValue || !strings.Contains(err.Error(), `table a: option "errors": "ignore" is not one of fail, skip, dead-letter`) {
		t.Fatalf("errors = 'ignore': %v", err)
	}
	tb.Options["errors"] = "dead-letter"
	if err := e.CreateTable(ctx, tb, false); err != nil {
		t.Fatal(err)
	}
	cat, err := e.Catalog(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cat.Table(tb.Name)
	if err != nil || got.Options["errors"] != "dead-letter" {
		t.Fatalf("table a's options: %v %v", got.Options, err)
	}
}

// cdcSourceUnreachable: CREATE SOURCE connects to the database it names,
// so a wrong port or database is refused there (08001), not at the first
// CREATE TABLE ... FROM it; nothing is created. The message names the
// address and the cause once, without the driver's TLS attempt of
// sslmode=prefer (a closed port refuses it too, a server without TLS
// refuses it before the real cause).
func cdcSourceUnreachable(t *testing.T, pg *pgtest.Server) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	ctx := context.Background()
	free := func() int {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port
	}()
	for _, c := range []struct {
		host, db string
		port     int
		want     string
	}{
		{"127.0.0.1", "postgres", free, fmt.Sprintf("source bad: postgres-cdc: cannot connect to 127.0.0.1:%d: connection refused", free)},
		{pg.Host, "nosuchdb", pg.Port, fmt.Sprintf(`source bad: postgres-cdc: cannot connect to %s: database "nosuchdb" does not exist (SQLSTATE 3D000)`, net.JoinHostPort(pg.Host, fmt.Sprint(pg.Port)))},
	} {
		opts := map[string]string{"connector": PostgresCDC, "hostname": c.host, "port": fmt.Sprint(c.port), "username": pgtest.Superuser,
			"database": c.db, "slot": "unreach_slot", "publication": "unreach_pub"}
		err := e.CreateSource(ctx, catalog.Source{Name: catalog.Name(DefaultDatabase, "bad"), Connector: PostgresCDC, Options: opts}, false)
		if sqlerr.Code(err) != sqlerr.UnableToConnect || err.Error() != c.want {
			t.Fatalf("CREATE SOURCE on %s:%d/%s:\n got %v\nwant 08001 %s", c.host, c.port, c.db, err, c.want)
		}
		cat, err := e.Catalog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if cat.IsSource(catalog.Name(DefaultDatabase, "bad")) {
			t.Fatal("source bad exists after its CREATE failed")
		}
	}
}
