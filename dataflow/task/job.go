package task

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratadb/strata/dataflow/barrier"
	"github.com/stratadb/strata/dataflow/chanstate"
	"github.com/stratadb/strata/dataflow/checkpoint"
	"github.com/stratadb/strata/dataflow/checkpoint/coordinator"
	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/message"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/queue"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
)

// Run runs job until it finishes (every source done, the final checkpoint
// complete, every operator finished), ctx is cancelled, or it is FAILED
// (*FailedError). After a process crash, running the same job with the
// same storage resumes from the latest completed checkpoint.
func Run(ctx context.Context, job *graph.Job, o Options) error {
	if err := job.Validate(); err != nil {
		return err
	}
	opts, err := o.withDefaults()
	if err != nil {
		return fmt.Errorf("job %s: %w", job.Name, err)
	}
	// progressed records whether the current attempt completed a
	// checkpoint, for the restart strategy's back-off.
	var progressed atomic.Bool
	if onEvent := opts.OnEvent; onEvent != nil || opts.Restart.MaxDelay > opts.Restart.Delay {
		opts.OnEvent = func(ev Event) {
			if ev.Kind == CheckpointCompleted {
				progressed.Store(true)
			}
			if onEvent != nil {
				onEvent(ev)
			}
		}
	}
	var delay time.Duration
	for n := 0; ; n++ {
		progressed.Store(false)
		err := runAttempt(ctx, job, &opts)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if n >= opts.Restart.MaxAttempts {
			return &FailedError{Job: job.Name, Attempts: n + 1, Cause: err}
		}
		if opts.OnEvent != nil {
			opts.OnEvent(Event{Kind: Restarting, Attempt: n + 1, Cause: err})
		}
		if n == 0 {
			delay = opts.Restart.Delay
		} else {
			delay = opts.Restart.next(delay, progressed.Load())
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// attempt is one run of a job, from restore to finish or failure.
type attempt struct {
	job      *graph.Job
	opts     *Options
	cancel   chan struct{}
	reports  chan report
	tasks    []*subtask
	queues   []*queue.Queue
	restored *checkpoint.Metadata
	// cut, under the aligned policy, keeps checkpoint barriers between
	// the same epoch barriers on every source (nil otherwise).
	cut *barrierCut
	// epochs signals the job loop that a source emitted an epoch barrier
	// (Options.CheckpointOnEpoch; nil otherwise, and a nil channel never
	// fires in the loop's select), and newestEpoch is the newest epoch
	// barrier any source emitted. Every source of a job emits every epoch
	// barrier, so the loop tells the coordinator of an epoch once, when
	// newestEpoch passes the last one it told: counted once per source, a
	// job with two sources saw two epochs per epoch, and the second one
	// made the coordinator trigger a checkpoint three quarters of an
	// interval later that covered nothing and held back the next epoch's.
	epochs      chan struct{}
	newestEpoch atomic.Uint64
}

// noteEpoch records that a source emitted epoch barrier e and wakes the
// job loop (Options.CheckpointOnEpoch).
func (a *attempt) noteEpoch(e base.Epoch) {
	if a.epochs == nil {
		return
	}
	for {
		cur := a.newestEpoch.Load()
		if uint64(e) <= cur || a.newestEpoch.CompareAndSwap(cur, uint64(e)) {
			break
		}
	}
	select {
	case a.epochs <- struct{}{}:
	default:
	}
}

func (a *attempt) files() state.SnapshotFiles {
	if a.opts.Storage == nil {
		return nil
	}
	return a.opts.Storage.Shared()
}

// countingFiles is files that adds the bytes of the shared files it
// stores to written.
func (a *attempt) countingFiles(written *atomic.Int64) state.SnapshotFiles {
	if a.opts.Storage == nil {
		return nil
	}
	return a.opts.Storage.SharedCounting(written)
}

func runAttempt(ctx context.Context, job *graph.Job, opts *Options) error {
	a := &attempt{job: job, opts: opts, cancel: make(chan struct{})}

	if opts.CheckpointOnEpoch && opts.CheckpointInterval > 0 {
		a.epochs = make(chan struct{}, 1)
	}
	if opts.Storage != nil {
		if err := opts.Storage.Cleanup(); err != nil {
			return fmt.Errorf("job %s: checkpoint cleanup: %w", job.Name, err)
		}
		m, err := opts.Storage.Latest()
		switch {
		case err == nil:
			if err := checkKeyGroupHash(m); err != nil {
				return fmt.Errorf("job %s: %w", job.Name, err)
			}
			a.restored = m
		case !errors.Is(err, base.ErrNotFound):
			return fmt.Errorf("job %s: %w", job.Name, err)
		}
	}
	if err := a.build(); err != nil {
		for _, t := range a.tasks {
			if t.backend != nil {
				_ = t.backend.Close()
			}
		}
		return err
	}
	if opts.Policy == barrier.PolicyAligned {
		a.cut = newBarrierCut(len(a.tasks))
	}
	a.reports = make(chan report, 2*len(a.tasks)+4)
	opts.Probe.set(func() map[string]float64 {
		sum, n := map[string]float64{}, map[string]int{}
		for _, t := range a.tasks {
			for _, q := range t.inputs {
				if c := q.Capacity(); c > 0 {
					sum[t.vertex.Name] += min(float64(q.Len())/float64(c), 1)
					n[t.vertex.Name]++
				}
			}
		}
		for v := range sum {
			sum[v] /= float64(n[v])
		}
		return sum
	})
	defer opts.Probe.set(nil)

	results := make(chan error, len(a.tasks))
	var wg sync.WaitGroup
	for _, t := range a.tasks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- t.run()
		}()
	}
	err := a.drive(ctx, results)
	close(a.cancel)
	for _, q := range a.queues {
		q.Close()
	}
	wg.Wait()
	return err
}

// build makes the queues and the subtasks and restores their state.
func (a *attempt) build() error {
	job, opts := a.job, a.opts
	type key struct {
		v string
		i int
	}
	subs := map[key]*subtask{}
	for vi := range job.Vertices {
		v := &job.Vertices[vi]
		for i := range v.Parallelism {
			t := &subtask{a: a, task: len(a.tasks), vertex: v, i: i, ctrl: newControl(),
				inNotify: make(chan struct{}, 1), outNotify: make(chan struct{}, 1),
				pending: map[base.CheckpointID]*pendingSnap{}}
			a.tasks = append(a.tasks, t)
			subs[key{v.Name, i}] = t
		}
	}
	// Channels: for each edge, each connected pair gets a queue. The
	// consumer's channels are numbered by in-edge, then upstream subtask.
	for _, v := range job.Vertices {
		for _, e := range job.InEdges(v.Name) {
			from := job.Vertex(e.From)
			for j := range v.Parallelism {
				cons := subs[key{v.Name, j}]
				for i := range from.Parallelism {
					if e.Partitioning == graph.Forward && i != j {
						continue
					}
					prod := subs[key{from.Name, i}]
					q := queue.NewShared(queueName(e, i, j),
						opts.QueueCapacity, opts.QueueOverdraft, cons.inNotify, prod.outNotify)
					a.queues = append(a.queues, q)
					cons.inputs = append(cons.inputs, q)
					cons.inputOf = append(cons.inputOf, e.Input)
				}
			}
		}
	}
	pools := map[*queue.Queue]*chunkPool{}
	for _, t := range a.tasks {
		t.out = &outputs{cancel: a.cancel}
		for _, e := range job.OutEdges(t.vertex.Name) {
			to := job.Vertex(e.To)
			eo := &edgeOut{edge: e, maxPar: job.MaxPar()}
			for j := range to.Parallelism {
				if e.Partitioning == graph.Forward && j != t.i {
					continue
				}
				cons := subs[key{to.Name, j}]
				for _, q := range cons.inputs {
					if q.Name() == queueName(e, t.i, j) {
						eo.queues = append(eo.queues, q)
					}
				}
			}
			if e.Partitioning == graph.Hash && len(eo.queues) > 1 {
				// Chunks in flight on the edge: its queues' limits, and
				// one being processed per receiver.
				eo.pool = newChunkPool(len(eo.queues) * (opts.QueueCapacity + opts.QueueOverdraft + 1))
				for _, q := range eo.queues {
					pools[q] = eo.pool
				}
			}
			t.out.edges = append(t.out.edges, eo)
		}
		if err := a.restore(t); err != nil {
			return err
		}
	}
	for _, t := range a.tasks {
		t.inPools = make([]*chunkPool, len(t.inputs))
		for ch, q := range t.inputs {
			t.inPools[ch] = pools[q]
		}
	}
	return nil
}

// queueName names the channel of edge e from upstream subtask i to
// downstream subtask j. Two edges may join the same pair of vertices on
// different inputs (a shared step read twice, as a self-join), so an
// input other than the first is part of the name.
func queueName(e graph.Edge, i, j int) string {
	if e.Input > 0 {
		return fmt.Sprintf("%s->%s[%d] %d->%d", e.From, e.To, e.Input, i, j)
	}
	return fmt.Sprintf("%s->%s %d->%d", e.From, e.To, i, j)
}

// checkKeyGroupHash refuses to restore checkpoint m when its keyed state
// was written with another key-group hash than this build's (invariant
// key-group-hash-fixed): its keys would be looked up in other key groups,
// and on other subtasks, than the ones holding them. Metadata without the
// field predates it and has version 1. The error names m's metadata file.
func checkKeyGroupHash(m *checkpoint.Metadata) error {
	v := m.KeyGroupHash
	if v == 0 {
		v = 1
	}
	if v != state.KeyGroupHash {
		return fmt.Errorf("checkpoint %d in %s was written with key-group hash version %d, this build has version %d and cannot restore it: %w",
			m.Checkpoint, m.Path(), v, state.KeyGroupHash, base.ErrInvalidArgument)
	}
	return nil
}

// restore gives subtask t its operator, state, barrier handler and channel
// state, from the restored checkpoint if there is one.
func (a *attempt) restore(t *subtask) error {
	n := len(t.inputs)
	t.replay = make([][]message.Message, n)
	t.ended = make([]bool, n)
	t.wm = make([]int64, n)
	t.lastWM = -1 << 63
	for i := range t.wm {
		t.wm[i] = -1 << 63
	}
	var align barrier.AlignState
	var restoredID base.CheckpointID
	if a.restored != nil {
		payload, err := a.opts.Storage.ReadSubtask(a.restored, t.vertex.Name, t.i)
		if err != nil {
			return fmt.Errorf("job %s: restore %s: %w", a.job.Name, t.name(), err)
		}
		st, err := checkpoint.DecodeSubtaskState(payload)
		if err != nil {
			return fmt.Errorf("job %s: restore %s from checkpoint %d: %w", a.job.Name, t.name(), a.restored.Checkpoint, err)
		}
		t.backend, err = a.opts.Backend.Restore(t.vertex.Name, t.i, st.Handle, a.files())
		if err != nil {
			return fmt.Errorf("job %s: restore %s state: %w", a.job.Name, t.name(), err)
		}
		align = st.Align
		if len(st.Channels) > 0 {
			chans, err := chanstate.Decode(st.Channels)
			if err != nil {
				return fmt.Errorf("job %s: restore %s: %w", a.job.Name, t.name(), err)
			}
			if len(chans) != n {
				return fmt.Errorf("job %s: restore %s: channel state of %d channels for %d inputs: %w", a.job.Name, t.name(), len(chans), n, base.ErrCorruption)
			}
			t.replay = chans
		}
		restoredID = a.restored.Checkpoint
	} else {
		var err error
		if t.backend, err = a.opts.Backend.New(t.vertex.Name, t.i); err != nil {
			return fmt.Errorf("job %s: %s state: %w", a.job.Name, t.name(), err)
		}
	}
	maxPar := a.job.MaxPar()
	t.ctx = &operator.Context{
		Vertex: t.vertex.Name, Subtask: t.i, Parallelism: t.vertex.Parallelism,
		State:    state.NewStore(t.backend, state.RangeOf(t.i, t.vertex.Parallelism, maxPar), maxPar),
		Output:   t.out,
		Restored: restoredID,
	}
	if t.vertex.NewSource != nil {
		t.src = t.vertex.NewSource(t.i)
	} else {
		t.op = t.vertex.NewOperator(t.i)
		t.borrows = operator.BorrowsInput(t.op)
		t.handler = barrier.New(n, a.opts.Policy, align)
	}
	return nil
}

// drive is the job loop: the coordinator driver.
func (a *attempt) drive(ctx context.Context, results <-chan error) error {
	running := len(a.tasks)
	opts := a.opts
	var core *coordinator.Core
	var tick <-chan time.Time
	if opts.CheckpointInterval > 0 {
		var after base.CheckpointID
		if a.restored != nil {
			after = a.restored.Checkpoint
		}
		core = coordinator.New(coordinator.Config{
			Interval: opts.CheckpointInterval, Timeout: opts.CheckpointTimeout,
			TolerableFailures: opts.TolerableFailures, Tasks: len(a.tasks),
			OnEpoch: opts.CheckpointOnEpoch,
		}, after, time.Now())
		period := min(opts.CheckpointInterval, opts.CheckpointTimeout) / 4
		ticker := time.NewTicker(max(period, time.Millisecond))
		defer ticker.Stop()
		tick = ticker.C
	}
	// The final checkpoint (FLIP-147): once every subtask has finished,
	// one more checkpoint covers everything, sinks commit on its
	// notification, then every subtask exits.
	finishedTasks := 0
	finished := make([]bool, len(a.tasks))
	var finalID base.CheckpointID
	exitAll := func() {
		for _, t := range a.tasks {
			t.ctrl.sendExit()
		}
	}
	triggered := map[base.CheckpointID]time.Time{}
	// alignTimer fires aligned_checkpoint_timeout after the trigger of the
	// checkpoint in flight (policy timeout); one at a time, as checkpoints.
	var alignTimer *time.Timer
	defer func() {
		if alignTimer != nil {
			alignTimer.Stop()
		}
	}()

	// toldEpoch is the newest epoch barrier the coordinator was told of,
	// or that a checkpoint's cut covered (the aligned policy).
	var toldEpoch base.Epoch
	var exec func(acts []coordinator.Action) error
	exec = func(acts []coordinator.Action) error {
		for _, act := range acts {
			switch act.Kind {
			case coordinator.Trigger:
				triggered[act.ID] = time.Now()
				if finishedTasks == len(a.tasks) {
					finalID = act.ID
				}
				var lastCut base.Epoch
				send := func(cut base.Epoch) {
					lastCut = cut
					for _, t := range a.tasks {
						// Running sources inject the barrier; finished
						// subtasks, which no barrier can reach, snapshot
						// directly.
						if t.src != nil || finished[t.task] {
							t.ctrl.sendTrigger(act.ID, opts.Policy.BarrierMode(), cut)
						}
					}
				}
				if a.cut != nil {
					a.cut.triggerAll(send)
					// The cut covers every epoch up to it on every
					// source: a barrier of one of them whose signal the
					// loop has not read yet would count as an epoch
					// after this checkpoint and make the coordinator
					// trigger the next one over nothing new, as soon as
					// this one completes.
					toldEpoch = max(toldEpoch, lastCut)
				} else {
					send(base.NoEpoch)
				}
				if opts.Policy == barrier.PolicyAlignedTimeout {
					id := act.ID
					if alignTimer != nil {
						alignTimer.Stop()
					}
					alignTimer = time.AfterFunc(opts.AlignmentTimeout, func() {
						for _, t := range a.tasks {
							t.ctrl.sendTimeout(id)
						}
					})
				}
			case coordinator.Persist:
				m := &checkpoint.Metadata{Job: a.job.Name, Checkpoint: act.ID, Mode: opts.Policy.String(), KeyGroupHash: state.KeyGroupHash}
				var chBytes, stBytes int64
				for _, ack := range act.Acks {
					r := ack.(report)
					m.Subtasks = append(m.Subtasks, r.info)
					m.Shared = append(m.Shared, r.shared...)
					chBytes += r.chBytes
					stBytes += r.info.Size + r.sharedBytes
				}
				err := opts.Storage.Commit(m)
				next := core.Persisted(act.ID, err, time.Now())
				if err == nil && opts.OnEvent != nil {
					opts.OnEvent(Event{Kind: CheckpointCompleted, ID: act.ID, Duration: time.Since(triggered[act.ID]),
						ChannelStateBytes: chBytes, StateBytes: stBytes})
				}
				delete(triggered, act.ID)
				if err := exec(next); err != nil {
					return err
				}
			case coordinator.NotifyComplete:
				for _, t := range a.tasks {
					t.ctrl.sendComplete(act.ID)
				}
				if err := opts.Storage.Retain(); err != nil {
					// Old checkpoints stay until the next retention or
					// Cleanup; the job goes on.
					if opts.OnEvent != nil {
						opts.OnEvent(Event{Kind: RetentionFailed, Cause: err})
					}
				}
				if finalID != 0 && act.ID >= finalID {
					exitAll()
				}
			case coordinator.Abort:
				delete(triggered, act.ID)
				for _, t := range a.tasks {
					t.ctrl.sendAbort(act.ID)
				}
				_ = opts.Storage.Discard(act.ID)
				if opts.OnEvent != nil {
					opts.OnEvent(Event{Kind: CheckpointAborted, ID: act.ID, Cause: errors.New(act.Reason)})
				}
			case coordinator.FailJob:
				return fmt.Errorf("job %s: %s", a.job.Name, act.Reason)
			}
		}
		return nil
	}

	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-results:
			if err != nil {
				return err
			}
			if running--; running == 0 {
				return nil
			}
		case <-a.epochs:
			e := base.Epoch(a.newestEpoch.Load())
			if e <= toldEpoch {
				// Another source's barrier of an epoch told already.
				continue
			}
			toldEpoch = e
			if err := exec(core.OnEpoch(time.Now())); err != nil {
				return err
			}
		case now := <-tick:
			acts := core.Tick(now)
			if finishedTasks == len(a.tasks) && finalID == 0 {
				// Waiting for the in-flight checkpoint to end before
				// the final one.
				acts = append(acts, core.TriggerNow(now)...)
			}
			if err := exec(acts); err != nil {
				return err
			}
		case r := <-a.reports:
			var acts []coordinator.Action
			switch r.kind {
			case reportAck:
				acts = core.Ack(r.id, r.task, r)
			case reportDecline:
				acts = core.Decline(r.id, r.task, r.reason)
			case reportFinished:
				finishedTasks++
				finished[r.task] = true
				if core == nil {
					if finishedTasks == len(a.tasks) {
						exitAll()
					}
					break
				}
				if id, ok := core.Pending(); ok && !core.Acked(r.task) {
					// It ended before the checkpoint's barriers reached it.
					a.tasks[r.task].ctrl.sendTrigger(id, opts.Policy.BarrierMode(), base.NoEpoch)
				}
				if finishedTasks == len(a.tasks) {
					acts = core.TriggerNow(time.Now())
				}
			}
			if err := exec(acts); err != nil {
				return err
			}
		}
	}
}
