package service

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/meta/clock"
	"github.com/stratadb/strata/meta/epoch"
	"github.com/stratadb/strata/meta/lineage"
	"github.com/stratadb/strata/meta/store"
	"github.com/stratadb/strata/meta/version"
)

// Defaults of Options.
const (
	DefaultHeartbeatTimeout = 10 * time.Second
	DefaultPinTTL           = time.Minute
	DefaultSweepInterval    = time.Second
)

// Options configure a Meta.
type Options struct {
	// Store holds the state; required. The caller closes it after Close.
	Store store.Store
	// EpochInterval is epoch_interval; zero means epoch.DefaultInterval.
	EpochInterval time.Duration
	// EpochReserveWindow is how much time one persisted epoch reservation
	// covers; zero means epoch.DefaultReserveWindow.
	EpochReserveWindow time.Duration
	// HeartbeatTimeout is how long a job may stay silent before it is
	// lost; zero means DefaultHeartbeatTimeout.
	HeartbeatTimeout time.Duration
	// PinTTL is the lease of a pin whose request names none; zero means
	// DefaultPinTTL.
	PinTTL time.Duration
	// SweepInterval is how often lost jobs and expired pins are cleaned
	// from the store; zero means DefaultSweepInterval.
	SweepInterval time.Duration
	// Time is the clock; nil means clock.System.
	Time clock.Source
	// Logger receives refused reports and background failures; nil means
	// slog.Default().
	Logger *slog.Logger
}

// Meta is the in-process meta service. It implements meta.Service.
type Meta struct {
	opts  Options
	store store.Store
	clock *epoch.Driver
	log   *slog.Logger
	// started is when this instance started: the earliest a job's silence
	// is counted from.
	started time.Time
	stop    chan struct{}
	done    chan struct{}

	// applyMu orders store writes: it is taken around every store write
	// made for a change under mu (taken while mu is held), and by the
	// leader of a group commit of reports before it releases mu
	// (flushReports). Lock order: mu, then applyMu.
	applyMu sync.Mutex

	mu struct {
		sync.Mutex
		closed  bool                 // guarded by mu
		catalog *catalog.Catalog     // guarded by mu; replaced, never mutated
		lineage *lineage.Graph       // guarded by mu
		tracker *version.Tracker     // guarded by mu
		pins    *version.Pins        // guarded by mu
		jobs    map[string]*jobState // guarded by mu
		// refused counts committed-epoch reports refused for going
		// backwards.
		refused uint64 // guarded by mu
		// changed is closed and replaced on every commit, lineage change
		// and Close: strong reads that wait block on it.
		changed chan struct{} // guarded by mu
		// reports is the batch of committed-epoch reports being
		// gathered, nil when none is; flushing is set while a leader
		// persists batches (CommitEpoch).
		reports  *reportBatch // guarded by mu
		flushing bool         // guarded by mu
	}
}

var _ meta.Service = (*Meta)(nil)

// jobState is a job's runtime state: the persisted record plus when it was
// last heard of.
type jobState struct {
	rec      jobRecord
	lastSeen time.Time // last heartbeat, registration or service start
	lastBeat time.Time // last heartbeat; zero if none since start
}

// Open loads the state from opts.Store and starts the service (see the
// package doc, "Lifecycle"). A store whose content does not check gives an
// error wrapping base.ErrCorruption naming the key.
func Open(ctx context.Context, opts Options) (*Meta, error) {
	if opts.Store == nil {
		return nil, fmt.Errorf("meta service: no store: %w", base.ErrInvalidArgument)
	}
	if opts.HeartbeatTimeout == 0 {
		opts.HeartbeatTimeout = DefaultHeartbeatTimeout
	}
	if opts.PinTTL == 0 {
		opts.PinTTL = DefaultPinTTL
	}
	if opts.SweepInterval == 0 {
		opts.SweepInterval = DefaultSweepInterval
	}
	if opts.Time == nil {
		opts.Time = clock.System{}
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	m := &Meta{opts: opts, store: opts.Store, log: opts.Logger, started: opts.Time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	data, err := opts.Store.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("meta service: loading state: %w", err)
	}
	clockState, err := m.restoreLocked(data)
	if err != nil {
		return nil, fmt.Errorf("meta service: restoring state: %w", err)
	}
	m.clock, err = epoch.Start(ctx, epoch.Config{
		Interval:      opts.EpochInterval,
		ReserveWindow: opts.EpochReserveWindow,
		Restored:      clockState,
		Persist: func(ctx context.Context, s epoch.State) error {
			var b store.Batch
			b.Put(keyClock, mustJSON(s))
			return m.store.Apply(ctx, b)
		},
		Time:   opts.Time,
		Logger: opts.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("meta service: %w", err)
	}
	go m.sweepLoop()
	return m, nil
}

// restoreLocked rebuilds the state from the store's content. It runs before
// the service is shared, so it needs no lock.
func (m *Meta) restoreLocked(data map[string][]byte) (epoch.State, error) {
	var clockState epoch.State
	cat := catalog.New()
	committed := map[catalog.ObjectName]version.Committed{}
	floors := map[catalog.ObjectName]base.Epoch{}
	var pins []version.Pin
	var pinSeq version.PinID
	jobs := map[string]jobRecord{}
	for key, v := range data {
		var err error
		switch {
		case key == keyCatalog:
			cat, err = catalog.Unmarshal(v)
		case key == keyClock:
			err = decodeJSON(key, v, &clockState)
		case key == keyPinSeq:
			err = decodeJSON(key, v, &pinSeq)
		case strings.HasPrefix(key, prefixCommit):
			var n catalog.ObjectName
			var c version.Committed
			if n, err = parseObjectKey(key, prefixCommit); err == nil {
				err = decodeJSON(key, v, &c)
				committed[n] = c
			}
		case strings.HasPrefix(key, prefixFloor):
			var n catalog.ObjectName
			var e base.Epoch
			if n, err = parseObjectKey(key, prefixFloor); err == nil {
				err = decodeJSON(key, v, &e)
				floors[n] = e
			}
		case strings.HasPrefix(key, prefixPin):
			var p version.Pin
			if err = decodeJSON(key, v, &p); err == nil {
				pins = append(pins, p)
			}
		case strings.HasPrefix(key, prefixJob):
			var r jobRecord
			if err = decodeJSON(key, v, &r); err == nil {
				jobs[strings.TrimPrefix(key, prefixJob)] = r
			}
		default:
			err = fmt.Errorf("meta store key %q is unknown to this build: %w", key, base.ErrCorruption)
		}
		if err != nil {
			return clockState, err
		}
	}
	g := lineage.New()
	for _, j := range cat.Jobs() {
		if err := g.AddJob(j.Name, j.Reads, j.Writes); err != nil {
			return clockState, fmt.Errorf("catalog job %q does not fit the lineage: %v: %w", j.Name, err, base.ErrCorruption)
		}
	}
	m.mu.catalog = cat
	m.mu.lineage = g
	m.mu.tracker = version.NewTracker(committed, floors)
	m.mu.pins = version.NewPins(pinSeq, pins)
	m.mu.jobs = map[string]*jobState{}
	for _, j := range cat.Jobs() {
		rec, ok := jobs[j.Name]
		if !ok {
			rec = jobRecord{Status: meta.JobCreated}
		}
		m.mu.jobs[j.Name] = &jobState{rec: rec, lastSeen: m.started}
	}
	m.mu.changed = make(chan struct{})
	return clockState, nil
}

// Close stops the epoch clock and the sweeper and wakes every waiter with
// base.ErrClosed. It does not close the store.
func (m *Meta) Close() error {
	m.mu.Lock()
	if m.mu.closed {
		m.mu.Unlock()
		return nil
	}
	m.mu.closed = true
	close(m.mu.changed)
	m.mu.Unlock()
	close(m.stop)
	<-m.done
	m.clock.Stop()
	return nil
}

// lock takes the mutex unless the service is closed.
func (m *Meta) lock() error {
	m.mu.Lock()
	if m.mu.closed {
		m.mu.Unlock()
		return fmt.Errorf("meta service: %w", base.ErrClosed)
	}
	return nil
}

// broadcastLocked wakes every waiting strong read.
func (m *Meta) broadcastLocked() {
	close(m.mu.changed)
	m.mu.changed = make(chan struct{})
}

// apply writes b to the store, wrapping the error with what it was for.
func (m *Meta) apply(ctx context.Context, what string, b store.Batch) error {
	m.applyMu.Lock()
	defer m.applyMu.Unlock()
	if err := m.store.Apply(ctx, b); err != nil {
		return fmt.Errorf("meta service: persisting %s: %w", what, err)
	}
	return nil
}
