package table_test

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table"
	"github.com/stratadb/strata/table/commit"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
)

// Crash safety: a failure injected at every mutating file operation of
// write, prepare, commit, dedicated compaction and expiration in turn
// leaves a table whose latest snapshot reads as either the old or the new
// content, never torn; recovery (re-commit of the prepared messages, or a
// rewrite of the epoch when preparing failed) then reaches the new content.
func TestCrashAtEveryWrite(t *testing.T) {
	t.Run("mem", func(t *testing.T) { crashAtEveryWrite(t, func() fileio.FS { return fileio.NewMem() }) })
	t.Run("local", func(t *testing.T) {
		crashAtEveryWrite(t, func() fileio.FS {
			l, err := fileio.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return l
		})
	})
}

func crashAtEveryWrite(t *testing.T, newFS func() fileio.FS) {
	opts := map[string]string{"bucket": "2", "write-buffer-rows": "3", "num-sorted-run.compaction-trigger": "2"}
	epoch3 := []op{
		{types.Insert, row(10, 1, "new")}, {types.UpdateAfter, row(1, 11, "upd")},
		{types.Delete, row(2, 0, "")}, {types.Insert, row(11, 2, "new")},
		{types.UpdateBefore, row(3, 0, "")}, {types.Insert, row(12, 3, "new")},
		{types.Insert, row(13, 4, "new")},
	}
	var oldState, newState string
	var recoveredStates []string
	for n := 1; ; n++ {
		mem := newFS()
		tb := newTable(t, mem, opts)
		w, _ := tb.NewWriter("job")
		commitEpoch(t, tb, w, 1, rowsOf(4, 0)...)
		commitEpoch(t, tb, w, 2, rowsOf(3, 2)...)
		if oldState == "" {
			oldState = mustRead(t, tb)
		}
		faulty := fileio.NewFaulty(mem)
		tf, err := table.Open(faulty, "wh/db/t")
		if err != nil {
			t.Fatal(err)
		}
		wf, err := tf.NewWriter("job")
		if err != nil {
			t.Fatal(err)
		}
		faulty.FailAfter(n)
		var msgs []commit.Message
		err = func() error {
			for _, o := range epoch3 {
				if err := wf.Write(3, o.kind, o.row); err != nil {
					return err
				}
			}
			m, err := wf.PrepareCommit(3)
			if err != nil {
				return err
			}
			msgs = m
			if _, err := tf.Commit(msgs); err != nil {
				return err
			}
			if _, err := tf.Compact("compactor", true); err != nil {
				return err
			}
			_, err = maintain.Expire(tf.Store(), keep2)
			return err
		}()
		tripped := faulty.Tripped()
		if err != nil && !errors.Is(err, fileio.ErrInjected) {
			t.Fatalf("failure %d: unexpected error %v", n, err)
		}
		if err == nil && tripped {
			t.Fatalf("failure %d: injected but no error surfaced (an error was swallowed)", n)
		}
		// A fresh process opens the table.
		fresh, err := table.Open(mem, "wh/db/t")
		if err != nil {
			t.Fatalf("failure %d: open: %v", n, err)
		}
		got := mustRead(t, fresh)
		ce, err := fresh.CommittedEpoch()
		if err != nil {
			t.Fatalf("failure %d: committed epoch: %v", n, err)
		}
		if !tripped {
			newState = got
			if newState == oldState || ce != 3 {
				t.Fatalf("no failure: state did not change (committed epoch %d)", ce)
			}
			t.Logf("%d mutating operations covered", n-1)
			break
		}
		switch {
		case got == oldState && ce == 2:
		case got != oldState && ce == 3:
		default:
			t.Fatalf("failure %d: torn: committed epoch %d, read\n%s", n, ce, got)
		}
		// Recovery.
		if msgs != nil {
			if _, err := fresh.Commit(msgs); err != nil {
				t.Fatalf("failure %d: re-commit: %v", n, err)
			}
		} else {
			w2, err := fresh.NewWriter("job")
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range epoch3 {
				if err := w2.Write(3, o.kind, o.row); err != nil {
					t.Fatalf("failure %d: rewrite: %v", n, err)
				}
			}
			m, err := w2.PrepareCommit(3)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fresh.Commit(m); err != nil {
				t.Fatalf("failure %d: commit after restore: %v", n, err)
			}
		}
		recovered := mustRead(t, fresh)
		if ce, _ := fresh.CommittedEpoch(); ce != base.Epoch(3) {
			t.Fatalf("failure %d: committed epoch %d after recovery", n, ce)
		}
		recoveredStates = append(recoveredStates, recovered)
		if _, err := fresh.OrphanFiles(0, false); err != nil {
			t.Fatal(err)
		}
		if again := mustRead(t, fresh); again != recovered {
			t.Fatalf("failure %d: orphan cleanup changed the table", n)
		}
		if n > 500 {
			t.Fatal("no end to injected failures")
		}
	}
	for i, r := range recoveredStates {
		if r != newState {
			t.Fatalf("failure %d: recovered\n%s\nwant\n%s", i+1, r, newState)
		}
	}
}
