package coordinator

import (
	"fmt"
	"time"

	"github.com/stratadb/strata/internal/base"
)

// Config configures a coordinator.
type Config struct {
	// Interval is checkpoint_interval: the time between triggers.
	Interval time.Duration
	// Timeout aborts a checkpoint that has not completed this long after
	// its trigger.
	Timeout time.Duration
	// TolerableFailures is how many consecutive failed checkpoints the job
	// survives; one more fails it.
	TolerableFailures int
	// Tasks is the number of subtasks that acknowledge every checkpoint.
	Tasks int
	// OnEpoch makes the job's epoch barriers trigger its checkpoints
	// (invariant epoch-triggered): OnEpoch triggers one when three
	// quarters of Interval have passed since the last trigger, or when a
	// whole checkpoint is in credit, and Tick only when one and a half
	// Intervals have passed (for a job whose epochs stall). Credit accrues
	// at one checkpoint per Interval, up to two, and each trigger spends
	// one (a token bucket): a checkpoint held back (by another in flight,
	// or by an epoch that came late) leaves the credit it did not spend,
	// so it does not hold back the next epoch's, as counting from the
	// last trigger alone did; and epochs that come early against the
	// interval do not skip a checkpoint. An epoch that comes while a
	// checkpoint is in flight is remembered: the next checkpoint is
	// triggered as soon as that one completes (if due), not at the epoch
	// after. A trigger that followed no epoch (the clock's, over a
	// stalled job) does not hold back the next epoch's.
	OnEpoch bool
}

// ActionKind says what the driver must do.
type ActionKind uint8

// The actions.
const (
	// Trigger checkpoint ID at the sources.
	Trigger ActionKind = iota + 1
	// Persist the metadata of ID from Acks; report with Persisted.
	Persist
	// NotifyComplete tells every subtask that ID is complete.
	NotifyComplete
	// Abort ID everywhere and discard its files (Reason says why).
	Abort
	// FailJob: too many consecutive failures (Reason).
	FailJob
)

// Action is one instruction to the driver.
type Action struct {
	Kind   ActionKind
	ID     base.CheckpointID
	Reason string
	// Acks holds, for Persist, every subtask's acknowledgement payload,
	// indexed by task number.
	Acks []any
}

// String formats the action for traces.
func (a Action) String() string {
	switch a.Kind {
	case Trigger:
		return fmt.Sprintf("trigger cp=%d", a.ID)
	case Persist:
		return fmt.Sprintf("persist cp=%d acks=%v", a.ID, a.Acks)
	case NotifyComplete:
		return fmt.Sprintf("notify-complete cp=%d", a.ID)
	case Abort:
		return fmt.Sprintf("abort cp=%d: %s", a.ID, a.Reason)
	case FailJob:
		return fmt.Sprintf("fail-job: %s", a.Reason)
	}
	return "?"
}

type pending struct {
	id         base.CheckpointID
	triggered  time.Time
	acks       []any
	acked      []bool
	n          int
	persisting bool
}

// Core is the coordinator's state machine. It is not safe for concurrent
// use; the driver calls it from one goroutine.
type Core struct {
	cfg         Config
	last        base.CheckpointID
	lastTrigger time.Time
	cur         *pending
	failures    int
	failed      bool
	// epochs counts the epoch barriers since the last trigger (OnEpoch),
	// and lastFollowedEpoch says whether the last trigger came after one.
	epochs            int
	lastFollowedEpoch bool
	// credit is the checkpoints the job may trigger on epochs (OnEpoch)
	// as of creditAt, at most maxCredit; it grows by one per Interval.
	credit   float64
	creditAt time.Time
}

// maxCredit bounds the credit of epoch-triggered checkpoints (Config.
// OnEpoch): after a pause, at most two checkpoints follow each other at
// the pace of the epochs, sooner than three quarters of Interval apart.
const maxCredit = 2

// creditNow returns the credit at now.
func (c *Core) creditNow(now time.Time) float64 {
	return min(maxCredit, c.credit+float64(now.Sub(c.creditAt))/float64(c.cfg.Interval))
}

// New returns a core whose first checkpoint gets id after+1 and is
// triggered Interval after now, or, when the job was restored from
// checkpoint after (not 0), a tenth of Interval after now
// (invariant restored-checkpoint-soon).
func New(cfg Config, after base.CheckpointID, now time.Time) *Core {
	if cfg.Tasks < 1 || cfg.Interval <= 0 || cfg.Timeout <= 0 || cfg.TolerableFailures < 0 {
		panic(fmt.Sprintf("coordinator: bad config %+v", cfg))
	}
	last := now
	if after != 0 {
		last = now.Add(-cfg.Interval + cfg.Interval/10)
	}
	return &Core{cfg: cfg, last: after, lastTrigger: last, lastFollowedEpoch: true, creditAt: last}
}

// Pending returns the checkpoint in flight, if any.
func (c *Core) Pending() (base.CheckpointID, bool) {
	if c.cur == nil {
		return 0, false
	}
	return c.cur.id, true
}

// Acked reports whether task acknowledged the checkpoint in flight.
func (c *Core) Acked(task int) bool {
	return c.cur != nil && c.cur.acked[task]
}

// Tick advances time to now: it triggers a checkpoint when one is due (an
// Interval after the previous one was due, or after the previous trigger
// when that came more than an Interval late) and aborts the pending one
// when it ran past the timeout.
func (c *Core) Tick(now time.Time) []Action {
	if c.failed {
		return nil
	}
	if c.cur != nil {
		if !c.cur.persisting && now.Sub(c.cur.triggered) >= c.cfg.Timeout {
			return c.fail(fmt.Sprintf("timed out after %v", c.cfg.Timeout))
		}
		return nil
	}
	if c.cfg.OnEpoch {
		if c.epochDue(now) {
			// An epoch went out while the last checkpoint was in flight.
			return c.TriggerNow(now)
		}
		if now.Sub(c.lastTrigger) < c.cfg.Interval+c.cfg.Interval/2 {
			return nil
		}
		return c.TriggerNow(now)
	}
	due := c.lastTrigger.Add(c.cfg.Interval)
	if now.Before(due) {
		return nil
	}
	acts := c.TriggerNow(now)
	if now.Sub(due) < c.cfg.Interval {
		// On schedule: the next one is due an interval after this one was
		// (a fixed rate, as Flink schedules its triggers), not after the
		// tick that noticed it, which comes up to a tick late; counting
		// from the tick would stretch every interval by that much.
		c.lastTrigger = due
	}
	return acts
}

// OnEpoch tells the core that a source emitted an epoch barrier at now:
// under Config.OnEpoch it triggers a checkpoint, which the sources emit
// right behind that barrier, when none is in flight and three quarters of
// Interval have passed since the last trigger (so that epochs arriving a
// little early against the interval do not skip a checkpoint) or a whole
// checkpoint is in credit (see Config.OnEpoch).
// Without Config.OnEpoch it does nothing.
func (c *Core) OnEpoch(now time.Time) []Action {
	if !c.cfg.OnEpoch {
		return nil
	}
	c.epochs++
	if c.cur != nil || !c.epochDue(now) {
		return nil
	}
	return c.TriggerNow(now)
}

// epochDue reports whether an epoch barrier went out since the last
// trigger and a checkpoint may follow it at now: three quarters of
// Interval after the last trigger, or when a whole checkpoint is in
// credit (Config.OnEpoch), or at once when the last trigger followed no
// epoch (it covered nothing new).
func (c *Core) epochDue(now time.Time) bool {
	if c.epochs == 0 {
		return false
	}
	return !c.lastFollowedEpoch || now.Sub(c.lastTrigger) >= c.cfg.Interval-c.cfg.Interval/4 || c.creditNow(now) >= 1
}

// TriggerNow triggers a checkpoint at once unless one is in flight (the
// driver uses it for the final checkpoint of a finished job).
func (c *Core) TriggerNow(now time.Time) []Action {
	if c.failed || c.cur != nil {
		return nil
	}
	c.last++
	c.lastTrigger = now
	c.credit, c.creditAt = c.creditNow(now)-1, now
	c.lastFollowedEpoch, c.epochs = c.epochs > 0, 0
	c.cur = &pending{id: c.last, triggered: now, acks: make([]any, c.cfg.Tasks), acked: make([]bool, c.cfg.Tasks)}
	return []Action{{Kind: Trigger, ID: c.last}}
}

// Ack records subtask task's acknowledgement of checkpoint id with its
// payload (what the metadata will record of it). Acks of a checkpoint no
// longer pending are ignored.
func (c *Core) Ack(id base.CheckpointID, task int, payload any) []Action {
	if c.cur == nil || c.cur.id != id || c.cur.persisting {
		return nil
	}
	if task < 0 || task >= c.cfg.Tasks {
		panic(fmt.Sprintf("coordinator: ack from task %d of %d", task, c.cfg.Tasks))
	}
	if c.cur.acked[task] {
		panic(fmt.Sprintf("coordinator: task %d acknowledged checkpoint %d twice", task, id))
	}
	c.cur.acked[task] = true
	c.cur.acks[task] = payload
	c.cur.n++
	if c.cur.n < c.cfg.Tasks {
		return nil
	}
	c.cur.persisting = true
	return []Action{{Kind: Persist, ID: id, Acks: c.cur.acks}}
}

// Decline records that a subtask cannot complete checkpoint id.
func (c *Core) Decline(id base.CheckpointID, task int, reason string) []Action {
	if c.cur == nil || c.cur.id != id || c.cur.persisting {
		return nil
	}
	return c.fail(fmt.Sprintf("declined by task %d: %s", task, reason))
}

// Persisted reports the outcome, at now, of writing checkpoint id's
// metadata. Under Config.OnEpoch a completed checkpoint is followed at
// once by the next when an epoch barrier went out meanwhile (and three
// quarters of Interval have passed since the trigger).
func (c *Core) Persisted(id base.CheckpointID, err error, now time.Time) []Action {
	if c.cur == nil || c.cur.id != id || !c.cur.persisting {
		panic(fmt.Sprintf("coordinator: Persisted(%d) without a Persist", id))
	}
	if err != nil {
		return c.fail(fmt.Sprintf("persisting failed: %v", err))
	}
	c.cur = nil
	c.failures = 0
	out := []Action{{Kind: NotifyComplete, ID: id}}
	if c.cfg.OnEpoch && c.epochDue(now) {
		out = append(out, c.TriggerNow(now)...)
	}
	return out
}

// fail aborts the checkpoint in flight. Under Config.OnEpoch the epochs
// it was to cover are left waiting: the next checkpoint is due as after
// an epoch barrier (three quarters of Interval after the failed trigger,
// or at once with a whole checkpoint in credit), not only at the clock's
// fallback when the epochs stall. Counted as one epoch, which may also
// trigger a checkpoint that covers nothing new if the aborted one
// followed none (harmless).
func (c *Core) fail(reason string) []Action {
	id := c.cur.id
	c.cur = nil
	c.failures++
	if c.cfg.OnEpoch {
		c.epochs = max(c.epochs, 1)
	}
	out := []Action{{Kind: Abort, ID: id, Reason: reason}}
	if c.failures > c.cfg.TolerableFailures {
		c.failed = true
		out = append(out, Action{Kind: FailJob,
			Reason: fmt.Sprintf("%d consecutive checkpoint failures (tolerable %d), last: checkpoint %d %s", c.failures, c.cfg.TolerableFailures, id, reason)})
	}
	return out
}
