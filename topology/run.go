package topology

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/stratadb/strata/dataflow/graph"
	"github.com/stratadb/strata/dataflow/task"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
)

// HeartbeatInterval is how often RunJob reports a running job's state to
// the meta service; keep it well under the service's heartbeat timeout.
const HeartbeatInterval = time.Second

// RunJob runs a job under the meta service's lifecycle (issue "jobs
// joined through tables"; FLIP-276's job registration):
//
//   - before it starts, the job registers its reads and writes; the meta
//     service refuses a registration that would create a cycle or a second
//     writer to a table, naming the tables and jobs, and the job does not
//     start. A job that is already registered with the same reads and
//     writes (a process restart) goes on; one registered differently is
//     refused;
//   - while it runs, it heartbeats every HeartbeatInterval with its status
//     (RUNNING, or RESTARTING after a failure until a checkpoint completes
//     again) and its last completed checkpoint;
//   - at the end it reports FINISHED, or FAILED with the cause.
//
// opts.OnEvent, if set, still receives every event.
func RunJob(ctx context.Context, svc meta.Service, def catalog.Job, job *graph.Job, opts task.Options) error {
	if err := register(ctx, svc, def); err != nil {
		return err
	}
	// A job that ran before reports no checkpoint below the one the meta
	// service recorded (heartbeats never go back).
	info, err := svc.Job(ctx, def.Name)
	if err != nil {
		return fmt.Errorf("job %q: %w", def.Name, err)
	}
	var mu sync.Mutex
	status, last := meta.JobRunning, info.LastCheckpoint
	user := opts.OnEvent
	opts.OnEvent = func(e task.Event) {
		mu.Lock()
		switch e.Kind {
		case task.CheckpointCompleted:
			status, last = meta.JobRunning, max(last, e.ID)
		case task.Restarting:
			status = meta.JobRestarting
		}
		mu.Unlock()
		if user != nil {
			user(e)
		}
	}
	beat := func(ctx context.Context, st meta.JobStatus, reason string) error {
		mu.Lock()
		cp := last
		mu.Unlock()
		return svc.Heartbeat(ctx, meta.Heartbeat{Job: def.Name, Status: st, Checkpoint: cp, Reason: reason})
	}
	if err := beat(ctx, meta.JobRunning, ""); err != nil {
		return fmt.Errorf("job %q: first heartbeat: %w", def.Name, err)
	}
	hbCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(HeartbeatInterval)
		defer t.Stop()
		for {
			select {
			case <-hbCtx.Done():
				return
			case <-t.C:
				mu.Lock()
				st := status
				mu.Unlock()
				// A missed heartbeat is retried at the next tick; the meta
				// service marks the job lost only after its timeout.
				_ = beat(hbCtx, st, "")
			}
		}
	}()
	runErr := task.Run(ctx, job, opts)
	stop()
	wg.Wait()
	final, reason := meta.JobFinished, ""
	if runErr != nil {
		final, reason = meta.JobFailed, runErr.Error()
	}
	if err := beat(context.WithoutCancel(ctx), final, reason); err != nil {
		return errors.Join(runErr, fmt.Errorf("job %q: final heartbeat: %w", def.Name, err))
	}
	return runErr
}

// register adds def to the meta service, or checks that an existing
// registration of the same name has the same reads and writes.
func register(ctx context.Context, svc meta.Service, def catalog.Job) error {
	err := svc.RegisterJob(ctx, def)
	if err == nil {
		return nil
	}
	// A refused registration (cycle, second writer, unknown table) stays
	// refused; only "already registered" needs a look at the registration.
	info, jerr := svc.Job(ctx, def.Name)
	if !errors.Is(err, base.ErrConflict) || jerr != nil {
		return fmt.Errorf("job %q cannot start: %w", def.Name, err)
	}
	if !sameNames(info.Job.Reads, def.Reads) || !sameNames(info.Job.Writes, def.Writes) {
		return fmt.Errorf("job %q cannot start: it is registered with reads %v and writes %v, not %v and %v: %w",
			def.Name, info.Job.Reads, info.Job.Writes, def.Reads, def.Writes, base.ErrConflict)
	}
	return nil
}

func sameNames(a, b []catalog.ObjectName) bool {
	key := func(n catalog.ObjectName) string { return n.String() }
	as, bs := make([]string, len(a)), make([]string, len(b))
	for i, n := range a {
		as[i] = key(n)
	}
	for i, n := range b {
		bs[i] = key(n)
	}
	slices.Sort(as)
	slices.Sort(bs)
	return slices.Equal(as, bs)
}
