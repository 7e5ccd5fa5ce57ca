package demo

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"golang.org/x/term"

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
	// Progress, when set, receives a status line rewritten every second
	// on a terminal, a line every five seconds otherwise.
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
	// Levels is the same measure for every table of the topology, from
	// the ingested table bid up to t3 (whose figures are the ones above):
	// the difference between two levels is what the job between them
	// adds (its processing, its checkpoint, its table commit, and the
	// next job's discovery of the commit).
	Levels []LevelFreshness `json:"levels"`
	// Unfinished counts the epochs that started in the measured window
	// and that t3 had not committed by the end of the drain after it
	// (drainLimit): they are not in the figures above, which are then
	// too low (an overloaded run).
	Unfinished int `json:"unfinished_epochs"`
	// Series is the measure of each epoch measured, in epoch order. It is
	// left out of the result's JSON; WriteFreshnessSeries writes it.
	Series []EpochFreshness `json:"-"`
}

// EpochFreshness is the freshness of one measured epoch at every level of
// the topology.
type EpochFreshness struct {
	Epoch base.Epoch
	// StartS is the epoch's start, in seconds after the start of the
	// first epoch measured.
	StartS float64
	// Ms holds, for each table of FreshnessResult.Levels and in that
	// order, the time in ms from the epoch's start until the table
	// committed it.
	Ms []float64
}

// WriteFreshnessSeries writes res.Series to w as JSON lines, one object an
// epoch with its epoch, its start_s and, for each table of res.Levels, the
// table's name followed by _ms: {"epoch":31,"start_s":0.1,"bid_ms":42.3,
// "t1_ms":120.9,"t2_ms":201.5,"t3_ms":290.2}.
func WriteFreshnessSeries(w io.Writer, res FreshnessResult) error {
	var b []byte
	for _, ef := range res.Series {
		if len(ef.Ms) != len(res.Levels) {
			return fmt.Errorf("freshness series: epoch %d has %d levels, the result %d", ef.Epoch, len(ef.Ms), len(res.Levels))
		}
		b = fmt.Appendf(b[:0], `{"epoch":%d,"start_s":%s`, ef.Epoch, strconv.FormatFloat(ef.StartS, 'f', 3, 64))
		for i, l := range res.Levels {
			b = fmt.Appendf(b, `,%q:%s`, l.Table+"_ms", strconv.FormatFloat(ef.Ms[i], 'f', 3, 64))
		}
		b = append(b, "}\n"...)
		if _, err := w.Write(b); err != nil {
			return fmt.Errorf("freshness series: %w", err)
		}
	}
	return nil
}

// LevelFreshness is the time from an epoch's start until one table of the
// topology committed it, over the epochs measured.
type LevelFreshness struct {
	Table string  `json:"table"`
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
}

// drainLimit bounds how long Freshness waits, after its measured window,
// for t3 to commit the epochs that started in it.
const drainLimit = 10 * time.Second

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
	// The clock stops at the end of the measured window; the poller goes
	// on until t3 has committed every epoch that started in it, for at
	// most drainLimit more, so that the slowest epochs at the end count.
	runCtx, cancel := context.WithTimeout(ctx, cfg.Warmup+cfg.Duration)
	defer cancel()
	pollCtx, cancelPoll := context.WithCancel(ctx)
	defer cancelPoll()
	var mu sync.Mutex
	starts := map[base.Epoch]time.Time{}
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
	// The committed epochs of every level, polled together: the top view
	// t3 gives the freshness, the others where it goes (Levels).
	levels := append([]string{"bid"}, Views...)
	seen := make([]map[base.Epoch]time.Time, len(levels))
	for i := range seen {
		seen[i] = map[base.Epoch]time.Time{}
	}
	go func() {
		defer wg.Done()
		last := make([]base.Epoch, len(levels))
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		var drainUntil time.Time
		for {
			select {
			case <-pollCtx.Done():
				return
			case <-t.C:
			}
			if runCtx.Err() != nil {
				if ctx.Err() != nil {
					return
				}
				if drainUntil.IsZero() {
					drainUntil = time.Now().Add(drainLimit)
				}
				mu.Lock()
				newest := base.Epoch(0)
				for ep := range starts {
					newest = max(newest, ep)
				}
				done := last[len(last)-1] >= newest
				mu.Unlock()
				if done || time.Now().After(drainUntil) {
					return
				}
			}
			for i, name := range levels {
				c, err := e.Meta().CommittedEpoch(pollCtx, catalog.Name(engine.DefaultDatabase, name))
				if err != nil || c.Epoch <= last[i] {
					continue
				}
				// A view commits an epoch only after each of its
				// inputs has: the levels below, polled just before,
				// that missed their commit of it are credited now.
				now := time.Now()
				mu.Lock()
				for j := i; j >= 0 && last[j] < c.Epoch; j-- {
					for ep := last[j] + 1; ep <= c.Epoch; ep++ {
						seen[j][ep] = now
					}
					last[j] = c.Epoch
				}
				mu.Unlock()
			}
		}
	}()
	measureFrom := time.Now().Add(cfg.Warmup)
	if cfg.Progress != nil {
		// A terminal gets one status line, rewritten every second; a
		// file or a pipe, a line every five seconds.
		f, isFile := cfg.Progress.(*os.File)
		live := isFile && term.IsTerminal(int(f.Fd()))
		tick := time.NewTicker(time.Second)
	loop:
		for ticks := 1; ; ticks++ {
			select {
			case <-runCtx.Done():
				break loop
			case <-tick.C:
				mu.Lock()
				n := len(seen[len(seen)-1])
				mu.Unlock()
				line := fmt.Sprintf("%5.1fs  epochs readable in t3: %d", time.Since(measureFrom.Add(-cfg.Warmup)).Seconds(), n)
				switch {
				case live:
					fmt.Fprint(cfg.Progress, "\r"+line)
				case ticks%5 == 0:
					fmt.Fprintln(cfg.Progress, line)
				}
			}
		}
		tick.Stop()
		if live {
			fmt.Fprintln(cfg.Progress)
		}
	}
	wg.Wait()
	// The epochs measured are those that started after the warm-up and
	// that t3 committed; each level is measured over the same epochs.
	var measured []base.Epoch
	for ep, st := range starts {
		if st.Before(measureFrom) {
			continue
		}
		if _, ok := seen[len(seen)-1][ep]; ok {
			measured = append(measured, ep)
		} else if ctx.Err() == nil {
			// Not counted when the run was cut short: no drain ran.
			res.Unfinished++
		}
	}
	if len(measured) == 0 {
		return res, fmt.Errorf("no epoch that started in the measured window (%v after a warm-up of %v) became readable in t3 within %v after it: the window is too short for the epoch interval, or the rate too high", cfg.Duration, cfg.Warmup, drainLimit)
	}
	slices.Sort(measured)
	first := starts[measured[0]]
	for _, ep := range measured {
		ef := EpochFreshness{Epoch: ep, StartS: starts[ep].Sub(first).Seconds()}
		for i := range levels {
			// Every level below t3 committed ep before t3 did (the
			// poller credits them), so each has its measure.
			ef.Ms = append(ef.Ms, float64(seen[i][ep].Sub(starts[ep]))/float64(time.Millisecond))
		}
		res.Series = append(res.Series, ef)
	}
	for i, name := range levels {
		var lat []float64
		for _, ef := range res.Series {
			lat = append(lat, ef.Ms[i])
		}
		slices.Sort(lat)
		q := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))] }
		res.Levels = append(res.Levels, LevelFreshness{Table: name, P50Ms: q(0.5), P99Ms: q(0.99), MaxMs: lat[len(lat)-1]})
	}
	top := res.Levels[len(res.Levels)-1]
	res.Epochs = len(measured)
	res.P50Ms, res.P99Ms, res.MaxMs = top.P50Ms, top.P99Ms, top.MaxMs
	st := &status{e: e}
	res.Events = st.events()
	return res, nil
}
