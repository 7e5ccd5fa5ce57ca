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
//
// The "unsynced names lost" runs also drop, at the crash, every name created
// since the last fsync of its directory (fileio.Faulty.LoseUnsynced), as a
// crash of the machine may: the durability steps of prepare and commit
// (stage the files, sync their directory, then publish what names them;
// publish snapshots one at a time, each name durable before the next) must
// still leave either the old or the new snapshot, never one that names a
// missing file, and a run that completes must leave no name undurable.
func TestCrashAtEveryWrite(t *testing.T) {
	local := func(t *testing.T) func() fileio.FS {
		return func() fileio.FS {
			l, err := fileio.NewLocal(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			return l
		}
	}
	t.Run("mem", func(t *testing.T) { crashAtEveryWrite(t, func() fileio.FS { return fileio.NewMem() }, false) })
	t.Run("local", func(t *testing.T) { crashAtEveryWrite(t, local(t), false) })
	t.Run("mem, unsynced names lost", func(t *testing.T) {
		crashAtEveryWrite(t, func() fileio.FS { return fileio.NewMem() }, true)
	})
	t.Run("local, unsynced names lost", func(t *testing.T) { crashAtEveryWrite(t, local(t), true) })
}

func crashAtEveryWrite(t *testing.T, newFS func() fileio.FS, loseUnsynced bool) {
	opts := map[string]string{"bucket": "2", "write-buffer-rows": "3", "num-sorted-run.compaction-trigger": "2"}
	epoch3 := []op{
		{types.Insert, row(10, 1, "new")}, {types.UpdateAfter, row(1, 11, "upd")},
		{types.Delete, row(2, 0, "")}, {types.Insert, row(11, 2, "new")},
		{types.UpdateBefore, row(3, 0, "")}, {types.Insert, row(12, 3, "new")},
		{types.Insert, row(13, 4, "new")},
	}
	var oldState, newState string
	var recoveredStates []string
	lostAny := false // some crash lost a name (the model was exercised)
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
		if loseUnsynced {
			lost, err := faulty.LoseUnsynced(false)
			if err != nil {
				t.Fatal(err)
			}
			if !tripped && len(lost) > 0 {
				t.Fatalf("a completed run left names whose directory was never synced: %v", lost)
			}
			if tripped && len(lost) > 0 {
				lostAny = true
			}
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
	if loseUnsynced && !lostAny {
		t.Fatal("no crash lost an unsynced name: the run did not exercise the model")
	}
	for i, r := range recoveredStates {
		if r != newState {
			t.Fatalf("failure %d: recovered\n%s\nwant\n%s", i+1, r, newState)
		}
	}
}

// A commit of several epochs publishes one snapshot per epoch. A crash at
// any mutating operation of it, with the names not yet made durable lost
// (all of them, or all but the newest of each directory), leaves the
// snapshots of a prefix of the epochs: ids without a gap, each snapshot
// readable, the table at the old state or after one of the epochs; the
// re-commit then reaches the last epoch.
func TestCrashInMultiEpochCommit(t *testing.T) {
	opts := map[string]string{"bucket": "2"}
	for _, keepNewest := range []bool{false, true} {
		var states []string // after epochs 2, 3, 4, 5
		for n := 1; ; n++ {
			mem := fileio.NewMem()
			tb := newTable(t, mem, opts)
			w, _ := tb.NewWriter("job")
			commitEpoch(t, tb, w, 1, rowsOf(4, 0)...)
			commitEpoch(t, tb, w, 2, rowsOf(3, 2)...)
			if states == nil {
				states = []string{mustRead(t, tb)}
			}
			for e := base.Epoch(3); e <= 5; e++ {
				if err := w.Write(e, types.Insert, row(int64(10*e), int64(e), "new")); err != nil {
					t.Fatal(err)
				}
				if err := w.Write(e, types.UpdateAfter, row(int64(e-2), int64(e), "upd")); err != nil {
					t.Fatal(err)
				}
			}
			msgs, err := w.PrepareCommit(5)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != 3 {
				t.Fatalf("prepared %d messages, want 3", len(msgs))
			}
			if len(states) == 1 {
				// The states after each epoch, committed one at a time on a copy.
				cp := fileio.NewMem()
				copyAll(t, mem, cp)
				ref, err := table.Open(cp, "wh/db/t")
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range msgs {
					if _, err := ref.Commit([]commit.Message{m}); err != nil {
						t.Fatal(err)
					}
					states = append(states, mustRead(t, ref))
				}
			}
			faulty := fileio.NewFaulty(mem)
			tf, err := table.Open(faulty, "wh/db/t")
			if err != nil {
				t.Fatal(err)
			}
			faulty.FailAfter(n)
			ids, err := tf.Commit(msgs)
			tripped := faulty.Tripped()
			if err != nil && !errors.Is(err, fileio.ErrInjected) {
				t.Fatalf("failure %d: unexpected error %v", n, err)
			}
			if _, lerr := faulty.LoseUnsynced(keepNewest); lerr != nil {
				t.Fatal(lerr)
			}
			fresh, err := table.Open(mem, "wh/db/t")
			if err != nil {
				t.Fatal(err)
			}
			snaps, err := fresh.Store().Snapshots.IDs()
			if err != nil {
				t.Fatal(err)
			}
			for i, id := range snaps {
				if id != base.SnapshotID(i+1) {
					t.Fatalf("failure %d (keep newest %v): snapshot ids %v have a gap", n, keepNewest, snaps)
				}
				if _, err := fresh.ReadSnapshot(id); err != nil {
					t.Fatalf("failure %d (keep newest %v): snapshot %d: %v", n, keepNewest, id, err)
				}
			}
			got := mustRead(t, fresh)
			done := len(snaps) - 2 // snapshots of epochs 1 and 2 were there
			if done < 0 || done > 3 || got != states[done] {
				t.Fatalf("failure %d (keep newest %v): %d of 3 snapshots published (returned %v), read\n%s\nwant\n%s", n, keepNewest, done, ids, got, states[max(0, min(done, 3))])
			}
			if !tripped {
				if done != 3 {
					t.Fatalf("no failure: %d of 3 snapshots", done)
				}
				t.Logf("keep newest %v: %d mutating operations covered", keepNewest, n-1)
				break
			}
			if _, err := fresh.Commit(msgs); err != nil {
				t.Fatalf("failure %d: re-commit: %v", n, err)
			}
			if got := mustRead(t, fresh); got != states[3] {
				t.Fatalf("failure %d: after re-commit read\n%s\nwant\n%s", n, got, states[3])
			}
			if ce, _ := fresh.CommittedEpoch(); ce != 5 {
				t.Fatalf("failure %d: committed epoch %d after re-commit", n, ce)
			}
			if n > 200 {
				t.Fatal("no end to injected failures")
			}
		}
	}
}
