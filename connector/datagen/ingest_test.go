package datagen_test

import (
	"context"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/datagen"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/ingest/ingesttest"
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
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

var _ ingest.Reader = (*datagen.Reader)(nil)

// TestIngestExactlyOnce runs a rate-limited datagen Reader through an
// ingest source into an append table under a 2 ms epoch clock and 15
// injected failures: every committed epoch holds exactly rows 0 to p-1, p
// being where the source closed it, and the final table every row once.
// Its time columns are part of the rows compared: the Reader's start
// time, kept in the source's checkpoints, makes the replays after the
// failures give the rows the first runs gave.
func TestIngestExactlyOnce(t *testing.T) {
	ctx := context.Background()
	svc, err := service.Open(ctx, service.Options{Store: store.NewMemory(), EpochInterval: 2 * time.Millisecond, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close()
	cols := []catalog.Column{{Name: "id", Type: types.Int64, NotNull: true}, {Name: "name", Type: types.Text},
		{Name: "score", Type: types.Float64}, {Name: "ts", Type: types.Timestamp}, {Name: "tz", Type: types.TimestampTZ}}
	name := catalog.Name("dev", "gen")
	if err := svc.CreateDatabase(ctx, catalog.Database{Name: "dev"}); err != nil {
		t.Fatal(err)
	}
	if err := svc.CreateTable(ctx, catalog.Table{Name: name, Kind: catalog.KindTable, Columns: cols}); err != nil {
		t.Fatal(err)
	}
	var fields []schema.Field
	for _, c := range cols {
		fields = append(fields, schema.Field{Name: c.Name, Type: c.Type, Nullable: !c.NotNull})
	}
	tb, err := table.Create(fileio.NewMem(), "wh/dev/gen", fields, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	const rows = 10_000
	reader, err := datagen.Open(cols, map[string]string{"connector": "datagen", "rows-per-second": "25000", "seed": "3",
		"fields.id.kind": "sequence", "fields.id.start": "0", "fields.id.end": "9999",
		"fields.name.length": "12", "fields.name.null-rate": "0.1", "fields.score.min": "-5", "fields.score.max": "5",
		"fields.tz.max-past": "1 s"})
	if err != nil {
		t.Fatal(err)
	}
	start, err := svc.CurrentEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	until := start.Epoch + 400
	tracked := ingesttest.Track(reader)
	clock := ingesttest.HeldClock{Clock: svc, Until: until, Hold: func() bool { return !reader.Exhausted(tracked.Pos()) }}
	var mu sync.Mutex
	closedAt := map[base.Epoch]uint64{}
	in := testkit.NewInjector(8, 15, 30, time.Millisecond, 3*time.Millisecond)
	job := &graph.Job{Name: "ingest-gen",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: 1, NewSource: func(int) operator.Source {
				return ingest.New(ingest.Config{Reader: tracked, Clock: clock, Name: "gen", StartEpoch: start.Epoch, UntilEpoch: until, Hold: in.Pending,
					OnClose: func(p ingest.Pair) {
						mu.Lock()
						closedAt[p.Epoch] = p.Position
						mu.Unlock()
					}})
			}},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator {
				return testkit.Failing{Operator: tablesink.Sink(tb, name, "ingest-gen", svc), In: in, Where: "sink"}
			}},
		},
		Edges: []graph.Edge{{From: "src", To: "sink", Partitioning: graph.Forward}},
	}
	rctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	err = task.Run(rctx, job, task.Options{Policy: barrier.PolicyUnaligned, CheckpointInterval: 3 * time.Millisecond,
		TolerableFailures: 1000, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, t.TempDir(), 2),
		Restart: task.RestartStrategy{MaxAttempts: 1000, Delay: time.Millisecond},
		OnEvent: func(e task.Event) {
			if e.Kind == task.CheckpointCompleted {
				in.CheckpointCompleted()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if in.Failed() < 15 {
		t.Fatalf("only %d failures", in.Failed())
	}
	expected := make([]types.Row, rows)
	for i := range expected {
		expected[i] = reader.Row(uint64(i))
	}
	partial := 0
	for e := start.Epoch; e <= until; e++ {
		pos, ok := closedAt[e]
		if !ok {
			t.Fatalf("epoch %d was never closed", e)
		}
		got, err := tb.ReadAtEpoch(e)
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(got, func(i, j int) bool { return got[i][0].Int64() < got[j][0].Int64() })
		if uint64(len(got)) != min(pos, rows) {
			t.Fatalf("epoch %d (closed at row %d): %d rows", e, pos, len(got))
		}
		for i, row := range got {
			want := expected[i]
			for c := range row {
				if row[c].IsNull() != want[c].IsNull() || !types.Equal(row[c], want[c]) {
					t.Fatalf("epoch %d: row %d is %v, want %v", e, i, row, want)
				}
			}
		}
		if len(got) > 0 && len(got) < rows {
			partial++
		}
		if e == until && len(got) != rows {
			t.Fatalf("final table has %d rows", len(got))
		}
		for i := 1; i < len(got); i++ {
			if got[i][3].Micros() < got[i-1][3].Micros() {
				t.Fatalf("epoch %d: ts of row %d, %v, is below row %d's, %v", e, i, got[i][3], i-1, got[i-1][3])
			}
		}
	}
	if partial < 3 {
		t.Logf("spread not reached on this machine (its load decides how epochs fall), the exactly-once checks above held: only %d epochs hold part of the rows", partial)
	}
	t.Logf("%d failures; %d epochs hold a prefix of the rows", in.Failed(), partial)
}
