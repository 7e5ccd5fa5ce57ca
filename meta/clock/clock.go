package clock

import (
	"slices"
	"sync"
	"time"
)

// Source tells the time and makes timers.
type Source interface {
	// Now returns the current time.
	Now() time.Time
	// NewTimer returns a timer that fires once, d from now.
	NewTimer(d time.Duration) Timer
}

// Timer is a one-shot timer, as time.Timer.
type Timer interface {
	// C delivers the firing time once.
	C() <-chan time.Time
	// Stop prevents the timer from firing; it reports whether it did.
	Stop() bool
}

// System is the real clock.
type System struct{}

// Now returns time.Now().
func (System) Now() time.Time { return time.Now() }

// NewTimer returns a time.Timer.
func (System) NewTimer(d time.Duration) Timer { return systemTimer{time.NewTimer(d)} }

type systemTimer struct{ t *time.Timer }

func (s systemTimer) C() <-chan time.Time { return s.t.C }
func (s systemTimer) Stop() bool          { return s.t.Stop() }

// Manual is a clock that moves only when told. It is safe for concurrent
// use.
type Manual struct {
	mu struct {
		sync.Mutex
		now    time.Time      // guarded by mu
		timers []*manualTimer // guarded by mu; pending timers
	}
}

// NewManual returns a manual clock showing start.
func NewManual(start time.Time) *Manual {
	m := &Manual{}
	m.mu.now = start
	return m
}

// Now returns the manual time.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.mu.now
}

// NewTimer returns a timer that fires when the manual time reaches now+d;
// a timer with d <= 0 fires at once.
func (m *Manual) NewTimer(d time.Duration) Timer {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := &manualTimer{m: m, at: m.mu.now.Add(d), c: make(chan time.Time, 1)}
	if d <= 0 {
		t.c <- m.mu.now
		return t
	}
	m.mu.timers = append(m.mu.timers, t)
	return t
}

// Advance moves the time forward by d and fires the timers that came due.
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.setLocked(m.mu.now.Add(d))
}

// Set moves the time to t (never backwards) and fires the timers that came
// due.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.After(m.mu.now) {
		m.setLocked(t)
	}
}

// Pending returns the number of timers that have not fired or stopped; tests
// use it to wait until a goroutine has armed its timer.
func (m *Manual) Pending() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.mu.timers)
}

func (m *Manual) setLocked(now time.Time) {
	m.mu.now = now
	slices.SortStableFunc(m.mu.timers, func(a, b *manualTimer) int { return a.at.Compare(b.at) })
	keep := m.mu.timers[:0]
	for _, t := range m.mu.timers {
		if !t.at.After(now) {
			t.c <- now
			continue
		}
		keep = append(keep, t)
	}
	clear(m.mu.timers[len(keep):])
	m.mu.timers = keep
}

type manualTimer struct {
	m  *Manual
	at time.Time
	c  chan time.Time
}

func (t *manualTimer) C() <-chan time.Time { return t.c }

func (t *manualTimer) Stop() bool {
	t.m.mu.Lock()
	defer t.m.mu.Unlock()
	for i, p := range t.m.mu.timers {
		if p == t {
			t.m.mu.timers = slices.Delete(t.m.mu.timers, i, i+1)
			return true
		}
	}
	return false
}
