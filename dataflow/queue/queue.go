package queue

import (
	"fmt"
	"sync"

	"github.com/stratadb/strata/dataflow/message"
	"github.com/stratadb/strata/internal/base"
)

// Queue is the bounded FIFO of one channel, with a priority put at the head.
// It is safe for one producer and one consumer goroutine (and for Snapshot
// and Close from any goroutine).
type Queue struct {
	name      string
	capacity  int
	limit     int
	notify    chan struct{}
	writable  chan struct{}
	closedSig chan struct{}

	mu struct {
		sync.Mutex
		// buf is a ring: the queued messages are buf[(head+i)%len(buf)]
		// for i < n. Guarded by mu.
		buf     []message.Message
		head, n int
		// priority counts queued priority messages (not held against the
		// limit).
		priority int
		closed   bool
	}
}

// New returns an empty queue named name (for errors: "edge agg->sink 1->0")
// that reports Available below capacity messages and blocks Put at
// capacity+overdraft. notify is the consumer's wake-up signal, a channel of
// capacity one shared by all its input queues; New makes one when it is
// nil. capacity must be at least 1 and overdraft at least 0.
func New(name string, capacity, overdraft int, notify chan struct{}) *Queue {
	return NewShared(name, capacity, overdraft, notify, nil)
}

// NewShared is New with the producer's wake-up signal writable shared by
// all the producer's output queues too (made when nil), so that a
// producer waits for room in any of them with one select.
func NewShared(name string, capacity, overdraft int, notify, writable chan struct{}) *Queue {
	if capacity < 1 || overdraft < 0 {
		panic(fmt.Sprintf("queue %s: capacity %d and overdraft %d must be >= 1 and >= 0", name, capacity, overdraft))
	}
	if notify == nil {
		notify = make(chan struct{}, 1)
	}
	if writable == nil {
		writable = make(chan struct{}, 1)
	}
	q := &Queue{
		name:      name,
		capacity:  capacity,
		limit:     capacity + overdraft,
		notify:    notify,
		writable:  writable,
		closedSig: make(chan struct{}),
	}
	q.mu.buf = make([]message.Message, q.limit+1)
	return q
}

// Name returns the queue's name.
func (q *Queue) Name() string { return q.name }

// Capacity returns the number of queued messages at which Available turns
// false.
func (q *Queue) Capacity() int { return q.capacity }

// Notify returns the consumer's wake-up signal.
func (q *Queue) Notify() <-chan struct{} { return q.notify }

// Writable returns the producer's wake-up signal, sent after every take.
func (q *Queue) Writable() <-chan struct{} { return q.writable }

// Closed returns a channel closed by Close.
func (q *Queue) Closed() <-chan struct{} { return q.closedSig }

// Len returns the number of queued messages.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.n
}

// Available reports whether fewer than Capacity ordinary messages are
// queued, i.e. whether the producer may start on its next input.
func (q *Queue) Available() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.mu.n-q.mu.priority < q.capacity || q.mu.closed
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (q *Queue) errClosed() error {
	return fmt.Errorf("queue %s: %w", q.name, base.ErrClosed)
}

// growLocked makes room for one more message.
func (q *Queue) growLocked() {
	if q.mu.n < len(q.mu.buf) {
		return
	}
	nb := make([]message.Message, 2*len(q.mu.buf))
	for i := 0; i < q.mu.n; i++ {
		nb[i] = q.mu.buf[(q.mu.head+i)%len(q.mu.buf)]
	}
	q.mu.buf = nb
	q.mu.head = 0
}

// TryPut appends m unless the queue is at its limit. It returns false when
// full and an error wrapping base.ErrClosed when closed. Priority messages
// must go through PutHead.
func (q *Queue) TryPut(m message.Message) (bool, error) {
	q.mu.Lock()
	if q.mu.closed {
		q.mu.Unlock()
		return false, q.errClosed()
	}
	if q.mu.n-q.mu.priority >= q.limit {
		q.mu.Unlock()
		return false, nil
	}
	q.growLocked()
	q.mu.buf[(q.mu.head+q.mu.n)%len(q.mu.buf)] = m
	q.mu.n++
	q.mu.Unlock()
	signal(q.notify)
	return true, nil
}

// Put appends m, blocking while the queue is at its limit. It returns an
// error wrapping base.ErrClosed when the queue is closed or cancel is
// closed first.
func (q *Queue) Put(m message.Message, cancel <-chan struct{}) error {
	for {
		ok, err := q.TryPut(m)
		if ok || err != nil {
			return err
		}
		select {
		case <-q.writable:
		case <-q.closedSig:
		case <-cancel:
			return fmt.Errorf("queue %s: put cancelled: %w", q.name, base.ErrClosed)
		}
	}
}

// PutHead puts the priority message m (an unaligned checkpoint barrier) at
// the head of the queue, with the messages it overtakes copied into
// m.Overtaken, oldest first. It never blocks. It returns an error wrapping
// base.ErrClosed when the queue is closed.
func (q *Queue) PutHead(m message.Message) error {
	if !m.IsPriority() {
		panic(fmt.Sprintf("queue %s: PutHead of non-priority %s", q.name, m))
	}
	q.mu.Lock()
	if q.mu.closed {
		q.mu.Unlock()
		return q.errClosed()
	}
	m.Overtaken = q.snapshotLocked(q.mu.n)
	q.growLocked()
	q.mu.head = (q.mu.head - 1 + len(q.mu.buf)) % len(q.mu.buf)
	q.mu.buf[q.mu.head] = m
	q.mu.n++
	q.mu.priority++
	q.mu.Unlock()
	signal(q.notify)
	return nil
}

// Promote finds the aligned barrier of checkpoint id in the queue, turns it
// unaligned and moves it to the head with the messages it overtook in
// Overtaken. It reports whether the barrier was queued.
func (q *Queue) Promote(id base.CheckpointID) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	at := -1
	for i := 0; i < q.mu.n; i++ {
		m := &q.mu.buf[(q.mu.head+i)%len(q.mu.buf)]
		if m.Kind == message.KindCheckpointBarrier && m.Checkpoint.ID == id && m.Checkpoint.Mode == message.Aligned {
			at = i
			break
		}
	}
	if at < 0 {
		return false
	}
	b := q.mu.buf[(q.mu.head+at)%len(q.mu.buf)]
	b.Checkpoint.Mode = message.Unaligned
	b.Overtaken = q.snapshotLocked(at)
	// Shift the first at messages one slot towards the tail.
	for i := at; i > 0; i-- {
		q.mu.buf[(q.mu.head+i)%len(q.mu.buf)] = q.mu.buf[(q.mu.head+i-1)%len(q.mu.buf)]
	}
	q.mu.buf[q.mu.head] = b
	q.mu.priority++
	return true
}

// snapshotLocked copies the first n queued messages, skipping checkpoint
// barriers: a barrier overtaken by the barrier of a newer checkpoint
// belongs to a subsumed checkpoint and is not channel state.
func (q *Queue) snapshotLocked(n int) []message.Message {
	var out []message.Message
	for i := 0; i < n; i++ {
		m := q.mu.buf[(q.mu.head+i)%len(q.mu.buf)]
		if m.Kind == message.KindCheckpointBarrier {
			continue
		}
		out = append(out, m)
	}
	return out
}

// Snapshot returns a copy of the queued messages, oldest first, priority
// messages included. Chunks are shared (invariant chunk-immutable).
func (q *Queue) Snapshot() []message.Message {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]message.Message, q.mu.n)
	for i := range out {
		out[i] = q.mu.buf[(q.mu.head+i)%len(q.mu.buf)]
	}
	return out
}

// Take removes and returns the head message; ok is false when the queue is
// empty. With priorityOnly it takes the head only when it is a priority
// message (a blocked channel still delivers unaligned barriers).
func (q *Queue) Take(priorityOnly bool) (m message.Message, ok bool) {
	q.mu.Lock()
	if q.mu.n == 0 {
		q.mu.Unlock()
		return m, false
	}
	m = q.mu.buf[q.mu.head]
	if priorityOnly && !m.IsPriority() {
		q.mu.Unlock()
		return message.Message{}, false
	}
	q.mu.buf[q.mu.head] = message.Message{}
	q.mu.head = (q.mu.head + 1) % len(q.mu.buf)
	q.mu.n--
	if m.IsPriority() {
		q.mu.priority--
	}
	q.mu.Unlock()
	signal(q.writable)
	return m, true
}

// Close marks the queue closed: later puts fail with base.ErrClosed and
// waiting producers and consumers wake up. Queued messages can still be
// taken. Close is idempotent.
func (q *Queue) Close() {
	q.mu.Lock()
	if q.mu.closed {
		q.mu.Unlock()
		return
	}
	q.mu.closed = true
	q.mu.Unlock()
	close(q.closedSig)
	signal(q.notify)
	signal(q.writable)
}
