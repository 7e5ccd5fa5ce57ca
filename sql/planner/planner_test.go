package planner

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
	"github.com/stratadb/strata/sql/sqlerr"
)

// rel t(id BIGINT PRIMARY KEY, k BIGINT, v BIGINT, s TEXT): a changelog
// of inserts, updates and deletes by id.
var relT = &plan.Relation{Name: "t", PrimaryKey: []int{0}, Columns: []plan.Column{
	{Name: "id", Type: types.Int64, NotNull: true}, {Name: "k", Type: types.Int64},
	{Name: "v", Type: types.Int64}, {Name: "s", Type: types.Text},
}}

// rel u(id BIGINT PRIMARY KEY, k BIGINT, v BIGINT, s TEXT): a second
// changelog of the same shape, for joins.
var relU = &plan.Relation{Name: "u", PrimaryKey: []int{0}, Columns: relT.Columns}

type catalog struct{}

func (catalog) Relation(name string) (*plan.Relation, error) {
	switch name {
	case "t":
		return relT, nil
	case "u":
		return relU, nil
	}
	return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

// event is one changelog row, or the close of an epoch.
type event struct {
	kind  types.RowKind
	row   types.Row
	epoch base.Epoch
}

// script generates a random changelog over 40 epochs and returns it with
// the rows live at its end.
func script(seed uint64) ([]event, map[int64]types.Row) {
	rng := rand.New(rand.NewPCG(seed, 7))
	live := map[int64]types.Row{}
	var ids []int64
	var evs []event
	next := int64(0)
	for e := base.Epoch(1); e <= 40; e++ {
		for range rng.IntN(15) {
			switch {
			case len(ids) > 0 && rng.IntN(4) == 0: // delete
				i := rng.IntN(len(ids))
				id := ids[i]
				ids = append(ids[:i], ids[i+1:]...)
				evs = append(evs, event{kind: types.Delete, row: live[id]})
				delete(live, id)
			case len(ids) > 0 && rng.IntN(3) == 0: // update
				id := ids[rng.IntN(len(ids))]
				old := live[id]
				nw := types.Row{old[0], types.NewInt64(int64(rng.IntN(6))), types.NewInt64(int64(rng.IntN(5))), old[3]}
				evs = append(evs, event{kind: types.UpdateBefore, row: old}, event{kind: types.UpdateAfter, row: nw})
				live[id] = nw
			default:
				r := types.Row{types.NewInt64(next), types.NewInt64(int64(rng.IntN(6))), types.NewInt64(int64(rng.IntN(5))),
					types.NewText(string(rune('a' + rng.IntN(4))))}
				if rng.IntN(8) == 0 {
					r[2] = types.Null
				}
				live[next] = r
				ids = append(ids, next)
				evs = append(evs, event{kind: types.Insert, row: r})
				next++
			}
		}
		evs = append(evs, event{epoch: e})
	}
	return evs, live
}

// source replays a script: one chunk per epoch, then the epoch's close.
type source struct {
	evs []event
	pos int
}

func (s *source) Open(*operator.Context) error { return nil }
func (s *source) Next() (operator.Item, error) {
	if s.pos >= len(s.evs) {
		return operator.Item{Done: true}, nil
	}
	if e := s.evs[s.pos]; e.epoch != 0 {
		s.pos++
		return operator.Item{Epoch: e.epoch}, nil
	}
	c := types.NewChunk([]types.Type{types.Int64, types.Int64, types.Int64, types.Text}, 16)
	for s.pos < len(s.evs) && s.evs[s.pos].epoch == 0 {
		c.Append(s.evs[s.pos].kind, s.evs[s.pos].row)
		s.pos++
	}
	return operator.Item{Chunk: c}, nil
}
func (s *source) Snapshot(base.CheckpointID) error       { return nil }
func (s *source) NotifyComplete(base.CheckpointID) error { return nil }
func (s *source) Close() error                           { return nil }

// sink collects the changelog.
type sink struct {
	operator.Base
	mu   *sync.Mutex
	rows *[]string
}

func (s *sink) Process(_ int, c *types.Chunk) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range c.Len() {
		*s.rows = append(*s.rows, c.Kind(i).String()+"\t"+rowText(c.Row(i)))
	}
	return nil
}

func rowText(r types.Row) string {
	parts := make([]string, len(r))
	for i, d := range r {
		parts[i] = types.FormatText(d, nil)
		if d.IsNull() {
			parts[i] = "NULL"
		}
	}
	return strings.Join(parts, "|")
}

type endpoints struct {
	evs  []event
	evsU []event
	mu   sync.Mutex
	rows []string
}

func (e *endpoints) Source(rel *plan.Relation, _ int) operator.Source {
	if rel.Name == "u" {
		return &source{evs: e.evsU}
	}
	return &source{evs: e.evs}
}
func (e *endpoints) SourceParallelism(*plan.Relation) int { return 1 }
func (e *endpoints) Sink(int) operator.Operator           { return &sink{mu: &e.mu, rows: &e.rows} }

// materialize applies a retract changelog to a multiset of rows and fails
// on a retraction of a row that is not there.
func materialize(t *testing.T, changelog []string) []string {
	t.Helper()
	bag := map[string]int{}
	for _, c := range changelog {
		kind, row, _ := strings.Cut(c, "\t")
		switch kind {
		case "+I", "+U":
			bag[row]++
		default:
			if bag[row] == 0 {
				t.Fatalf("%s of a row the view does not hold: %s", kind, row)
			}
			bag[row]--
		}
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

// oracle runs the query in DuckDB over the live rows.
func oracle(t *testing.T, db *duckdb.DB, query string, tables map[string]map[int64]types.Row) []string {
	t.Helper()
	ctx := context.Background()
	for name, live := range tables {
		if err := db.Exec(ctx, "DROP TABLE IF EXISTS "+name+"; CREATE TABLE "+name+" (id BIGINT PRIMARY KEY, k BIGINT, v BIGINT, s VARCHAR)"); err != nil {
			t.Fatal(err)
		}
		for _, r := range live {
			var v any
			if !r[2].IsNull() {
				v = r[2].Int64()
			}
			if err := db.Exec(ctx, "INSERT INTO "+name+" VALUES (?, ?, ?, ?)", r[0].Int64(), r[1].Int64(), v, r[3].Str()); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, rows, err := db.Query(ctx, query)
	if err != nil {
		t.Fatalf("DuckDB: %v", err)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = rowText(r)
	}
	sort.Strings(out)
	return out
}

// TestViewsEqualDuckDB runs views as streaming jobs over random changelogs
// with updates and deletes and compares the materialized result with
// DuckDB's answer to the same SQL over the final rows.
func TestViewsEqualDuckDB(t *testing.T) {
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	queries := []string{
		"SELECT k, count(*), sum(v), max(s) FROM t GROUP BY k",
		"SELECT k % 3 AS g, count(DISTINCT v), min(v), count(v) FROM t WHERE v > 1 GROUP BY k % 3",
		"SELECT count(*), sum(v), max(v) FROM t",
		"SELECT s, sum(v) FILTER (WHERE k > 2), bool_or(v = 4) FROM t GROUP BY s",
		"SELECT id, k * 10 + v AS w FROM t WHERE s <> 'a'",
		"SELECT t.id, u.id, t.v, u.v FROM t JOIN u ON t.k = u.k",
		"SELECT t.id, u.id FROM t LEFT JOIN u ON t.k = u.k AND u.v > t.v",
		"SELECT t.id, u.id, u.s FROM t RIGHT JOIN u ON t.k = u.k AND t.s = u.s",
		"SELECT t.id, u.id FROM t FULL JOIN u ON t.v = u.v",
		"SELECT t.k, count(*), count(u.id), sum(u.v) FROM t LEFT JOIN u ON t.k = u.k + 1 GROUP BY t.k",
		// Nested-loop joins (no equality between the sides) and a
		// NULL-safe key.
		"SELECT t.id, u.id FROM t JOIN u ON t.v < u.v - 3",
		"SELECT t.id, u.id FROM t FULL JOIN u ON t.k = u.k OR t.s = u.s",
		"SELECT count(*), sum(t.v + u.v) FROM t CROSS JOIN u",
		"SELECT t.id, u.id FROM t LEFT JOIN u ON t.k IS NOT DISTINCT FROM u.k",
		// Sub-plan reuse: one scan on both sides of a join (two edges
		// between the same vertices), a subtree read twice, a union of
		// one relation with itself.
		"SELECT a.id, b.id, b.v FROM t a JOIN t b ON a.k = b.k",
		"SELECT x.k, x.n, z.m FROM (SELECT k, count(*) AS n FROM t GROUP BY k) x JOIN (SELECT max(n) AS m FROM (SELECT k, count(*) AS n FROM t GROUP BY k) y) z ON x.n = z.m",
		"SELECT k, count(*) FROM (SELECT k FROM t UNION ALL SELECT k FROM t WHERE v > 2 UNION ALL SELECT k FROM t) x GROUP BY k",
	}
	for seed := range uint64(3) {
		evs, live := script(seed)
		evsU, liveU := script(seed + 100)
		for _, q := range queries {
			st, err := parser.ParseOne(q)
			if err != nil {
				t.Fatal(err)
			}
			p, err := binder.New(catalog{}, q, nil).BindQuery(st.Node)
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			ep := &endpoints{evs: evs, evsU: evsU}
			job, err := Build("view", p, ep, Options{Parallelism: 2})
			if err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			err = task.Run(ctx, job.Graph, task.Options{})
			cancel()
			if err != nil {
				t.Fatalf("%s: run: %v", q, err)
			}
			got := materialize(t, ep.rows)
			want := oracle(t, db, q, map[string]map[int64]types.Row{"t": live, "u": liveU})
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("seed %d, %s\nstreaming:\n%s\nDuckDB:\n%s\nplan:\n%s", seed, q, strings.Join(got, "\n"), strings.Join(want, "\n"), job.Explain)
			}
		}
	}
}

func TestExplainAndRefusal(t *testing.T) {
	q := "SELECT k, count(*) FROM t WHERE v > 1 GROUP BY k"
	st, _ := parser.ParseOne(q)
	p, err := binder.New(catalog{}, q, nil).BindQuery(st.Node)
	if err != nil {
		t.Fatal(err)
	}
	job, err := Build("v", p, &endpoints{}, Options{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	want := `1-scan-t (parallelism 1, retract)
2-filter (v > 1) (parallelism 1, retract)
3-pre-aggregate keys and arguments (parallelism 1, retract)
4-aggregate [count(*)] (parallelism 2, retract)
5-project k, count(*) (parallelism 2, retract)
6-sink (parallelism 2)
`
	if job.Explain != want {
		t.Fatalf("explain:\n%s\nwant:\n%s", job.Explain, want)
	}
	q = "SELECT * FROM t ORDER BY k"
	st, _ = parser.ParseOne(q)
	p, _ = binder.New(catalog{}, q, nil).BindQuery(st.Node)
	if _, err := Build("v", p, &endpoints{}, Options{}); sqlerr.Code(err) != sqlerr.FeatureNotSupported {
		t.Fatalf("ORDER BY in a view: %v", err)
	}
	q = "SELECT t.id, u.id FROM t LEFT JOIN u ON t.v < u.v"
	st, _ = parser.ParseOne(q)
	p, _ = binder.New(catalog{}, q, nil).BindQuery(st.Node)
	job, err = Build("v", p, &endpoints{}, Options{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(job.Explain, "-join LeftJoin on (t.v < u.v) (nested loop) (parallelism 1, retract)") {
		t.Fatalf("theta join explain:\n%s", job.Explain)
	}
	_ = fmt.Sprint
}

func (e *endpoints) SinkParallelism() int { return 0 }

// TestSharedSubPlans: a subtree the plan holds twice is built once and
// feeds both consumers; one with a volatile function is built twice.
func TestSharedSubPlans(t *testing.T) {
	build := func(q string) string {
		t.Helper()
		st, err := parser.ParseOne(q)
		if err != nil {
			t.Fatal(err)
		}
		p, err := binder.New(catalog{}, q, nil).BindQuery(st.Node)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		job, err := Build("v", p, &endpoints{}, Options{Parallelism: 2})
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return job.Explain
	}
	ex := build("SELECT x.k, x.n, z.m FROM (SELECT k, count(*) AS n FROM t GROUP BY k) x JOIN (SELECT max(n) AS m FROM (SELECT k, count(*) AS n FROM t GROUP BY k) y) z ON x.n = z.m")
	if n := strings.Count(ex, "scan-t (parallelism"); n != 1 {
		t.Errorf("the subquery read twice has %d scans of t, want 1:\n%s", n, ex)
	}
	if n := strings.Count(ex, "aggregate [count(*)]"); n != 1 {
		t.Errorf("the subquery read twice has %d count aggregates, want 1:\n%s", n, ex)
	}
	if !strings.Contains(ex, "read again") {
		t.Errorf("EXPLAIN does not say what is read again:\n%s", ex)
	}
	ex = build("SELECT a.id, a.r, b.r FROM (SELECT id, random() AS r FROM t) a JOIN (SELECT id, random() AS r FROM t) b ON a.id = b.id")
	if n := strings.Count(ex, "random()"); n != 2 {
		t.Errorf("a subtree calling random() twice has %d projections computing it, want 2:\n%s", n, ex)
	}
	if n := strings.Count(ex, "scan-t (parallelism"); n != 1 {
		t.Errorf("the volatile subtrees have %d scans of t, want the one shared:\n%s", n, ex)
	}
}
