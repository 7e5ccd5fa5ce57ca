package table_test

import (
	"fmt"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
)

// TestCommitAfterExpiryOfUnseenSnapshots: a commit of several epochs
// publishes their snapshots through the table's snapshot manager, and an
// expiration then removes every snapshot up to two before the latest,
// among them the ones right after the last one the manager looked up as
// latest. The next commit must build on the real latest snapshot, not on
// the one the manager saw last (whose successors are gone, so that the
// put-if-absent of the next id would succeed and publish an expired id
// again, leaving the committed epochs out of the table).
func TestCommitAfterExpiryOfUnseenSnapshots(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), map[string]string{"bucket": "1"})
	w, err := tb.NewWriter("job")
	if err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, tb, w, 1, row(1, 1, "a"))
	commitEpoch(t, tb, w, 2, row(2, 2, "b"))
	before := mustRead(t, tb) // the manager has seen snapshot 2 as latest
	var msgs []commit.Message
	for e := base.Epoch(3); e <= 8; e++ {
		if err := w.Write(e, 0, row(int64(e), int64(e), "c")); err != nil {
			t.Fatal(err)
		}
		m, err := w.PrepareCommit(e)
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, m...)
	}
	ids, err := tb.Commit(msgs)
	if err != nil || fmt.Sprint(ids) != "[3 4 5 6 7 8]" {
		t.Fatalf("batch commit: %v %v", ids, err)
	}
	if before == "" {
		t.Fatal("nothing read")
	}
	res, err := maintain.Expire(tb.Store(), maintain.ExpireOptions{RetainMin: 2, RetainMax: 2})
	if err != nil || fmt.Sprint(res.Expired) != "[1 2 3 4 5 6]" {
		t.Fatalf("expire: %v %v", res.Expired, err)
	}
	ids = commitEpoch(t, tb, w, 9, row(9, 9, "d"))
	if fmt.Sprint(ids) != "[9]" {
		t.Fatalf("the commit after the expiration published snapshots %v, want [9]", ids)
	}
	rows, err := tb.ReadLatest()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 {
		t.Fatalf("latest read after the commit: %d rows, want 9:\n%s", len(rows), dump(rows))
	}
}
