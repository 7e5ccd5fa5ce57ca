package task

import (
	"sync"
	"sync/atomic"

	"github.com/stratadb/strata/internal/base"
)

// barrierCut places every aligned checkpoint barrier between the same two
// epoch barriers on every source subtask (invariant barrier-cut in the
// package doc), so that no operator downstream ever holds one input blocked
// by checkpoint C and another by an epoch barrier: under the aligned policy
// neither could give way and the checkpoint would be declined.
//
// The job gives each trigger a cut: the newest epoch barrier any source has
// taken from its source (last). A source emits checkpoint C once it has
// emitted the cut's barrier, and calls its source's Next only when no such
// checkpoint is waiting, so no epoch barrier after the cut precedes C.
//
// The cut must be exact: a source must not be inside Next, about to return
// the epoch after the cut, while the job computes it, for that source's
// state would already be past the barrier C has to precede (a snapshot
// taken then, restored, would never emit that barrier again). So sources
// call Next under mu's read lock and record epochs there, and the job
// computes the cut and sends the triggers under its write lock; a source
// that finds a trigger it has not taken yet does not call Next.
type barrierCut struct {
	mu   sync.RWMutex
	last []atomic.Uint64 // task index -> last epoch barrier taken from the source
}

func newBarrierCut(tasks int) *barrierCut {
	return &barrierCut{last: make([]atomic.Uint64, tasks)}
}

// triggerAll calls send with the cut, computed in the same critical
// section as the sends, with no source inside Next.
func (c *barrierCut) triggerAll(send func(cut base.Epoch)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cut := base.NoEpoch
	for i := range c.last {
		cut = max(cut, base.Epoch(c.last[i].Load()))
	}
	send(cut)
}
