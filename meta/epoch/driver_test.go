package epoch

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/clock"
)

// memPersist records persisted states and can be told to fail.
type memPersist struct {
	mu     sync.Mutex
	states []State
	fail   error
}

func (m *memPersist) persist(_ context.Context, s State) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	m.states = append(m.states, s)
	return nil
}

func (m *memPersist) setFail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.fail = err
}

func (m *memPersist) last() State {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.states[len(m.states)-1]
}

// armed waits until the driver goroutine has armed its timer.
func armed(t *testing.T, m *clock.Manual) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for m.Pending() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("driver never armed its timer")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestDriverOpensOnTimeAndWakesWaiters(t *testing.T) {
	m := clock.NewManual(t0)
	p := &memPersist{}
	var opened []base.Epoch
	var openedMu sync.Mutex
	d, err := Start(context.Background(), Config{
		Interval: ms(50), ReserveWindow: ms(100), Persist: p.persist, Time: m,
		OnOpen: func(i Info) { openedMu.Lock(); opened = append(opened, i.Epoch); openedMu.Unlock() },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	if cur := d.Current(); cur.Epoch != 1 || !cur.Start.Equal(t0) {
		t.Fatalf("Current after Start = %+v", cur)
	}
	// Three waiters block on epoch 1; none may return before the clock moves.
	type result struct {
		info Info
		err  error
	}
	results := make(chan result, 3)
	for range 3 {
		go func() {
			i, err := d.Wait(context.Background(), 1)
			results <- result{i, err}
		}()
	}
	select {
	case r := <-results:
		t.Fatalf("Wait returned before the epoch opened: %+v", r)
	case <-time.After(20 * time.Millisecond):
	}
	armed(t, m)
	m.Advance(ms(50))
	for range 3 {
		r := <-results
		if r.err != nil || r.info.Epoch != 2 || !r.info.Start.Equal(t0.Add(ms(50))) {
			t.Fatalf("Wait = %+v, %v; want epoch 2 at +50ms", r.info, r.err)
		}
	}
	// An epoch already past returns at once.
	if i, err := d.Wait(context.Background(), 0); err != nil || i.Epoch != 2 {
		t.Fatalf("Wait(0) = %+v, %v", i, err)
	}
	armed(t, m)
	m.Advance(ms(50)) // epoch 3: passes ceiling 2, persists 3..4
	if i, err := d.Wait(context.Background(), 2); err != nil || i.Epoch != 3 {
		t.Fatalf("Wait(2) = %+v, %v", i, err)
	}
	if st := p.last(); st.Ceiling != 4 {
		t.Fatalf("persisted ceiling = %d, want 4", st.Ceiling)
	}
	if start, exact, ok := d.StartOf(2); !ok || !exact || !start.Equal(t0.Add(ms(50))) {
		t.Fatalf("StartOf(2) = %v %v %v", start, exact, ok)
	}
	openedMu.Lock()
	defer openedMu.Unlock()
	if len(opened) != 3 || opened[2] != 3 {
		t.Fatalf("OnOpen saw %v", opened)
	}
}

func TestDriverStallsWhenPersistFails(t *testing.T) {
	m := clock.NewManual(t0)
	p := &memPersist{}
	quiet := slog.New(slog.DiscardHandler)
	d, err := Start(context.Background(), Config{Interval: ms(50), ReserveWindow: ms(50), Persist: p.persist, Time: m, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Stop()
	p.setFail(errors.New("disk full"))
	armed(t, m)
	m.Advance(ms(50))
	armed(t, m) // the driver re-armed after the failed step
	if cur := d.Current(); cur.Epoch != 1 {
		t.Fatalf("epoch %d opened without a persisted reservation", cur.Epoch)
	}
	p.setFail(nil)
	m.Advance(ms(50))
	if i, err := d.Wait(context.Background(), 1); err != nil || i.Epoch != 2 {
		t.Fatalf("after recovery Wait = %+v, %v", i, err)
	}
}

func TestStartFailsWhenFirstReservationFails(t *testing.T) {
	p := &memPersist{fail: errors.New("read-only file system")}
	_, err := Start(context.Background(), Config{Interval: ms(50), Persist: p.persist, Time: clock.NewManual(t0)})
	if err == nil || !errors.Is(err, p.fail) {
		t.Fatalf("Start = %v", err)
	}
}

func TestStopWakesWaitersAndCancelWorks(t *testing.T) {
	m := clock.NewManual(t0)
	d, err := Start(context.Background(), Config{Interval: ms(50), Persist: (&memPersist{}).persist, Time: m})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Wait(ctx, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait with canceled ctx = %v", err)
	}
	errc := make(chan error, 1)
	go func() { _, err := d.Wait(context.Background(), 1); errc <- err }()
	d.Stop()
	if err := <-errc; !errors.Is(err, base.ErrClosed) {
		t.Fatalf("Wait after Stop = %v", err)
	}
	d.Stop() // idempotent
	if d.Current().Epoch != 1 {
		t.Fatal("current epoch lost on Stop")
	}
}

func TestRestartedDriverNeverGoesBack(t *testing.T) {
	p := &memPersist{}
	var last base.Epoch
	for run := range 5 {
		m := clock.NewManual(t0.Add(time.Duration(run) * time.Hour))
		var restored State
		if len(p.states) > 0 {
			restored = p.last()
		}
		d, err := Start(context.Background(), Config{Interval: ms(50), ReserveWindow: ms(500), Restored: restored, Persist: p.persist, Time: m})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 7*run; i++ {
			before := d.Current().Epoch
			armed(t, m)
			m.Advance(ms(50))
			if i, err := d.Wait(context.Background(), before); err != nil || i.Epoch != before+1 {
				t.Fatalf("Wait(%d) = %+v, %v", before, i, err)
			}
		}
		cur := d.Current().Epoch
		if cur <= last {
			t.Fatalf("run %d: epoch %d after %d", run, cur, last)
		}
		last = cur
		d.Stop()
	}
}
