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

// This file holds a harness for views over relations of any shape: a
// catalog of named relations with their changelogs, a source per relation
// that replays its changelog (one chunk per epoch), and DuckDB tables
// loaded with the same rows for the oracle.

// input is one relation of a test with its changelog and its final rows,
// in the order they were first inserted (seq is the row's position in
// that order, for oracles that depend on arrival order).
type input struct {
	rel  *plan.Relation
	evs  []event
	live []types.Row // final rows in insertion order
}

type relCatalog map[string]*input

func (c relCatalog) Relation(name string) (*plan.Relation, error) {
	if in := c[name]; in != nil {
		return in.rel, nil
	}
	return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

// anySource replays a changelog of rows of ts.
type anySource struct {
	ts  []types.Type
	evs []event
	pos int
}

func (s *anySource) Open(*operator.Context) error { return nil }
func (s *anySource) Next() (operator.Item, error) {
	if s.pos >= len(s.evs) {
		return operator.Item{Done: true}, nil
	}
	if e := s.evs[s.pos]; e.epoch != 0 {
		s.pos++
		return operator.Item{Epoch: e.epoch}, nil
	}
	c := types.NewChunk(s.ts, 16)
	for s.pos < len(s.evs) && s.evs[s.pos].epoch == 0 {
		c.Append(s.evs[s.pos].kind, s.evs[s.pos].row)
		s.pos++
	}
	return operator.Item{Chunk: c}, nil
}
func (s *anySource) Snapshot(base.CheckpointID) error       { return nil }
func (s *anySource) NotifyComplete(base.CheckpointID) error { return nil }
func (s *anySource) Close() error                           { return nil }

type anyEndpoints struct {
	cat  relCatalog
	mu   sync.Mutex
	rows []string
}

func (e *anyEndpoints) Source(rel *plan.Relation, _ int) operator.Source {
	in := e.cat[rel.Name]
	return &anySource{ts: relTypes(rel), evs: in.evs}
}
func (e *anyEndpoints) SourceParallelism(*plan.Relation) int { return 1 }
func (e *anyEndpoints) Sink(int) operator.Operator           { return &sink{mu: &e.mu, rows: &e.rows} }
func (e *anyEndpoints) SinkParallelism() int                 { return 0 }

func relTypes(rel *plan.Relation) []types.Type {
	ts := make([]types.Type, len(rel.Columns))
	for i, c := range rel.Columns {
		ts[i] = c.Type
	}
	return ts
}

// bindSQL parses and binds q over cat.
func bindSQL(t *testing.T, cat relCatalog, q string) plan.Node {
	t.Helper()
	st, err := parser.ParseOne(q)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	p, err := binder.New(cat, q, nil).BindQuery(st.Node)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return p
}

// runPlan builds p as a job of the given parallelism, runs it to the end
// and returns the materialized result and the job.
func runPlan(t *testing.T, cat relCatalog, p plan.Node, par int) ([]string, *Job) {
	t.Helper()
	return runPlanWith(t, cat, p, Options{Parallelism: par})
}

// runPlanWith is runPlan with options.
func runPlanWith(t *testing.T, cat relCatalog, p plan.Node, opts Options) ([]string, *Job) {
	t.Helper()
	ep := &anyEndpoints{cat: cat}
	job, err := Build("view", p, ep, opts)
	if err != nil {
		t.Fatalf("build: %v\n%s", err, plan.Explain(p))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := task.Run(ctx, job.Graph, task.Options{}); err != nil {
		t.Fatalf("run: %v\n%s", err, job.Explain)
	}
	return materialize(t, ep.rows), job
}

// sqlLiteral renders d as a DuckDB literal of type t.
func sqlLiteral(d types.Datum, t types.Type) string {
	if d.IsNull() {
		return "NULL"
	}
	switch t.Kind {
	case types.KindTimestamp:
		return fmt.Sprintf("make_timestamp(%d::BIGINT)", d.Micros())
	case types.KindTimestampTZ:
		return fmt.Sprintf("(to_timestamp(0) + to_microseconds(%d::BIGINT))", d.Micros())
	case types.KindText:
		return "'" + strings.ReplaceAll(d.Str(), "'", "''") + "'"
	}
	return types.FormatText(d, nil)
}

func duckType(t types.Type) string {
	switch t.Kind {
	case types.KindTimestamp:
		return "TIMESTAMP"
	case types.KindTimestampTZ:
		return "TIMESTAMPTZ"
	case types.KindText:
		return "VARCHAR"
	case types.KindInt64:
		return "BIGINT"
	case types.KindInt32:
		return "INTEGER"
	}
	panic("test: no DuckDB type for " + t.String())
}

// loadDuck creates each relation's table in DuckDB with its final rows,
// plus a column seq (the row's insertion order).
func loadDuck(t *testing.T, db *duckdb.DB, cat relCatalog) {
	t.Helper()
	ctx := context.Background()
	for name, in := range cat {
		var cols []string
		for _, c := range in.rel.Columns {
			cols = append(cols, c.Name+" "+duckType(c.Type))
		}
		cols = append(cols, "seq BIGINT")
		if err := db.Exec(ctx, "DROP TABLE IF EXISTS "+name+"; CREATE TABLE "+name+" ("+strings.Join(cols, ", ")+")"); err != nil {
			t.Fatal(err)
		}
		if len(in.live) == 0 {
			continue
		}
		var vals []string
		for i, r := range in.live {
			var lit []string
			for j, c := range in.rel.Columns {
				lit = append(lit, sqlLiteral(r[j], c.Type))
			}
			lit = append(lit, fmt.Sprint(i))
			vals = append(vals, "("+strings.Join(lit, ", ")+")")
		}
		if err := db.Exec(ctx, "INSERT INTO "+name+" VALUES "+strings.Join(vals, ", ")); err != nil {
			t.Fatal(err)
		}
	}
}

// duckRows runs q in DuckDB and formats its rows as the sink does.
func duckRows(t *testing.T, db *duckdb.DB, q string) []string {
	t.Helper()
	_, rows, err := db.Query(context.Background(), q)
	if err != nil {
		t.Fatalf("DuckDB: %v\n%s", err, q)
	}
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = rowText(r)
	}
	sort.Strings(out)
	return out
}

func sameRows(t *testing.T, what string, got, want []string, explain string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("%s\nstreaming (%d rows):\n%s\nDuckDB (%d rows):\n%s\nplan:\n%s", what, len(got), strings.Join(got, "\n"),
			len(want), strings.Join(want, "\n"), explain)
	}
}

const sec = int64(1_000_000)

// bidRel is an append-only stream bid(auction BIGINT, price BIGINT,
// date_time TIMESTAMP).
func bidRel(name string) *plan.Relation {
	return &plan.Relation{Name: name, IsSource: true, Columns: []plan.Column{
		{Name: "auction", Type: types.Int64}, {Name: "price", Type: types.Int64},
		{Name: "date_time", Type: types.Timestamp},
	}}
}

// bidTime draws an event time: mostly half-second steps around 1970 (so
// many fall exactly on window boundaries, and half are negative), some in
// 1889, some NULL.
func bidTime(rng *rand.Rand) types.Datum {
	switch rng.IntN(12) {
	case 0:
		return types.Null
	case 1:
		return types.NewTimestamp(-2_500_000_000*sec + int64(rng.IntN(40))*sec/2)
	}
	return types.NewTimestamp(int64(rng.IntN(121)-60) * sec / 2)
}

// bidScript is an append-only changelog of n epochs of bids.
func bidScript(rel *plan.Relation, seed uint64, epochs int) *input {
	rng := rand.New(rand.NewPCG(seed, 3))
	in := &input{rel: rel}
	for e := 1; e <= epochs; e++ {
		for range rng.IntN(12) {
			r := types.Row{types.NewInt64(int64(rng.IntN(4))), types.NewInt64(int64(rng.IntN(100))), bidTime(rng)}
			in.evs = append(in.evs, event{kind: types.Insert, row: r})
			in.live = append(in.live, r)
		}
		in.evs = append(in.evs, event{epoch: base.Epoch(e)})
	}
	return in
}

// tsRel is a table tr(id BIGINT PRIMARY KEY, k BIGINT, v BIGINT, ts
// TIMESTAMP) whose changelog has updates and deletes.
var tsRel = &plan.Relation{Name: "tr", PrimaryKey: []int{0}, Columns: []plan.Column{
	{Name: "id", Type: types.Int64, NotNull: true}, {Name: "k", Type: types.Int64},
	{Name: "v", Type: types.Int64}, {Name: "ts", Type: types.Timestamp},
}}

// tsScript is a changelog of inserts, updates (of k, v or ts) and
// deletes of tr.
func tsScript(seed uint64, epochs int) *input {
	rng := rand.New(rand.NewPCG(seed, 5))
	in := &input{rel: tsRel}
	live := map[int64]types.Row{}
	var order []int64
	var ids []int64
	next := int64(0)
	for e := 1; e <= epochs; e++ {
		for range rng.IntN(14) {
			switch {
			case len(ids) > 0 && rng.IntN(4) == 0:
				i := rng.IntN(len(ids))
				id := ids[i]
				ids = append(ids[:i], ids[i+1:]...)
				in.evs = append(in.evs, event{kind: types.Delete, row: live[id]})
				delete(live, id)
			case len(ids) > 0 && rng.IntN(3) == 0:
				id := ids[rng.IntN(len(ids))]
				old := live[id]
				nw := types.Row{old[0], types.NewInt64(int64(rng.IntN(4))), types.NewInt64(int64(rng.IntN(6))), bidTime(rng)}
				if rng.IntN(6) == 0 {
					nw[2] = types.Null
				}
				in.evs = append(in.evs, event{kind: types.UpdateBefore, row: old}, event{kind: types.UpdateAfter, row: nw})
				live[id] = nw
			default:
				r := types.Row{types.NewInt64(next), types.NewInt64(int64(rng.IntN(4))), types.NewInt64(int64(rng.IntN(6))), bidTime(rng)}
				live[next] = r
				ids = append(ids, next)
				order = append(order, next)
				in.evs = append(in.evs, event{kind: types.Insert, row: r})
				next++
			}
		}
		in.evs = append(in.evs, event{epoch: base.Epoch(e)})
	}
	for _, id := range order {
		if r, ok := live[id]; ok {
			in.live = append(in.live, r)
		}
	}
	return in
}
