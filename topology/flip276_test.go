package topology_test

import (
	"context"
	"flag"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/ingest"
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
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
	"github.com/stratadb/strata/sql/planner"
	"github.com/stratadb/strata/sql/sqlerr"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
	"github.com/stratadb/strata/topology"
)

var (
	flipDuration             = flag.Duration("flip276.duration", 60*time.Second, "how long TestTopologyFLIP276 feeds changes")
	flipBackpressureDuration = flag.Duration("flip276.backpressure.duration", 10*time.Second, "how long TestTopologyFLIP276Backpressure feeds changes")
)

// changeLog is the change stream V1, V2, ...: change i sets key i%keys to
// version i. It grows while the test runs; each change is its own source
// transaction.
type changeLog struct {
	mu    sync.Mutex
	n     int
	total int
	keys  int
}

func (l *changeLog) Next(pos uint64) (*types.Chunk, uint64, error) {
	l.mu.Lock()
	n := l.n
	l.mu.Unlock()
	if int(pos) >= n {
		return nil, pos, nil
	}
	i := int64(pos) + 1
	c := types.NewChunk([]types.Type{types.Int64, types.Int64}, 1)
	c.Append(types.Insert, types.Row{types.NewInt64(i % int64(l.keys)), types.NewInt64(i)})
	return c, pos + 1, nil
}

type flipCatalog map[string]*plan.Relation

func (c flipCatalog) Relation(name string) (*plan.Relation, error) {
	if r, ok := c[name]; ok {
		return r, nil
	}
	return nil, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", name)
}

type flipEndpoints struct {
	tables map[string]*table.Table
	types  map[string][]types.Type
	until  base.Epoch
	sink   func() operator.Operator
}

func (e *flipEndpoints) Source(rel *plan.Relation, _ int) operator.Source {
	return tablesource.New(tablesource.Config{Table: e.tables[rel.Name], Name: rel.Name, Types: e.types[rel.Name], UntilEpoch: e.until, Idle: time.Millisecond})
}
func (e *flipEndpoints) SourceParallelism(*plan.Relation) int { return 1 }
func (e *flipEndpoints) Sink(int) operator.Operator           { return e.sink() }
func (e *flipEndpoints) SinkParallelism() int                 { return 1 }

// TestTopologyFLIP276 is FLIP-276's example: a change stream feeds T1 (job
// 1: T1 = latest version per key); T2 is derived from T1 (job 2: version
// times two); T3 joins T1 and T2 (job 3). Each job runs on its own,
// commits through table sinks on its own checkpoints, and suffers injected
// panics and restarts. A reader loops on ReadConsistent({T1, T2, T3}) and
// checks at every read that for every change either all of its
// consequences (in T1, T2 and T3) are visible or none is; at the end every
// table equals a re-computation from the change stream.
func TestTopologyFLIP276(t *testing.T) {
	d := *flipDuration
	if testing.Short() {
		d = 4 * time.Second
	}
	runFLIP276(t, barrier.PolicyAlignedTimeout, 0, d)
}

// TestTopologyFLIP276Backpressure is the same with unaligned checkpoints
// and job 2 throttled (its projection sleeps 80 ms per chunk, slower than
// the stream): reads stay consistent, job 2's checkpoints keep completing
// under backpressure, T2 falls behind T1 while the stream runs and catches
// up after it ends.
func TestTopologyFLIP276Backpressure(t *testing.T) {
	d := *flipBackpressureDuration
	if testing.Short() {
		d = 4 * time.Second
	}
	runFLIP276(t, barrier.PolicyUnaligned, 80*time.Millisecond, d)
}

func runFLIP276(t *testing.T, policy barrier.Policy, throttle, feed time.Duration) {
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Options{Store: store.NewMemory(), EpochInterval: 50 * time.Millisecond, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	n1, n2, n3 := catalog.Name("dev", "t1"), catalog.Name("dev", "t2"), catalog.Name("dev", "t3")
	must(svc.CreateDatabase(ctx, catalog.Database{Name: "dev"}))
	must(svc.CreateSource(ctx, catalog.Source{Name: catalog.Name("dev", "changes"), Connector: "log"}))
	col := func(n string, nn bool) catalog.Column { return catalog.Column{Name: n, Type: types.Int64, NotNull: nn} }
	must(svc.CreateTable(ctx, catalog.Table{Name: n1, Kind: catalog.KindTable, PrimaryKey: []string{"k"}, Columns: []catalog.Column{col("k", true), col("ver", false)}}))
	must(svc.CreateTable(ctx, catalog.Table{Name: n2, Kind: catalog.KindView, PrimaryKey: []string{"k"}, Query: "SELECT k, ver * 2 AS ver2 FROM t1",
		Columns: []catalog.Column{col("k", true), col("ver2", false)}}))
	must(svc.CreateTable(ctx, catalog.Table{Name: n3, Kind: catalog.KindView, PrimaryKey: []string{"k"}, Query: "SELECT t1.k, t1.ver, t2.ver2 FROM t1 JOIN t2 ON t1.k = t2.k",
		Columns: []catalog.Column{col("k", true), col("ver", false), col("ver2", false)}}))
	must(svc.RegisterJob(ctx, catalog.Job{Name: "job1", Kind: catalog.JobIngest, Reads: []catalog.ObjectName{catalog.Name("dev", "changes")}, Writes: []catalog.ObjectName{n1}}))
	must(svc.RegisterJob(ctx, catalog.Job{Name: "job2", Kind: catalog.JobView, Reads: []catalog.ObjectName{n1}, Writes: []catalog.ObjectName{n2}}))
	must(svc.RegisterJob(ctx, catalog.Job{Name: "job3", Kind: catalog.JobView, Reads: []catalog.ObjectName{n1, n2}, Writes: []catalog.ObjectName{n3}}))

	fs := fileio.NewMem()
	fields := func(names ...string) []schema.Field {
		out := make([]schema.Field, len(names))
		for i, n := range names {
			out[i] = schema.Field{Name: n, Type: types.Int64, Nullable: i > 0}
		}
		return out
	}
	t1, err := table.Create(fs, "wh/dev/t1", fields("k", "ver"), []string{"k"}, map[string]string{"bucket": "2"})
	must(err)
	t2, err := table.Create(fs, "wh/dev/t2", fields("k", "ver2"), []string{"k"}, map[string]string{"bucket": "2"})
	must(err)
	t3, err := table.Create(fs, "wh/dev/t3", fields("k", "ver", "ver2"), []string{"k"}, map[string]string{"bucket": "2"})
	must(err)
	tables := map[string]*table.Table{"t1": t1, "t2": t2, "t3": t3}
	i64 := types.Int64
	rels := flipCatalog{
		"t1": {Name: "t1", PrimaryKey: []int{0}, Columns: []plan.Column{{Name: "k", Type: i64, NotNull: true}, {Name: "ver", Type: i64}}},
		"t2": {Name: "t2", PrimaryKey: []int{0}, Columns: []plan.Column{{Name: "k", Type: i64, NotNull: true}, {Name: "ver2", Type: i64}}},
	}
	colTypes := map[string][]types.Type{"t1": {i64, i64}, "t2": {i64, i64}}

	log := &changeLog{keys: 13}
	start, err := svc.CurrentEpoch(ctx)
	must(err)
	epochs := base.Epoch(feed/(50*time.Millisecond)) + 20
	until := start.Epoch + epochs
	feedDone := make(chan struct{})
	go func() { // the change stream: a change every 2 ms for the duration
		defer close(feedDone)
		end := time.Now().Add(feed)
		for time.Now().Before(end) {
			log.mu.Lock()
			log.n++
			log.mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}()

	var job2Checkpoints atomic.Int32
	runJob := func(job *graph.Job, in *testkit.Injector) error {
		rctx, cancel := context.WithTimeout(ctx, feed+2*time.Minute)
		defer cancel()
		return task.Run(rctx, job, task.Options{
			Policy: policy, AlignmentTimeout: 5 * time.Millisecond,
			CheckpointInterval: 20 * time.Millisecond, TolerableFailures: 1000,
			Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
			Restart: task.RestartStrategy{MaxAttempts: 1000, Delay: 5 * time.Millisecond},
			OnEvent: func(e task.Event) {
				if e.Kind == task.CheckpointCompleted {
					in.CheckpointCompleted()
					if job.Name == "job2" {
						job2Checkpoints.Add(1)
					}
				}
			},
		})
	}
	injectors := make([]*testkit.Injector, 3)
	for i := range injectors {
		injectors[i] = testkit.NewInjector(uint64(i+1), 8, 40, 50*time.Millisecond, 250*time.Millisecond)
	}
	failing := func(in *testkit.Injector, where string, op operator.Operator) operator.Operator {
		return testkit.Failing{Operator: op, In: in, Where: where}
	}
	var pairsMu sync.Mutex
	closedAt := map[base.Epoch]uint64{} // epoch -> source position that closed it
	job1 := &graph.Job{Name: "job1",
		Vertices: []graph.Vertex{
			{Name: "changes", Parallelism: 1, NewSource: func(int) operator.Source {
				return ingest.New(ingest.Config{Reader: log, Clock: svc, Name: "changes", StartEpoch: start.Epoch, UntilEpoch: until,
					OnClose: func(p ingest.Pair) {
						pairsMu.Lock()
						closedAt[p.Epoch] = p.Position
						pairsMu.Unlock()
					}})
			}},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator {
				return failing(injectors[0], "job1 sink", tablesink.Sink(t1, n1, "job1", svc))
			}},
		},
		Edges: []graph.Edge{{From: "changes", To: "sink", Partitioning: graph.Forward}},
	}
	build := func(name, q string, out *table.Table, outName catalog.ObjectName, in *testkit.Injector) *graph.Job {
		st, err := parser.ParseOne(q)
		must(err)
		p, err := binder.New(rels, q, nil).BindQuery(st.Node)
		must(err)
		ep := &flipEndpoints{tables: tables, types: colTypes, until: until, sink: func() operator.Operator {
			return failing(in, name+" sink", tablesink.Sink(out, outName, name, svc))
		}}
		job, err := planner.Build(name, p, ep, planner.Options{Parallelism: 2, Wrap: func(kind string, op operator.Operator) operator.Operator {
			if name == "job2" && kind == "project" && throttle > 0 {
				op = testkit.Throttle{Operator: op, Delay: throttle}
			}
			return failing(in, name+" "+kind, op)
		}})
		must(err)
		return job.Graph
	}
	job2 := build("job2", "SELECT k, ver * 2 AS ver2 FROM t1", t2, n2, injectors[1])
	job3 := build("job3", "SELECT t1.k, t1.ver, t2.ver2 FROM t1 JOIN t2 ON t1.k = t2.k", t3, n3, injectors[2])

	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i, j := range []*graph.Job{job1, job2, job3} {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = runJob(j, injectors[i]) }()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()

	read := map[catalog.ObjectName]*table.Table{n1: t1, n2: t2, n3: t3}
	reads, withData := 0, 0
	var last, maxLag base.Epoch
	check := func() {
		rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		r, err := topology.ReadConsistent(rctx, svc, read, version.Strong, "reader")
		if err != nil {
			t.Fatal(err)
		}
		reads++
		e := r.Version.Epochs[n1]
		if r.Version.Epochs[n2] != e || r.Version.Epochs[n3] != e {
			t.Fatalf("related tables at different epochs: %v", r.Version.Epochs)
		}
		if e < last {
			t.Fatalf("strong read went back from epoch %d to %d", last, e)
		}
		last = e
		if msg := torn(r.Rows[n1], r.Rows[n2], r.Rows[n3]); msg != "" {
			t.Fatalf("torn read at epoch %d: %s", e, msg)
		}
		if len(r.Rows[n1]) > 0 {
			withData++
		}
		c1, err1 := svc.CommittedEpoch(rctx, n1)
		c2, err2 := svc.CommittedEpoch(rctx, n2)
		if err1 == nil && err2 == nil && c1.Epoch > c2.Epoch {
			maxLag = max(maxLag, c1.Epoch-c2.Epoch)
		}
	}
	for loop := true; loop; {
		select {
		case <-done:
			loop = false
		default:
			check()
			time.Sleep(time.Millisecond)
		}
	}
	<-feedDone
	for i, err := range errs {
		if err != nil {
			t.Fatalf("job%d: %v", i+1, err)
		}
	}
	check()
	failures := 0
	for _, in := range injectors {
		failures += in.Failed()
	}
	// At the end, every table equals a re-computation from the stream up
	// to the position at which the source closed its last epoch, until.
	// The feed stops 20 epochs (1 s) before that; a source more than that
	// behind on a loaded machine closes until before reading the feed's
	// last changes, which then belong to no epoch (ingest closes an epoch
	// as soon as the clock has moved past it).
	pairsMu.Lock()
	endPos, ok := closedAt[until]
	pairsMu.Unlock()
	if !ok || endPos == 0 {
		t.Fatalf("the last epoch %d was not closed after any change (closed: %v)", until, ok)
	}
	want1 := map[int64]int64{}
	for i := 1; i <= int(endPos); i++ {
		want1[int64(i%log.keys)] = int64(i)
	}
	rows, err := t1.ReadLatest()
	must(err)
	if got, want := keyed(rows), fmtMap(want1); got != want {
		t.Fatalf("t1 at the end:\n%s\nwant\n%s", got, want)
	}
	if last != until {
		t.Fatalf("last consistent read at epoch %d, want %d", last, until)
	}
	// Every table at every committed epoch equals a re-computation over
	// the prefix of the change stream that epoch closed (DESIGN.md
	// invariant 1): T1 directly, T2 and T3 through torn at that epoch.
	for e := start.Epoch; e <= until; e++ {
		pos, ok := closedAt[e]
		if !ok {
			t.Fatalf("epoch %d was never closed", e)
		}
		want := map[int64]int64{}
		for i := 1; i <= int(pos); i++ {
			want[int64(i%log.keys)] = int64(i)
		}
		r1, err := t1.ReadAtEpoch(e)
		must(err)
		if got := keyed(r1); got != fmtMap(want) {
			t.Fatalf("t1 at epoch %d (source position %d):\n%s\nwant\n%s", e, pos, got, fmtMap(want))
		}
		r2, err := t2.ReadAtEpoch(e)
		must(err)
		r3, err := t3.ReadAtEpoch(e)
		must(err)
		if msg := torn(r1, r2, r3); msg != "" {
			t.Fatalf("epoch %d: %s", e, msg)
		}
	}
	if throttle > 0 && (maxLag < 3 || job2Checkpoints.Load() < 10) {
		t.Fatalf("throttled job 2: T2 lagged at most %d epochs behind T1, %d checkpoints completed", maxLag, job2Checkpoints.Load())
	}
	t.Logf("checkpoint mode %s: %d changes (%d read by the last epoch), %d epochs, %d injected failures, %d consistent reads (%d with data), none torn; every epoch equals its source prefix; T2 lagged up to %d epochs, job 2 completed %d checkpoints",
		policy, log.n, endPos, epochs, failures, reads, withData, maxLag, job2Checkpoints.Load())
}

// torn checks t2 = {(k, 2 ver)} and t3 = {(k, ver, 2 ver)} for t1's rows.
func torn(t1, t2, t3 []types.Row) string {
	want2 := make([]string, 0, len(t1))
	want3 := make([]string, 0, len(t1))
	for _, r := range t1 {
		k, v := r[0].Int64(), r[1].Int64()
		want2 = append(want2, fmt.Sprintf("(%d, %d)", k, 2*v))
		want3 = append(want3, fmt.Sprintf("(%d, %d, %d)", k, v, 2*v))
	}
	if got, want := sorted(t2), sortedStrings(want2); got != want {
		return "t2 " + got + " but t1 gives " + want
	}
	if got, want := sorted(t3), sortedStrings(want3); got != want {
		return "t3 " + got + " but t1 gives " + want
	}
	return ""
}

func sorted(rows []types.Row) string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.String()
	}
	return sortedStrings(out)
}

func sortedStrings(s []string) string {
	sort.Strings(s)
	return strings.Join(s, " ")
}

func keyed(rows []types.Row) string { return sorted(rows) }

func fmtMap(m map[int64]int64) string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, fmt.Sprintf("(%d, %d)", k, v))
	}
	return sortedStrings(out)
}
