package planner

import (
	"context"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/tablesink"
	"github.com/stratadb/strata/connector/tablesource"
	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	metacat "github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

type tableEndpoints struct {
	in      *table.Table
	inTypes []types.Type
	until   base.Epoch
	out     *table.Table
}

func (e *tableEndpoints) Source(rel *plan.Relation, _ int) operator.Source {
	return tablesource.New(tablesource.Config{Table: e.in, Name: rel.Name, Types: e.inTypes, UntilEpoch: e.until, Idle: time.Millisecond})
}
func (e *tableEndpoints) SourceParallelism(*plan.Relation) int { return 1 }
func (e *tableEndpoints) Sink(int) operator.Operator {
	return tablesink.Sink(e.out, metacat.Name("dev", "t2"), "view-t2", nil)
}

type t1Catalog struct{}

func (t1Catalog) Relation(name string) (*plan.Relation, error) {
	if name != "t1" {
		return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
	}
	return &plan.Relation{Name: "t1", PrimaryKey: []int{0}, Columns: []plan.Column{
		{Name: "k", Type: types.Int64, NotNull: true}, {Name: "sum", Type: types.Int64}, {Name: "cnt", Type: types.Int64},
	}}, nil
}

// TestTopologyTableToView runs two jobs at once, joined through the table
// store as FLIP-276 describes: job 1 ingests a generator into table t1
// (keyed sums), job 2 maintains the view t2 = SELECT k % 4, sum(sum),
// count(*) FROM t1 GROUP BY k % 4, reading t1's changelog epoch by epoch.
// At every epoch, t2 read at that epoch must equal DuckDB's answer to the
// view's SQL over t1 read at the same epoch (DESIGN.md invariants 1 and 2).
func TestTopologyTableToView(t *testing.T) {
	fs := fileio.NewMem()
	t1, err := table.Create(fs, "wh/dev/t1", []schema.Field{
		{Name: "k", Type: types.Int64}, {Name: "sum", Type: types.Int64, Nullable: true}, {Name: "cnt", Type: types.Int64, Nullable: true},
	}, []string{"k"}, map[string]string{"bucket": "2"})
	if err != nil {
		t.Fatal(err)
	}
	t2, err := table.Create(fs, "wh/dev/t2", []schema.Field{
		{Name: "g", Type: types.Int64}, {Name: "total", Type: types.Numeric, Nullable: true}, {Name: "keys", Type: types.Int64, Nullable: true},
	}, []string{"g"}, map[string]string{"bucket": "1"})
	if err != nil {
		t.Fatal(err)
	}
	const epochs = 25
	g := testkit.GeneratorConfig{Rows: epochs * 80, RowsPerEpoch: 80, ChunkSize: 20, Keys: 29,
		Pace: func() { time.Sleep(100 * time.Microsecond) }}
	job1 := &graph.Job{
		Name: "ingest",
		Vertices: []graph.Vertex{
			{Name: "gen", Parallelism: 2, NewSource: func(int) operator.Source { return testkit.NewGenerator(g) }},
			{Name: "agg", Parallelism: 2, NewOperator: func(int) operator.Operator { return testkit.NewKeyedSum() }},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator {
				return tablesink.Sink(t1, metacat.Name("dev", "t1"), "ingest-t1", nil)
			}},
		},
		Edges: []graph.Edge{
			{From: "gen", To: "agg", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
			{From: "agg", To: "sink", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
		},
	}
	q := "SELECT k % 4 AS g, sum(sum) AS total, count(*) AS keys FROM t1 GROUP BY k % 4"
	st, err := parser.ParseOne(q)
	if err != nil {
		t.Fatal(err)
	}
	p, err := binder.New(t1Catalog{}, q, nil).BindQuery(st.Node)
	if err != nil {
		t.Fatal(err)
	}
	view, err := Build("view-t2", p, &tableEndpoints{in: t1, inTypes: []types.Type{types.Int64, types.Int64, types.Int64}, until: epochs, out: t2},
		Options{Parallelism: 2})
	if err != nil {
		t.Fatal(err)
	}
	run := func(job *graph.Job) error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		return task.Run(ctx, job, task.Options{
			Policy: barrier.PolicyAligned, CheckpointInterval: 5 * time.Millisecond, TolerableFailures: 1000,
			Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = run(job1) }()
	go func() { defer wg.Done(); errs[1] = run(view.Graph) }()
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("ingest: %v; view: %v", errs[0], errs[1])
	}
	if ce, _ := t2.CommittedEpoch(); ce != epochs {
		t.Fatalf("t2 committed epoch %d, want %d", ce, epochs)
	}
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	for e := base.Epoch(1); e <= epochs; e++ {
		in, err := t1.ReadAtEpoch(e)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.Exec(ctx, "DROP TABLE IF EXISTS t1; CREATE TABLE t1 (k BIGINT PRIMARY KEY, sum BIGINT, cnt BIGINT)"); err != nil {
			t.Fatal(err)
		}
		for _, r := range in {
			if err := db.Exec(ctx, "INSERT INTO t1 VALUES (?, ?, ?)", r[0].Int64(), r[1].Int64(), r[2].Int64()); err != nil {
				t.Fatal(err)
			}
		}
		_, wantRows, err := db.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got, err := t2.ReadAtEpoch(e)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := sortedRows(got), sortedRows(wantRows); a != b {
			t.Fatalf("epoch %d: t2\n%s\nDuckDB over t1 at epoch %d\n%s", e, a, e, b)
		}
	}
}

func sortedRows(rows []types.Row) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	sort.Strings(out)
	return strings.Join(out, "\n")
}

func (e *tableEndpoints) SinkParallelism() int { return 1 }
