package pgcdc_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/connector/pgcdc"
	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/service"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
)

// killChild tells a child process where the source, the meta store, the
// warehouse and the checkpoints are.
type killChild struct {
	Work    string
	Options pgcdc.Options
	Start   base.Epoch
	FinalK  int64
}

const killEnv = "STRATA_PGCDC_KILL_CHILD"

// openKillWorld opens the meta service on work/meta.db and the tables in
// work/wh, as every process of TestKillNine sees them.
func openKillWorld(t *testing.T, work string, create bool) (*service.Meta, *store.Bolt, []*table.Table) {
	bolt, err := store.OpenBolt(filepath.Join(work, "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := service.Open(context.Background(), service.Options{Store: bolt, EpochInterval: 50 * time.Millisecond, EpochReserveWindow: 250 * time.Millisecond, HeartbeatTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := fileio.NewLocal(work)
	if err != nil {
		t.Fatal(err)
	}
	tables := pipelineTables(t)
	if create {
		return svc, bolt, createTables(t, svc, fs, tables)
	}
	tbs := make([]*table.Table, len(tables))
	for i, tb := range tables {
		if tbs[i], err = table.Open(fs, "wh/dev/"+tb.Name); err != nil {
			t.Fatal(err)
		}
	}
	return svc, bolt, tbs
}

// runKillChild is the child process: it runs the source's job (fresh
// Stream, ingest source, routes, sinks) against the state on disk,
// resuming from whatever the killed predecessors left, and confirms the
// positions of committed epochs to the slot. While the file "hold"
// exists it never ends; then it ends once the seq table has committed
// the last writer transaction.
func runKillChild(t *testing.T, raw string) {
	var c killChild
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	svc, bolt, tbs := openKillWorld(t, c.Work, false)
	defer bolt.Close()
	defer svc.Close()
	tables := pipelineTables(t)
	stream, err := pgcdc.Open(ctx, pgcdc.Config{Options: c.Options, Tables: tables, Name: "pg", StatusInterval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	conf := pgcdc.NewConfirmer(stream)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
			low := base.Epoch(0)
			for i, tb := range tbs {
				e, err := tb.CommittedEpoch()
				if err != nil {
					return
				}
				if i == 0 || e < low {
					low = e
				}
			}
			conf.Committed(low)
		}
	}()
	done := func() bool {
		if _, err := os.Stat(filepath.Join(c.Work, "hold")); err == nil {
			return false
		}
		rows, err := tbs[3].ReadLatest()
		return err == nil && len(rows) == 1 && rows[0][1].Int64() == c.FinalK
	}
	job := pipelineJob(stream.Layout(), tbs, tables, svc, nil, func() operator.Source {
		return &stopWhen{done: done, Source: ingest.New(ingest.Config{Reader: stream, Clock: svc, Name: "pg", StartEpoch: c.Start, OnClose: conf.OnClose})}
	})
	err = task.Run(ctx, job, task.Options{Policy: barrier.PolicyUnaligned, CheckpointInterval: 20 * time.Millisecond,
		TolerableFailures: 1000, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, filepath.Join(c.Work, "checkpoints"), 2),
		Restart: task.RestartStrategy{MaxAttempts: 1000, Delay: time.Millisecond},
		OnEvent: func(e task.Event) {
			if e.Kind == task.Restarting {
				fmt.Fprintf(os.Stderr, "restart after attempt %d: %v\n", e.Attempt, e.Cause)
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
}

// TestKillNine runs the source's job in a child process and kills it with
// SIGKILL at random moments, eight times, while two writers commit
// transactions over three tables; each child resumes from the latest
// checkpoint on disk with a fresh replication connection at the restored
// position. After a last child finishes, every epoch of the four tables
// equals Postgres at one transaction boundary, and the last epoch holds
// every transaction once (DESIGN.md invariants 2 and 3).
func TestKillNine(t *testing.T) {
	if raw := os.Getenv(killEnv); raw != "" {
		runKillChild(t, raw)
		return
	}
	if testing.Short() {
		t.Skip("kills child processes")
	}
	opts, conn := db(t, "killnine")
	run(t, conn, pipelineDDL)
	tables := pipelineTables(t)
	work := t.TempDir()
	svc, bolt, tbs := openKillWorld(t, work, true)
	start, err := svc.CurrentEpoch(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	svc.Close()
	bolt.Close()
	initial := readInitial(t, conn)
	hold := filepath.Join(work, "hold")
	if err := os.WriteFile(hold, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	const writers, txnsPerWriter = 2, 60
	raw, err := json.Marshal(killChild{Work: work, Options: opts, Start: start.Epoch, FinalK: writers * txnsPerWriter})
	if err != nil {
		t.Fatal(err)
	}

	results := make(chan committed, writers*txnsPerWriter)
	var wg sync.WaitGroup
	dsn := server(t).DSN(opts.Database) + " timezone=UTC"
	for w := range writers {
		wg.Go(func() { writer(t, dsn, w, txnsPerWriter, 100*time.Millisecond, results) })
	}

	startChild := func() (*exec.Cmd, *bytes.Buffer) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKillNine$")
		cmd.Env = append(os.Environ(), killEnv+"="+string(raw))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, &out
	}
	checkpoints := func() int {
		ms, err := checkpoint.NewStorage(checkpoint.OSFS{}, filepath.Join(work, "checkpoints"), 2).Completed()
		if err != nil || len(ms) == 0 {
			return 0
		}
		return int(ms[len(ms)-1].Checkpoint)
	}
	rng := rand.New(rand.NewPCG(9, 9))
	const kills = 8
	for kill := range kills {
		before := checkpoints()
		cmd, out := startChild()
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		// Three kills in four after the child completed a checkpoint, so
		// that every run makes progress; one in four at any moment,
		// snapshot and restore included.
		if rng.IntN(4) != 0 {
			for deadline := time.Now().Add(10 * time.Second); checkpoints() == before && time.Now().Before(deadline); {
				time.Sleep(2 * time.Millisecond)
			}
		}
		time.Sleep(time.Duration(rng.IntN(300)) * time.Millisecond)
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := <-exited
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			t.Fatalf("child %d was not killed but ended with %v:\n%s", kill, err, out)
		}
	}
	afterKills := checkpoints()
	seqMid := "none"
	if rows, err := tbs[3].ReadLatest(); err == nil && len(rows) == 1 {
		seqMid = fmt.Sprint(rows[0][1].Int64())
	}
	wg.Wait()
	close(results)
	if t.Failed() {
		return
	}
	if err := os.Remove(hold); err != nil {
		t.Fatal(err)
	}
	cmd, out := startChild()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("final child: %v\n%s", err, out)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Signal(syscall.SIGQUIT) // a goroutine dump in out
		<-done
		t.Fatalf("final child did not finish:\n%s", out)
	}

	final, err := tbs[0].CommittedEpoch()
	if err != nil {
		t.Fatal(err)
	}
	for i, tb := range tbs {
		if ce, err := tb.CommittedEpoch(); err != nil || ce != final {
			t.Fatalf("table %s committed epoch %d (%v), table t1 %d", tables[i].Name, ce, err, final)
		}
	}
	var txns []committed
	for c := range results {
		txns = append(txns, c)
	}
	partial := verifyEpochs(t, tbs, tables, initial, txns, start.Epoch, final, writers*txnsPerWriter)
	if partial < 3 {
		t.Logf("spread not reached on this machine (its load decides how epochs fall), the exactly-once checks above held: only %d distinct transaction boundaries across epochs", partial)
	}
	t.Logf("%d kills; after them checkpoint %d was the newest and seq had committed %s of %d transactions; %d epochs, %d distinct transaction boundaries",
		kills, afterKills, seqMid, writers*txnsPerWriter, final-start.Epoch+1, partial)
}
