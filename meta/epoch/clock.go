package epoch

import (
	"fmt"
	"slices"
	"time"

	"github.com/stratadb/strata/internal/base"
)

// Defaults and limits of the clock.
const (
	// DefaultInterval is the default epoch_interval (DESIGN.md).
	DefaultInterval = time.Second
	// MinInterval is the shortest interval the clock accepts; the design
	// promises 50 ms.
	MinInterval = time.Millisecond
	// DefaultReserveWindow is the stretch of time one reserved range covers:
	// the clock persists about once per window.
	DefaultReserveWindow = 10 * time.Second
	// RingSize is how many recent start times are kept exactly in memory.
	RingSize = 4096
	// MaxAnchors bounds State.Anchors; the oldest are dropped first.
	MaxAnchors = 256
)

// Anchor records that Epoch opened at Start.
type Anchor struct {
	Epoch base.Epoch `json:"epoch"`
	Start time.Time  `json:"start"`
}

// State is the persisted part of the clock.
type State struct {
	// Ceiling is the highest epoch any clock may have opened; a restored
	// clock opens Ceiling+1 first (invariant epoch-monotonic).
	Ceiling base.Epoch `json:"ceiling"`
	// Interval is the interval the clock ran at when it wrote the state;
	// StartOf uses it to estimate start times between anchors.
	Interval time.Duration `json:"interval"`
	// Anchors are start times of the first epoch of each reserved range,
	// oldest first.
	Anchors []Anchor `json:"anchors,omitempty"`
}

// Info is an open epoch and the wall time it began.
type Info struct {
	Epoch base.Epoch `json:"epoch"`
	Start time.Time  `json:"start"`
}

// Ready is what a Tick asks of the driver.
type Ready struct {
	// Open is true when an epoch opens: Epoch, opened at Start.
	Open  bool
	Epoch base.Epoch
	Start time.Time
	// Persist, when not nil, must be durably stored before the epoch is
	// published; if that fails, the driver must not call Advance.
	Persist *State
	// Due is when the driver should call Tick again.
	Due time.Time
}

// Clock is the pure epoch clock (see the package doc). It is not safe for
// concurrent use; the Driver serializes calls.
type Clock struct {
	interval time.Duration
	reserve  base.Epoch
	state    State
	current  Info
	// due is when the next epoch should open; zero means "at once".
	due time.Time
	// ring holds start times of recent epochs at index epoch%RingSize.
	ring [RingSize]time.Time
}

// NewClock returns a clock that ticks every interval and reserves enough
// epochs per persisted State to cover reserveWindow (at least one), resuming
// from restored (the zero State for a new deployment). It returns an error
// wrapping base.ErrInvalidArgument for an interval below MinInterval.
func NewClock(interval, reserveWindow time.Duration, restored State) (*Clock, error) {
	if interval < MinInterval {
		return nil, fmt.Errorf("epoch interval %v is below the minimum %v: %w", interval, MinInterval, base.ErrInvalidArgument)
	}
	reserve := base.Epoch(reserveWindow / interval)
	if reserve < 1 {
		reserve = 1
	}
	restored.Anchors = slices.Clone(restored.Anchors)
	return &Clock{interval: interval, reserve: reserve, state: restored}, nil
}

// Interval returns the clock's interval.
func (c *Clock) Interval() time.Duration { return c.interval }

// Current returns the latest opened epoch; Epoch is NoEpoch before the
// first Advance.
func (c *Clock) Current() Info { return c.current }

// State returns the persisted state the clock runs under.
func (c *Clock) State() State {
	s := c.state
	s.Anchors = slices.Clone(s.Anchors)
	return s
}

// Tick says what to do at now. It does not change the clock: the driver
// applies the Ready with Advance once it has done what it asks.
func (c *Clock) Tick(now time.Time) Ready {
	if !c.due.IsZero() && now.Before(c.due) {
		return Ready{Due: c.due}
	}
	next := c.current.Epoch
	if next < c.state.Ceiling && c.current.Epoch == base.NoEpoch {
		// A restored clock resumes above everything it may have opened.
		next = c.state.Ceiling
	}
	next = next.Next()
	r := Ready{Open: true, Epoch: next, Start: now}
	if next > c.state.Ceiling {
		s := State{Ceiling: next + c.reserve - 1, Interval: c.interval}
		s.Anchors = append(slices.Clone(c.state.Anchors), Anchor{Epoch: next, Start: now})
		if len(s.Anchors) > MaxAnchors {
			s.Anchors = s.Anchors[len(s.Anchors)-MaxAnchors:]
		}
		r.Persist = &s
	}
	if c.due.IsZero() || now.Sub(c.due) >= c.interval {
		// First epoch, or a whole interval behind: restart the schedule.
		r.Due = now.Add(c.interval)
	} else {
		r.Due = c.due.Add(c.interval)
	}
	return r
}

// Advance applies a Ready returned by the latest Tick, after the driver has
// persisted r.Persist. It panics if r opens an epoch that does not follow
// the current one or lies above the ceiling, which would break invariant
// epoch-monotonic.
func (c *Clock) Advance(r Ready) {
	if r.Persist != nil {
		c.state = *r.Persist
	}
	c.due = r.Due
	if !r.Open {
		return
	}
	if r.Epoch <= c.current.Epoch || r.Epoch > c.state.Ceiling {
		panic(fmt.Sprintf("epoch: invariant epoch-monotonic: opening %d after %d under ceiling %d", r.Epoch, c.current.Epoch, c.state.Ceiling))
	}
	c.current = Info{Epoch: r.Epoch, Start: r.Start}
	// Epochs of one Clock are dense, so the last RingSize slots hold
	// exactly the last RingSize epochs (slots of epochs before this clock's
	// first are zero).
	c.ring[r.Epoch%RingSize] = r.Start
}

// StartOf returns the start time of epoch e: exact when it is among the last
// RingSize epochs this clock opened, estimated from the anchors otherwise
// (see the package doc, "Start times"). ok is false when e has not opened
// or lies below every anchor.
func (c *Clock) StartOf(e base.Epoch) (start time.Time, exact, ok bool) {
	if e == base.NoEpoch || e > c.current.Epoch {
		return time.Time{}, false, false
	}
	if c.current.Epoch-e < RingSize {
		if t := c.ring[e%RingSize]; !t.IsZero() {
			return t, true, true
		}
	}
	i, found := slices.BinarySearchFunc(c.state.Anchors, e, func(a Anchor, e base.Epoch) int {
		switch {
		case a.Epoch < e:
			return -1
		case a.Epoch > e:
			return 1
		}
		return 0
	})
	if found {
		return c.state.Anchors[i].Start, true, true
	}
	if i == 0 {
		return time.Time{}, false, false
	}
	a := c.state.Anchors[i-1]
	interval := c.state.Interval
	if interval <= 0 {
		interval = c.interval
	}
	est := a.Start.Add(time.Duration(e-a.Epoch) * interval)
	if i < len(c.state.Anchors) && est.After(c.state.Anchors[i].Start) {
		est = c.state.Anchors[i].Start
	}
	if est.After(c.current.Start) {
		est = c.current.Start
	}
	return est, false, true
}
