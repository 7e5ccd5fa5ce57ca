// Package message defines what travels between subtasks: data (Chunk,
// Watermark) and control (EpochBarrier, CheckpointBarrier, EndOfStream), all
// in band, in the same queues (RisingWave's Message enum; Flink's events in
// the buffer stream).
//
// A Message is a small value type rather than an interface so that moving it
// through a queue allocates nothing; only the Chunk it may point to is on the
// heap.
//
// Invariant (chunk-immutable): a Chunk handed to a queue is never mutated
// again, by its producer or by any consumer. Broadcast edges and channel
// state share the same *types.Chunk between several readers on the strength
// of this rule.
//
// Ordering: within one channel messages keep their order, except that an
// unaligned CheckpointBarrier is put at the head of the queue and overtakes
// whatever was queued; the overtaken messages travel with the barrier in
// Overtaken so that the receiver can persist them as channel state
// (DESIGN.md "Unaligned").
package message
