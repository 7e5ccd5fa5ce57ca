package task

import (
	"sync"

	"github.com/stratadb/strata/dataflow/message"
	"github.com/stratadb/strata/internal/base"
)

// control is the job's channel to one subtask. It coalesces: only the
// newest abort and the newest completed checkpoint matter (a subtask acts
// on everything up to them), and there is at most one trigger in flight.
// So it is bounded and a send never blocks.
type control struct {
	sig chan struct{}
	mu  struct {
		sync.Mutex
		trigger     base.CheckpointID // guarded by mu; 0: none
		triggerMode message.Mode      // guarded by mu
		triggerCut  base.Epoch        // guarded by mu: see barrierCut
		abort       base.CheckpointID // guarded by mu: newest aborted
		complete    base.CheckpointID // guarded by mu: newest completed
		timeout     base.CheckpointID // guarded by mu: newest past its alignment timeout
		exit        bool              // guarded by mu
	}
}

func newControl() *control { return &control{sig: make(chan struct{}, 1)} }

func (c *control) signal() {
	select {
	case c.sig <- struct{}{}:
	default:
	}
}

// sendTrigger triggers checkpoint id in mode m; a running source emits its
// barrier once it has emitted epoch barrier cut (base.NoEpoch: at once).
func (c *control) sendTrigger(id base.CheckpointID, m message.Mode, cut base.Epoch) {
	c.mu.Lock()
	c.mu.trigger, c.mu.triggerMode, c.mu.triggerCut = id, m, cut
	c.mu.Unlock()
	c.signal()
}

func (c *control) sendAbort(id base.CheckpointID) {
	c.mu.Lock()
	c.mu.abort = max(c.mu.abort, id)
	c.mu.Unlock()
	c.signal()
}

func (c *control) sendComplete(id base.CheckpointID) {
	c.mu.Lock()
	c.mu.complete = max(c.mu.complete, id)
	c.mu.Unlock()
	c.signal()
}

func (c *control) sendTimeout(id base.CheckpointID) {
	c.mu.Lock()
	c.mu.timeout = max(c.mu.timeout, id)
	c.mu.Unlock()
	c.signal()
}

func (c *control) sendExit() {
	c.mu.Lock()
	c.mu.exit = true
	c.mu.Unlock()
	c.signal()
}

type controlView struct {
	trigger     base.CheckpointID
	triggerMode message.Mode
	triggerCut  base.Epoch
	abort       base.CheckpointID
	complete    base.CheckpointID
	timeout     base.CheckpointID
	exit        bool
}

// pendingTrigger returns the trigger not yet taken (0: none).
func (c *control) pendingTrigger() base.CheckpointID {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mu.trigger
}

// take returns the current control and clears the trigger.
func (c *control) take() controlView {
	c.mu.Lock()
	defer c.mu.Unlock()
	v := controlView{trigger: c.mu.trigger, triggerMode: c.mu.triggerMode, triggerCut: c.mu.triggerCut, abort: c.mu.abort, complete: c.mu.complete, timeout: c.mu.timeout, exit: c.mu.exit}
	c.mu.trigger = 0
	return v
}
