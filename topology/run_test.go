package topology_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/tablesink"
	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/lineage"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/topology"
)

// openCounter is a generator that counts its opens, to show a refused job
// never started.
type openCounter struct {
	operator.Source
	n *atomic.Int32
}

func (o openCounter) Open(ctx *operator.Context) error {
	o.n.Add(1)
	return o.Source.Open(ctx)
}

// TestRunJobEnforcesLineageAtStart: a job registers before it starts, so a
// second writer to a table or a cycle is refused with an error naming the
// jobs and tables, and the job never runs; a registered job heartbeats and
// ends FINISHED with its last checkpoint; a restart with the same
// definition goes on.
func TestRunJobEnforcesLineageAtStart(t *testing.T) {
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Options{Store: store.NewMemory(), EpochInterval: 5 * time.Millisecond, HeartbeatTimeout: time.Hour})
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
	cols := []catalog.Column{{Name: "k", Type: types.Int64, NotNull: true}, {Name: "sum", Type: types.Int64}, {Name: "cnt", Type: types.Int64}}
	must(svc.CreateDatabase(ctx, catalog.Database{Name: "dev"}))
	must(svc.CreateSource(ctx, catalog.Source{Name: catalog.Name("dev", "gen"), Connector: "generator"}))
	must(svc.CreateTable(ctx, catalog.Table{Name: n1, Kind: catalog.KindView, Query: "SELECT * FROM t2", PrimaryKey: []string{"k"}, Columns: cols}))
	must(svc.CreateTable(ctx, catalog.Table{Name: n2, Kind: catalog.KindView, Query: "SELECT * FROM t1", PrimaryKey: []string{"k"}, Columns: cols}))

	t1, err := table.Create(fileio.NewMem(), "wh/dev/t1", int64Fields("k", "sum", "cnt"), []string{"k"}, nil)
	must(err)
	var opens atomic.Int32
	g := testkit.GeneratorConfig{Rows: 200, RowsPerEpoch: 50, ChunkSize: 10, Keys: 7}
	newJob := func(name string) *graph.Job {
		i64 := []types.Type{types.Int64}
		return &graph.Job{Name: name,
			Vertices: []graph.Vertex{
				{Name: "gen", Parallelism: 1, NewSource: func(int) operator.Source { return openCounter{testkit.NewGenerator(g), &opens} }},
				{Name: "sum", Parallelism: 1, NewOperator: func(int) operator.Operator { return testkit.NewKeyedSum() }},
				{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator { return tablesink.Sink(t1, n1, name, nil) }},
			},
			Edges: []graph.Edge{
				{From: "gen", To: "sum", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: i64},
				{From: "sum", To: "sink", Partitioning: graph.Forward},
			}}
	}
	dirA := t.TempDir() // job a keeps its checkpoints across its runs
	opts := func(dir string) task.Options {
		return task.Options{Policy: barrier.PolicyAligned, CheckpointInterval: 2 * time.Millisecond, TolerableFailures: 100,
			Storage: checkpoint.NewStorage(checkpoint.OSFS{}, dir, 2)}
	}
	// job "a" reads t2 and writes t1.
	defA := catalog.Job{Name: "a", Kind: catalog.JobView, Reads: []catalog.ObjectName{n2}, Writes: []catalog.ObjectName{n1}}
	must(topology.RunJob(ctx, svc, defA, newJob("a"), opts(dirA)))
	info, err := svc.Job(ctx, "a")
	must(err)
	if info.Status != meta.JobFinished || info.LastCheckpoint == 0 {
		t.Fatalf("job a ended %s with last checkpoint %d", info.Status, info.LastCheckpoint)
	}
	before := opens.Load()

	// A second writer of t1 is refused before anything runs.
	defB := catalog.Job{Name: "b", Kind: catalog.JobView, Reads: []catalog.ObjectName{n2}, Writes: []catalog.ObjectName{n1}}
	err = topology.RunJob(ctx, svc, defB, newJob("b"), opts(t.TempDir()))
	if !errors.Is(err, lineage.ErrSecondWriter) || !strings.Contains(err.Error(), `"a"`) || !strings.Contains(err.Error(), `"b"`) {
		t.Fatalf("second writer: %v", err)
	}
	// So is a cycle: c reads t1 and writes t2, while a reads t2 and writes t1.
	defC := catalog.Job{Name: "c", Kind: catalog.JobView, Reads: []catalog.ObjectName{n1}, Writes: []catalog.ObjectName{n2}}
	err = topology.RunJob(ctx, svc, defC, newJob("c"), opts(t.TempDir()))
	if !errors.Is(err, lineage.ErrCycle) {
		t.Fatalf("cycle: %v", err)
	}
	if opens.Load() != before {
		t.Fatal("a refused job started its source")
	}
	// A restart of a with the same definition goes on (from its last
	// checkpoint); a different one is refused.
	must(topology.RunJob(ctx, svc, defA, newJob("a"), opts(dirA)))
	defA2 := defA
	defA2.Reads = []catalog.ObjectName{catalog.Name("dev", "gen")}
	if err := topology.RunJob(ctx, svc, defA2, newJob("a"), opts(dirA)); err == nil {
		t.Fatal("a re-registration with other reads was accepted")
	}
}
