package nexmark

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// cpuTime returns the user plus system CPU time the process has used so
// far (getrusage(RUSAGE_SELF)): every thread, the Go runtime's and cgo's
// alike.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// rssBytes returns the process's resident set size now, from
// /proc/self/status (VmRSS), or 0 where that file does not exist.
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Bytes()
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) == 0 {
			return 0
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil {
			return 0
		}
		return kb << 10
	}
	return 0
}

// sampler records the peak resident set size of the process while one
// query runs, sampling every interval. getrusage's ru_maxrss is the peak
// over the process's whole life, which would carry one query's peak into
// the next; sampling VmRSS gives each query its own (it can miss a spike
// shorter than the interval).
type sampler struct {
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	peak int64 // guarded by mu
}

func startSampler(interval time.Duration, also func()) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{}), peak: rssBytes()}
	go func() {
		defer close(s.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
			r := rssBytes()
			s.mu.Lock()
			s.peak = max(s.peak, r)
			s.mu.Unlock()
			if also != nil {
				also()
			}
		}
	}()
	return s
}

// finish stops sampling and returns the peak.
func (s *sampler) finish() int64 {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.peak, rssBytes())
}
