package service

import (
	"context"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/store"
)

func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

type rateResult struct {
	elapsed       time.Duration
	opened        base.Epoch
	want          float64
	cpu           time.Duration
	wakeups       int
	missedWakeups int
}

// measureRate runs the service on a bbolt store at interval for d, with
// waiters goroutines each waiting for every next epoch as an ingest source
// does, and returns what happened.
func measureRate(t testing.TB, interval, d time.Duration, waiters int) rateResult {
	st, err := store.OpenBolt(filepath.Join(t.TempDir(), "meta.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := Open(context.Background(), Options{Store: st, EpochInterval: interval, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var mu sync.Mutex
	res := rateResult{}
	for range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := m.clock.Current().Epoch
			for {
				info, err := m.WaitEpoch(ctx, last)
				if err != nil {
					return
				}
				mu.Lock()
				res.wakeups++
				res.missedWakeups += int(info.Epoch - last - 1)
				mu.Unlock()
				last = info.Epoch
			}
		}()
	}
	first := m.clock.Current()
	wall0, cpu0 := time.Now(), cpuTime(t)
	time.Sleep(d)
	last := m.clock.Current()
	res.cpu = cpuTime(t) - cpu0
	// Measured on the wall clock, independently of the epochs' own start
	// times.
	res.elapsed = time.Since(wall0)
	cancel()
	wg.Wait()
	res.opened = last.Epoch - first.Epoch
	res.want = float64(res.elapsed) / float64(interval)
	return res
}

// TestEpochClockRate50ms runs the clock at 50 ms for 10 s, as issue and
// DESIGN.md promise, and checks the achieved rate (within 10%) and the CPU
// the whole process uses meanwhile (clock, bbolt store, 8 waiting sources;
// under 2% of a core). The clock schedules each epoch from the wall clock,
// so jitter does not accumulate and a loaded machine still keeps the rate;
// a polling wait (a 1 ms loop costs about 5% of a core here) fails the CPU
// check. The figures are in the log (-v).
func TestEpochClockRate50ms(t *testing.T) {
	if testing.Short() {
		t.Skip("takes 10 s")
	}
	const interval = 50 * time.Millisecond
	r := measureRate(t, interval, 10*time.Second, 8)
	rate := float64(r.opened) / r.elapsed.Seconds()
	dev := (float64(r.opened) - r.want) / r.want
	cpuShare := float64(r.cpu) / float64(r.elapsed)
	t.Logf("50 ms clock: %d epochs in %v = %.2f/s (ideal 20/s, deviation %+.2f%%, within 10%%: %v); CPU %v = %.3f%% of one core; %d waiter wake-ups, %d epochs skipped by waiters",
		r.opened, r.elapsed.Round(time.Millisecond), rate, 100*dev, dev > -0.1 && dev < 0.1, r.cpu, 100*cpuShare, r.wakeups, r.missedWakeups)
	if dev < -0.1 || dev > 0.1 {
		t.Errorf("the clock opened %d epochs where %0.f were due", r.opened, r.want)
	}
	if cpuShare > 0.02 {
		t.Errorf("an idle clock used %.1f%% of a core", 100*cpuShare)
	}
}

// BenchmarkEpochClockIdle reports the CPU an idle service with a 50 ms
// clock and 8 waiting sources uses per opened epoch.
func BenchmarkEpochClockIdle(b *testing.B) {
	for b.Loop() {
		r := measureRate(b, 50*time.Millisecond, 2*time.Second, 8)
		b.ReportMetric(float64(r.opened)/r.elapsed.Seconds(), "epochs/s")
		b.ReportMetric(float64(r.cpu)/float64(r.elapsed)*100, "cpu%")
	}
}
