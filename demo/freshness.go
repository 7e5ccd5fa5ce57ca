package demo

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/server"
)

// FreshnessConfig configures Freshness.
type FreshnessConfig struct {
	// Engine configures the engine; its intervals default to 100 ms.
	Engine engine.Options
	// Rate is the generator's events per second.
	Rate uint64
	// Duration is how long epochs are measured, after Warmup.
	Duration, Warmup time.Duration
	// Progress, when set, receives a line a second.
	Progress io.Writer
}

// FreshnessResult is what Freshness measured. Freshness of an epoch is
// the time from the epoch's start on the epoch clock (when its first event
// can enter a source) to the moment the top view t3, and so every view of
// the demo at a consistent version, has committed it: an upper bound on
// the freshness of each event of that epoch.
type FreshnessResult struct {
	Rate            uint64  `json:"rate"`
	Events          uint64  `json:"events"`
	Epochs          int     `json:"epochs"`
	EpochIntervalMs float64 `json:"epoch_interval_ms"`
	P50Ms           float64 `json:"freshness_p50_ms"`
	P99Ms           float64 `json:"freshness_p99_ms"`
	MaxMs           float64 `json:"freshness_max_ms"`
}

// Freshness runs the demo topology at a fixed rate and measures, per
// epoch, how long after it started the top view committed it.
func Freshness(ctx context.Context, cfg FreshnessConfig) (FreshnessResult, error) {
	if cfg.Engine.EpochInterval <= 0 {
		cfg.Engine.EpochInterval = 100 * time.Millisecond
	}
	if cfg.Engine.CheckpointInterval <= 0 {
		cfg.Engine.CheckpointInterval = 100 * time.Millisecond
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 20 * time.Second
	}
	res := FreshnessResult{Rate: cfg.Rate, EpochIntervalMs: float64(cfg.Engine.EpochInterval) / float64(time.Millisecond)}
	e, err := engine.Open(ctx, cfg.Engine)
	if err != nil {
		return res, err
	}
	defer e.Close()
	sess := server.NewSession(e, engine.DefaultDatabase)
	if _, err := exec(ctx, sess, Script(cfg.Rate, 1)); err != nil {
		return res, err
	}
	runCtx, cancel := context.WithTimeout(ctx, cfg.Warmup+cfg.Duration)
	defer cancel()
	var mu sync.Mutex
	starts := map[base.Epoch]time.Time{}
	seen := map[base.Epoch]time.Time{}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the clock: when each epoch starts
		defer wg.Done()
		info, err := e.Meta().CurrentEpoch(runCtx)
		for err == nil {
			mu.Lock()
			starts[info.Epoch] = info.Start
			mu.Unlock()
			info, err = e.Meta().WaitEpoch(runCtx, info.Epoch)
		}
	}()
	top := catalog.Name(engine.DefaultDatabase, "t3")
	go func() { // the top view: when each epoch becomes readable
		defer wg.Done()
		var last base.Epoch
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-runCtx.Done():
				return
			case <-t.C:
			}
			c, err := e.Meta().CommittedEpoch(runCtx, top)
			if err != nil || c.Epoch <= last {
				continue
			}
			now := time.Now()
			mu.Lock()
			for ep := last + 1; ep <= c.Epoch; ep++ {
				seen[ep] = now
			}
			mu.Unlock()
			last = c.Epoch
		}
	}()
	measureFrom := time.Now().Add(cfg.Warmup)
	if cfg.Progress != nil {
		tick := time.NewTicker(time.Second)
	loop:
		for {
			select {
			case <-runCtx.Done():
				break loop
			case <-tick.C:
				mu.Lock()
				n := len(seen)
				mu.Unlock()
				fmt.Fprintf(cfg.Progress, "\r%5.1fs  epochs readable in t3: %d", time.Since(measureFrom.Add(-cfg.Warmup)).Seconds(), n)
			}
		}
		tick.Stop()
		fmt.Fprintln(cfg.Progress)
	}
	wg.Wait()
	var lat []float64
	for ep, st := range starts {
		if st.Before(measureFrom) {
			continue
		}
		if s, ok := seen[ep]; ok {
			lat = append(lat, float64(s.Sub(st))/float64(time.Millisecond))
		}
	}
	if len(lat) == 0 {
		return res, fmt.Errorf("no epoch became readable in t3 after the warm-up of %v", cfg.Warmup)
	}
	slices.Sort(lat)
	q := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
	res.Epochs = len(lat)
	res.P50Ms, res.P99Ms, res.MaxMs = q(0.5), q(0.99), lat[len(lat)-1]
	st := &status{e: e}
	res.Events = st.events()
	return res, nil
}
