package queue

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/dataflow/message"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

func chunkOf(v int64) message.Message {
	c := types.NewChunk([]types.Type{types.Int64}, 1)
	c.Append(types.Insert, types.Row{types.NewInt64(v)})
	return message.Chunk(c)
}

func valueOf(t *testing.T, m message.Message) int64 {
	t.Helper()
	if m.Kind != message.KindChunk {
		t.Fatalf("got %s, want a chunk", m)
	}
	return m.Chunk.Datum(0, 0).Int64()
}

func TestFIFOAndLimit(t *testing.T) {
	q := New("t", 2, 1, nil)
	for i := range 3 {
		ok, err := q.TryPut(chunkOf(int64(i)))
		if !ok || err != nil {
			t.Fatalf("put %d: ok=%v err=%v", i, ok, err)
		}
		if want := i+1 < 2; q.Available() != want {
			t.Fatalf("after %d puts Available=%v, want %v", i+1, q.Available(), want)
		}
	}
	if ok, _ := q.TryPut(chunkOf(9)); ok {
		t.Fatal("TryPut past capacity+overdraft succeeded")
	}
	for i := range 3 {
		m, ok := q.Take(false)
		if !ok || valueOf(t, m) != int64(i) {
			t.Fatalf("take %d: ok=%v %v", i, ok, m)
		}
	}
	if _, ok := q.Take(false); ok {
		t.Fatal("take from empty queue succeeded")
	}
}

func TestPutBlocksUntilTake(t *testing.T) {
	q := New("t", 1, 0, nil)
	if err := q.Put(chunkOf(1), nil); err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- q.Put(chunkOf(2), nil) }()
	// The second put cannot have succeeded: the queue holds one message
	// and its limit is one.
	if n := q.Len(); n != 1 {
		t.Fatalf("Len = %d while a put is blocked, want 1", n)
	}
	if m, _ := q.Take(false); valueOf(t, m) != 1 {
		t.Fatal("wrong head")
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if m, _ := q.Take(false); valueOf(t, m) != 2 {
		t.Fatal("blocked put lost its message")
	}
}

func TestPutHeadOvertakesAndRecords(t *testing.T) {
	q := New("t", 3, 0, nil)
	for i := range 3 {
		if err := q.Put(chunkOf(int64(i)), nil); err != nil {
			t.Fatal(err)
		}
	}
	// Full queue: the barrier still goes in, at the head.
	if err := q.PutHead(message.Barrier(7, message.Unaligned)); err != nil {
		t.Fatal(err)
	}
	if q.Available() {
		t.Fatal("a priority message freed capacity")
	}
	// A blocked channel delivers the priority head and nothing else.
	b, ok := q.Take(true)
	if !ok || b.Kind != message.KindCheckpointBarrier || b.Checkpoint.ID != 7 {
		t.Fatalf("head = %v, want checkpoint 7", b)
	}
	if len(b.Overtaken) != 3 {
		t.Fatalf("overtaken %d messages, want 3", len(b.Overtaken))
	}
	for i, m := range b.Overtaken {
		if valueOf(t, m) != int64(i) {
			t.Fatalf("overtaken[%d] = %v", i, m)
		}
	}
	if _, ok := q.Take(true); ok {
		t.Fatal("priorityOnly took a chunk")
	}
	for i := range 3 {
		m, _ := q.Take(false)
		if valueOf(t, m) != int64(i) {
			t.Fatalf("after the barrier, take %d = %v", i, m)
		}
	}
}

func TestPromote(t *testing.T) {
	q := New("t", 8, 0, nil)
	_ = q.Put(chunkOf(0), nil)
	_ = q.Put(message.EpochBarrier(3), nil)
	_ = q.Put(chunkOf(1), nil)
	_ = q.Put(message.Barrier(5, message.Aligned), nil)
	_ = q.Put(chunkOf(2), nil)
	if q.Promote(6) {
		t.Fatal("promoted a checkpoint that is not queued")
	}
	if !q.Promote(5) {
		t.Fatal("did not find the queued barrier")
	}
	b, ok := q.Take(true)
	if !ok || b.Checkpoint.ID != 5 || b.Checkpoint.Mode != message.Unaligned {
		t.Fatalf("head = %v, want unaligned checkpoint 5", b)
	}
	var got []string
	for _, m := range b.Overtaken {
		got = append(got, m.String())
	}
	want := []string{"chunk(1 rows)", "epoch(3)", "chunk(1 rows)"}
	if len(got) != len(want) {
		t.Fatalf("overtaken = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("overtaken = %v, want %v", got, want)
		}
	}
	var rest []string
	for {
		m, ok := q.Take(false)
		if !ok {
			break
		}
		rest = append(rest, m.String())
	}
	if len(rest) != 4 || rest[1] != "epoch(3)" {
		t.Fatalf("rest = %v", rest)
	}
}

func TestCloseAndCancelWakeProducer(t *testing.T) {
	q := New("t", 1, 0, nil)
	_ = q.Put(chunkOf(1), nil)
	done := make(chan error)
	go func() { done <- q.Put(chunkOf(2), nil) }()
	q.Close()
	if err := <-done; !errors.Is(err, base.ErrClosed) {
		t.Fatalf("put on closed queue: %v", err)
	}
	if m, ok := q.Take(false); !ok || valueOf(t, m) != 1 {
		t.Fatal("close dropped a queued message")
	}

	q2 := New("t2", 1, 0, nil)
	_ = q2.Put(chunkOf(1), nil)
	cancel := make(chan struct{})
	go func() { done <- q2.Put(chunkOf(2), cancel) }()
	close(cancel)
	if err := <-done; !errors.Is(err, base.ErrClosed) {
		t.Fatalf("cancelled put: %v", err)
	}
}

// TestConcurrentOrder runs one producer and one consumer through a small
// queue and checks that nothing is lost, duplicated or reordered.
func TestConcurrentOrder(t *testing.T) {
	const n = 20000
	notify := make(chan struct{}, 1)
	q := New("t", 4, 2, notify)
	msgs := make([]message.Message, n)
	for i := range msgs {
		msgs[i] = message.Watermark(int64(i))
	}
	go func() {
		for i := range n {
			if err := q.Put(msgs[i], nil); err != nil {
				panic(err)
			}
		}
	}()
	for next := 0; next < n; {
		m, ok := q.Take(false)
		if !ok {
			<-notify
			continue
		}
		if m.Watermark != int64(next) {
			t.Fatalf("got %d, want %d", m.Watermark, next)
		}
		next++
		if q.Len() > 6 {
			t.Fatalf("queue holds %d messages past its limit 6", q.Len())
		}
	}
}
