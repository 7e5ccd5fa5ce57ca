package table_test

import (
	"strings"
	"testing"

	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
)

// panicFS panics at the put-if-absent of a snapshot file while armed.
type panicFS struct {
	*fileio.Mem
	armed bool
}

func (p *panicFS) PutIfAbsent(path string, data []byte) error {
	if p.armed && strings.Contains(path, "/snapshot/snapshot-") {
		panic("publish cut short")
	}
	return p.Mem.PutIfAbsent(path, data)
}

// TestCommitPanicReleasesLease: a commit that panics while it publishes
// gives its lease back ([commit-lease]): an expiration afterwards keeps
// only what its options say, not the panicked commit's parent.
func TestCommitPanicReleasesLease(t *testing.T) {
	mem := fileio.NewMem()
	other := newTable(t, mem, map[string]string{"bucket": "1", "write-only": "true"})
	wb, err := other.NewWriter("job-b")
	if err != nil {
		t.Fatal(err)
	}
	commitEpoch(t, other, wb, 1, row(1, 1, "first"))
	pfs := &panicFS{Mem: mem}
	tb, err := table.Open(pfs, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	wa, err := tb.NewWriter("job-a")
	if err != nil {
		t.Fatal(err)
	}
	if err := wa.Write(2, 0, row(2, 2, "mine")); err != nil {
		t.Fatal(err)
	}
	msgs, err := wa.PrepareCommit(2)
	if err != nil {
		t.Fatal(err)
	}
	pfs.armed = true
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Fatal("the commit did not panic")
			}
		}()
		_, _ = tb.Commit(msgs)
	}()
	for e := 3; e <= 6; e++ {
		commitEpoch(t, other, wb, epochOf(e), row(int64(e), int64(e), "other"))
	}
	res, err := maintain.Expire(other.Store(), maintain.ExpireOptions{RetainMin: 1, RetainMax: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Expired) != 4 || res.Expired[0] != 1 || res.Expired[3] != 4 {
		t.Fatalf("expired %v after the panicked commit on snapshot 1, want 1 to 4", res.Expired)
	}
}
