package table_test

import (
	"errors"
	"fmt"
	"math/rand"
	"sync"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
	"github.com/stratadb/strata/table/scan"
	"github.com/stratadb/strata/table/schema"
)

// A write-only writer committing epochs (half of them inserting only new
// keys, whose data file is their changelog file) while two dedicated
// compactors (one full, one picking units, with upgrades) race each other
// and it, an expirer keeps three snapshots, and a registered stream follows
// the changelog: nothing but compactions fails (with conflicts only), the
// stream's changelog equals the model at the end of every epoch it
// reads, and the final read equals the model.
func TestMaintenanceRacingCommits(t *testing.T) {
	fs := fileio.NewMem()
	tb := newTable(t, fs, map[string]string{"write-only": "true", "bucket": "2", "write-buffer-rows": "5",
		"target-file-rows": "6", "num-sorted-run.compaction-trigger": "2"})
	tb.Store().CacheRows = 0 // reads go to storage, where expiration deletes
	m := &model{engine: schema.Deduplicate, rows: map[int64]types.Row{}}
	var mu sync.Mutex
	atEpoch := map[base.Epoch]string{}
	stream, err := tb.StreamFrom(scan.Position{Snapshot: 1}, "reader")
	if err != nil {
		t.Fatal(err)
	}
	const epochs = 60
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 8)
	var compactions [2]int
	for i, full := range []bool{true, false} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				id, err := tb.Compact(fmt.Sprintf("compactor-%d", i), full)
				// A compactor reads its snapshot unregistered: an
				// expiration may remove its files under it (not found).
				if err != nil && !errors.Is(err, base.ErrConflict) && !errors.Is(err, base.ErrNotFound) {
					errs <- fmt.Errorf("compactor %d: %w", i, err)
					return
				}
				if err == nil && id != 0 {
					compactions[i]++
				}
			}
		}()
	}
	expired := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			res, err := maintain.Expire(tb.Store(), maintain.ExpireOptions{RetainMin: 3, RetainMax: 3})
			if err != nil {
				errs <- fmt.Errorf("expire: %w", err)
				return
			}
			expired += len(res.Expired)
			// Now and then: a writer's view outlives one retained
			// snapshot, and a prepare looks again once, not forever.
			time.Sleep(3 * time.Millisecond)
		}
	}()
	done := make(chan struct{})
	var streamErr error
	var endsChecked int
	go func() {
		defer close(done)
		applied := map[int64]types.Row{}
		// seen are the changes read, by key, for the failure message.
		seen := map[int64][]string{}
		for {
			b, ok, err := stream.Next()
			if err != nil {
				streamErr = err
				return
			}
			if !ok {
				ce, _ := stream.CommittedEpoch()
				if ce >= epochs {
					return
				}
				time.Sleep(time.Millisecond)
				continue
			}
			for _, c := range b.Changes {
				k := c.Row[0].Int64()
				seen[k] = append(seen[k], fmt.Sprintf("snapshot %d epoch %d: %s %v", b.Snapshot, b.Epoch, c.Kind, c.Row))
				if c.Kind.IsAdd() {
					applied[k] = c.Row
				} else {
					delete(applied, k)
				}
			}
			if b.EndOfEpoch {
				got := dumpMap(applied)
				mu.Lock()
				want := atEpoch[b.Epoch]
				mu.Unlock()
				if got != want {
					streamErr = fmt.Errorf("changelog through snapshot %d (epoch %d):\n%s\nwant\n%s\nchanges read: %v", b.Snapshot, b.Epoch, got, want, seen)
					return
				}
				endsChecked++
			}
		}
	}()
	w, err := tb.NewWriter("job")
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(11))
	next := int64(0)
	for e := base.Epoch(1); e <= epochs; e++ {
		for range 1 + r.Intn(5) {
			o := randomOp(r, schema.Deduplicate, int(next)+1)
			if e%2 == 0 {
				o = op{types.Insert, row(next, int64(e), "n")}
				next++
			} else if k := o.row[0].Int64(); k >= next {
				next = k + 1
			}
			if err := w.Write(e, o.kind, o.row); err != nil {
				t.Fatal(err)
			}
			m.apply(o)
		}
		mu.Lock()
		atEpoch[e] = m.dump()
		mu.Unlock()
		msgs, err := w.PrepareCommit(e)
		if err != nil {
			t.Fatalf("epoch %d: prepare: %v", e, err)
		}
		if _, err := tb.Commit(msgs); err != nil {
			t.Fatalf("epoch %d: commit: %v", e, err)
		}
	}
	<-done
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if streamErr != nil {
		t.Fatal(streamErr)
	}
	if got := mustRead(t, tb); got != m.dump() {
		t.Fatalf("final read\n%s\nwant\n%s", got, m.dump())
	}
	t.Logf("compactions %v, snapshots expired %d, epoch ends checked %d", compactions, expired, endsChecked)
	if compactions[0]+compactions[1] == 0 || expired == 0 || endsChecked == 0 {
		t.Fatal("the race was not exercised")
	}
}
