// Package chanstate encodes channel state: the in-flight messages an
// unaligned checkpoint persists for each input channel of a subtask
// (DESIGN.md vocabulary "channel state"; Flink's ChannelStateWriter). On
// restore they are replayed into the subtask before any new input from the
// same channel (invariant replay-first, enforced by the task driver).
//
// Format (version 1):
//
//	state    = version:1 nchannels:uvarint channel*
//	channel  = nmessages:uvarint message*
//	message  = 1 chunk       (types.AppendChunk)
//	         | 2 watermark   (varint, microseconds)
//	         | 3 epoch       (uvarint)
//
// Checkpoint barriers and end of stream are never channel state: a
// barrier overtaken by a newer one belongs to a subsumed checkpoint, and an
// upstream subtask that had finished finishes again after a restore.
package chanstate
