package topology_test

import (
	"context"
	"fmt"
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
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/meta/version"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/topology"
)

// mod4 projects t1's changelog (k, sum, cnt) to (k % 4, sum), row kinds
// kept, for a keyed sum per k % 4.
type mod4 struct {
	operator.Base
	ctx *operator.Context
}

func (m *mod4) Open(ctx *operator.Context) error { m.ctx = ctx; return nil }

func (m *mod4) Process(_ int, c *types.Chunk) error {
	out := types.NewChunk([]types.Type{types.Int64, types.Int64}, c.Len())
	for i := range c.Len() {
		out.Append(c.Kind(i), types.Row{types.NewInt64(c.Datum(0, i).Int64() % 4), c.Datum(1, i)})
	}
	return m.ctx.Output.Emit(out)
}

func int64Fields(names ...string) []schema.Field {
	fs := make([]schema.Field, len(names))
	for i, n := range names {
		fs[i] = schema.Field{Name: n, Type: types.Int64, Nullable: i > 0}
	}
	return fs
}

// TestReadConsistentNeverTorn runs an ingest job (generator -> t1) and a
// view job (t1 -> t2 = per k % 4 the total of t1.sum and the number of
// keys) at once, both committing through table sinks that report to the
// meta service, while a reader loops on ReadConsistent({t1, t2}, strong).
// Every read must see t1 and t2 at one epoch with t2 equal to the view
// computed from that t1 (no torn read), and epochs never go back.
func TestReadConsistentNeverTorn(t *testing.T) {
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Options{Store: store.NewMemory(), EpochInterval: 2 * time.Millisecond, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	n1, n2 := catalog.Name("dev", "t1"), catalog.Name("dev", "t2")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(svc.CreateDatabase(ctx, catalog.Database{Name: "dev"}))
	must(svc.CreateSource(ctx, catalog.Source{Name: catalog.Name("dev", "gen"), Connector: "generator"}))
	cols := []catalog.Column{{Name: "k", Type: types.Int64, NotNull: true}, {Name: "sum", Type: types.Int64}, {Name: "cnt", Type: types.Int64}}
	must(svc.CreateTable(ctx, catalog.Table{Name: n1, Kind: catalog.KindTable, PrimaryKey: []string{"k"}, Columns: cols}))
	must(svc.CreateTable(ctx, catalog.Table{Name: n2, Kind: catalog.KindView, PrimaryKey: []string{"k"}, Columns: cols,
		Query: "SELECT k % 4 AS k, sum(sum) AS sum, count(*) AS cnt FROM t1 GROUP BY k % 4"}))
	must(svc.RegisterJob(ctx, catalog.Job{Name: "ingest", Kind: catalog.JobIngest, Reads: []catalog.ObjectName{catalog.Name("dev", "gen")}, Writes: []catalog.ObjectName{n1}}))
	must(svc.RegisterJob(ctx, catalog.Job{Name: "view", Kind: catalog.JobView, Reads: []catalog.ObjectName{n1}, Writes: []catalog.ObjectName{n2}}))

	fs := fileio.NewMem()
	t1, err := table.Create(fs, "wh/dev/t1", int64Fields("k", "sum", "cnt"), []string{"k"}, map[string]string{"bucket": "2"})
	must(err)
	t2, err := table.Create(fs, "wh/dev/t2", int64Fields("k", "sum", "cnt"), []string{"k"}, map[string]string{"bucket": "1"})
	must(err)

	const epochs = 30
	// The generator's epochs follow its rows; pacing keeps them behind the
	// meta service's 2 ms clock, which refuses commits of unopened epochs.
	g := testkit.GeneratorConfig{Rows: epochs * 60, RowsPerEpoch: 60, ChunkSize: 20, Keys: 23,
		Pace: func() { time.Sleep(3 * time.Millisecond) }}
	int64s := []types.Type{types.Int64}
	ingest := &graph.Job{Name: "ingest",
		Vertices: []graph.Vertex{
			{Name: "gen", Parallelism: 1, NewSource: func(int) operator.Source { return testkit.NewGenerator(g) }},
			{Name: "sum", Parallelism: 2, NewOperator: func(int) operator.Operator { return testkit.NewKeyedSum() }},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator { return tablesink.Sink(t1, n1, "ingest", svc) }},
		},
		Edges: []graph.Edge{
			{From: "gen", To: "sum", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: int64s},
			{From: "sum", To: "sink", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: int64s},
		}}
	view := &graph.Job{Name: "view",
		Vertices: []graph.Vertex{
			{Name: "t1", Parallelism: 1, NewSource: func(int) operator.Source {
				return tablesource.New(tablesource.Config{Table: t1, Name: "t1", Types: []types.Type{types.Int64, types.Int64, types.Int64}, UntilEpoch: epochs, Idle: time.Millisecond})
			}},
			{Name: "mod4", Parallelism: 1, NewOperator: func(int) operator.Operator { return &mod4{} }},
			{Name: "sum", Parallelism: 1, NewOperator: func(int) operator.Operator { return testkit.NewKeyedSum() }},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator { return tablesink.Sink(t2, n2, "view", svc) }},
		},
		Edges: []graph.Edge{
			{From: "t1", To: "mod4", Partitioning: graph.Forward},
			{From: "mod4", To: "sum", Partitioning: graph.Forward},
			{From: "sum", To: "sink", Partitioning: graph.Forward},
		}}
	run := func(job *graph.Job) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		return task.Run(ctx, job, task.Options{Policy: barrier.PolicyAligned, CheckpointInterval: 5 * time.Millisecond,
			TolerableFailures: 1000, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2)})
	}
	var wg sync.WaitGroup
	errs := make([]error, 2)
	done := make(chan struct{})
	wg.Add(2)
	go func() { defer wg.Done(); errs[0] = run(ingest) }()
	go func() { defer wg.Done(); errs[1] = run(view) }()
	go func() { wg.Wait(); close(done) }()

	reads, nonEmpty := 0, 0
	var last base.Epoch
	tables := map[catalog.ObjectName]*table.Table{n1: t1, n2: t2}
	check := func() {
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		r, err := topology.ReadConsistent(rctx, svc, tables, version.Strong, "reader")
		if err != nil {
			t.Fatal(err)
		}
		reads++
		e1, e2 := r.Version.Epochs[n1], r.Version.Epochs[n2]
		if e1 != e2 {
			t.Fatalf("related tables read at different epochs: t1 %d, t2 %d", e1, e2)
		}
		if e1 < last {
			t.Fatalf("strong read went back from epoch %d to %d", last, e1)
		}
		last = e1
		if got, want := text(r.Rows[n2]), viewOf(r.Rows[n1]); got != want {
			t.Fatalf("torn read at epoch %d:\nt2 %s\nwant %s (from t1)", e1, got, want)
		}
		if len(r.Rows[n2]) > 0 {
			nonEmpty++
		}
	}
	for loop := true; loop; {
		select {
		case <-done:
			loop = false
		default:
			check()
		}
	}
	if errs[0] != nil || errs[1] != nil {
		t.Fatalf("ingest: %v; view: %v", errs[0], errs[1])
	}
	check()
	if last != epochs || nonEmpty < 3 {
		t.Fatalf("last read at epoch %d (want %d), %d of %d reads saw data", last, epochs, nonEmpty, reads)
	}
	t.Logf("%d consistent reads, %d with data, none torn", reads, nonEmpty)
}

// viewOf computes t2 from t1 rows: per k % 4, the total of sum and the
// number of keys.
func viewOf(t1 []types.Row) string {
	total, keys := map[int64]int64{}, map[int64]int64{}
	for _, r := range t1 {
		g := r[0].Int64() % 4
		total[g] += r[1].Int64()
		keys[g]++
	}
	var rows []string
	for g := range total {
		rows = append(rows, fmt.Sprintf("(%d, %d, %d)", g, total[g], keys[g]))
	}
	sort.Strings(rows)
	return strings.Join(rows, " ")
}

func text(rows []types.Row) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}
