package task_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/state/pebble"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/dataflow/testkit"
)

// childConfig tells a child process which job to run where.
type childConfig struct {
	Work    string
	Policy  string
	Backend string
	Gen     testkit.GeneratorConfig
}

const childEnv = "STRATA_DATAFLOW_KILL_CHILD"

// runChild is the child process: it runs the sum job against the
// checkpoint storage and the file-backed store in Work until the job
// finishes (resuming from whatever the killed predecessors left), then
// exits 0. While the file "hold" exists its sources wait at their end.
func runChild(raw string) {
	var c childConfig
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		panic(err)
	}
	p, err := barrier.ParsePolicy(c.Policy)
	if err != nil {
		panic(err)
	}
	store, err := testkit.OpenFileStore(filepath.Join(c.Work, "store"))
	if err != nil {
		panic(err)
	}
	var backend task.StateBackend = task.HeapBackend{}
	if c.Backend == "pebble" {
		backend = pebble.Factory{Dir: filepath.Join(c.Work, "pebble")}
	}
	hold := filepath.Join(c.Work, "hold")
	c.Gen.Hold = func() bool { _, err := os.Stat(hold); return err == nil }
	// While held, the sources are slow too, so that the kills land in
	// the middle of the data; the final run goes at full speed.
	c.Gen.Pace = func() {
		if c.Gen.Hold() {
			time.Sleep(2 * time.Millisecond)
		}
	}
	err = task.Run(context.Background(), sumJob(c.Gen, store, nil), task.Options{
		Policy: p, CheckpointInterval: 3 * time.Millisecond, AlignmentTimeout: time.Millisecond,
		TolerableFailures: 1000, QueueCapacity: 4,
		Storage: checkpoint.NewStorage(checkpoint.OSFS{}, filepath.Join(c.Work, "checkpoints"), 2),
		Backend: backend,
	})
	if err != nil {
		os.Stderr.WriteString(err.Error() + "\n")
		os.Exit(3)
	}
	os.Exit(0)
}

// TestKillNine is the kill -9 half of the first "done when": a
// child process runs the job and is killed with SIGKILL at random moments,
// at least 20 times; each new child resumes from the latest completed
// checkpoint on disk; the committed output at the end equals a
// failure-free run exactly. Every checkpoint mode, both state backends.
func TestKillNine(t *testing.T) {
	if raw := os.Getenv(childEnv); raw != "" {
		runChild(raw)
		return
	}
	if testing.Short() {
		t.Skip("kills child processes")
	}
	gen := testkit.GeneratorConfig{Rows: 100000, RowsPerEpoch: 2000, ChunkSize: 100, Keys: 97}
	ref := reference(t, gen)
	for bi, backend := range []string{"heap", "pebble"} {
		for pi, p := range []barrier.Policy{barrier.PolicyAligned, barrier.PolicyUnaligned, barrier.PolicyAlignedTimeout} {
			t.Run(backend+"/"+p.String(), func(t *testing.T) {
				work := t.TempDir()
				hold := filepath.Join(work, "hold")
				if err := os.WriteFile(hold, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				raw, err := json.Marshal(childConfig{Work: work, Policy: p.String(), Backend: backend, Gen: gen})
				if err != nil {
					t.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(uint64(bi), uint64(pi)))
				start := func() (*exec.Cmd, *bytes.Buffer) {
					cmd := exec.Command(os.Args[0], "-test.run=^TestKillNine$")
					cmd.Env = append(os.Environ(), childEnv+"="+string(raw))
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
				for kill := 0; kill < 20; kill++ {
					before := checkpoints()
					cmd, out := start()
					exited := make(chan error, 1)
					go func() { exited <- cmd.Wait() }()
					// Three kills in four come after the child completed
					// a checkpoint (so that every run makes progress
					// whatever the machine's load), one in four at any
					// moment, startup and restore included.
					if rng.IntN(4) != 0 {
						for deadline := time.Now().Add(10 * time.Second); checkpoints() == before && time.Now().Before(deadline); {
							time.Sleep(2 * time.Millisecond)
						}
					}
					time.Sleep(time.Duration(rng.IntN(60)) * time.Millisecond)
					_ = cmd.Process.Signal(syscall.SIGKILL)
					err := <-exited
					var exit *exec.ExitError
					if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
						t.Fatalf("child %d was not killed but ended with %v:\n%s", kill, err, out)
					}
				}
				afterKills := checkpoints()
				if afterKills == 0 {
					t.Fatal("no checkpoint completed in 20 child runs")
				}
				mid, err := testkit.OpenFileStore(filepath.Join(work, "store"))
				if err != nil {
					t.Fatal(err)
				}
				if mid.Epochs() >= ref.Epochs() {
					t.Fatalf("all %d (subtask, epoch) pairs were committed before the last kill: the kills should land in the middle of the data",
						ref.Epochs())
				}
				if err := os.Remove(hold); err != nil {
					t.Fatal(err)
				}
				cmd, out := start()
				done := make(chan error, 1)
				go func() { done <- cmd.Wait() }()
				select {
				case err := <-done:
					if err != nil {
						t.Fatalf("final child: %v\n%s", err, out)
					}
				case <-time.After(60 * time.Second):
					_ = cmd.Process.Kill()
					t.Fatalf("final child did not finish:\n%s", out)
				}
				store, err := testkit.OpenFileStore(filepath.Join(work, "store"))
				if err != nil {
					t.Fatal(err)
				}
				if store.Dump() != ref.Dump() {
					t.Fatalf("committed output after 20 kills differs from the failure-free run (%d vs %d epochs)", store.Epochs(), ref.Epochs())
				}
				t.Logf("20 kills; after them checkpoint %d was the newest and %d of %d (subtask, epoch) pairs were committed",
					afterKills, mid.Epochs(), ref.Epochs())
			})
		}
	}
}
