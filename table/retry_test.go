package table_test

import (
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/snapshot"
)

// racingFS loses the next `steal` snapshot publications: just before each,
// another committer publishes a COMPACT snapshot with the same content at
// that id.
type racingFS struct {
	fileio.FS
	mu    sync.Mutex
	steal int
	sm    *snapshot.Manager
}

func (r *racingFS) PutIfAbsent(p string, data []byte) error {
	r.mu.Lock()
	if r.steal > 0 && strings.Contains(p, "/snapshot/snapshot-") {
		r.steal--
		latest, err := r.sm.Latest()
		if err != nil {
			r.mu.Unlock()
			return err
		}
		other := *latest
		other.ID++
		other.CommitUser, other.CommitKind = "other", snapshot.Compact
		// Same lists, so the same live files: the table reads the same.
		if err := r.sm.Publish(&other); err != nil {
			r.mu.Unlock()
			return err
		}
	}
	r.mu.Unlock()
	return r.FS.PutIfAbsent(p, data)
}

func TestCommitRetriesLostPublishRaces(t *testing.T) {
	mem := fileio.NewMem()
	tb := newTable(t, mem, map[string]string{"commit.max-retries": "3"})
	w, _ := tb.NewWriter("job")
	commitEpoch(t, tb, w, 1, row(1, 1, "a"))
	want := mustRead(t, tb)

	rfs := &racingFS{FS: mem, sm: snapshot.NewManager(mem, "wh/db/t")}
	tr, err := table.Open(rfs, "wh/db/t")
	if err != nil {
		t.Fatal(err)
	}
	// Three lost races: the fourth attempt wins.
	rfs.steal = 3
	w2, _ := tr.NewWriter("job")
	ids := commitEpoch(t, tr, w2, 2, row(2, 2, "b"))
	if len(ids) != 1 || ids[0] != 5 {
		t.Fatalf("after 3 lost races: snapshots %v, want [5]", ids)
	}
	if got := mustRead(t, tr); got != want+"\n(2, 2, b)" {
		t.Fatalf("read %q", got)
	}
	// Four lost races exceed the bound: a conflict, nothing published.
	rfs.steal = 4
	if err := w2.Write(3, 0, row(3, 3, "c")); err != nil {
		t.Fatal(err)
	}
	msgs, _ := w2.PrepareCommit(3)
	if _, err := tr.Commit(msgs); !errors.Is(err, base.ErrConflict) {
		t.Fatalf("after 4 lost races: %v", err)
	}
	latest, _ := tr.Latest()
	if latest.CommitUser != "other" || latest.ID != 9 {
		t.Fatalf("latest %d by %s", latest.ID, latest.CommitUser)
	}
	// The re-commit (as after a restore) succeeds once the races stop.
	if ids, err := tr.Commit(msgs); err != nil || len(ids) != 1 {
		t.Fatalf("re-commit: %v %v", ids, err)
	}
	if ce, _ := tr.CommittedEpoch(); ce != 3 {
		t.Fatalf("committed epoch %d", ce)
	}
}
