package olap

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/base"
)

func TestCacheBoundsAndPins(t *testing.T) {
	var mu sync.Mutex
	var dropped []string
	c := newCache(2, 100, func(name string) {
		mu.Lock()
		dropped = append(dropped, name)
		mu.Unlock()
	})
	loads := 0
	get := func(id base.SnapshotID, rows int64) *entry {
		t.Helper()
		e, err := c.acquire(context.Background(), cacheKey{dir: "t", snapshot: id}, func(string) (int64, []duckColumn, error) {
			loads++
			return rows, nil, nil
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	a := get(1, 10) // s1, held
	b := get(2, 10) // s2
	c.release(b)
	again := get(2, 10) // cached: no load
	c.release(again)
	if loads != 2 {
		t.Fatalf("%d loads, want 2", loads)
	}
	d := get(3, 10) // three tables: s2 is the idle LRU one
	c.release(d)
	if !slices.Equal(dropped, []string{"s2"}) {
		t.Fatalf("dropped %v, want [s2]", dropped)
	}
	big := get(4, 95) // rows over the bound: every idle table goes, s1 is held
	if n, rows := c.stats(); n != 2 || rows != 105 {
		t.Errorf("holding %d tables %d rows, want s1 and s4 (2, 105)", n, rows)
	}
	c.release(a) // s1 idle now: the least recently used goes
	c.release(big)
	if n, rows := c.stats(); n != 1 || rows != 95 || !slices.Equal(dropped, []string{"s2", "s3", "s1"}) {
		t.Errorf("after release: %d tables %d rows, want 1, 95; dropped %v", n, rows, dropped)
	}
}

func TestCacheSharesOneLoadAndRetriesACancelledOne(t *testing.T) {
	c := newCache(8, 1000, func(string) {})
	key := cacheKey{dir: "t", snapshot: 1}
	started, release := make(chan struct{}), make(chan struct{})
	ctx1, cancel1 := context.WithCancel(context.Background())
	var first error
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, first = c.acquire(ctx1, key, func(string) (int64, []duckColumn, error) {
			close(started)
			<-release
			return 0, nil, fmt.Errorf("loading: %w", ctx1.Err())
		}, nil)
	}()
	<-started
	loads := 0
	waiter := make(chan error, 1)
	go func() {
		e, err := c.acquire(context.Background(), key, func(string) (int64, []duckColumn, error) {
			loads++
			return 7, nil, nil
		}, nil)
		if err == nil && e.rows != 7 {
			err = fmt.Errorf("rows %d", e.rows)
		}
		waiter <- err
	}()
	cancel1()
	close(release)
	<-done
	if first == nil {
		t.Fatal("the cancelled load succeeded")
	}
	if err := <-waiter; err != nil || loads != 1 {
		t.Fatalf("waiter: %v after %d loads", err, loads)
	}
}
