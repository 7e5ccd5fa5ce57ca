package task

import (
	"fmt"
	"sync"
	"time"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
)

// StateBackend makes the state backends of a job's subtasks.
type StateBackend interface {
	// New returns an empty backend for subtask i of vertex.
	New(vertex string, i int) (state.Backend, error)
	// Restore rebuilds the backend of subtask i of vertex from a handle.
	Restore(vertex string, i int, handle []byte, files state.SnapshotFiles) (state.Backend, error)
}

// HeapBackend is the StateBackend of heap.Backend.
type HeapBackend struct{}

// New implements StateBackend.
func (HeapBackend) New(string, int) (state.Backend, error) { return heap.New(), nil }

// Restore implements StateBackend.
func (HeapBackend) Restore(_ string, _ int, h []byte, f state.SnapshotFiles) (state.Backend, error) {
	return heap.Restore(h, f)
}

// RestartStrategy is Flink's fixed-delay restart strategy, or with
// MaxDelay its exponential-delay one.
type RestartStrategy struct {
	// MaxAttempts is how many restarts the job gets before it is FAILED.
	MaxAttempts int
	// Delay is the pause before each restart.
	Delay time.Duration
	// MaxDelay, when above Delay, makes the pause grow: it doubles after
	// each attempt that failed without completing a checkpoint, up to
	// MaxDelay, and is Delay again after an attempt that completed one
	// (Flink's exponential-delay strategy, its reset threshold being
	// progress rather than time), so a job that cannot start retries
	// ever more slowly while one that fails now and then restarts fast.
	MaxDelay time.Duration
}

// next returns the pause after one at cur, given whether the failed
// attempt completed a checkpoint.
func (r RestartStrategy) next(cur time.Duration, progressed bool) time.Duration {
	if progressed || r.MaxDelay <= r.Delay {
		return r.Delay
	}
	return min(2*max(cur, time.Millisecond), r.MaxDelay)
}

// Options configure Run.
type Options struct {
	// Policy is the checkpoint mode.
	Policy barrier.Policy
	// CheckpointInterval is checkpoint_interval; 0 turns checkpoints off
	// (and with them recovery and commits of two-phase sinks).
	CheckpointInterval time.Duration
	// CheckpointOnEpoch triggers checkpoints when a source emits an epoch
	// barrier, about every CheckpointInterval, instead of on a clock
	// (coordinator.Config.OnEpoch, invariant epoch-triggered), so that a
	// sink's commit of an epoch does not wait for the clock's next tick.
	CheckpointOnEpoch bool
	// CheckpointTimeout aborts a checkpoint that runs longer (default 1 min).
	CheckpointTimeout time.Duration
	// AlignmentTimeout is aligned_checkpoint_timeout for
	// PolicyAlignedTimeout.
	AlignmentTimeout time.Duration
	// TolerableFailures is the number of consecutive failed checkpoints
	// tolerated before the attempt fails (and the job restarts).
	TolerableFailures int
	// QueueCapacity and QueueOverdraft size every channel queue (default
	// 8 and 2 messages).
	QueueCapacity, QueueOverdraft int
	// Storage keeps checkpoints; required when checkpoints are on.
	Storage *checkpoint.Storage
	// Backend makes state backends (default HeapBackend).
	Backend StateBackend
	// Restart is the restart strategy (default: no restart).
	Restart RestartStrategy
	// OnEvent, when set, is called from the job goroutine for
	// checkpoints completed and aborted and for restarts.
	OnEvent func(Event)
	// Probe, when set, lets the caller watch the running job (queue fill).
	Probe *Probe
}

// Probe watches a running job from another goroutine.
type Probe struct {
	mu   sync.Mutex
	fill func() map[string]float64
}

// QueueFill reports, per vertex, how full its input queues are: queued
// messages over capacity, 0 to 1, averaged over its subtasks' input
// channels (Flink's backpressure indicator: a vertex whose inputs stay
// full is slower than its producers). Nil while no attempt runs.
func (p *Probe) QueueFill() map[string]float64 {
	p.mu.Lock()
	f := p.fill
	p.mu.Unlock()
	if f == nil {
		return nil
	}
	return f()
}

func (p *Probe) set(f func() map[string]float64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.fill = f
	p.mu.Unlock()
}

func (o *Options) withDefaults() (Options, error) {
	out := *o
	if out.CheckpointTimeout == 0 {
		out.CheckpointTimeout = time.Minute
	}
	if out.QueueCapacity == 0 {
		out.QueueCapacity = 8
	}
	if out.QueueOverdraft == 0 {
		out.QueueOverdraft = 2
	}
	if out.Backend == nil {
		out.Backend = HeapBackend{}
	}
	if out.CheckpointInterval > 0 && out.Storage == nil {
		return out, fmt.Errorf("checkpoints every %v need a checkpoint storage: %w", out.CheckpointInterval, base.ErrInvalidArgument)
	}
	if out.Policy == barrier.PolicyAlignedTimeout && out.AlignmentTimeout <= 0 {
		return out, fmt.Errorf("policy timeout needs a positive aligned checkpoint timeout: %w", base.ErrInvalidArgument)
	}
	return out, nil
}

// EventKind says what an Event reports.
type EventKind uint8

// The events.
const (
	// CheckpointCompleted: checkpoint ID is complete (metadata persisted).
	CheckpointCompleted EventKind = iota + 1
	// CheckpointAborted: checkpoint ID was aborted (Cause).
	CheckpointAborted
	// Restarting: attempt Attempt failed with Cause; a new one starts.
	Restarting
	// RetentionFailed: deleting old checkpoints failed (Cause); they stay
	// until the next retention or cleanup.
	RetentionFailed
)

// Event is a notable moment of a job, for tests, metrics and benchmarks.
type Event struct {
	Kind EventKind
	ID   base.CheckpointID
	// Duration is, for CheckpointCompleted, the time from trigger to
	// persisted metadata.
	Duration time.Duration
	// ChannelStateBytes is, for CheckpointCompleted, the total size of the
	// checkpoint's encoded channel state.
	ChannelStateBytes int64
	// StateBytes is, for CheckpointCompleted, the total size of the
	// subtask files and of the shared files the checkpoint stored:
	// incremental state counts what the checkpoint added, not the files
	// it shares with earlier ones (Flink's checkpointed data size).
	StateBytes int64
	Attempt    int
	Cause      error
}

// FailedError is returned by Run when the job is FAILED: its restarts are
// used up.
type FailedError struct {
	Job      string
	Attempts int
	Cause    error
}

// Error names the job, the attempts and the cause.
func (e *FailedError) Error() string {
	return fmt.Sprintf("job %s FAILED after %d attempts: %v", e.Job, e.Attempts, e.Cause)
}

// Unwrap returns the cause.
func (e *FailedError) Unwrap() error { return e.Cause }
