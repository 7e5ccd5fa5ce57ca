package pgcdc_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/pgcdc"
	"github.com/stratadb/strata/connector/tablesink"
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
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// The pipeline test's upstream tables. t1 and t2 have REPLICA IDENTITY
// FULL (a retract changelog), t3 its primary key (an upsert changelog);
// seq holds the number of writer transactions committed, which every
// writer transaction raises as its last statement, so the number orders
// the transactions as their commits do (the row lock serializes them).
const pipelineDDL = `
	CREATE TABLE t1 (id int PRIMARY KEY, name text NOT NULL, amount numeric(12,2), ts timestamptz);
	ALTER TABLE t1 REPLICA IDENTITY FULL;
	CREATE TABLE t2 (id bigint PRIMARY KEY, flag bool, data jsonb, note varchar(20));
	ALTER TABLE t2 REPLICA IDENTITY FULL;
	CREATE TABLE t3 (id int PRIMARY KEY, qty int, price float8);
	CREATE TABLE seq (id int PRIMARY KEY, n bigint NOT NULL);
	ALTER TABLE seq REPLICA IDENTITY FULL;
	INSERT INTO seq VALUES (1, 0);
	INSERT INTO t1 SELECT g, 'init' || g, g * 1.25, '2024-01-01 00:00:00+00'::timestamptz + g * interval '1 hour' FROM generate_series(1, 20) g;
	INSERT INTO t2 SELECT g, g % 2 = 0, jsonb_build_object('g', g), 'n' || g FROM generate_series(1, 20) g;
	INSERT INTO t3 SELECT g, g * 10, g / 4.0 FROM generate_series(1, 20) g;`

func pipelineTables(t *testing.T) []pgcdc.Table {
	v20, err := types.VarcharType(20)
	if err != nil {
		t.Fatal(err)
	}
	return []pgcdc.Table{
		{Upstream: "public.t1", Name: "t1", PrimaryKey: []string{"id"}, Columns: []catalog.Column{
			col("id", types.Int32, true), col("name", types.Text, true), col("amount", numeric(t, 12, 2), false), col("ts", types.TimestampTZ, false)}},
		{Upstream: "public.t2", Name: "t2", PrimaryKey: []string{"id"}, Columns: []catalog.Column{
			col("id", types.Int64, true), col("flag", types.Bool, false), col("data", types.JSONB, false), col("note", v20, false)}},
		{Upstream: "public.t3", Name: "t3", PrimaryKey: []string{"id"}, Columns: []catalog.Column{
			col("id", types.Int32, true), col("qty", types.Int32, false), col("price", types.Float64, false)}},
		{Upstream: "public.seq", Name: "seq", PrimaryKey: []string{"id"}, Columns: []catalog.Column{
			col("id", types.Int32, true), col("n", types.Int64, true)}},
	}
}

// effect is what one statement of a writer transaction did to a table:
// delete the row with key del (when set), then upsert row (when set),
// values in Postgres text form, nil for NULL.
type effect struct {
	table int
	del   string
	row   [][]byte
}

// committed is a writer transaction: its number in commit order and its
// effects in statement order.
type committed struct {
	n       int64
	effects []effect
}

// writer runs transactions of random inserts, updates (some changing the
// key), and deletes over t1, t2 and t3, each ended by raising seq,
// sleeping up to pause between transactions, and reports them on out.
func writer(t *testing.T, dsn string, w, txns int, pause time.Duration, out chan<- committed) {
	ctx := context.Background()
	conn, err := pgconn.Connect(ctx, dsn)
	if err != nil {
		t.Error(err)
		return
	}
	defer conn.Close(ctx)
	rng := rand.New(rand.NewPCG(uint64(w), 7))
	nextID := int64(1000 + w*100_000)
	known := [3][]int64{}
	for i := range 3 {
		for id := int64(1); id <= 20; id++ {
			known[i] = append(known[i], id)
		}
	}
	exec := func(sql string) ([][][]byte, error) {
		res, err := conn.Exec(ctx, sql).ReadAll()
		if err != nil {
			return nil, err
		}
		return res[0].Rows, nil
	}
	for range txns {
		type op struct {
			table int
			id    int64
			kind  int // 0 insert, 1 update, 2 key change, 3 delete
		}
		var ops []op
		for range 1 + rng.IntN(4) {
			tb := rng.IntN(3)
			o := op{table: tb, kind: rng.IntN(4)}
			if o.kind == 0 {
				nextID++
				o.id = nextID
			} else {
				o.id = known[tb][rng.IntN(len(known[tb]))]
			}
			if o.kind == 2 && tb == 1 {
				o.kind = 1 // t2's key never changes
			}
			ops = append(ops, o)
		}
		// One lock order for all writers: no deadlocks.
		sort.Slice(ops, func(i, j int) bool {
			if ops[i].table != ops[j].table {
				return ops[i].table < ops[j].table
			}
			return ops[i].id < ops[j].id
		})
		var effects []effect
		if _, err := exec("BEGIN"); err != nil {
			t.Error(err)
			return
		}
		fail := func(sql string, err error) {
			t.Errorf("writer %d: %s: %v", w, sql, err)
		}
		ok := true
		for _, o := range ops {
			name := []string{"t1", "t2", "t3"}[o.table]
			var sql string
			del := ""
			switch o.kind {
			case 0:
				sql = map[int]string{
					0: fmt.Sprintf("INSERT INTO t1 VALUES (%d, 'w%d', %d.%02d, now()) RETURNING *", o.id, w, rng.IntN(10000), rng.IntN(100)),
					1: fmt.Sprintf(`INSERT INTO t2 VALUES (%d, %t, '{"w": %d, "r": %d}', 'x%d') RETURNING *`, o.id, rng.IntN(2) == 0, w, rng.IntN(100), rng.IntN(1000)),
					2: fmt.Sprintf("INSERT INTO t3 VALUES (%d, %d, %g) RETURNING *", o.id, rng.IntN(1000), rng.Float64()*100),
				}[o.table]
				known[o.table] = append(known[o.table], o.id)
			case 1:
				sql = map[int]string{
					0: fmt.Sprintf("UPDATE t1 SET amount = coalesce(amount, 0) + 1, name = name || '+' WHERE id = %d RETURNING *", o.id),
					1: fmt.Sprintf("UPDATE t2 SET flag = NOT coalesce(flag, false), note = NULL WHERE id = %d RETURNING *", o.id),
					2: fmt.Sprintf("UPDATE t3 SET qty = coalesce(qty, 0) + %d WHERE id = %d RETURNING *", 1+rng.IntN(5), o.id),
				}[o.table]
			case 2:
				nextID++
				sql = fmt.Sprintf("UPDATE %s SET id = %d WHERE id = %d RETURNING *", name, nextID, o.id)
				del = fmt.Sprint(o.id)
				known[o.table] = append(known[o.table], nextID)
			case 3:
				sql = fmt.Sprintf("DELETE FROM %s WHERE id = %d RETURNING id", name, o.id)
			}
			rows, err := exec(sql)
			if err != nil {
				fail(sql, err)
				ok = false
				break
			}
			for _, r := range rows {
				switch o.kind {
				case 3:
					effects = append(effects, effect{table: o.table, del: string(r[0])})
				default:
					effects = append(effects, effect{table: o.table, del: del, row: r})
				}
			}
		}
		if !ok {
			return
		}
		rows, err := exec("UPDATE seq SET n = n + 1 WHERE id = 1 RETURNING n")
		if err != nil {
			fail("seq", err)
			return
		}
		var n int64
		fmt.Sscan(string(rows[0][0]), &n)
		if _, err := exec("COMMIT"); err != nil {
			fail("COMMIT", err)
			return
		}
		out <- committed{n: n, effects: effects}
		time.Sleep(time.Duration(rng.Int64N(int64(pause))))
	}
}

// model is the expected state of t1..t3: per table, key -> canonical row.
type model [3]map[string]string

// canonical formats a row of Postgres text values as the Strata table
// holds it: each value read into its column type and formatted back.
func canonical(t *testing.T, cols []catalog.Column, vals [][]byte) string {
	parts := make([]string, len(cols))
	for j, c := range cols {
		if vals[j] == nil {
			parts[j] = "NULL"
			continue
		}
		d, err := types.ParseText(c.Type, string(vals[j]), time.UTC)
		if err != nil {
			t.Fatalf("column %s value %q: %v", c.Name, vals[j], err)
		}
		parts[j] = types.FormatText(d, time.UTC)
	}
	return strings.Join(parts, "|")
}

func canonicalRow(r types.Row) string {
	parts := make([]string, len(r))
	for j, d := range r {
		if d.IsNull() {
			parts[j] = "NULL"
		} else {
			parts[j] = types.FormatText(d, time.UTC)
		}
	}
	return strings.Join(parts, "|")
}

func (m *model) lines(i int) []string {
	var out []string
	for _, r := range m[i] {
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

// spy wraps the Stream as the ingest source's Reader: it records the
// rows of every transaction by position, fails the test when a replayed
// transaction differs from its first reading, and notes where each seq
// value arrived.
type spy struct {
	s      *pgcdc.Stream
	seqTag int
	mu     sync.Mutex
	seen   map[uint64]string // position -> the transaction's rows
	seqEnd map[int64]uint64  // seq value -> position after its transaction
	replay int
	diff   string
	// snapped is closed when the initial snapshot has been read.
	snapped  chan struct{}
	snapOnce sync.Once
}

func (p *spy) Next(pos uint64) (*types.Chunk, uint64, error) {
	c, n, err := p.s.Next(pos)
	if c == nil || err != nil {
		return c, n, err
	}
	txt := fmt.Sprint(n, "\n", strings.Join(rows(p.s.Layout(), c), "\n"))
	off, _ := p.s.Layout().Span(p.seqTag)
	if pos == 0 {
		p.snapOnce.Do(func() { close(p.snapped) })
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if first, ok := p.seen[pos]; ok {
		p.replay++
		if first != txt && p.diff == "" {
			p.diff = fmt.Sprintf("position %d first read as\n%s\nthen as\n%s", pos, first, txt)
		}
	} else {
		p.seen[pos] = txt
	}
	for r := range c.Len() {
		if c.Datum(0, r).Int64() == int64(p.seqTag) && !c.Kind(r).IsRetract() {
			p.seqEnd[c.Datum(off+1, r).Int64()] = n
		}
	}
	return c, n, nil
}

// stopWhen ends an ingest source after it closes an epoch at which done
// says the input is complete.
type stopWhen struct {
	operator.Source
	done     func() bool
	finished bool
}

func (s *stopWhen) Next() (operator.Item, error) {
	if s.finished {
		return operator.Item{Done: true}, nil
	}
	it, err := s.Source.Next()
	if err == nil && it.Epoch != 0 && s.done() {
		s.finished = true
	}
	return it, err
}

// TestPipelineThreeTablesOneCut ingests three Postgres tables (and the
// seq counter) through ONE ingest source over the Stream, a Route per
// table and a table sink per table, under the meta service's epoch clock
// and injected failures, while three writers commit transactions that
// touch several tables each. At every epoch the four Strata tables must
// equal the Postgres tables as of one transaction boundary: the seq value
// read at the epoch says which, and t1..t3 must equal the state after
// exactly that many writer transactions (DESIGN.md invariant 2). The
// boundaries only move forward, replays give identical transactions, the
// final epoch holds everything, and the slot's confirmed position follows
// the committed epochs.
func TestPipelineThreeTablesOneCut(t *testing.T) {
	ctx := context.Background()
	opts, conn := db(t, "pipeline")
	run(t, conn, pipelineDDL)
	tables := pipelineTables(t)

	svc, err := service.Open(ctx, service.Options{Store: store.NewMemory(), EpochInterval: 5 * time.Millisecond, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	tbs := createTables(t, svc, fileio.NewMem(), tables)

	stream, err := pgcdc.Open(ctx, pgcdc.Config{Options: opts, Tables: tables, Name: "pg", StatusInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	l := stream.Layout()
	conf := pgcdc.NewConfirmer(stream)
	sp := &spy{s: stream, seqTag: 3, seen: map[uint64]string{}, seqEnd: map[int64]uint64{}, snapped: make(chan struct{})}

	initial := readInitial(t, conn) // state 0: before any writer transaction

	// Writer 0 starts with the job, so the snapshot lands among its
	// transactions; the others start once the snapshot is read, so that
	// most transactions stream.
	const writers, txnsPerWriter = 3, 70
	results := make(chan committed, writers*txnsPerWriter)
	var wg sync.WaitGroup
	var writersDone atomic.Bool
	dsn := server(t).DSN(opts.Database) + " timezone=UTC"
	go func() {
		for w := range writers {
			wg.Go(func() {
				if w > 0 {
					<-sp.snapped
				}
				writer(t, dsn, w, txnsPerWriter, 10*time.Millisecond, results)
			})
		}
		wg.Wait()
		writersDone.Store(true)
	}()

	var (
		mu       sync.Mutex
		closedAt = map[base.Epoch]uint64{}
		last     ingest.Pair
	)
	in := testkit.NewInjector(11, 15, 40, time.Millisecond, 5*time.Millisecond)
	complete := func() bool {
		if !writersDone.Load() || in.Pending() {
			return false
		}
		sp.mu.Lock()
		end, ok := sp.seqEnd[writers*txnsPerWriter]
		sp.mu.Unlock()
		mu.Lock()
		defer mu.Unlock()
		return ok && last.Position >= end
	}
	start, err := svc.CurrentEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	job := pipelineJob(l, tbs, tables, svc, in, func() operator.Source {
		return &stopWhen{done: complete, Source: ingest.New(ingest.Config{Reader: sp, Clock: svc, Name: "pg", StartEpoch: start.Epoch,
			OnClose: func(p ingest.Pair) {
				conf.OnClose(p)
				mu.Lock()
				closedAt[p.Epoch], last = p.Position, p
				mu.Unlock()
			}})}
	})

	// The confirmed position follows the epoch all four tables committed.
	minCommitted := func() base.Epoch {
		low := base.Epoch(0)
		for i, tb := range tbs {
			e, err := tb.CommittedEpoch()
			if err != nil {
				t.Error(err)
				return 0
			}
			if i == 0 || e < low {
				low = e
			}
		}
		return low
	}
	stopConfirm := make(chan struct{})
	confirmDone := make(chan struct{})
	go func() {
		defer close(confirmDone)
		for {
			select {
			case <-stopConfirm:
				return
			case <-time.After(10 * time.Millisecond):
				conf.Committed(minCommitted())
			}
		}
	}()

	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err = task.Run(rctx, job, task.Options{Policy: barrier.PolicyUnaligned, CheckpointInterval: 5 * time.Millisecond,
		TolerableFailures: 1000, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
		Restart: task.RestartStrategy{MaxAttempts: 1000, Delay: time.Millisecond},
		OnEvent: func(e task.Event) {
			if e.Kind == task.CheckpointCompleted {
				in.CheckpointCompleted()
			}
		}})
	close(stopConfirm)
	<-confirmDone
	if err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(results)
	if t.Failed() {
		return
	}
	if sp.diff != "" {
		t.Fatalf("a replay differs: %s", sp.diff)
	}
	final := last.Epoch
	for i, tb := range tbs {
		if ce, err := tb.CommittedEpoch(); err != nil || ce != final {
			t.Fatalf("table %s committed epoch %d (%v), want %d", tables[i].Name, ce, err, final)
		}
	}

	var txns []committed
	for c := range results {
		txns = append(txns, c)
	}
	partial := verifyEpochs(t, tbs, tables, initial, txns, start.Epoch, final, writers*txnsPerWriter)
	if partial < 10 {
		t.Fatalf("only %d distinct transaction boundaries seen across epochs", partial)
	}
	if in.Failed() < 15 {
		t.Fatalf("only %d failures injected", in.Failed())
	}
	// Replays happen when a failure restores a checkpoint taken before
	// transactions already read; most runs have many (logged below), and
	// TestSnapshotStreamReplay checks replays deterministically.

	// The slot confirms the position of the final epoch.
	conf.Committed(final)
	mu.Lock()
	finalPos := closedAt[final]
	mu.Unlock()
	if stream.Confirmed() != finalPos {
		t.Fatalf("confirmed %d, want %d where epoch %d closed", stream.Confirmed(), finalPos, final)
	}
	// A session must be running to report it: read on from the end.
	if _, _, err := stream.Next(finalPos); err != nil {
		t.Fatal(err)
	}
	waitConfirmed(t, conn, opts.Slot, finalPos)
	t.Logf("%d failures, %d replayed transactions, %d epochs, %d distinct transaction boundaries", in.Failed(), sp.replay, final-start.Epoch+1, partial)
}

func apply(t *testing.T, m *model, tables []pgcdc.Table, ef effect) {
	if ef.del != "" {
		delete(m[ef.table], ef.del)
	}
	if ef.row != nil {
		m[ef.table][string(ef.row[0])] = canonical(t, tables[ef.table].Columns, ef.row)
	}
}

// readInitial returns the rows of t1..t3 as effects that build them.
func readInitial(t *testing.T, conn *pgconn.PgConn) []effect {
	var initial []effect
	for i, name := range []string{"t1", "t2", "t3"} {
		for _, r := range run(t, conn, "SELECT * FROM "+name)[0].Rows {
			initial = append(initial, effect{table: i, row: r})
		}
	}
	return initial
}

// createTables creates the Strata tables for tables in the meta service's
// catalog and in the table store on fs.
func createTables(t *testing.T, svc *service.Meta, fs fileio.FS, tables []pgcdc.Table) []*table.Table {
	ctx := context.Background()
	if err := svc.CreateDatabase(ctx, catalog.Database{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	tbs := make([]*table.Table, len(tables))
	for i, tb := range tables {
		if err := svc.CreateTable(ctx, catalog.Table{Name: catalog.Name("dev", tb.Name), Kind: catalog.KindTable, PrimaryKey: tb.PrimaryKey, Columns: tb.Columns}); err != nil {
			t.Fatal(err)
		}
		var fields []schema.Field
		for _, c := range tb.Columns {
			fields = append(fields, schema.Field{Name: c.Name, Type: c.Type, Nullable: !c.NotNull})
		}
		var err error
		if tbs[i], err = table.Create(fs, "wh/dev/"+tb.Name, fields, tb.PrimaryKey, map[string]string{"bucket": "2"}); err != nil {
			t.Fatal(err)
		}
	}
	return tbs
}

// pipelineJob is the source's job: one ingest source vertex (src), and per
// table a Route and a table sink, both failing when in says so.
func pipelineJob(l *pgcdc.Layout, tbs []*table.Table, tables []pgcdc.Table, svc *service.Meta, in *testkit.Injector, src func() operator.Source) *graph.Job {
	job := &graph.Job{Name: "pg-ingest", Vertices: []graph.Vertex{
		{Name: "src", Parallelism: 1, NewSource: func(int) operator.Source { return src() }},
	}}
	for i, tb := range tables {
		name := catalog.Name("dev", tb.Name)
		job.Vertices = append(job.Vertices,
			graph.Vertex{Name: "route-" + tb.Name, Parallelism: 1, NewOperator: func(int) operator.Operator {
				return testkit.Failing{Operator: pgcdc.Route(l, i), In: in, Where: "route " + tb.Name}
			}},
			graph.Vertex{Name: "sink-" + tb.Name, Parallelism: 1, NewOperator: func(int) operator.Operator {
				return testkit.Failing{Operator: tablesink.Sink(tbs[i], name, "pg-ingest", svc), In: in, Where: "sink " + tb.Name}
			}})
		job.Edges = append(job.Edges,
			graph.Edge{From: "src", To: "route-" + tb.Name, Partitioning: graph.Forward},
			graph.Edge{From: "route-" + tb.Name, To: "sink-" + tb.Name, Partitioning: graph.Forward})
	}
	return job
}

// verifyEpochs checks every epoch from start to final: the seq table
// names a writer transaction k (or is empty before the snapshot's epoch,
// with every other table), t1..t3 equal the state after the initial rows
// and writer transactions 1..k, k never decreases, and the final epoch is
// at transaction wantK. It returns the number of distinct k seen.
func verifyEpochs(t *testing.T, tbs []*table.Table, tables []pgcdc.Table, initial []effect, txns []committed, start, final base.Epoch, wantK int64) int {
	t.Helper()
	sort.Slice(txns, func(i, j int) bool { return txns[i].n < txns[j].n })
	for i, c := range txns {
		if c.n != int64(i+1) {
			t.Fatalf("writer transaction %d has number %d", i+1, c.n)
		}
	}
	var m model
	for i := range m {
		m[i] = map[string]string{}
	}
	for _, ef := range initial {
		apply(t, &m, tables, ef)
	}
	applied := int64(0)
	partial, lastK := 0, int64(-1)
	for e := start; e <= final; e++ {
		var got [4][]string
		for i, tb := range tbs {
			rs, err := tb.ReadAtEpoch(e)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				got[i] = append(got[i], canonicalRow(r))
			}
			slices.Sort(got[i])
		}
		if len(got[3]) == 0 {
			// Before the snapshot's epoch: nothing at all.
			for i := range 3 {
				if len(got[i]) != 0 {
					t.Fatalf("epoch %d: table %s has %d rows but seq none", e, tables[i].Name, len(got[i]))
				}
			}
			if lastK >= 0 {
				t.Fatalf("epoch %d is empty after epochs with data", e)
			}
			continue
		}
		var k int64
		fmt.Sscanf(got[3][0], "1|%d", &k)
		if k < lastK {
			t.Fatalf("epoch %d is at transaction %d, an earlier epoch at %d", e, k, lastK)
		}
		if k > int64(len(txns)) {
			t.Fatalf("epoch %d is at transaction %d, only %d were committed", e, k, len(txns))
		}
		if k != lastK {
			partial++
		}
		lastK = k
		for applied < k {
			for _, ef := range txns[applied].effects {
				apply(t, &m, tables, ef)
			}
			applied++
		}
		for i := range 3 {
			sameLines(t, fmt.Sprintf("epoch %d (after writer transaction %d), table %s", e, k, tables[i].Name), got[i], m.lines(i))
		}
	}
	if lastK != wantK {
		t.Fatalf("final epoch %d is at transaction %d, want %d", final, lastK, wantK)
	}
	return partial
}
