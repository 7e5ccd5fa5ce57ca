package table_test

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
)

// keysByBucket returns n keys of each bucket of a table with two
// buckets.
func keysByBucket(t *testing.T, opts map[string]string, n int) [2][]int64 {
	t.Helper()
	st := newTable(t, fileio.NewMem(), opts)
	w, err := st.NewWriter("probe")
	if err != nil {
		t.Fatal(err)
	}
	var keys [2][]int64
	for k := int64(1); len(keys[0]) < n || len(keys[1]) < n; k++ {
		if err := w.Write(base.Epoch(k), types.Insert, row(k, 0, "probe")); err != nil {
			t.Fatal(err)
		}
		msgs, err := w.PrepareCommit(base.Epoch(k))
		if err != nil {
			t.Fatal(err)
		}
		if b := msgs[0].Buckets[0].Bucket; len(keys[b]) < n {
			keys[b] = append(keys[b], k)
		}
	}
	return keys
}

// TestCommitLeasesUnderConcurrentExpiry: a writer commits an epoch at a
// time, each epoch a key of its own, while a compactor commits
// compactions through a handle of its own (overtaking the writer's
// commits) and a third handle expires down to one snapshot, each in a
// loop. Every epoch a commit reported must be in the latest snapshot
// ([commit-lease]), and the expirations must go on.
func TestCommitLeasesUnderConcurrentExpiry(t *testing.T) {
	// At least epochs commits, and on until a compaction and an
	// expiration have both gone through beside them (a busy machine may
	// not schedule the compactor between the first commits, or let its
	// compactions lose every race), at most maxEpochs.
	const epochs, maxEpochs = 200, 2000
	opts := map[string]string{"bucket": "2", "write-only": "true", "commit.max-retries": "1000"}
	keys := keysByBucket(t, opts, maxEpochs/2)
	var compacted, expired atomic.Int64
	committed := 0
	mem := fileio.NewMem()
	newTable(t, mem, opts)
	var wg sync.WaitGroup
	var done atomic.Bool
	errs := make(chan error, 3)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer done.Store(true)
		tb, err := table.Open(mem, "wh/db/t")
		if err != nil {
			errs <- err
			return
		}
		w, err := tb.NewWriter("job")
		if err != nil {
			errs <- err
			return
		}
		for i := 0; i < maxEpochs && (i < epochs || compacted.Load() == 0 || expired.Load() == 0); i++ {
			e := base.Epoch(i + 1)
			if err := w.Write(e, types.Insert, row(keys[i%2][i/2], int64(e), "v")); err != nil {
				errs <- err
				return
			}
			msgs, err := w.PrepareCommit(e)
			if err != nil {
				errs <- err
				return
			}
			if _, err := tb.Commit(msgs); err != nil {
				errs <- fmt.Errorf("epoch %d: %w", e, err)
				return
			}
			committed = i + 1
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		tb, err := table.Open(mem, "wh/db/t")
		if err != nil {
			errs <- err
			return
		}
		for !done.Load() {
			id, err := tb.Compact("compactor", true)
			if err != nil && !errors.Is(err, base.ErrConflict) {
				errs <- fmt.Errorf("compact: %w", err)
				return
			}
			if id != 0 {
				compacted.Add(1)
			}
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		ex, err := table.Open(mem, "wh/db/t")
		if err != nil {
			errs <- err
			return
		}
		for !done.Load() {
			res, err := maintain.Expire(ex.Store(), maintain.ExpireOptions{RetainMin: 1, RetainMax: 1})
			if err != nil && !errors.Is(err, base.ErrNotFound) {
				errs <- fmt.Errorf("expire: %w", err)
				return
			}
			expired.Add(int64(len(res.Expired)))
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	fresh, err := table.Open(mem, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := fresh.ReadLatest()
	if err != nil {
		t.Fatal(err)
	}
	got := map[int64]bool{}
	for _, r := range rows {
		got[r[0].Int64()] = true
	}
	var missing []int64
	for i := range committed {
		if k := keys[i%2][i/2]; !got[k] {
			missing = append(missing, k)
		}
	}
	t.Logf("%d compactions and %d snapshots expired beside %d commits", compacted.Load(), expired.Load(), committed)
	if len(missing) > 0 {
		t.Fatalf("%d committed keys missing from the latest snapshot: %v", len(missing), missing)
	}
	if expired.Load() == 0 || compacted.Load() == 0 {
		t.Fatalf("no compaction, or no expiration, beside %d commits", committed)
	}
}
