package planner

import (
	"context"
	"encoding/binary"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/duckdb"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/binder"
	"github.com/stratadb/strata/sql/parser"
	"github.com/stratadb/strata/sql/plan"
)

// replaySource replays a script and keeps its position in checkpoints, so
// that a restarted job resumes where the restored checkpoint left it. It
// runs slowly while failures are to come and holds its end until they all
// happened.
type replaySource struct {
	evs  []event
	pos  int
	ctx  *operator.Context
	in   *testkit.Injector
	hold bool
}

const posState = "replay-position"

func (s *replaySource) Open(ctx *operator.Context) error {
	s.ctx = ctx
	b, ok, err := ctx.State.OperatorValue(posState).Get()
	if err == nil && ok {
		s.pos = int(binary.BigEndian.Uint64(b))
	}
	return err
}

func (s *replaySource) Next() (operator.Item, error) {
	if s.in.Pending() {
		time.Sleep(200 * time.Microsecond)
	}
	if s.pos >= len(s.evs) {
		if s.in.Pending() {
			return operator.Item{}, nil
		}
		return operator.Item{Done: true}, nil
	}
	if e := s.evs[s.pos]; e.epoch != 0 {
		s.pos++
		return operator.Item{Epoch: e.epoch}, nil
	}
	c := types.NewChunk([]types.Type{types.Int64, types.Int64, types.Int64, types.Text}, 4)
	for s.pos < len(s.evs) && s.evs[s.pos].epoch == 0 && c.Len() < 4 {
		c.Append(s.evs[s.pos].kind, s.evs[s.pos].row)
		s.pos++
	}
	return operator.Item{Chunk: c}, nil
}

func (s *replaySource) Snapshot(base.CheckpointID) error {
	return s.ctx.State.OperatorValue(posState).Set(binary.BigEndian.AppendUint64(nil, uint64(s.pos)))
}
func (s *replaySource) NotifyComplete(base.CheckpointID) error { return nil }
func (s *replaySource) Close() error                           { return nil }

type failingEndpoints struct {
	evs, evsU []event
	store     *testkit.Store
	in        *testkit.Injector
	mu        sync.Mutex
}

func (e *failingEndpoints) Source(rel *plan.Relation, _ int) operator.Source {
	if rel.Name == "u" {
		return &replaySource{evs: e.evsU, in: e.in}
	}
	return &replaySource{evs: e.evs, in: e.in}
}
func (e *failingEndpoints) SourceParallelism(*plan.Relation) int { return 1 }
func (e *failingEndpoints) Sink(int) operator.Operator {
	return testkit.Failing{Operator: operator.NewTwoPhaseCommitSink(e.store.Committer()), In: e.in, Where: "sink"}
}

// committed materializes the store's committed changelog (Dump lines
// "s<subtask> e<epoch> <kind> (<row>)", in epoch order per subtask).
func committed(t *testing.T, store *testkit.Store) []string {
	t.Helper()
	bag := map[string]int{}
	for _, line := range strings.Split(store.Dump(), "\n") {
		f := strings.SplitN(line, " ", 4)
		if len(f) < 4 {
			continue
		}
		kind, row := f[2], f[3]
		if kind == "+I" || kind == "+U" {
			bag[row]++
			continue
		}
		if bag[row] == 0 {
			t.Fatalf("committed %s of a row the view does not hold: %s", kind, row)
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

// TestViewsExactlyOnceUnderFailures runs an aggregate view and a join view
// through the runtime with checkpoints every few milliseconds, in aligned
// and unaligned mode, while at least 20 panics hit the aggregation, the
// join and the sink; the committed result must equal DuckDB's answer over
// the final rows, as a failure-free run's does.
func TestViewsExactlyOnceUnderFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the runtime with injected failures")
	}
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	evs, live := script(11)
	evsU, liveU := script(12)
	queries := []string{
		"SELECT k, count(*), sum(v), max(s) FROM t GROUP BY k",
		"SELECT t.k, count(*), count(u.id) FROM t LEFT JOIN u ON t.k = u.k GROUP BY t.k",
		// One aggregate, built once, feeding the join and the maximum
		// (sub-plan reuse: a diamond in the job graph).
		"SELECT x.k, x.n, z.m FROM (SELECT k, count(*) AS n FROM t GROUP BY k) x JOIN (SELECT max(n) AS m FROM (SELECT k, count(*) AS n FROM t GROUP BY k) y) z ON x.n = z.m",
	}
	for _, q := range queries {
		want := oracleRows(t, db, q, map[string]map[int64]types.Row{"t": live, "u": liveU})
		for i, policy := range []barrier.Policy{barrier.PolicyAligned, barrier.PolicyUnaligned} {
			st, err := parser.ParseOne(q)
			if err != nil {
				t.Fatal(err)
			}
			p, err := binder.New(catalog{}, q, nil).BindQuery(st.Node)
			if err != nil {
				t.Fatal(err)
			}
			in := testkit.NewInjector(uint64(i+1), 20, 40, time.Millisecond, 5*time.Millisecond)
			ep := &failingEndpoints{evs: evs, evsU: evsU, store: testkit.NewStore(), in: in}
			job, err := Build("view", p, ep, Options{Parallelism: 2, Wrap: func(kind string, op operator.Operator) operator.Operator {
				if kind == "aggregate" || kind == "join" {
					return testkit.Failing{Operator: op, In: in, Where: kind}
				}
				return op
			}})
			if err != nil {
				t.Fatal(err)
			}
			restarts := 0
			opts := task.Options{
				Policy:             policy,
				CheckpointInterval: 3 * time.Millisecond,
				TolerableFailures:  1000,
				QueueCapacity:      4,
				Storage:            checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
				Restart:            task.RestartStrategy{MaxAttempts: 1000, Delay: time.Millisecond},
				OnEvent: func(e task.Event) {
					switch e.Kind {
					case task.CheckpointCompleted:
						in.CheckpointCompleted()
					case task.Restarting:
						restarts++
					}
				},
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			err = task.Run(ctx, job.Graph, opts)
			cancel()
			if err != nil {
				t.Fatalf("%s, %s: %v", q, policy, err)
			}
			if in.Failed() < 20 {
				t.Fatalf("%s, %s: only %d failures happened", q, policy, in.Failed())
			}
			got := committed(t, ep.store)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("%s, %s after %d failures:\ncommitted:\n%s\nDuckDB:\n%s", q, policy, in.Failed(), strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			t.Logf("%s, %s: %d failures, %d restarts, result equals DuckDB", q, policy, in.Failed(), restarts)
		}
	}
}

// oracleRows is oracle with rows formatted as types.Row.String.
func oracleRows(t *testing.T, db *duckdb.DB, q string, tables map[string]map[int64]types.Row) []string {
	t.Helper()
	lines := oracle(t, db, q, tables)
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = "(" + strings.ReplaceAll(l, "|", ", ") + ")"
	}
	sort.Strings(out)
	return out
}

func (e *failingEndpoints) SinkParallelism() int { return 0 }
