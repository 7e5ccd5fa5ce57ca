package table_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
)

// existsHookFS runs hook once, right after the n-th Exists of path
// (counting from 1) returned true: between a reader's last look at a
// snapshot and what it does next.
type existsHookFS struct {
	*fileio.Mem
	mu   sync.Mutex
	path string
	n    int
	hook func()
}

func (h *existsHookFS) Exists(p string) (bool, error) {
	ok, err := h.Mem.Exists(p)
	var f func()
	h.mu.Lock()
	if h.hook != nil && ok && err == nil && p == h.path {
		if h.n--; h.n == 0 {
			f, h.hook = h.hook, nil
		}
	}
	h.mu.Unlock()
	if f != nil {
		f()
	}
	return ok, err
}

// fired reports whether the hook ran.
func (h *existsHookFS) fired() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.hook == nil
}

// bucketKeys returns a key of bucket 0 and one of bucket 1 of a table
// with two buckets.
func bucketKeys(t *testing.T, opts map[string]string) [2]int64 {
	t.Helper()
	st := newTable(t, fileio.NewMem(), opts)
	var keys [2]int64
	found := map[int32]bool{}
	for k := int64(0); len(found) < 2; k++ {
		w, err := st.NewWriter(fmt.Sprintf("probe-%d", k))
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(1, types.Insert, row(k, 0, "probe")); err != nil {
			t.Fatal(err)
		}
		msgs, err := w.PrepareCommit(1)
		if err != nil {
			t.Fatal(err)
		}
		if b := msgs[0].Buckets[0].Bucket; !found[b] {
			keys[b], found[b] = k, true
		}
	}
	return keys
}

// dropTree deletes every file under dir, as DROP TABLE does.
func dropTree(t *testing.T, fs fileio.FS, dir string) {
	t.Helper()
	files, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if err := fs.Delete(dir + "/" + f.Name); err != nil {
			t.Fatal(err)
		}
	}
	dirs, err := fs.ListDirs(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		dropTree(t, fs, dir+"/"+d)
	}
}

// raceCommitWithExpiry creates the table at wh/db/t on mem, in which
// another handle commits three epochs to bucket 1 (snapshots 1 to 3).
// A writer of bucket 0 then commits epoch 100 through a handle whose
// look at snapshot 3 (the n-th since the commit began) is followed, before
// the commit goes on, by three more commits of the other handle and an
// expiration keeping two snapshots, which removes snapshots 1 to 4. It
// returns the commit's result, the rows of the latest snapshot, and
// whether the commit looked at snapshot 3 n times.
func raceCommitWithExpiry(t *testing.T, mem *fileio.Mem, n int) ([]base.SnapshotID, error, string, bool) {
	t.Helper()
	opts := map[string]string{"bucket": "2", "write-only": "true"}
	keys := bucketKeys(t, opts)
	other := newTable(t, mem, opts)
	wb, err := other.NewWriter("job-b")
	if err != nil {
		t.Fatal(err)
	}
	for e := int64(1); e <= 3; e++ {
		commitEpoch(t, other, wb, base.Epoch(e), row(keys[1], e, "other"))
	}
	hook := &existsHookFS{Mem: mem}
	tb, err := table.Open(hook, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	wa, err := tb.NewWriter("job-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := wa.Write(100, types.Insert, row(keys[0], 100, "mine")); err != nil {
		t.Fatal(err)
	}
	msgs, err := wa.PrepareCommit(100)
	if err != nil {
		t.Fatal(err)
	}
	hook.mu.Lock()
	hook.path, hook.n = "wh/db/t/snapshot/snapshot-3", n
	hook.hook = func() {
		for e := int64(4); e <= 6; e++ {
			commitEpoch(t, other, wb, base.Epoch(e), row(keys[1], e, "other"))
		}
		res, err := maintain.Expire(other.Store(), maintain.ExpireOptions{RetainMin: 2, RetainMax: 2})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("expired %v while the commit was between reading snapshot 3 and leasing it", res.Expired)
	}
	hook.mu.Unlock()
	ids, cerr := tb.Commit(msgs)
	fresh, err := table.Open(mem, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	return ids, cerr, mustRead(t, fresh), hook.fired()
}

// TestCommitLeaseAfterDropAndCreate: a table dropped and created again
// at the same path in one process must be as safe from the lost-epoch
// race of [commit-lease] as a table that never had an earlier life. The
// first life's expiration left the registry's fence at 11, above every
// snapshot of the second life. An expiration of the second life runs
// after the committer's first or second look at snapshot 3, the latest,
// whichever is its last before the lease. Leasing a parent below the
// fence, then taking the lease when a second read finds the same latest
// snapshot, let that expiration go unnoticed: the commit built on the
// expired snapshot 3, published snapshot 4 over the expired id with
// put-if-absent, reported success, and its row was not in the latest
// snapshot.
func TestCommitLeaseAfterDropAndCreate(t *testing.T) {
	raced := 0
	for n := 1; n <= 2; n++ {
		mem := fileio.NewMem()
		first := newTable(t, mem, map[string]string{"bucket": "2", "write-only": "true"})
		w, err := first.NewWriter("job-old")
		if err != nil {
			t.Fatal(err)
		}
		for e := int64(1); e <= 12; e++ {
			commitEpoch(t, first, w, base.Epoch(e), row(e, e, "old life"))
		}
		res, err := maintain.Expire(first.Store(), maintain.ExpireOptions{RetainMin: 2, RetainMax: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Expired) != 10 {
			t.Fatalf("first life: expired %v, want snapshots 1 to 10", res.Expired)
		}
		dropTree(t, mem, "wh/db/t")
		if _, err := table.Open(mem, "wh/db/t"); !errors.Is(err, base.ErrNotFound) {
			t.Fatalf("open after the drop: %v, want not found", err)
		}
		ids, cerr, got, fired := raceCommitWithExpiry(t, mem, n)
		if !fired {
			continue // the commit leased after fewer looks at snapshot 3
		}
		raced++
		if cerr != nil {
			if !errors.Is(cerr, base.ErrConflict) {
				t.Fatalf("expiration after look %d: commit: %v, want success or a conflict", n, cerr)
			}
			continue
		}
		if !strings.Contains(got, "mine") {
			t.Fatalf("second life, expiration after look %d at snapshot 3: the commit reported success (snapshots %v) but the latest snapshot lacks its row:\n%s", n, ids, got)
		}
	}
	if raced == 0 {
		t.Fatal("the commit never looked at snapshot 3")
	}
}

// TestCommitLeaseRaceWithoutEarlierLife is the interleaving of
// TestCommitLeaseAfterDropAndCreate on a table with no earlier life, at
// the committer's first read of snapshot 3: the expiration's fence makes
// the lease stale and the commit builds on the new latest snapshot.
func TestCommitLeaseRaceWithoutEarlierLife(t *testing.T) {
	ids, cerr, got, fired := raceCommitWithExpiry(t, fileio.NewMem(), 1)
	if !fired {
		t.Fatal("the commit never looked at snapshot 3")
	}
	if cerr != nil {
		t.Fatalf("commit: %v", cerr)
	}
	if len(ids) != 1 || ids[0] != 7 || !strings.Contains(got, "mine") {
		t.Fatalf("commit published %v, want snapshot 7 holding its row; latest:\n%s", ids, got)
	}
}
