package task

import (
	"sync"

	"github.com/stratadb/strata/internal/base"
)

// barrierCut places every aligned checkpoint barrier between the same two
// epoch barriers on every source subtask (invariant barrier-cut in the
// package doc), so that no operator downstream ever holds one input blocked
// by checkpoint C and another by an epoch barrier: under the aligned policy
// neither could give way and the checkpoint would be declined.
//
// Each source records the epoch barrier it emits last, under mu; the job
// loop, under mu too, gives each trigger the cut: the newest epoch any
// source has emitted. A source emits checkpoint C once it has emitted the
// cut's barrier, and always before any epoch barrier after the cut. Since
// a source records an epoch before it looks for a trigger and the job
// computes the cut and sends the trigger in one critical section, a source
// about to pass the cut has either recorded its epoch first (and the cut
// includes it) or sees the trigger before it emits the barrier.
type barrierCut struct {
	mu   sync.Mutex
	last map[int]base.Epoch // guarded by mu: task index -> last epoch barrier emitted
}

func newBarrierCut() *barrierCut { return &barrierCut{last: map[int]base.Epoch{}} }

// emitted records that source subtask task is about to emit epoch barrier e.
func (c *barrierCut) emitted(task int, e base.Epoch) {
	c.mu.Lock()
	c.last[task] = e
	c.mu.Unlock()
}

// triggerAll sends trigger id in mode to the subtasks send selects, with
// the cut computed in the same critical section as the sends.
func (c *barrierCut) triggerAll(send func(cut base.Epoch)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cut := base.NoEpoch
	for _, e := range c.last {
		cut = max(cut, e)
	}
	send(cut)
}
