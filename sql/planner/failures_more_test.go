package planner

import (
	"context"
	"encoding/binary"
	"fmt"
	"sort"
	"strings"
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
	"github.com/stratadb/strata/sql/plan"
)

// anyReplaySource is replaySource for rows of any types.
type anyReplaySource struct {
	ts  []types.Type
	evs []event
	pos int
	ctx *operator.Context
	in  *testkit.Injector
}

func (s *anyReplaySource) Open(ctx *operator.Context) error {
	s.ctx = ctx
	b, ok, err := ctx.State.OperatorValue(posState).Get()
	if err == nil && ok {
		s.pos = int(binary.BigEndian.Uint64(b))
	}
	return err
}

func (s *anyReplaySource) Next() (operator.Item, error) {
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
	c := types.NewChunk(s.ts, 4)
	for s.pos < len(s.evs) && s.evs[s.pos].epoch == 0 && c.Len() < 4 {
		c.Append(s.evs[s.pos].kind, s.evs[s.pos].row)
		s.pos++
	}
	return operator.Item{Chunk: c}, nil
}

func (s *anyReplaySource) Snapshot(base.CheckpointID) error {
	return s.ctx.State.OperatorValue(posState).Set(binary.BigEndian.AppendUint64(nil, uint64(s.pos)))
}
func (s *anyReplaySource) NotifyComplete(base.CheckpointID) error { return nil }
func (s *anyReplaySource) Close() error                           { return nil }

type anyFailingEndpoints struct {
	cat   relCatalog
	store *testkit.Store
	in    *testkit.Injector
}

func (e *anyFailingEndpoints) Source(rel *plan.Relation, _ int) operator.Source {
	return &anyReplaySource{ts: relTypes(rel), evs: e.cat[rel.Name].evs, in: e.in}
}
func (e *anyFailingEndpoints) SourceParallelism(*plan.Relation) int { return 1 }
func (e *anyFailingEndpoints) Sink(int) operator.Operator {
	return testkit.Failing{Operator: operator.NewTwoPhaseCommitSink(e.store.Committer()), In: e.in, Where: "sink"}
}
func (e *anyFailingEndpoints) SinkParallelism() int { return 0 }

// TestNewOperatorsExactlyOnceUnderFailures runs a windowed view over a
// stream with a watermark, a Top-N, a SESSION window, an interval join,
// an aggregate over an upsert source and a UNION ALL with VALUES through the runtime with checkpoints every few milliseconds while
// at least 20 panics hit their stateful operators and the sink; the
// committed result must equal DuckDB's, and the late-row count the count
// of a run without failures.
func TestNewOperatorsExactlyOnceUnderFailures(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the runtime with injected failures")
	}
	db, err := duckdb.Open("")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	bidw := bidRel("bidw")
	bidw.Watermark = &plan.Watermark{Column: 2, Delay: types.IntervalValue{Micros: sec}}
	// tu is tr's changelog as an upsert source gives it: no -U, and -D
	// naming only the key.
	tu := tsScript(8, 40)
	tuRel := *tu.rel
	tuRel.Name, tuRel.Upsert = "tu", true
	tu.rel = &tuRel
	var upserts []event
	for _, ev := range tu.evs {
		switch ev.kind {
		case types.UpdateBefore:
			continue
		case types.Delete:
			ev.row = types.Row{ev.row[0], types.Null, types.Null, types.Null}
		}
		upserts = append(upserts, ev)
	}
	tu.evs = upserts
	cat := relCatalog{"bidw": disorderedBids(bidw, 5), "tr": tsScript(8, 40), "tu": tu}
	loadDuck(t, db, cat)
	lateWant := duckRows(t, db, `SELECT count(*) FROM (SELECT epoch_us(date_time) < max(epoch_us(date_time)) OVER
		(ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) - 1000000 AS late FROM bidw) WHERE late`)[0]
	cases := []struct {
		name   string
		plan   plan.Node
		oracle string
	}{
		{"tumble with watermark", bindSQL(t, cat, "SELECT window_start, window_end, auction, count(*) FROM TUMBLE(bidw, date_time, INTERVAL '2' SECOND) GROUP BY 1, 2, 3"),
			fmt.Sprintf(`SELECT make_timestamp(%[1]s), make_timestamp(%[1]s + 2000000), auction, count(*) FROM
				(SELECT *, epoch_us(date_time) < max(epoch_us(date_time)) OVER (ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) - 1000000 AS late FROM bidw)
				WHERE date_time IS NOT NULL AND late IS NOT TRUE GROUP BY 1, 2, 3`, ws("epoch_us(date_time)", 2*sec))},
		{"top 2 per k", topNPlan(tsRel, []int{1}, []plan.SortKey{sortKey(tsRel, 2, true), sortKey(tsRel, 0, false)}, 2, true),
			"SELECT id, k, v, ts, rn FROM (SELECT *, row_number() OVER (PARTITION BY k ORDER BY v DESC NULLS FIRST, id) AS rn FROM tr) WHERE rn <= 2"},
		{"session", bindSQL(t, cat, "SELECT id, window_start, window_end FROM SESSION(tr, ts, INTERVAL '1' SECOND)"),
			`WITH w AS (SELECT id, epoch_us(ts) AS us FROM tr WHERE ts IS NOT NULL),
			 g AS (SELECT *, CASE WHEN us - lag(us) OVER (ORDER BY us) < 1000000 THEN 0 ELSE 1 END AS brk FROM w),
			 s AS (SELECT *, sum(brk) OVER (ORDER BY us, brk DESC ROWS UNBOUNDED PRECEDING) AS sid FROM g),
			 b AS (SELECT sid, min(us) AS st, max(us) + 1000000 AS en FROM s GROUP BY sid)
			 SELECT id, make_timestamp(st), make_timestamp(en) FROM s JOIN b USING (sid)`},
		{"interval join", bindSQL(t, cat, "SELECT a.auction, a.price, b.price FROM bidw a JOIN bidw b ON a.auction = b.auction AND b.date_time BETWEEN a.date_time - INTERVAL '1' SECOND AND a.date_time + INTERVAL '1' SECOND"),
			`WITH m AS (SELECT *, epoch_us(date_time) < max(epoch_us(date_time)) OVER (ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) - 1000000 AS late FROM bidw),
			 ok AS (SELECT * FROM m WHERE late IS NOT TRUE)
			 SELECT a.auction, a.price, b.price FROM ok a JOIN ok b ON a.auction = b.auction AND b.date_time BETWEEN a.date_time - INTERVAL 1 SECOND AND a.date_time + INTERVAL 1 SECOND`},
		{"upsert source", bindSQL(t, cat, "SELECT k, count(*), sum(v) FROM tu GROUP BY k"),
			"SELECT k, count(*), sum(v) FROM tu GROUP BY k"},
		{"union with values", bindSQL(t, cat, "SELECT k, count(*) FROM (SELECT k FROM tr UNION ALL VALUES (7), (8), (7)) x GROUP BY k"),
			"SELECT k, count(*) FROM (SELECT k FROM tr UNION ALL VALUES (7), (8), (7)) x GROUP BY k"},
	}
	for i, c := range cases {
		policy := []barrier.Policy{barrier.PolicyAligned, barrier.PolicyUnaligned}[i%2]
		want := duckRows(t, db, c.oracle)
		for j, l := range want {
			want[j] = "(" + strings.ReplaceAll(l, "|", ", ") + ")"
		}
		sort.Strings(want) // in the order of the streaming side's text

		in := testkit.NewInjector(uint64(i+7), 20, 40, time.Millisecond, 5*time.Millisecond)
		ep := &anyFailingEndpoints{cat: cat, store: testkit.NewStore(), in: in}
		job, err := Build("view", c.plan, ep, Options{Parallelism: 2, Wrap: func(kind string, op operator.Operator) operator.Operator {
			switch kind {
			case "aggregate", "top-n", "session-window", "watermark", "union", "join", "normalize":
				return testkit.Failing{Operator: op, In: in, Where: kind}
			}
			return op
		}})
		if err != nil {
			t.Fatal(err)
		}
		got := runWithFailures(t, c.name, job, policy, in, ep.store)
		sameRows(t, fmt.Sprintf("%s, %s after %d failures", c.name, policy, in.Failed()), got, want, job.Explain)
		if lc := job.Late["bidw"]; lc != nil && fmt.Sprint(lc.Load()) != lateWant {
			t.Fatalf("%s: %d late rows counted after failures, want %s", c.name, lc.Load(), lateWant)
		}
		t.Logf("%s, %s: %d failures, result equals DuckDB", c.name, policy, in.Failed())
	}
}

// runWithFailures runs job under policy with checkpoints every 3 ms while
// in injects panics, restarting after each, and returns what its sink
// committed; at least 20 failures must have happened.
func runWithFailures(t *testing.T, name string, job *Job, policy barrier.Policy, in *testkit.Injector, store *testkit.Store) []string {
	t.Helper()
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
	err := task.Run(ctx, job.Graph, opts)
	cancel()
	if err != nil {
		t.Fatalf("%s, %s: %v", name, policy, err)
	}
	if in.Failed() < 20 {
		t.Fatalf("%s: only %d failures happened", name, in.Failed())
	}
	return committed(t, store)
}
