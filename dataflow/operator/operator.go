package operator

import (
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Output is where a subtask emits. Emit hands the chunk over: the caller
// must not touch it again (invariant chunk-immutable). Emit blocks while a
// downstream queue is full (backpressure) and returns an error wrapping
// base.ErrClosed when the job is being cancelled; the operator returns it.
type Output interface {
	Emit(c *types.Chunk) error
}

// Context is what the runtime gives a subtask when it opens.
type Context struct {
	// Vertex is the vertex name; Subtask is 0..Parallelism-1.
	Vertex      string
	Subtask     int
	Parallelism int
	// State is the subtask's keyed and operator state.
	State *state.Store
	// Output receives everything the subtask emits, to every out edge.
	Output Output
	// Restored is the checkpoint the state was restored from, or 0 for a
	// fresh start.
	Restored base.CheckpointID
}

// Operator is one subtask of a non-source vertex. See the package doc for
// the order of calls.
type Operator interface {
	Open(ctx *Context) error
	Process(input int, c *types.Chunk) error
	OnEpoch(e base.Epoch) error
	Snapshot(id base.CheckpointID) error
	NotifyComplete(id base.CheckpointID) error
	Finish() error
	Close() error
}

// InputBorrower is an optional interface of an Operator that keeps no
// reference to an input chunk, nor to any of its slices, once Process
// returns (it copies what it keeps). The runtime may then reuse the memory
// of chunks it made for the operator's channels (task invariant
// chunk-recycle). A wrapper operator forwards the answer of the operator
// it wraps.
type InputBorrower interface {
	// BorrowsInput reports whether Process only borrows its chunk.
	BorrowsInput() bool
}

// BorrowsInput reports whether op implements InputBorrower and says yes.
func BorrowsInput(op Operator) bool {
	b, ok := op.(InputBorrower)
	return ok && b.BorrowsInput()
}

// Base implements every Operator method but Process as doing nothing;
// embed it.
type Base struct{}

// Open does nothing.
func (Base) Open(*Context) error { return nil }

// OnEpoch does nothing.
func (Base) OnEpoch(base.Epoch) error { return nil }

// Snapshot does nothing.
func (Base) Snapshot(base.CheckpointID) error { return nil }

// NotifyComplete does nothing.
func (Base) NotifyComplete(base.CheckpointID) error { return nil }

// Finish does nothing.
func (Base) Finish() error { return nil }

// Close does nothing.
func (Base) Close() error { return nil }

// Item is what a Source produces next: a chunk, the close of an epoch, or
// the end of its input.
type Item struct {
	// Chunk, when not nil, is data of the current epoch.
	Chunk *types.Chunk
	// Epoch, when not NoEpoch, closes that epoch: the runtime emits epoch
	// barrier Epoch. Sources close every epoch in order, without gaps
	// (barrier invariant epoch-sequence), and place epochs at positions
	// they can reproduce after a restore (DESIGN.md "The epoch protocol").
	Epoch base.Epoch
	// Done says the source has no more input. A source closes its last
	// epoch before it reports Done.
	Done bool
}

// Source is one subtask of a source vertex. Next is called only when every
// output queue has room, and never blocks for long: a source waiting for
// external input returns an empty Item (no chunk, no epoch, not done) so
// that the runtime can handle checkpoint triggers in between.
type Source interface {
	Open(ctx *Context) error
	Next() (Item, error)
	// Snapshot stores the source's position for checkpoint id in
	// Context.State (operator state); the runtime then emits the barrier.
	Snapshot(id base.CheckpointID) error
	NotifyComplete(id base.CheckpointID) error
	Close() error
}
