package ingest_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/connector/ingest"
	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/epoch"
)

// emptyInput never has anything new; it counts the reads.
type emptyInput struct{ reads atomic.Int64 }

func (e *emptyInput) Next(pos uint64) (*types.Chunk, uint64, error) {
	e.reads.Add(1)
	return nil, pos, nil
}

// manualClock is an epoch clock the test advances.
type manualClock struct {
	mu  sync.Mutex
	cur base.Epoch
	ch  chan struct{} // closed and replaced on every advance
}

func newManualClock(e base.Epoch) *manualClock { return &manualClock{cur: e, ch: make(chan struct{})} }

func (c *manualClock) advance() {
	c.mu.Lock()
	c.cur++
	close(c.ch)
	c.ch = make(chan struct{})
	c.mu.Unlock()
}

func (c *manualClock) CurrentEpoch(context.Context) (epoch.Info, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return epoch.Info{Epoch: c.cur}, nil
}

func (c *manualClock) WaitEpoch(ctx context.Context, after base.Epoch) (epoch.Info, error) {
	for {
		c.mu.Lock()
		cur, ch := c.cur, c.ch
		c.mu.Unlock()
		if cur > after {
			return epoch.Info{Epoch: cur}, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return epoch.Info{}, ctx.Err()
		}
	}
}

func openIdleSource(t *testing.T, in ingest.Reader, clock ingest.Clock, idle, maxIdle time.Duration) *ingest.Source {
	t.Helper()
	s := ingest.New(ingest.Config{Reader: in, Clock: clock, Name: "idle", StartEpoch: 1, Idle: idle, MaxIdle: maxIdle})
	st := state.NewStore(heap.New(), state.RangeOf(0, 1, 8), 8)
	if err := s.Open(&operator.Context{Vertex: "src", Parallelism: 1, State: st}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestIdleInputBacksOff reads an input that never has anything for 300
// ms: the waits double from 1 ms to 16 ms, so the input is read about 25
// times, where a fixed 1 ms wait reads it about 300 times. A loaded machine
// only lowers the count.
func TestIdleInputBacksOff(t *testing.T) {
	in := &emptyInput{}
	s := openIdleSource(t, in, newManualClock(1), time.Millisecond, 16*time.Millisecond)
	for deadline := time.Now().Add(300 * time.Millisecond); time.Now().Before(deadline); {
		it, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if it.Chunk != nil || it.Epoch != 0 || it.Done {
			t.Fatalf("an empty input under a still clock gave %+v", it)
		}
	}
	if n := in.reads.Load(); n > 60 || n < 2 {
		t.Fatalf("an idle input was read %d times in 300 ms, want about 25 (waits of 1, 2, 4, 8 and then 16 ms)", n)
	}
}

// TestIdleWaitEndsOnEpoch checks that a source idling in a long wait
// closes a newly opened epoch at once: with a 10 s idle wait, the epoch
// closes well before the wait would have ended.
func TestIdleWaitEndsOnEpoch(t *testing.T) {
	in := &emptyInput{}
	clock := newManualClock(1)
	s := openIdleSource(t, in, clock, 10*time.Second, 10*time.Second)
	go func() {
		time.Sleep(50 * time.Millisecond)
		clock.advance()
	}()
	start := time.Now()
	for {
		it, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if it.Epoch != 0 {
			if it.Epoch != 1 {
				t.Fatalf("closed epoch %d, want 1", it.Epoch)
			}
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatal("epoch 1 not closed 5 s after the clock opened epoch 2")
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("epoch 1 closed after %v: the idle wait of 10 s was not cut short by the clock", d)
	}
}
