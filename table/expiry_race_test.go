package table_test

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
)

// hookFS runs before, once, ahead of the first put-if-absent of a
// snapshot file.
type hookFS struct {
	*fileio.Mem
	before func()
}

func (h *hookFS) PutIfAbsent(p string, data []byte) error {
	if f := h.before; f != nil && strings.Contains(p, "/snapshot/snapshot-") {
		h.before = nil
		f()
	}
	return h.Mem.PutIfAbsent(p, data)
}

// TestCommitRacingExpiryOfItsParent: a commit reads the latest snapshot
// N-1 and, before it publishes snapshot N, other commits publish N, N+1
// and N+2 and an expiration keeping two snapshots removes every one up to
// N. The put-if-absent of snapshot N then succeeds, as N no longer
// exists, and the commit reports success while its epoch is in no
// snapshot that the table's latest descends from.
func TestCommitRacingExpiryOfItsParent(t *testing.T) {
	t.Skip("known race: publishing snapshot N with put-if-absent cannot tell an id not yet used from an id that expired; a commit whose parent is expired (with all it was followed by, up to two before the latest) between its read of the latest snapshot and its publish lands on an expired id and loses its epoch. Needs a check after the publish (the EARLIEST fence, raised before any snapshot file is deleted, against the published id) or a retention of at least the snapshots that may be committed during one commit")
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
	if err := wa.Write(2, 0, row(100, 2, "mine")); err != nil {
		t.Fatal(err)
	}
	msgs, err := wa.PrepareCommit(2)
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
	if _, err := tb.Commit(msgs); err != nil {
		return // refusing the commit is right too: it is retried
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
