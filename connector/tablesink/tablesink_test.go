package tablesink_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

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
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// reports records committed-epoch reports and checks they never go back.
type reports struct {
	mu   sync.Mutex
	last base.Epoch
	n    int
	err  error
}

func (r *reports) CommitEpoch(_ context.Context, _ catalog.ObjectName, e base.Epoch) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if e < r.last && r.err == nil {
		r.err = fmt.Errorf("committed epoch went back from %d to %d", r.last, e)
	}
	r.last = max(r.last, e)
	r.n++
	return nil
}

// TestSinkIsExactlyOnceAtEveryEpoch runs generator -> hash -> keyed
// SUM/COUNT -> table sink with checkpoints every few milliseconds and at
// least 20 injected panics, then reads the table at every epoch: each read
// must equal the sums over the generator's rows of epochs up to it
// (DESIGN.md invariant 1, epoch consistency), and the table's committed
// epoch must be the last epoch.
func TestSinkIsExactlyOnceAtEveryEpoch(t *testing.T) {
	for _, policy := range []barrier.Policy{barrier.PolicyAligned, barrier.PolicyUnaligned} {
		t.Run(policy.String(), func(t *testing.T) {
			tb, err := table.Create(fileio.NewMem(), "wh/dev/sums",
				[]schema.Field{{Name: "k", Type: types.Int64}, {Name: "sum", Type: types.Int64, Nullable: true}, {Name: "cnt", Type: types.Int64, Nullable: true}},
				[]string{"k"}, map[string]string{"bucket": "2"})
			if err != nil {
				t.Fatal(err)
			}
			name := catalog.Name("dev", "sums")
			rep := &reports{}
			in := testkit.NewInjector(7, 20, 30, time.Millisecond, 4*time.Millisecond)
			g := testkit.GeneratorConfig{Rows: 3000, RowsPerEpoch: 100, ChunkSize: 25, Keys: 37, Hold: in.Pending,
				Pace: func() {
					if in.Pending() {
						time.Sleep(300 * time.Microsecond)
					}
				}}
			job := &graph.Job{
				Name: "sums",
				Vertices: []graph.Vertex{
					{Name: "gen", Parallelism: 2, NewSource: func(int) operator.Source { return testkit.NewGenerator(g) }},
					{Name: "agg", Parallelism: 2, NewOperator: func(int) operator.Operator {
						return testkit.Failing{Operator: testkit.NewKeyedSum(), In: in, Where: "agg"}
					}},
					{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator {
						return testkit.Failing{Operator: tablesink.Sink(tb, name, "job-sums", rep), In: in, Where: "sink"}
					}},
				},
				Edges: []graph.Edge{
					{From: "gen", To: "agg", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
					{From: "agg", To: "sink", Partitioning: graph.Hash, KeyColumns: []int{0}, KeyTypes: []types.Type{types.Int64}},
				},
			}
			opts := task.Options{
				Policy:             policy,
				CheckpointInterval: 3 * time.Millisecond,
				TolerableFailures:  1000,
				QueueCapacity:      4,
				Storage:            checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
				Restart:            task.RestartStrategy{MaxAttempts: 1000, Delay: time.Millisecond},
				OnEvent: func(e task.Event) {
					if e.Kind == task.CheckpointCompleted {
						in.CheckpointCompleted()
					}
				},
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := task.Run(ctx, job, opts); err != nil {
				t.Fatal(err)
			}
			if in.Failed() < 20 {
				t.Fatalf("only %d failures happened", in.Failed())
			}
			epochs := base.Epoch(g.Rows / g.RowsPerEpoch)
			ce, err := tb.CommittedEpoch()
			if err != nil || ce != epochs {
				t.Fatalf("committed epoch %d (%v), want %d", ce, err, epochs)
			}
			if rep.err != nil || rep.last != epochs {
				t.Fatalf("reports: last %d, %v", rep.last, rep.err)
			}
			for e := base.Epoch(1); e <= epochs; e++ {
				want := map[int64][2]int64{}
				for s := range 2 {
					for n := range int64(e) * g.RowsPerEpoch {
						k, v := g.Row(s, n)
						w := want[k]
						want[k] = [2]int64{w[0] + v, w[1] + 1}
					}
				}
				rows, err := tb.ReadAtEpoch(e)
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != len(want) {
					t.Fatalf("epoch %d: %d keys, want %d", e, len(rows), len(want))
				}
				for _, r := range rows {
					w := want[r[0].Int64()]
					if r[1].Int64() != w[0] || r[2].Int64() != w[1] {
						t.Fatalf("epoch %d key %d: (%d, %d), want (%d, %d)", e, r[0].Int64(), r[1].Int64(), r[2].Int64(), w[0], w[1])
					}
				}
			}
			t.Logf("%d failures; every epoch 1..%d reads exactly", in.Failed(), epochs)
		})
	}
}

// TestCommitAllPublishesEveryEpochAndReportsOnce commits three prepared
// epochs (the middle one empty) in one call: the table gets a snapshot for
// each epoch that changed it, reads at each epoch see that epoch's rows,
// the meta service hears the last epoch once, and committing the same
// epochs again adds nothing.
func TestCommitAllPublishesEveryEpochAndReportsOnce(t *testing.T) {
	tb, err := table.Create(fileio.NewMem(), "wh/dev/kv",
		[]schema.Field{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64, Nullable: true}},
		[]string{"k"}, map[string]string{"bucket": "1"})
	if err != nil {
		t.Fatal(err)
	}
	rep := &reports{}
	c := tablesink.New(tb, catalog.Name("dev", "kv"), "job-kv", rep)
	chunk := func(kvs ...int64) []*types.Chunk {
		ch := types.NewChunk([]types.Type{types.Int64, types.Int64}, len(kvs)/2)
		for i := 0; i < len(kvs); i += 2 {
			ch.Append(types.Insert, types.Row{types.NewInt64(kvs[i]), types.NewInt64(kvs[i+1])})
		}
		return []*types.Chunk{ch}
	}
	var ps []operator.PreparedEpoch
	for _, p := range []struct {
		e  base.Epoch
		in []*types.Chunk
	}{{1, chunk(1, 10, 2, 20)}, {2, nil}, {3, chunk(1, 11)}} {
		desc, err := c.Prepare(0, p.e, p.in)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, operator.PreparedEpoch{Epoch: p.e, Prepared: desc})
	}
	if err := c.CommitAll(0, ps); err != nil {
		t.Fatal(err)
	}
	// Close waits for the report, which is sent in the background.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if rep.n != 1 || rep.last != 3 || rep.err != nil {
		t.Fatalf("reports: %d, last %d, %v; want one report of epoch 3", rep.n, rep.last, rep.err)
	}
	latest, err := tb.Latest()
	if err != nil || latest == nil || latest.ID != 2 || latest.Epoch != 3 {
		t.Fatalf("latest snapshot %+v (%v), want snapshot 2 of epoch 3", latest, err)
	}
	for e, want := range map[base.Epoch]string{1: "[(1, 10) (2, 20)]", 2: "[(1, 10) (2, 20)]", 3: "[(1, 11) (2, 20)]"} {
		rows, err := tb.ReadAtEpoch(e)
		if err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(rows); got != want {
			t.Errorf("read at epoch %d: %s, want %s", e, got, want)
		}
	}
	if err := c.CommitAll(0, ps); err != nil {
		t.Fatal(err)
	}
	if latest, err := tb.Latest(); err != nil || latest.ID != 2 {
		t.Fatalf("a second commit of the same epochs published snapshot %+v (%v)", latest, err)
	}
}

// gatedReports is an EpochReporter whose reports wait for a value on
// release (nil, or an error to return).
type gatedReports struct {
	started chan base.Epoch
	release chan error
	mu      sync.Mutex
	sent    []base.Epoch
}

func (g *gatedReports) CommitEpoch(_ context.Context, _ catalog.ObjectName, e base.Epoch) error {
	g.started <- e
	err := <-g.release
	if err == nil {
		g.mu.Lock()
		g.sent = append(g.sent, e)
		g.mu.Unlock()
	}
	return err
}

// A commit returns once the table has committed, without waiting for the
// meta service: reports posted while one is in flight merge into one of
// the newest epoch, Close waits until it is sent, and a failed report
// fails the next commit.
func TestCommitReportsInTheBackground(t *testing.T) {
	tb, err := table.Create(fileio.NewMem(), "wh/dev/kv",
		[]schema.Field{{Name: "k", Type: types.Int64}, {Name: "v", Type: types.Int64, Nullable: true}},
		[]string{"k"}, map[string]string{"bucket": "1"})
	if err != nil {
		t.Fatal(err)
	}
	rep := &gatedReports{started: make(chan base.Epoch, 8), release: make(chan error, 8)}
	c := tablesink.New(tb, catalog.Name("dev", "kv"), "job-kv", rep)
	commitEpoch := func(e base.Epoch) error {
		t.Helper()
		ch := types.NewChunk([]types.Type{types.Int64, types.Int64}, 1)
		ch.Append(types.Insert, types.Row{types.NewInt64(int64(e)), types.NewInt64(int64(e))})
		desc, err := c.Prepare(0, e, []*types.Chunk{ch})
		if err != nil {
			t.Fatal(err)
		}
		return c.CommitAll(0, []operator.PreparedEpoch{{Epoch: e, Prepared: desc}})
	}
	if err := commitEpoch(1); err != nil {
		t.Fatal(err)
	}
	if e := <-rep.started; e != 1 {
		t.Fatalf("first report of epoch %d, want 1", e)
	}
	// The report of epoch 1 is held; epochs 2 and 3 commit meanwhile.
	for e := base.Epoch(2); e <= 3; e++ {
		if err := commitEpoch(e); err != nil {
			t.Fatalf("commit of epoch %d while a report was held: %v", e, err)
		}
	}
	if ce, err := tb.CommittedEpoch(); err != nil || ce != 3 {
		t.Fatalf("table committed epoch %d (%v), want 3", ce, err)
	}
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	rep.release <- nil
	if e := <-rep.started; e != 3 {
		t.Fatalf("second report of epoch %d, want 3 (2 and 3 merged)", e)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) before the last report was sent", err)
	case <-time.After(50 * time.Millisecond):
	}
	rep.release <- nil
	if err := <-closed; err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(rep.sent) != "[1 3]" {
		t.Fatalf("reports sent %v, want [1 3]", rep.sent)
	}

	// A failed report fails the next commit.
	c2 := tablesink.New(tb, catalog.Name("dev", "kv"), "job-kv", rep)
	c = c2
	rep.release <- errors.New("meta store unavailable")
	if err := commitEpoch(4); err != nil {
		t.Fatal(err)
	}
	<-rep.started
	var failed error
	for i := 0; i < 200 && failed == nil; i++ {
		time.Sleep(5 * time.Millisecond)
		failed = commitEpoch(base.Epoch(5 + i))
	}
	if failed == nil || !strings.Contains(failed.Error(), "meta store unavailable") || !strings.Contains(failed.Error(), "report of committed epoch 4") {
		t.Fatalf("commit after a failed report: %v", failed)
	}
	if err := c2.Close(); err == nil || !strings.Contains(err.Error(), "meta store unavailable") {
		t.Fatalf("Close after a failed report: %v", err)
	}
}
