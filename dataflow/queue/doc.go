// Package queue is the bounded queue of one channel: the messages one
// producer subtask sends to one consumer subtask over one edge.
//
// # Backpressure
//
// A queue holds at most Capacity+Overdraft ordinary messages. Put blocks
// while the queue is at that limit and never drops or grows past it, so a
// slow consumer slows its producers down all the way to the sources (NATS's
// ipqueue and Flink's credit-based flow control play the same role).
// Producers check Available (fewer than Capacity messages queued) before they
// start on a new input message, the way a Flink task waits for an output
// buffer before it reads input; the Overdraft slots (Flink's overdraft
// buffers, FLIP-227) let the processing of that one message finish without
// blocking in the middle when it produces a few chunks for the same channel.
//
// # Priority
//
// PutHead puts an unaligned checkpoint barrier at the head. It never blocks
// (a barrier must overtake a full queue: that is the point of unaligned
// checkpoints, FLIP-76) and it records the messages it overtook, copied at
// that instant, in the barrier's Overtaken field. Promote does the same for
// an aligned barrier already queued, when alignment timed out and the
// checkpoint turned unaligned (Flink's convertToPriorityEvent). Priority
// messages do not count against the limit; there is at most one in flight
// per checkpoint, so they stay bounded too.
//
// # Signals
//
// Waiting uses channels of capacity one as level-triggered signals, so a
// waiter can also select on cancellation, control messages and timers: every
// queue of one consumer shares the consumer's notify channel (signalled on
// every put), and each queue has a writable channel (signalled on every
// take). A signal may be stale; waiters re-check after waking. Neither can
// be lost, since a pending signal stays in the channel.
//
// Invariant (queue-bounded): Len never exceeds Capacity+Overdraft plus the
// number of priority messages queued.
package queue
