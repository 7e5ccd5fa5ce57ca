package filesink_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/filesink"
	"github.com/stratadb/strata/connector/format"
	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/ingest/ingesttest"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// killChild tells a child process what to run.
type killChild struct {
	Work  string
	Base  time.Time // epoch 1 starts here, and the input grows from here
	Until base.Epoch
	// Hold keeps the clock below Until until the source has read the
	// whole input (the last child).
	Hold bool
}

const (
	killEnv      = "STRATA_FILESINK_KILL_CHILD"
	killInterval = 10 * time.Millisecond
	killTxns     = 600
)

// killLog is the input of every child: the same changelog, of which the
// transactions before (time since Base) / 2 ms are available.
var killLog = newChangeLog(31, killTxns, 40)

type timedReader struct {
	base time.Time
	at   atomic.Uint64 // the position the source asked for last, or after
}

func (r *timedReader) Next(pos uint64) (*types.Chunk, uint64, error) {
	avail := min(uint64(time.Since(r.base)/(2*time.Millisecond)), killTxns)
	if pos >= avail {
		r.at.Store(pos)
		return nil, pos, nil
	}
	r.at.Store(pos + 1)
	return format.AppendChanges(nil, colTypes(), killLog.txns[pos]), pos + 1, nil
}

// runKillChild runs the job, the changelog into a CSV file sink with
// checkpoints on disk, until it finishes or the parent kills the process.
// The source appends the (epoch, position) pairs it closes to closes.log
// (after a restore a pair may be told again; the last telling counts).
func runKillChild(raw string) {
	var c killChild
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		panic(err)
	}
	fail := ingesttest.ChildFail
	onClose, err := ingesttest.CloseLog(filepath.Join(c.Work, "closes.log"))
	if err != nil {
		fail(err)
	}
	r := &timedReader{base: c.Base}
	clock := ingesttest.WallClock{Base: c.Base, Interval: killInterval, Until: c.Until}
	if c.Hold {
		clock.Hold = func() bool { return r.at.Load() < killTxns }
	}
	o := filesink.Options{Dir: filepath.Join(c.Work, "out"), Format: filesink.CSV}
	job := &graph.Job{Name: "kill-job",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: 1, NewSource: func(int) operator.Source {
				return ingest.New(ingest.Config{Reader: r, Clock: clock, Name: "changes", StartEpoch: 1, UntilEpoch: c.Until,
					OnClose: onClose})
			}},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator {
				s, err := filesink.NewSink(filesink.Config{Options: o, Name: "k", Columns: cols})
				if err != nil {
					panic(err)
				}
				return filesink.NewSinkOperator(s)
			}},
		},
		Edges: []graph.Edge{{From: "src", To: "sink", Partitioning: graph.Forward}},
	}
	err = task.Run(context.Background(), job, ingesttest.ChildOptions(c.Work))
	if err != nil {
		fail(err)
	}
	os.Exit(0)
}

// TestKillNine is exactly-once across kill -9: child processes run a job
// from a growing changelog into a CSV file sink and are killed with
// SIGKILL at random moments, eight times; each child resumes from the
// newest completed checkpoint on disk and re-commits its prepared epochs;
// a last child runs to the job's end. Then, for every epoch, the
// committed files up to it must replay exactly the changelog up to the
// position where the source closed it (no change lost or doubled), every
// epoch that read changes must have its file, and no temporary file may
// be left.
func TestKillNine(t *testing.T) {
	if raw := os.Getenv(killEnv); raw != "" {
		runKillChild(raw)
		return
	}
	if testing.Short() {
		t.Skip("kills child processes")
	}
	work := t.TempDir()
	out := filepath.Join(work, "out")
	if err := filesink.CreateDir(filesink.Options{Dir: out}); err != nil {
		t.Fatal(err)
	}
	cfg := killChild{Work: work, Base: time.Now(), Until: 1 << 40}
	children := ingesttest.Children{T: t, Test: "TestKillNine", Env: killEnv, Checkpoints: filepath.Join(work, "checkpoints")}
	const kills = 8
	afterKills := children.KillRandomly(rand.New(rand.NewPCG(4, 2)), kills, cfg, nil)
	// The last child runs until it has read the whole input, and 20
	// epochs more.
	cfg.Until, cfg.Hold = ingesttest.WallClock{Base: cfg.Base, Interval: killInterval}.Now()+20, true
	children.Start(cfg).Wait(t, 60*time.Second)

	closes := ingesttest.ReadCloses(t, filepath.Join(work, "closes.log"))
	ents, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	files := map[base.Epoch][]byte{}
	for _, ent := range ents {
		n, ok := filesink.ParseName("k", ent.Name())
		if !ok || n.Temp {
			t.Fatalf("file left in %s: %s", out, ent.Name())
		}
		if files[n.Epoch], err = os.ReadFile(filepath.Join(out, ent.Name())); err != nil {
			t.Fatal(err)
		}
	}
	show := func(chs []format.Change) []string {
		var s []string
		for _, ch := range chs {
			s = append(s, ch.Kind.String()+" "+ch.Row.String())
		}
		return s
	}
	var got []string
	prev := uint64(0)
	for e := base.Epoch(1); e <= cfg.Until; e++ {
		pos, ok := closes[e]
		if !ok {
			t.Fatalf("epoch %d was never closed", e)
		}
		if b, ok := files[e]; ok {
			got = append(got, show(readBack(t, filesink.CSV, b))...)
		} else if pos != prev {
			t.Fatalf("epoch %d read transactions %d to %d, and has no file", e, prev, pos)
		}
		var want []string
		for _, tx := range killLog.txns[:pos] {
			want = append(want, show(tx)...)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("the files up to epoch %d hold %d changes, the changelog up to position %d has %d (or they differ)", e, len(got), pos, len(want))
		}
		prev = pos
	}
	if prev != killTxns {
		t.Fatalf("the last epoch closed at position %d of %d", prev, killTxns)
	}
	t.Logf("%d kills; checkpoint %d was the newest after them; %d epochs in %d files replay the %d changes of %d transactions once",
		kills, afterKills, cfg.Until, len(files), len(got), killTxns)
}
