package table_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
)

// hookFS runs before, once, ahead of the put-if-absent of a snapshot file
// after at others (0: the first).
type hookFS struct {
	*fileio.Mem
	before   func()
	at, seen int
}

func (h *hookFS) PutIfAbsent(p string, data []byte) error {
	if f := h.before; f != nil && strings.Contains(p, "/snapshot/snapshot-") {
		if h.seen == h.at {
			h.before = nil
			f()
		}
		h.seen++
	}
	return h.Mem.PutIfAbsent(p, data)
}

// TestCommitRacingExpiryOfItsParent: a commit reads the latest snapshot
// N-1 and, before it publishes snapshot N, other commits publish N, N+1
// and N+2 through another handle and an expiration keeping two snapshots
// runs. Without the commit's lease on N-1 ([commit-lease]) the expiration
// removed every snapshot up to N, the put-if-absent of snapshot N then
// succeeded, as N no longer existed, and the commit reported success
// while its epoch was in no snapshot that the table's latest descends
// from. With it, the expiration keeps N-1 and what follows, the publish
// loses the race, and the commit is planned again on top of N+2, where it
// is refused as a second writer of the bucket (a conflict, retried by the
// job from its checkpoint) or lands.
func TestCommitRacingExpiryOfItsParent(t *testing.T) {
	mem := fileio.NewMem()
	other := newTable(t, mem, map[string]string{"bucket": "1", "write-only": "true"})
	wb, err := other.NewWriter("job-b")
	if err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, other, wb, 1, row(1, 1, "first"))
	hook := &hookFS{Mem: mem}
	tb, err := table.Open(hook, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	wa, err := tb.NewWriter("job-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := wa.Write(9, 0, row(100, 9, "mine")); err != nil {
		t.Fatal(err)
	}
	msgs, err := wa.PrepareCommit(9)
	if err != nil {
		t.Fatal(err)
	}
	hook.before = func() {
		for e := 3; e <= 5; e++ {
			commitEpoch(t, other, wb, epochOf(e), row(int64(e), int64(e), "other"))
		}
		if _, err := maintain.Expire(other.Store(), maintain.ExpireOptions{RetainMin: 2, RetainMax: 2}); err != nil {
			t.Fatal(err)
		}
	}
	ids, err := tb.Commit(msgs)
	if err != nil {
		// On top of snapshot 4 the commit is a second writer of the
		// bucket: refused as a conflict, which the job retries from its
		// checkpoint; nothing is lost.
		if !errors.Is(err, base.ErrConflict) {
			t.Fatalf("commit after the race: %v, want success or a conflict", err)
		}
		t.Logf("commit after the race: %v", err)
		return
	}
	if len(ids) != 1 || ids[0] != 5 {
		t.Fatalf("commit published %v, want snapshot 5 on top of the other handle's 2, 3 and 4", ids)
	}
	fresh, err := table.Open(mem, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	got := mustRead(t, fresh)
	if !strings.Contains(got, "mine") {
		t.Fatalf("the commit reported success but the latest snapshot lacks its row:\n%s", got)
	}
}

// TestCommitsRacingExpirations: over many rounds, a writer commits a
// batch of one to three epochs to one bucket, and while it publishes one
// of its snapshots (the first or a later one), another handle commits one
// to four epochs to the other bucket and expires down to one or two
// snapshots. Every commit must land, and the latest snapshot hold the
// last epoch of both writers ([commit-lease]); without the lease the
// batch's publish landed on expired ids and its epochs went missing.
func TestCommitsRacingExpirations(t *testing.T) {
	mem := fileio.NewMem()
	opts := map[string]string{"bucket": "2", "write-only": "true"}
	other := newTable(t, mem, opts)
	keys := bucketKeys(t, opts)
	wb, err := other.NewWriter("job-b")
	if err != nil {
		t.Fatal(err)
	}
	hook := &hookFS{Mem: mem}
	tb, err := table.Open(hook, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	wa, err := tb.NewWriter("job-a")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	var lastB int64
	for round := range 60 {
		// A's epochs are 100 apart, so B's fit between them.
		start := int64(round+1) * 1000
		n := 1 + rng.IntN(3)
		for i := range n {
			e := start + 100*int64(i+1)
			if err := wa.Write(base.Epoch(e), types.Insert, row(keys[0], e, "a")); err != nil {
				t.Fatal(err)
			}
		}
		lastA := start + 100*int64(n)
		msgs, err := wa.PrepareCommit(base.Epoch(lastA))
		if err != nil {
			t.Fatal(err)
		}
		// B commits at A's j-th publish, between A's epochs j-1 and j.
		j := rng.IntN(n)
		k := 1 + rng.IntN(4)
		retain := 1 + rng.IntN(2)
		hook.at, hook.seen = j, 0
		hook.before = func() {
			for i := range k {
				e := start + 100*int64(j) + int64(i+1)
				commitEpoch(t, other, wb, base.Epoch(e), row(keys[1], e, "b"))
				lastB = e
			}
			if _, err := maintain.Expire(other.Store(), maintain.ExpireOptions{RetainMin: retain, RetainMax: retain}); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := tb.Commit(msgs); err != nil {
			t.Fatalf("round %d: commit of A's %d epochs, B's %d at publish %d: %v", round, n, k, j, err)
		}
		if hook.before != nil {
			t.Fatalf("round %d: A's commit made fewer than %d snapshots", round, j+1)
		}
		fresh, err := table.Open(mem, "wh/db/t")
		if err != nil {
			t.Fatal(err)
		}
		rows, err := fresh.ReadLatest()
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]int64{}
		for _, r := range rows {
			got[r[0].Int64()] = r[1].Int64()
		}
		if got[keys[0]] != lastA || got[keys[1]] != lastB {
			t.Fatalf("round %d (A's %d epochs, B's %d at A's publish %d, retaining %d): latest holds A at %d and B at %d, want %d and %d",
				round, n, k, j, retain, got[keys[0]], got[keys[1]], lastA, lastB)
		}
	}
}
