package message

import (
	"fmt"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Kind tells which variant a Message is.
type Kind uint8

// The message kinds.
const (
	// KindChunk carries a batch of rows in Chunk.
	KindChunk Kind = iota + 1
	// KindWatermark carries an event-time watermark in Watermark
	// (microseconds since the Unix epoch): no later row on this channel has
	// an event time below it.
	KindWatermark
	// KindEpochBarrier closes epoch Epoch on its channel: everything before
	// it belongs to epochs up to Epoch. Always aligned.
	KindEpochBarrier
	// KindCheckpointBarrier triggers checkpoint Checkpoint.ID.
	KindCheckpointBarrier
	// KindEndOfStream says the channel carries nothing more.
	KindEndOfStream
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindChunk:
		return "chunk"
	case KindWatermark:
		return "watermark"
	case KindEpochBarrier:
		return "epoch-barrier"
	case KindCheckpointBarrier:
		return "checkpoint-barrier"
	case KindEndOfStream:
		return "end-of-stream"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Mode is how a checkpoint barrier travels (DESIGN.md "The checkpoint
// protocol").
type Mode uint8

const (
	// Aligned barriers travel in band; a multi-input subtask blocks every
	// input that delivered the barrier until all have.
	Aligned Mode = iota
	// Unaligned barriers jump to the head of each queue they enter and
	// overtake the queued messages, which become channel state.
	Unaligned
)

// String returns "aligned" or "unaligned".
func (m Mode) String() string {
	if m == Unaligned {
		return "unaligned"
	}
	return "aligned"
}

// CheckpointBarrier identifies a checkpoint and how its barrier travels.
type CheckpointBarrier struct {
	ID   base.CheckpointID
	Mode Mode
}

// Message is one element of a channel. Exactly the fields of its Kind are
// set:
//
//	KindChunk              Chunk
//	KindWatermark          Watermark
//	KindEpochBarrier       Epoch
//	KindCheckpointBarrier  Checkpoint, and Overtaken when the barrier was
//	                       put at the head of a queue
//	KindEndOfStream        nothing
type Message struct {
	Kind       Kind
	Chunk      *types.Chunk
	Watermark  int64
	Epoch      base.Epoch
	Checkpoint CheckpointBarrier
	// Overtaken holds, for a barrier that jumped to the head of a queue, the
	// messages it overtook, oldest first, copied at the instant it jumped
	// (the queue's content does not change under it afterwards). The
	// receiver persists them as channel state; it also still receives and
	// processes them normally after the barrier.
	Overtaken []Message
	// Recyclable, on a chunk message, says that the runtime made the chunk
	// for this channel alone: no other chunk shares its slices, so once
	// nothing refers to it any more the receiver may give its memory back
	// to the sender for later chunks (task invariant chunk-recycle).
	// Channel state does not persist it: restored chunks are never
	// recycled.
	Recyclable bool
}

// Chunk returns a chunk message.
func Chunk(c *types.Chunk) Message { return Message{Kind: KindChunk, Chunk: c} }

// Watermark returns a watermark message at ts microseconds.
func Watermark(ts int64) Message { return Message{Kind: KindWatermark, Watermark: ts} }

// EpochBarrier returns the barrier that closes epoch e.
func EpochBarrier(e base.Epoch) Message { return Message{Kind: KindEpochBarrier, Epoch: e} }

// Barrier returns the barrier of checkpoint id travelling in mode m.
func Barrier(id base.CheckpointID, m Mode) Message {
	return Message{Kind: KindCheckpointBarrier, Checkpoint: CheckpointBarrier{ID: id, Mode: m}}
}

// EndOfStream returns the end-of-stream message.
func EndOfStream() Message { return Message{Kind: KindEndOfStream} }

// IsPriority reports whether m may overtake queued messages: only unaligned
// checkpoint barriers do.
func (m Message) IsPriority() bool {
	return m.Kind == KindCheckpointBarrier && m.Checkpoint.Mode == Unaligned
}

// String formats m for traces: "chunk(3 rows)", "epoch(4)",
// "checkpoint(2, unaligned)".
func (m Message) String() string {
	switch m.Kind {
	case KindChunk:
		n := 0
		if m.Chunk != nil {
			n = m.Chunk.Len()
		}
		return fmt.Sprintf("chunk(%d rows)", n)
	case KindWatermark:
		return fmt.Sprintf("watermark(%d)", m.Watermark)
	case KindEpochBarrier:
		return fmt.Sprintf("epoch(%d)", m.Epoch)
	case KindCheckpointBarrier:
		return fmt.Sprintf("checkpoint(%d, %s)", m.Checkpoint.ID, m.Checkpoint.Mode)
	case KindEndOfStream:
		return "end-of-stream"
	}
	return m.Kind.String()
}
