package table_test

import (
	"errors"
	"math/rand"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/compact"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/schema"
)

// A dedicated compaction prepared on snapshot S and committed after a
// writer's commit keeps the writer's rows (compact
// [compaction-loses-no-commit]).
func TestCompactionAfterConcurrentCommitKeepsRows(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), map[string]string{"write-only": "true", "bucket": "2"})
	w, _ := tb.NewWriter("job")
	commitEpoch(t, tb, w, 1, rowsOf(6, 0)...)
	commitEpoch(t, tb, w, 2, row(1, 100, "two"), row(7, 7, "seven"))
	msg, err := compact.Table(tb.Store(), "compactor", true)
	if err != nil || msg.Empty() {
		t.Fatalf("compaction: %v empty=%v", err, msg.Empty())
	}
	commitEpoch(t, tb, w, 3, row(1, 300, "three"), row(8, 8, "eight"))
	before := mustRead(t, tb)
	if _, err := tb.Commit([]commit.Message{msg}); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, tb); got != before {
		t.Fatalf("after compaction\n%s\nwant\n%s", got, before)
	}
	sn, _ := tb.Latest()
	if sn.CommitKind != "COMPACT" || sn.Epoch != 3 {
		t.Fatalf("compaction snapshot %+v", sn)
	}
}

// A compaction whose inputs another compaction replaced meanwhile fails
// with a conflict and changes nothing.
func TestCompactionConflictChangesNothing(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), map[string]string{"write-only": "true"})
	w, _ := tb.NewWriter("job")
	commitEpoch(t, tb, w, 1, rowsOf(3, 0)...)
	commitEpoch(t, tb, w, 2, row(1, 5, "x"))
	msg, err := compact.Table(tb.Store(), "compactor-a", true)
	if err != nil || msg.Empty() {
		t.Fatalf("compaction: %v", err)
	}
	if id, err := tb.Compact("compactor-b", true); err != nil || id == 0 {
		t.Fatalf("first compaction: %d %v", id, err)
	}
	commitEpoch(t, tb, w, 3, row(2, 6, "y"))
	before := mustRead(t, tb)
	if _, err := tb.Commit([]commit.Message{msg}); !errors.Is(err, base.ErrConflict) {
		t.Fatalf("stale compaction: %v", err)
	}
	if got := mustRead(t, tb); got != before {
		t.Fatalf("table changed by a failed compaction")
	}
}

// A writer committing epochs while a compactor loops: the writer never
// fails, the compactor only fails with conflicts, and the final read
// equals the model.
func TestCompactionRacingCommits(t *testing.T) {
	tb := newTable(t, fileio.NewMem(), map[string]string{"write-only": "true", "bucket": "3", "write-buffer-rows": "4"})
	m := &model{engine: schema.Deduplicate, rows: map[int64]types.Row{}}
	w, _ := tb.NewWriter("job")
	r := rand.New(rand.NewSource(7))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var compactErr error
	compactions := 0
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			id, err := tb.Compact("compactor", compactions%2 == 0)
			if err != nil && !errors.Is(err, base.ErrConflict) {
				compactErr = err
				return
			}
			if err == nil && id != 0 {
				compactions++
			}
		}
	}()
	for e := base.Epoch(1); e <= 60; e++ {
		for range 6 {
			o := randomOp(r, schema.Deduplicate, 20)
			if err := w.Write(e, o.kind, o.row); err != nil {
				t.Fatal(err)
			}
			m.apply(o)
		}
		msgs, err := w.PrepareCommit(e)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Commit(msgs); err != nil {
			t.Fatalf("writer commit of epoch %d: %v", e, err)
		}
	}
	close(stop)
	wg.Wait()
	if compactErr != nil {
		t.Fatal(compactErr)
	}
	if got := mustRead(t, tb); got != m.dump() {
		t.Fatalf("after racing compactions (%d):\n%s\nwant\n%s", compactions, got, m.dump())
	}
	t.Logf("%d compactions committed", compactions)
	if compactions == 0 {
		t.Fatal("no compaction was committed: the race was not exercised")
	}
}
