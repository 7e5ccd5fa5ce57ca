package pgsink_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/pgsink"
	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store"
)

func TestOptions(t *testing.T) {
	o, err := pgsink.ParseOptions(map[string]string{"connector": "postgres", "hostname": "h", "port": "6543", "username": "u",
		"password": "p", "database": "d", "table": "out"})
	want := pgsink.Options{Hostname: "h", Port: 6543, Username: "u", Password: "p", Database: "d", Schema: "public", Table: "out",
		ProgressSchema: "public", ProgressTable: "strata_sink_progress"}
	if err != nil || o != want {
		t.Fatalf("%+v %v", o, err)
	}
	o, err = pgsink.ParseOptions(map[string]string{"hostname": "h", "username": "u", "database": "d", "table": "s.t", "progress.table": "meta.done"})
	if err != nil || o.Schema != "s" || o.Table != "t" || o.ProgressSchema != "meta" || o.ProgressTable != "done" || o.Port != 5432 {
		t.Fatalf("%+v %v", o, err)
	}
	for _, tc := range []struct {
		opts map[string]string
		want string
	}{
		{map[string]string{"hostname": "h", "username": "u", "database": "d"}, `option "table" is required`},
		{map[string]string{"hostname": "h", "username": "u", "table": "t"}, `option "database" is required`},
		{map[string]string{"hostname": "h", "username": "u", "database": "d", "table": "a.b.c"}, `is not schema.table`},
		{map[string]string{"hostname": "h", "username": "u", "database": "d", "table": "t", "port": "0"}, `is not a port number`},
		{map[string]string{"hostname": "h", "username": "u", "database": "d", "table": "t", "slot": "s"}, `unknown option "slot"`},
	} {
		_, err := pgsink.ParseOptions(tc.opts)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, base.ErrInvalidArgument) {
			t.Errorf("%v: %v, want %q", tc.opts, err, tc.want)
		}
	}
}

var cols = []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "v", Type: types.Text}, {Name: "amount", Type: types.Numeric}}

func colTypes() []types.Type { return []types.Type{types.Int64, types.Text, types.Numeric} }

// TestTargetChecks: a target that cannot take the rows is refused with
// an error naming the table and the column.
func TestTargetChecks(t *testing.T) {
	o, conn := db(t, "checks")
	cfg := pgsink.Config{Options: o, Name: "k", Columns: cols, Key: []string{"id"}}
	for _, tc := range []struct {
		ddl  string
		want string
		is   error
	}{
		{"", `table public.out does not exist in database ` + o.Database + ` (create it first, e.g. CREATE TABLE "public"."out" ("id" bigint, "v" text, "amount" numeric, PRIMARY KEY ("id")))`, base.ErrNotFound},
		{"CREATE TABLE out (id bigint PRIMARY KEY, v text)", `has no column "amount"`, base.ErrInvalidArgument},
		{"CREATE TABLE out (id integer PRIMARY KEY, v text, amount numeric)", `column "id" is integer, which cannot hold the sink's BIGINT values (use one of: bigint, numeric, text, character varying, character)`, base.ErrInvalidArgument},
		{"CREATE TABLE out (id bigint PRIMARY KEY, v text, amount double precision)", `column "amount" is double precision`, base.ErrInvalidArgument},
		{"CREATE TABLE out (id bigint PRIMARY KEY, v text[], amount numeric)", `column "v" is text[]`, base.ErrInvalidArgument},
		{"CREATE TABLE out (id bigint, v text UNIQUE, amount numeric)", `no primary key or unique index on exactly (id), the key of the sink's rows, which upserts need (unique indexes: out_v_key (v))`, base.ErrInvalidArgument},
		{"CREATE TABLE out (id bigint, v text, amount numeric, PRIMARY KEY (id, v))", `no primary key or unique index on exactly (id)`, base.ErrInvalidArgument},
		{"CREATE TABLE out (id bigint PRIMARY KEY, v text, amount numeric, shop text NOT NULL)", `column "shop" is NOT NULL without a default`, base.ErrInvalidArgument},
		{"CREATE VIEW out AS SELECT 1::bigint AS id, 'a'::text AS v, 1::numeric AS amount", `public.out is not a table (relkind v)`, base.ErrInvalidArgument},
	} {
		exec(t, conn, "DROP TABLE IF EXISTS out")
		if tc.ddl != "" {
			exec(t, conn, tc.ddl)
		}
		err := pgsink.Check(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, tc.is) {
			t.Errorf("%s:\n got %v\nwant %q", tc.ddl, err, tc.want)
		}
	}
	// What fits: wider types, a unique index instead of a primary key, a
	// string column for any type, extra columns with defaults or NULLs.
	exec(t, conn, "DROP VIEW out", "CREATE TABLE out (extra int, id numeric NOT NULL UNIQUE, v varchar(10), amount text, at timestamptz NOT NULL DEFAULT now())")
	if err := pgsink.Check(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := pgsink.NewSink(pgsink.Config{Options: o, Name: "k", Columns: cols}); err == nil || !strings.Contains(err.Error(), "no primary key") {
		t.Fatalf("sink without a key: %v", err)
	}
}

// tableText returns the rows of query, one line each, columns in text
// form with NULL as NULL.
func tableText(t testing.TB, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sql string) string {
	t.Helper()
	rows, err := q.Query(context.Background(), sql, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var fields []string
		for _, v := range rows.RawValues() {
			if v == nil {
				fields = append(fields, "NULL")
			} else {
				fields = append(fields, string(v))
			}
		}
		lines = append(lines, strings.Join(fields, "|"))
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return strings.Join(lines, "\n")
}

func parse(t *testing.T, typ types.Type, s string) types.Datum {
	t.Helper()
	d, err := types.ParseText(typ, s, nil)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCommitTypesAndReplay writes every type through the sink and reads
// it back in Postgres's text form; then checks that an epoch's commit is
// applied once: re-commits of it, and of older epochs, change nothing.
func TestCommitTypesAndReplay(t *testing.T) {
	o, conn := db(t, "types")
	exec(t, conn, `CREATE TABLE out (id bigint PRIMARY KEY, b boolean, i2 smallint, i4 integer, f4 real, f8 double precision,
		n numeric(12,3), c char(3), vc varchar(8), txt text, u uuid, by bytea, d date, tm time, ts timestamp, tz timestamptz, iv interval, j jsonb)`)
	tcols := []catalog.Column{{Name: "id", Type: types.Int64}}
	spec := []struct {
		name, typ, val string
	}{
		{"b", "BOOLEAN", "t"}, {"i2", "SMALLINT", "-7"}, {"i4", "INTEGER", "2147483647"}, {"f4", "REAL", "1.5"}, {"f8", "DOUBLE PRECISION", "-0.1"},
		{"n", "NUMERIC(12,3)", "123456789.125"}, {"c", "CHAR(3)", "ab "}, {"vc", "VARCHAR(8)", "it's \"x\""}, {"txt", "TEXT", "line\nbreak, comma"},
		{"u", "UUID", "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"}, {"by", "BYTEA", `\x00ff10`}, {"d", "DATE", "2024-02-29"}, {"tm", "TIME", "13:14:15.5"},
		{"ts", "TIMESTAMP", "2024-01-02 03:04:05.123456"}, {"tz", "TIMESTAMPTZ", "2024-01-02 03:04:05+00"}, {"iv", "INTERVAL", "1 day 02:03:04"},
		{"j", "JSONB", `{"a": [1, 2]}`},
	}
	row := types.Row{types.NewInt64(1)}
	var want []string
	for _, s := range spec {
		typ, err := types.ParseType(s.typ)
		if err != nil {
			t.Fatal(err)
		}
		tcols = append(tcols, catalog.Column{Name: s.name, Type: typ})
		row = append(row, parse(t, typ, s.val))
		want = append(want, s.val)
	}
	var ts []types.Type
	for _, c := range tcols {
		ts = append(ts, c.Type)
	}
	s, err := pgsink.NewSink(pgsink.Config{Options: o, Name: "k", Columns: tcols, Key: []string{"id"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Connect(); err != nil {
		t.Fatal(err)
	}
	nulls := make(types.Row, len(row))
	nulls[0] = types.NewInt64(2)
	c := types.NewChunk(ts, 2)
	c.Append(types.Insert, row)
	c.Append(types.Insert, nulls)
	d, err := s.Prepare(0, 10, []*types.Chunk{c})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(0, 10, d); err != nil {
		t.Fatal(err)
	}
	got := tableText(t, conn, "SELECT * FROM out ORDER BY id")
	wantText := "1|" + strings.Join(want, "|") + "\n2" + strings.Repeat("|NULL", len(spec))
	if got != wantText {
		t.Fatalf("round trip:\n%s\nwant\n%s", got, wantText)
	}

	// Epoch 11 updates row 1 and deletes row 2; committing it twice, and
	// epoch 10 again, leaves the table at epoch 11.
	c = types.NewChunk(ts, 3)
	row2 := row.Copy()
	row2[len(row2)-1] = parse(t, types.JSONB, `{"b": 1}`)
	c.Append(types.UpdateBefore, row)
	c.Append(types.UpdateAfter, row2)
	c.Append(types.Delete, nulls)
	d11, err := s.Prepare(0, 11, []*types.Chunk{c})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []base.Epoch{11, 11, 10} {
		desc := d11
		if e == 10 {
			desc = d
		}
		if err := s.Commit(0, e, desc); err != nil {
			t.Fatal(err)
		}
	}
	got = tableText(t, conn, "SELECT id, j FROM out ORDER BY id")
	if got != `1|{"b": 1}` {
		t.Fatalf("after epoch 11: %q", got)
	}
	if p, err := pgsink.Progress(context.Background(), conn, o, "k", 0); err != nil || p != 11 {
		t.Fatalf("progress %d %v", p, err)
	}
	// An empty epoch only records progress; an empty re-commit of an
	// older one does not move it back.
	for _, e := range []base.Epoch{12, 11} {
		if err := s.Commit(0, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	if p, err := pgsink.Progress(context.Background(), conn, o, "k", 0); err != nil || p != 12 {
		t.Fatalf("progress %d %v", p, err)
	}
	// A value the column refuses fails the commit and leaves the table
	// and the progress as they were.
	bad := row.Copy()
	bad[0] = types.NewInt64(3)
	bad[8] = parse(t, types.Varchar, "far too long")
	c = types.NewChunk(ts, 1)
	c.Append(types.Insert, bad)
	d13, err := s.Prepare(0, 13, []*types.Chunk{c})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(0, 13, d13); err == nil || !strings.Contains(err.Error(), "character varying(8)") {
		t.Fatalf("commit of a too long value: %v", err)
	}
	if got := tableText(t, conn, "SELECT count(*) FROM out"); got != "1" {
		t.Fatalf("rows after a failed commit: %s", got)
	}
	if p, err := pgsink.Progress(context.Background(), conn, o, "k", 0); err != nil || p != 12 {
		t.Fatalf("progress after a failed commit %d %v", p, err)
	}
}

// changeLog is a growing input of transactions of changes to keyed rows:
// inserts, updates (-U and +U in one transaction) and deletes.
type changeLog struct {
	txns  [][]change
	mu    sync.Mutex
	avail int
}

type change struct {
	kind types.RowKind
	row  types.Row
}

func newChangeLog(seed uint64, txns, keys int) *changeLog {
	rng := rand.New(rand.NewPCG(seed, 3))
	live := map[int64]types.Row{}
	l := &changeLog{}
	n := 0
	for range txns {
		var tx []change
		for range 1 + rng.IntN(3) {
			n++
			k := int64(rng.IntN(keys))
			amount, _ := types.ParseText(types.Numeric, fmt.Sprintf("%d.%02d", n, n%100), nil)
			v := types.NewText(fmt.Sprintf("v%d '%d'", n, n))
			if n%7 == 0 {
				v = types.Null
			}
			row := types.Row{types.NewInt64(k), v, amount}
			old, ok := live[k]
			switch {
			case !ok:
				tx = append(tx, change{types.Insert, row})
				live[k] = row
			case rng.IntN(4) == 0:
				tx = append(tx, change{types.Delete, old})
				delete(live, k)
			default:
				tx = append(tx, change{types.UpdateBefore, old}, change{types.UpdateAfter, row})
				live[k] = row
			}
		}
		l.txns = append(l.txns, tx)
	}
	return l
}

// Next implements ingest.Reader: the position is the transaction number.
func (l *changeLog) Next(pos uint64) (*types.Chunk, uint64, error) {
	l.mu.Lock()
	avail := l.avail
	l.mu.Unlock()
	if pos >= uint64(avail) {
		return nil, pos, nil
	}
	c := types.NewChunk(colTypes(), len(l.txns[pos]))
	for _, ch := range l.txns[pos] {
		c.Append(ch.kind, ch.row)
	}
	return c, pos + 1, nil
}

// stateText returns the rows live after the first end transactions, as
// tableText shows them ordered by id.
func (l *changeLog) stateText(end uint64) string {
	live := map[int64]types.Row{}
	for _, tx := range l.txns[:end] {
		for _, ch := range tx {
			if ch.kind.IsAdd() {
				live[ch.row[0].Int64()] = ch.row
			} else {
				delete(live, ch.row[0].Int64())
			}
		}
	}
	var lines []string
	for _, k := range slices.Sorted(func(yield func(int64) bool) {
		for k := range live {
			if !yield(k) {
				return
			}
		}
	}) {
		r := live[k]
		v := "NULL"
		if !r[1].IsNull() {
			v = r[1].Str()
		}
		lines = append(lines, fmt.Sprintf("%d|%s|%s", k, v, types.FormatText(r[2], nil)))
	}
	return strings.Join(lines, "\n")
}

// failAfterCommit fails a subtask right after a commit succeeded, so that
// restores re-commit epochs that are applied already.
type failAfterCommit struct {
	operator.Committer
	in *testkit.Injector
}

func (f failAfterCommit) Commit(subtask int, e base.Epoch, desc []byte) error {
	if err := f.Committer.Commit(subtask, e, desc); err != nil {
		return err
	}
	f.in.Maybe("after commit")
	return nil
}

// sinkOp wraps a Sink the way NewSinkOperator does, with failAfterCommit
// between the two-phase-commit sink and the Sink.
type sinkOp struct {
	*operator.TwoPhaseCommitSink
	s *pgsink.Sink
}

func (o sinkOp) Open(ctx *operator.Context) error {
	if err := o.s.Connect(); err != nil {
		return err
	}
	return o.TwoPhaseCommitSink.Open(ctx)
}

func (o sinkOp) Close() error { return o.s.Close() }

// TestSinkExactlyOnce runs a changelog of inserts, updates and deletes
// through an ingest source into a Postgres sink under 5 ms epochs, 3 ms
// checkpoints and 16 injected failures, some right after a commit. While
// it runs, every read of the progress row and the table in one snapshot
// must find the table equal to the changelog's state at the position
// where the source closed the recorded epoch; at the end, equal to the
// state at the last epoch's position.
func TestSinkExactlyOnce(t *testing.T) {
	o, conn := db(t, "once")
	exec(t, conn, "CREATE TABLE out (id bigint PRIMARY KEY, v text, amount numeric)")
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Options{Store: store.NewMemory(), EpochInterval: 5 * time.Millisecond, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	log := newChangeLog(9, 400, 40)
	go func() {
		for i := 1; i <= len(log.txns); i++ {
			log.mu.Lock()
			log.avail = i
			log.mu.Unlock()
			if i%2 == 0 {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	start, err := svc.CurrentEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	until := start.Epoch + 150
	var (
		pmu   sync.Mutex
		pairs = map[base.Epoch]uint64{}
	)
	in := testkit.NewInjector(23, 16, 20, time.Millisecond, 4*time.Millisecond)
	job := &graph.Job{Name: "to-postgres",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: 1, NewSource: func(int) operator.Source {
				return ingest.New(ingest.Config{Reader: log, Clock: svc, Name: "changes", StartEpoch: start.Epoch, UntilEpoch: until, Hold: in.Pending,
					OnClose: func(p ingest.Pair) {
						pmu.Lock()
						pairs[p.Epoch] = p.Position
						pmu.Unlock()
					}})
			}},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator {
				s, err := pgsink.NewSink(pgsink.Config{Options: o, Name: "once", Columns: cols, Key: []string{"id"}})
				if err != nil {
					panic(err)
				}
				return testkit.Failing{Operator: sinkOp{operator.NewTwoPhaseCommitSink(failAfterCommit{s, in}), s}, In: in, Where: "sink"}
			}},
		},
		Edges: []graph.Edge{{From: "src", To: "sink", Partitioning: graph.Forward}},
	}
	// check reads the progress row and the table in one snapshot and
	// compares the table with the changelog's state at that epoch.
	var checks atomic.Int64
	check := func() error {
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			return err
		}
		defer tx.Rollback(ctx)
		var e int64
		err = tx.QueryRow(ctx, "SELECT epoch FROM strata_sink_progress WHERE sink = 'once' AND subtask = 0").Scan(&e)
		if errors.Is(err, pgx.ErrNoRows) || (err != nil && strings.Contains(err.Error(), "42P01")) {
			return nil // nothing committed yet
		} else if err != nil {
			return err
		}
		got := tableText(t, tx, "SELECT id, v, amount FROM out ORDER BY id")
		pmu.Lock()
		pos, ok := pairs[base.Epoch(e)]
		pmu.Unlock()
		if !ok {
			return fmt.Errorf("progress at epoch %d, which the source never closed", e)
		}
		if want := log.stateText(pos); got != want {
			return fmt.Errorf("epoch %d (position %d): table\n%s\nwant\n%s", e, pos, got, want)
		}
		checks.Add(1)
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- task.Run(rctx, job, task.Options{Policy: barrier.PolicyUnaligned, CheckpointInterval: 3 * time.Millisecond,
			TolerableFailures: 1000, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
			Restart: task.RestartStrategy{MaxAttempts: 1000, Delay: time.Millisecond},
			OnEvent: func(e task.Event) {
				if e.Kind == task.CheckpointCompleted {
					in.CheckpointCompleted()
				}
			}})
	}()
	var runErr error
loop:
	for {
		select {
		case runErr = <-done:
			break loop
		case <-time.After(5 * time.Millisecond):
			if err := check(); err != nil {
				cancel()
				<-done
				t.Fatal(err)
			}
		}
	}
	if runErr != nil {
		t.Fatal(runErr)
	}
	if err := check(); err != nil {
		t.Fatal(err)
	}
	if in.Failed() < 16 {
		t.Fatalf("only %d failures", in.Failed())
	}
	p, err := pgsink.Progress(ctx, conn, o, "once", 0)
	if err != nil || p != until {
		t.Fatalf("progress %d (%v), want the last epoch %d", p, err, until)
	}
	if pairs[until] < 100 {
		t.Fatalf("the source read only %d transactions", pairs[until])
	}
	t.Logf("%d failures, %d consistent reads; %d of %d transactions read", in.Failed(), checks.Load(), pairs[until], len(log.txns))
}

// TestTypeFor: a table made of TypeFor's types takes every Strata type
// (Check passes), and Accepts refuses what would lose values.
func TestTypeFor(t *testing.T) {
	o, conn := db(t, "typefor")
	var tcols []catalog.Column
	var defs []string
	for i, s := range []string{"BOOLEAN", "SMALLINT", "INTEGER", "BIGINT", "REAL", "DOUBLE PRECISION", "NUMERIC", "NUMERIC(10,2)",
		"CHAR(4)", "VARCHAR(20)", "VARCHAR", "TEXT", "UUID", "BYTEA", "DATE", "TIME", "TIMESTAMP", "TIMESTAMPTZ", "TIMESTAMP(3)", "INTERVAL", "JSONB"} {
		typ, err := types.ParseType(s)
		if err != nil {
			t.Fatal(err)
		}
		name := fmt.Sprintf("c%d", i)
		tcols = append(tcols, catalog.Column{Name: name, Type: typ})
		defs = append(defs, name+" "+pgsink.TypeFor(typ))
	}
	exec(t, conn, "CREATE TABLE out ("+strings.Join(defs, ", ")+", PRIMARY KEY (c3))")
	if err := pgsink.Check(context.Background(), pgsink.Config{Options: o, Name: "k", Columns: tcols, Key: []string{"c3"}}); err != nil {
		t.Fatalf("%v\n%s", err, strings.Join(defs, ", "))
	}
	for _, tc := range []struct {
		oid  uint32
		typ  types.Type
		want bool
	}{
		{20, types.Int64, true}, {23, types.Int64, false}, {1700, types.Int64, true}, {701, types.Numeric, false},
		{1700, types.Float64, true}, {25, types.JSONB, true}, {114, types.JSONB, true}, {1184, types.Timestamp, false},
		{1114, types.Date, true}, {2950, types.Text, false}, {1043, types.UUID, true},
	} {
		if got := pgsink.Accepts(tc.oid, tc.typ); got != tc.want {
			t.Errorf("Accepts(%d, %s) = %v", tc.oid, tc.typ, got)
		}
	}
}
