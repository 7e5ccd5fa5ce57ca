package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/planner"
	"github.com/stratadb/strata/sql/sqlerr"
)

// tr is a primary-key table: id, k, v (nullable, with ties), ts.
var tr = &plan.Relation{Name: "tr", Columns: []plan.Column{
	{Name: "id", Type: types.Int64, NotNull: true}, {Name: "k", Type: types.Int64},
	{Name: "v", Type: types.Int64}, {Name: "ts", Type: types.Timestamp},
}, PrimaryKey: []int{0}}

// catalog names the relations of a test.
type catalog map[string]*plan.Relation

func (c catalog) Relation(name string) (*plan.Relation, error) {
	if r := c[name]; r != nil {
		return r, nil
	}
	return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

// change is one changelog row, or the end of an epoch when epoch != 0.
type change struct {
	kind  types.RowKind
	row   types.Row
	epoch base.Epoch
}

// history makes a seeded changelog of tr over epochs: inserts, updates
// (a -U/+U pair that may move a row to another k or v) and deletes. It
// returns the changelog and the live rows at the end of each epoch.
func history(seed uint64, epochs, perEpoch int) ([]change, [][]types.Row) {
	rng := rand.New(rand.NewPCG(seed, 7))
	live := map[int64]types.Row{}
	var log []change
	var states [][]types.Row
	next := int64(0)
	newRow := func(id int64) types.Row {
		v := types.NewInt64(rng.Int64N(12))
		if rng.IntN(8) == 0 {
			v = types.Null
		}
		return types.Row{types.NewInt64(id), types.NewInt64(rng.Int64N(4)), v, types.NewTimestamp(rng.Int64N(1000) * 1_000_000)}
	}
	for e := 1; e <= epochs; e++ {
		for range perEpoch {
			ids := make([]int64, 0, len(live))
			for id := range live {
				ids = append(ids, id)
			}
			sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
			switch op := rng.IntN(10); {
			case op < 5 || len(ids) == 0:
				r := newRow(next)
				next++
				live[r[0].Int64()] = r
				log = append(log, change{kind: types.Insert, row: r})
			case op < 8:
				id := ids[rng.IntN(len(ids))]
				old, r := live[id], newRow(id)
				live[id] = r
				log = append(log, change{kind: types.UpdateBefore, row: old}, change{kind: types.UpdateAfter, row: r})
			default:
				id := ids[rng.IntN(len(ids))]
				log = append(log, change{kind: types.Delete, row: live[id]})
				delete(live, id)
			}
		}
		log = append(log, change{epoch: base.Epoch(e)})
		var rows []types.Row
		for _, r := range live {
			rows = append(rows, r)
		}
		states = append(states, rows)
	}
	return log, states
}

// source replays a changelog of rows of types ts, one chunk per epoch.
type source struct {
	ts  []types.Type
	log []change
	pos int
}

func (s *source) Open(*operator.Context) error { return nil }
func (s *source) Next() (operator.Item, error) {
	if s.pos >= len(s.log) {
		return operator.Item{Done: true}, nil
	}
	if c := s.log[s.pos]; c.epoch != 0 {
		s.pos++
		return operator.Item{Epoch: c.epoch}, nil
	}
	chunk := types.NewChunk(s.ts, 16)
	for s.pos < len(s.log) && s.log[s.pos].epoch == 0 {
		chunk.Append(s.log[s.pos].kind, s.log[s.pos].row)
		s.pos++
	}
	return operator.Item{Chunk: chunk}, nil
}
func (s *source) Snapshot(base.CheckpointID) error       { return nil }
func (s *source) NotifyComplete(base.CheckpointID) error { return nil }
func (s *source) Close() error                           { return nil }

// sink collects the view's changelog as "kind\trow" lines.
type sink struct {
	operator.Base
	mu    *sync.Mutex
	lines *[]string
}

func (s *sink) Process(_ int, c *types.Chunk) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range c.Len() {
		*s.lines = append(*s.lines, c.Kind(i).String()+"\t"+rowText(c.Row(i)))
	}
	return nil
}

type endpoints struct {
	log   []change
	mu    sync.Mutex
	lines []string
}

func (e *endpoints) Source(rel *plan.Relation, _ int) operator.Source {
	ts := make([]types.Type, len(rel.Columns))
	for i, c := range rel.Columns {
		ts[i] = c.Type
	}
	return &source{ts: ts, log: e.log}
}
func (e *endpoints) SourceParallelism(*plan.Relation) int { return 1 }
func (e *endpoints) Sink(int) operator.Operator           { return &sink{mu: &e.mu, lines: &e.lines} }
func (e *endpoints) SinkParallelism() int                 { return 0 }

func rowText(r types.Row) string {
	parts := make([]string, len(r))
	for i, d := range r {
		parts[i] = "NULL"
		if !d.IsNull() {
			parts[i] = types.FormatText(d, nil)
		}
	}
	return strings.Join(parts, "|")
}

// materialize applies a changelog to a multiset of rows; a retraction of
// a row the view does not hold fails the test.
func materialize(t *testing.T, lines []string) []string {
	t.Helper()
	bag := map[string]int{}
	for _, l := range lines {
		kind, row, _ := strings.Cut(l, "\t")
		if kind == "+I" || kind == "+U" {
			bag[row]++
			continue
		}
		if bag[row] == 0 {
			t.Fatalf("%s of a row the view does not hold: %s", kind, row)
		}
		bag[row]--
	}
	var out []string
	for r, n := range bag {
		for range n {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// runView binds q over tr, plans it with parallelism par and runs it over
// log.
func runView(t *testing.T, q string, log []change, par int) []string {
	t.Helper()
	rows, _ := runViewOver(t, catalog{"tr": tr}, q, log, par)
	return rows
}

// runViewOver binds q over cat (one relation, whose changelog log is),
// plans it with parallelism par, runs it, and returns the view's rows and
// the job.
func runViewOver(t *testing.T, cat catalog, q string, log []change, par int) ([]string, *planner.Job) {
	t.Helper()
	st, err := parser.ParseOne(q)
	if err != nil {
		t.Fatal(err)
	}
	p, err := binder.New(cat, q, nil).BindQuery(st.Node)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	ep := &endpoints{log: log}
	job, err := planner.Build("view", p, ep, planner.Options{Parallelism: par})
	if err != nil {
		t.Fatalf("%s: build: %v\n%s", q, err, plan.Explain(p))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := task.Run(ctx, job.Graph, task.Options{}); err != nil {
		t.Fatalf("%s: run: %v\n%s", q, err, job.Explain)
	}
	return materialize(t, ep.lines), job
}

// oracle loads rows into DuckDB's tr and runs q there.
func oracle(t *testing.T, db *duckdb.DB, q string, rows []types.Row) []string {
	t.Helper()
	ctx := context.Background()
	if err := db.Exec(ctx, "DROP TABLE IF EXISTS tr; CREATE TABLE tr (id BIGINT, k BIGINT, v BIGINT, ts TIMESTAMP)"); err != nil {
		t.Fatal(err)
	}
	if len(rows) > 0 {
		var vals []string
		for _, r := range rows {
			v := "NULL"
			if !r[2].IsNull() {
				v = fmt.Sprint(r[2].Int64())
			}
			vals = append(vals, fmt.Sprintf("(%d, %d, %s, make_timestamp(%d::BIGINT))", r[0].Int64(), r[1].Int64(), v, r[3].Micros()))
		}
		if err := db.Exec(ctx, "INSERT INTO tr VALUES "+strings.Join(vals, ", ")); err != nil {
			t.Fatal(err)
		}
	}
	_, out, err := db.Query(ctx, q)
	if err != nil {
		t.Fatalf("duckdb %s: %v", q, err)
	}
	lines := make([]string, len(out))
	for i, r := range out {
		lines[i] = rowText(r)
	}
	sort.Strings(lines)
	return lines
}

// TestTopNFromSQL runs the Top-N and deduplication patterns, and ORDER BY
// ... LIMIT ... OFFSET, as streaming views over a changelog with updates
// and deletes, and compares each with DuckDB over the table's rows after
// every epoch (each prefix of the changelog is a run of its own).
func TestTopNFromSQL(t *testing.T) {
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	// Postgres's NULL placement: last ascending, first descending.
	if err := db.Exec(context.Background(), "SET default_null_order = 'nulls_last_on_asc_first_on_desc'"); err != nil {
		t.Fatal(err)
	}
	queries := []string{
		// Top 2 per k, row number not selected.
		"SELECT id, k, v FROM (SELECT id, k, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id) AS rn FROM tr) WHERE rn <= 2",
		// Deduplication: the earliest row per k, with everything and rn.
		"SELECT * FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY k ORDER BY ts, id) AS rn FROM tr) AS d WHERE rn = 1",
		// Global top 3 by v ascending (NULLs last), N >= rn.
		"SELECT id, v FROM (SELECT id, v, ROW_NUMBER() OVER (ORDER BY v, id) AS rn FROM tr) WHERE 3 >= rn",
		// Ranks 2..3 per k, with another predicate and rn selected.
		"SELECT k, rn, id FROM (SELECT k, id, v, ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC NULLS LAST, id) AS rn FROM tr WHERE id % 5 <> 0) WHERE rn BETWEEN 2 AND 3 AND id > 2",
		// rn > M AND rn < N.
		"SELECT id, rn FROM (SELECT id, ROW_NUMBER() OVER (PARTITION BY k % 2 ORDER BY id DESC) AS rn FROM tr) s WHERE s.rn > 1 AND s.rn < 4",
		// Top 2 groups by size, over an aggregate.
		"SELECT k, n FROM (SELECT k, count(*) AS n, ROW_NUMBER() OVER (ORDER BY count(*) DESC, k) AS rn FROM tr GROUP BY k) WHERE rn <= 2",
		// ORDER BY ... LIMIT ... OFFSET.
		"SELECT id, v FROM tr ORDER BY v DESC, id LIMIT 3 OFFSET 1",
	}
	const epochs = 5
	log, states := history(42, epochs, 20)
	for _, q := range queries {
		for e := 1; e <= epochs; e++ {
			// The changelog up to the end of epoch e.
			end, seen := 0, 0
			for end < len(log) && seen < e {
				if log[end].epoch != 0 {
					seen++
				}
				end++
			}
			want := oracle(t, db, q, states[e-1])
			for _, par := range []int{1, 2} {
				got := runView(t, q, log[:end], par)
				if strings.Join(got, "\n") != strings.Join(want, "\n") {
					t.Errorf("%s\nepoch %d, parallelism %d:\ngot  %v\nwant %v", q, e, par, got, want)
				}
			}
		}
	}
}
