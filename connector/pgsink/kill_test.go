package pgsink_test

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/ingest/ingesttest"
	"github.com/stratadb/strata/connector/pgsink"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// killChild tells a child process what to run.
type killChild struct {
	Work    string
	Options pgsink.Options
	Base    time.Time // epoch 1 starts here, and the input grows from here
	Until   base.Epoch
	// Hold keeps the clock below Until until the source has read the
	// whole input (the last child).
	Hold bool
}

const (
	killEnv      = "STRATA_PGSINK_KILL_CHILD"
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
	c := types.NewChunk(colTypes(), len(killLog.txns[pos]))
	for _, ch := range killLog.txns[pos] {
		c.Append(ch.kind, ch.row)
	}
	return c, pos + 1, nil
}

// runKillChild runs the job, the changelog into a Postgres sink with
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
	job := &graph.Job{Name: "kill-job",
		Vertices: []graph.Vertex{
			{Name: "src", Parallelism: 1, NewSource: func(int) operator.Source {
				return ingest.New(ingest.Config{Reader: r, Clock: clock, Name: "changes", StartEpoch: 1, UntilEpoch: c.Until,
					OnClose: onClose})
			}},
			{Name: "sink", Parallelism: 1, NewOperator: func(int) operator.Operator {
				s, err := pgsink.NewSink(pgsink.Config{Options: c.Options, Name: "kill", Columns: cols, Key: []string{"id"}})
				if err != nil {
					panic(err)
				}
				return pgsink.NewSinkOperator(s)
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
// from a growing changelog of inserts, updates and deletes into a
// Postgres sink and are killed with SIGKILL at random moments, eight
// times; each child resumes from the newest completed checkpoint on disk
// and re-commits its prepared epochs; a last child runs to the job's end.
// Meanwhile, and at the end, every read of the progress row and the
// table in one snapshot must find the table equal to the changelog's
// state at the position where the source closed the recorded epoch.
func TestKillNine(t *testing.T) {
	if raw := os.Getenv(killEnv); raw != "" {
		runKillChild(raw)
		return
	}
	if testing.Short() {
		t.Skip("kills child processes")
	}
	o, conn := db(t, "kill")
	exec(t, conn, "CREATE TABLE out (id bigint PRIMARY KEY, v text, amount numeric)")
	work := t.TempDir()
	cfg := killChild{Work: work, Options: o, Base: time.Now(), Until: 1 << 40}
	children := ingesttest.Children{T: t, Test: "TestKillNine", Env: killEnv, Checkpoints: filepath.Join(work, "checkpoints")}
	// check compares the table with the changelog's state at the
	// recorded epoch, both read in one snapshot.
	reads := 0
	check := func() base.Epoch {
		t.Helper()
		ctx := context.Background()
		tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
		if err != nil {
			t.Fatal(err)
		}
		defer tx.Rollback(ctx)
		var e int64
		err = tx.QueryRow(ctx, "SELECT epoch FROM strata_sink_progress WHERE sink = 'kill' AND subtask = 0").Scan(&e)
		if errors.Is(err, pgx.ErrNoRows) || (err != nil && strings.Contains(err.Error(), "42P01")) {
			return 0
		}
		if err != nil {
			t.Fatal(err)
		}
		got := tableText(t, tx, "SELECT id, v, amount FROM out ORDER BY id")
		pos, ok := ingesttest.ReadCloses(t, filepath.Join(work, "closes.log"))[base.Epoch(e)]
		if !ok {
			t.Fatalf("progress at epoch %d, which the source never closed", e)
		}
		if want := killLog.stateText(pos); got != want {
			t.Fatalf("epoch %d (position %d): table\n%s\nwant\n%s", e, pos, got, want)
		}
		reads++
		return base.Epoch(e)
	}
	const kills = 8
	afterKills := children.KillRandomly(rand.New(rand.NewPCG(4, 2)), kills, cfg, func() { check() })
	// The last child runs until it has read the whole input, and 20
	// epochs more.
	cfg.Until, cfg.Hold = ingesttest.WallClock{Base: cfg.Base, Interval: killInterval}.Now()+20, true
	children.Start(cfg).Wait(t, 60*time.Second)
	if e := check(); e != cfg.Until {
		t.Fatalf("progress at epoch %d, want the last epoch %d", e, cfg.Until)
	}
	if pos := ingesttest.ReadCloses(t, filepath.Join(work, "closes.log"))[cfg.Until]; pos != killTxns {
		t.Fatalf("the last epoch closed at position %d of %d", pos, killTxns)
	}
	t.Logf("%d kills; checkpoint %d was the newest after them; %d consistent reads, the last at epoch %d with the whole changelog",
		kills, afterKills, reads, cfg.Until)
}
