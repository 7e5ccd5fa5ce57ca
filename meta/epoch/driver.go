package epoch

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/clock"
)

// Config configures a Driver.
type Config struct {
	// Interval is epoch_interval; zero means DefaultInterval.
	Interval time.Duration
	// ReserveWindow is how much time one persisted range covers; zero means
	// DefaultReserveWindow.
	ReserveWindow time.Duration
	// Restored is the State loaded from the store (zero for a new
	// deployment).
	Restored State
	// Persist durably stores a State before the epochs it reserves open.
	// It is called from the driver's goroutine (and from Start).
	Persist func(context.Context, State) error
	// Time is the clock; nil means clock.System.
	Time clock.Source
	// Logger receives persist failures; nil means slog.Default().
	Logger *slog.Logger
	// OnOpen, if set, is called from the driver's goroutine after each
	// epoch is published (the meta service feeds metrics with it). It must
	// not block.
	OnOpen func(Info)
}

// Driver runs a Clock on a goroutine: it opens epochs on schedule,
// persists reserved ranges, publishes epochs and wakes waiters.
type Driver struct {
	cfg  Config
	stop chan struct{}
	done chan struct{}

	mu struct {
		sync.Mutex
		clock *Clock // guarded by mu
		// opened is closed and replaced each time an epoch is published.
		opened chan struct{} // guarded by mu
		closed bool          // guarded by mu
	}
}

// Start opens the first epoch synchronously (persisting a reserved range),
// so that Current is valid when Start returns, and then runs the clock on a
// goroutine until Stop. It returns the persist error, wrapped with context,
// when the first range cannot be reserved.
func Start(ctx context.Context, cfg Config) (*Driver, error) {
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.ReserveWindow == 0 {
		cfg.ReserveWindow = DefaultReserveWindow
	}
	if cfg.Time == nil {
		cfg.Time = clock.System{}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	c, err := NewClock(cfg.Interval, cfg.ReserveWindow, cfg.Restored)
	if err != nil {
		return nil, err
	}
	d := &Driver{cfg: cfg, stop: make(chan struct{}), done: make(chan struct{})}
	d.mu.clock = c
	d.mu.opened = make(chan struct{})
	if _, err := d.step(ctx); err != nil {
		return nil, fmt.Errorf("epoch clock: opening the first epoch: %w", err)
	}
	go d.run()
	return d, nil
}

// step ticks the clock once and applies the result. It returns when to
// tick next.
func (d *Driver) step(ctx context.Context) (time.Time, error) {
	now := d.cfg.Time.Now()
	d.mu.Lock()
	r := d.mu.clock.Tick(now)
	d.mu.Unlock()
	if r.Persist != nil {
		if err := d.cfg.Persist(ctx, *r.Persist); err != nil {
			return now.Add(d.cfg.Interval), fmt.Errorf("reserving epochs up to %d: %w", r.Persist.Ceiling, err)
		}
	}
	d.mu.Lock()
	d.mu.clock.Advance(r)
	var wake chan struct{}
	if r.Open && !d.mu.closed {
		wake = d.mu.opened
		d.mu.opened = make(chan struct{})
	}
	d.mu.Unlock()
	if wake != nil {
		close(wake)
		if d.cfg.OnOpen != nil {
			d.cfg.OnOpen(Info{Epoch: r.Epoch, Start: r.Start})
		}
	}
	return r.Due, nil
}

func (d *Driver) run() {
	defer close(d.done)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-d.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	due := d.Current().Start.Add(d.cfg.Interval)
	for {
		t := d.cfg.Time.NewTimer(due.Sub(d.cfg.Time.Now()))
		select {
		case <-d.stop:
			t.Stop()
			return
		case <-t.C():
		}
		next, err := d.step(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			// The clock stalls rather than open an epoch it could not
			// reserve; it retries after an interval.
			d.cfg.Logger.Error("epoch clock stalled", "err", err)
		}
		due = next
	}
}

// Stop stops the clock and wakes every waiter with base.ErrClosed. The
// current epoch stays readable.
func (d *Driver) Stop() {
	d.mu.Lock()
	if d.mu.closed {
		d.mu.Unlock()
		<-d.done
		return
	}
	d.mu.closed = true
	close(d.mu.opened)
	d.mu.Unlock()
	close(d.stop)
	<-d.done
}

// Interval returns the epoch interval.
func (d *Driver) Interval() time.Duration { return d.cfg.Interval }

// Current returns the latest open epoch.
func (d *Driver) Current() Info {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.clock.Current()
}

// State returns the persisted state the clock runs under.
func (d *Driver) State() State {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.clock.State()
}

// StartOf returns the start time of epoch e (see Clock.StartOf).
func (d *Driver) StartOf(e base.Epoch) (start time.Time, exact, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.mu.clock.StartOf(e)
}

// Wait blocks until an epoch above after is open and returns it (the
// latest open epoch, which may be more than one above after). It returns
// ctx's error when ctx ends first and an error wrapping base.ErrClosed when
// the driver stops.
func (d *Driver) Wait(ctx context.Context, after base.Epoch) (Info, error) {
	for {
		d.mu.Lock()
		cur := d.mu.clock.Current()
		closed := d.mu.closed
		ch := d.mu.opened
		d.mu.Unlock()
		if cur.Epoch > after {
			return cur, nil
		}
		if closed {
			return Info{}, fmt.Errorf("waiting for an epoch after %d: epoch clock stopped: %w", after, base.ErrClosed)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return Info{}, fmt.Errorf("waiting for an epoch after %d (current %d): %w", after, cur.Epoch, ctx.Err())
		}
	}
}
