package table_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/manifest"
	"github.com/stratadb/strata/table/mergetree"
	"github.com/stratadb/strata/table/write"
)

// [async-compaction]: a writer that compacts in the background reads the
// same as one that compacts in its prepare, its compactions reach the
// table in the messages of later epochs, and a bucket never holds more
// sorted runs than the stop trigger allows (trigger + 3, plus the epoch's
// own file) at a commit.
func TestAsyncCompaction(t *testing.T) {
	opts := map[string]string{"bucket": "1", "num-sorted-run.compaction-trigger": "1"}
	syncTb := newTable(t, fileio.NewMem(), opts)
	asyncTb := newTable(t, fileio.NewMem(), opts)
	sw, _ := syncTb.NewWriter("job")
	aw, _ := asyncTb.NewWriter("job")
	aw.SetAsyncCompaction(true)
	compacted := 0
	for e := base.Epoch(1); e <= 30; e++ {
		rows := rowsOf(5, int64(e%7)*3) // overlapping keys: upserts
		commitEpoch(t, syncTb, sw, e, rows...)
		for _, r := range rows {
			if err := aw.Write(e, types.Insert, r); err != nil {
				t.Fatal(err)
			}
		}
		msgs, err := aw.PrepareCommit(e)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			for _, b := range m.Buckets {
				if len(b.CompactBefore) > 0 {
					compacted++
					for _, f := range b.NewFiles {
						for _, g := range b.CompactBefore {
							if f.Name == g.Name {
								t.Fatalf("epoch %d: a background compaction merged a file of its own epoch", e)
							}
						}
					}
				}
			}
		}
		if _, err := asyncTb.Commit(msgs); err != nil {
			t.Fatalf("epoch %d: %v", e, err)
		}
		if got, want := mustRead(t, asyncTb), mustRead(t, syncTb); got != want {
			t.Fatalf("epoch %d: async compaction reads\n%s\nwant\n%s", e, got, want)
		}
		latest, _ := asyncTb.Latest()
		live, err := asyncTb.Store().LiveFiles(latest)
		if err != nil {
			t.Fatal(err)
		}
		var files []manifest.DataFile
		for _, l := range live {
			files = append(files, l.File)
		}
		runs := mergetree.Runs(files)
		if len(runs) > 1+3+1 {
			t.Fatalf("epoch %d: %d sorted runs", e, len(runs))
		}
	}
	if compacted == 0 {
		t.Fatal("no background compaction reached a message")
	}
}

// TestBackgroundCompactionsBounded checks that background compactions of
// many tables written at once never rewrite more at once than the
// process-wide bound (write.BackgroundCompactions), and that they still
// all finish: every table reads what was written.
func TestBackgroundCompactionsBounded(t *testing.T) {
	_, _, bound, _ := write.BackgroundCompactions()
	tables := 2*bound + 2
	var wg sync.WaitGroup
	errs := make(chan error, tables)
	got := make([]*table.Table, tables)
	for i := range tables {
		tb := newTable(t, fileio.NewMem(), map[string]string{"bucket": "1", "num-sorted-run.compaction-trigger": "1"})
		got[i] = tb
		wg.Add(1)
		go func() {
			defer wg.Done()
			w, err := tb.NewWriter("job")
			if err != nil {
				errs <- err
				return
			}
			w.SetAsyncCompaction(true)
			for e := base.Epoch(1); e <= 40; e++ {
				for _, r := range rowsOf(200, int64(e%5)*100) {
					if err := w.Write(e, types.Insert, r); err != nil {
						errs <- err
						return
					}
				}
				msgs, err := w.PrepareCommit(e)
				if err == nil {
					_, err = tb.Commit(msgs)
				}
				if err != nil {
					errs <- fmt.Errorf("table %d, epoch %d: %w", i, e, err)
					return
				}
			}
			w.WaitCompaction()
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ref := newTable(t, fileio.NewMem(), map[string]string{"bucket": "1", "write-only": "true"})
	rw, _ := ref.NewWriter("job")
	for e := base.Epoch(1); e <= 40; e++ {
		commitEpoch(t, ref, rw, e, rowsOf(200, int64(e%5)*100)...)
	}
	want := mustRead(t, ref)
	for i := range tables {
		if g := mustRead(t, got[i]); g != want {
			t.Fatalf("table %d reads\n%s\nwant\n%s", i, g, want)
		}
	}
	running, peak, _, hurried := write.BackgroundCompactions()
	if peak < 1 || peak > bound || running != 0 {
		t.Fatalf("background compactions: peak %d at once (bound %d), %d still running", peak, bound, running)
	}
	t.Logf("%d tables: at most %d compactions at once in slots (bound %d), %d started without one at the stop trigger or at the end", tables, peak, bound, hurried)
}
