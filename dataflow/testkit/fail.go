package testkit

import (
	"math/rand/v2"
	"sync"
	"time"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Injector decides when Failing operators panic: once a random pause
// (minPause..maxPause) has passed since the first call after the last
// panic (so the pause runs while the restarted job works), after a random
// number of further calls (1..maxGap) counted across all of them, until
// failures panics happened. After three of four panics it also waits
// until a checkpoint completed (CheckpointCompleted) before it arms again,
// so that most restarts restore fresh progress while some restart from the
// same checkpoint twice. The pauses let the job make progress between
// failures, so failures hit every phase of a run whatever the machine's
// speed. It is safe for concurrent use and outlives job attempts.
type Injector struct {
	mu struct {
		sync.Mutex
		rng       *rand.Rand
		left      int
		countdown int
		failed    int
		armed     time.Time
		needArm   bool
		needCP    bool
	}
	maxGap             int
	minPause, maxPause time.Duration
}

// NewInjector returns an injector that causes failures panics, seeded.
func NewInjector(seed uint64, failures, maxGap int, minPause, maxPause time.Duration) *Injector {
	in := &Injector{maxGap: maxGap, minPause: minPause, maxPause: maxPause}
	in.mu.rng = rand.New(rand.NewPCG(seed, 99))
	in.mu.left = failures
	in.rearmLocked()
	in.mu.needCP = false
	return in
}

func (in *Injector) rearmLocked() {
	in.mu.countdown = 1 + in.mu.rng.IntN(in.maxGap)
	in.mu.needArm = true
	in.mu.needCP = in.mu.rng.IntN(4) != 0
}

// Pending reports whether failures are still to come.
func (in *Injector) Pending() bool {
	if in == nil {
		return false
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.mu.left > 0
}

// CheckpointCompleted tells the injector that the job completed a
// checkpoint.
func (in *Injector) CheckpointCompleted() {
	if in == nil {
		return
	}
	in.mu.Lock()
	in.mu.needCP = false
	in.mu.Unlock()
}

// Failed returns how many panics were injected.
func (in *Injector) Failed() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.mu.failed
}

// Maybe panics when the countdown reaches zero.
func (in *Injector) Maybe(where string) {
	if in == nil {
		return
	}
	in.mu.Lock()
	if in.mu.needCP {
		in.mu.Unlock()
		return
	}
	if in.mu.needArm {
		in.mu.needArm = false
		in.mu.armed = time.Now().Add(in.minPause + time.Duration(in.mu.rng.Int64N(int64(in.maxPause-in.minPause)+1)))
	}
	if in.mu.left == 0 || time.Now().Before(in.mu.armed) {
		in.mu.Unlock()
		return
	}
	in.mu.countdown--
	if in.mu.countdown > 0 {
		in.mu.Unlock()
		return
	}
	in.mu.left--
	in.mu.failed++
	in.rearmLocked()
	in.mu.Unlock()
	panic("injected failure in " + where)
}

// Failing wraps an operator so that Process, OnEpoch, Snapshot and
// NotifyComplete may panic first.
type Failing struct {
	operator.Operator
	In    *Injector
	Where string
}

// Process implements operator.Operator.
func (f Failing) Process(input int, c *types.Chunk) error {
	f.In.Maybe(f.Where + " process")
	return f.Operator.Process(input, c)
}

// BorrowsInput implements operator.InputBorrower for the wrapped operator.
func (f Failing) BorrowsInput() bool { return operator.BorrowsInput(f.Operator) }

// OnEpoch implements operator.Operator.
func (f Failing) OnEpoch(e base.Epoch) error {
	f.In.Maybe(f.Where + " epoch")
	return f.Operator.OnEpoch(e)
}

// Snapshot implements operator.Operator.
func (f Failing) Snapshot(id base.CheckpointID) error {
	f.In.Maybe(f.Where + " snapshot")
	return f.Operator.Snapshot(id)
}

// NotifyComplete implements operator.Operator.
func (f Failing) NotifyComplete(id base.CheckpointID) error {
	f.In.Maybe(f.Where + " notify-complete")
	return f.Operator.NotifyComplete(id)
}
