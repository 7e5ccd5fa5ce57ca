package ingesttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/epoch"
)

// WallClock is an epoch clock that survives the processes of a kill -9
// test: epoch 1 + the number of Intervals since Base, the same in every
// child that gets the same Base. With Hold set it stays below Until while
// Hold returns true (as HeldClock does), so that the last epoch closes
// after the whole input.
type WallClock struct {
	Base     time.Time
	Interval time.Duration
	Until    base.Epoch
	Hold     func() bool
}

// Now returns the current epoch.
func (c WallClock) Now() base.Epoch {
	e := base.Epoch(1 + time.Since(c.Base)/c.Interval)
	if c.Hold != nil && e >= c.Until && c.Hold() {
		e = c.Until - 1
	}
	return e
}

// CurrentEpoch implements ingest.Clock.
func (c WallClock) CurrentEpoch(context.Context) (epoch.Info, error) {
	e := c.Now()
	return epoch.Info{Epoch: e, Start: c.Base.Add(time.Duration(e-1) * c.Interval)}, nil
}

// WaitEpoch implements ingest.Clock.
func (c WallClock) WaitEpoch(ctx context.Context, after base.Epoch) (epoch.Info, error) {
	for c.Now() <= after {
		select {
		case <-ctx.Done():
			return epoch.Info{}, ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return c.CurrentEpoch(ctx)
}

// ReadCloses reads a close log, lines "EPOCH POSITION" that an ingest
// source's OnClose appended: the last position told per epoch (after a
// restore a pair may be told again, and a line cut by a kill is ignored).
func ReadCloses(t testing.TB, path string) map[base.Epoch]uint64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[base.Epoch]uint64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e base.Epoch
		var p uint64
		if n, err := fmt.Sscanf(sc.Text(), "%d %d", &e, &p); n == 2 && err == nil {
			out[e] = p
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// Children runs a job in child processes for a kill -9 test: each child
// is the test binary running test Test again, with the job's
// configuration as JSON in environment variable Env (the test calls its
// child's code when Env is set). Checkpoints is the directory of the
// job's checkpoint storage, watched to kill children after they made
// progress.
type Children struct {
	T           *testing.T
	Test        string
	Env         string
	Checkpoints string
}

// Child is one running child process.
type Child struct {
	cmd    *exec.Cmd
	out    *bytes.Buffer
	exited chan error
}

// Start starts a child with configuration cfg.
func (c Children) Start(cfg any) *Child {
	c.T.Helper()
	raw, err := json.Marshal(cfg)
	if err != nil {
		c.T.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+c.Test+"$")
	cmd.Env = append(os.Environ(), c.Env+"="+string(raw))
	ch := &Child{cmd: cmd, out: &bytes.Buffer{}, exited: make(chan error, 1)}
	cmd.Stdout, cmd.Stderr = ch.out, ch.out
	if err := cmd.Start(); err != nil {
		c.T.Fatal(err)
	}
	go func() { ch.exited <- cmd.Wait() }()
	return ch
}

// LatestCheckpoint returns the id of the job's newest completed
// checkpoint on disk, 0 when there is none.
func (c Children) LatestCheckpoint() int {
	ms, err := checkpoint.NewStorage(checkpoint.OSFS{}, c.Checkpoints, 2).Completed()
	if err != nil || len(ms) == 0 {
		return 0
	}
	return int(ms[len(ms)-1].Checkpoint)
}

// KillRandomly starts n children with configuration cfg, one after the
// other, and kills each with SIGKILL: three in four once the child has
// completed a checkpoint (or after 10 s), one in four at any moment,
// startup and restore included, each after a further pause of up to 80
// ms drawn from rng. during, when not nil, runs every few milliseconds
// while a child runs and once after each kill: the test's checks of
// what is committed meanwhile. It fails the test if a child ends other
// than by the kill, and returns the newest checkpoint completed by then.
func (c Children) KillRandomly(rng *rand.Rand, n int, cfg any, during func()) int {
	c.T.Helper()
	tick := func(d time.Duration) {
		if during != nil {
			during()
		}
		time.Sleep(d)
	}
	for k := range n {
		before := c.LatestCheckpoint()
		ch := c.Start(cfg)
		if rng.IntN(4) != 0 {
			for deadline := time.Now().Add(10 * time.Second); c.LatestCheckpoint() == before && time.Now().Before(deadline); {
				tick(2 * time.Millisecond)
			}
		}
		for pause := time.Duration(rng.IntN(80)) * time.Millisecond; pause > 0; pause -= 10 * time.Millisecond {
			tick(min(pause, 10*time.Millisecond))
		}
		_ = ch.cmd.Process.Signal(syscall.SIGKILL)
		err := <-ch.exited
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
			c.T.Fatalf("child %d was not killed but ended with %v:\n%s", k, err, ch.out)
		}
		if during != nil {
			during()
		}
	}
	latest := c.LatestCheckpoint()
	if latest == 0 {
		c.T.Fatalf("no checkpoint completed in %d child runs", n)
	}
	return latest
}

// Wait waits for a child to end by itself within timeout and fails the
// test if it fails or takes longer.
func (ch *Child) Wait(t testing.TB, timeout time.Duration) {
	t.Helper()
	select {
	case err := <-ch.exited:
		if err != nil {
			t.Fatalf("child: %v\n%s", err, ch.out)
		}
	case <-time.After(timeout):
		_ = ch.cmd.Process.Kill()
		t.Fatalf("child did not finish in %v:\n%s", timeout, ch.out)
	}
}

// ChildOptions are the runtime options of a kill -9 test's child job:
// unaligned checkpoints every 5 ms stored under work/checkpoints (where
// Children.Checkpoints should point), many tolerated checkpoint
// failures, and quick restarts within the child.
func ChildOptions(work string) task.Options {
	return task.Options{Policy: barrier.PolicyUnaligned, CheckpointInterval: 5 * time.Millisecond,
		TolerableFailures: 1000, Storage: checkpoint.NewStorage(checkpoint.OSFS{}, filepath.Join(work, "checkpoints"), 2),
		Restart: task.RestartStrategy{MaxAttempts: 10, Delay: time.Millisecond}}
}

// ChildFail ends a child process: err on stderr and exit code 3, which
// the parent reports as a child that was not killed.
func ChildFail(err error) {
	os.Stderr.WriteString(err.Error() + "\n")
	os.Exit(3)
}

// CloseLog opens (appending) the close log at path and returns an ingest
// OnClose that writes each (epoch, position) pair to it as a line
// "EPOCH POSITION", the lines ReadCloses reads.
func CloseLog(path string) (func(ingest.Pair), error) {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	return func(p ingest.Pair) { fmt.Fprintf(f, "%d %d\n", p.Epoch, p.Position) }, nil
}
