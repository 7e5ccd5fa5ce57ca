package table_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/table/fileio"
	"github.com/stratadb/strata/table/maintain"
	"github.com/stratadb/strata/table/scan"
)

var keep2 = maintain.ExpireOptions{RetainMin: 2, RetainMax: 2}

func TestExpireKeepsTagsAndConsumers(t *testing.T) {
	fs := fileio.NewMem()
	tb := newTable(t, fs, map[string]string{"num-sorted-run.compaction-trigger": "2"})
	w, _ := tb.NewWriter("job")
	want := map[base.SnapshotID]string{}
	for e := base.Epoch(1); e <= 10; e++ {
		ids := commitEpoch(t, tb, w, e, row(int64(e%4), int64(e), "x"))
		want[ids[0]] = mustRead(t, tb)
	}
	if err := tb.CreateTag("t3", 3); err != nil {
		t.Fatal(err)
	}
	if err := tb.CreateTag("t3", 4); !errors.Is(err, base.ErrConflict) {
		t.Fatalf("duplicate tag: %v", err)
	}
	st := tb.Store()
	if err := st.Snapshots.SetConsumer("reader", 6); err != nil {
		t.Fatal(err)
	}
	res, err := maintain.Expire(st, keep2)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(res.Expired) != "[1 2 3 4 5]" {
		t.Fatalf("expired %v (consumer at 6)", res.Expired)
	}
	for id := base.SnapshotID(6); id <= 10; id++ {
		rows, err := tb.ReadSnapshot(id)
		if err != nil || dump(rows) != want[id] {
			t.Fatalf("snapshot %d after expiry: %v", id, err)
		}
	}
	st.Snapshots.DeleteConsumer("reader")
	res, err = maintain.Expire(st, keep2)
	if err != nil || fmt.Sprint(res.Expired) != "[6 7 8]" || res.DeletedFiles == 0 {
		t.Fatalf("second expiry %v %v", res, err)
	}
	if _, err := tb.ReadSnapshot(8); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("expired snapshot readable: %v", err)
	}
	// The tag still reads, through files expiration had to keep.
	tag, _ := st.Snapshots.Tag("t3")
	rows, err := scan.Read(st, tag)
	if err != nil || dump(rows) != want[3] {
		t.Fatalf("tag t3: %v %v", dump(rows), err)
	}
	// Nothing referenced is an orphan; a stray file is.
	orphans, err := tb.OrphanFiles(0, true)
	if err != nil {
		t.Fatal(err)
	}
	fs.WriteFile("wh/db/t/bucket-0/data-stray.parquet", []byte("x"))
	fs.WriteFile("wh/db/t/snapshot/.snapshot-99.1-1.tmp", []byte("x"))
	time.Sleep(2 * time.Millisecond)
	orphans, err = tb.OrphanFiles(time.Millisecond, false)
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(orphans, ",")
	if !strings.Contains(joined, "data-stray.parquet") || !strings.Contains(joined, ".snapshot-99.1-1.tmp") {
		t.Fatalf("orphans %v", orphans)
	}
	// After deleting orphans every snapshot and tag still reads.
	for id := base.SnapshotID(9); id <= 10; id++ {
		if rows, err := tb.ReadSnapshot(id); err != nil || dump(rows) != want[id] {
			t.Fatalf("snapshot %d after orphan cleanup: %v", id, err)
		}
	}
	if rows, err := scan.Read(st, tag); err != nil || dump(rows) != want[3] {
		t.Fatalf("tag after orphan cleanup: %v", err)
	}
	// Rollback to the tag.
	id, err := tb.RollbackToTag("t3", "admin")
	if err != nil {
		t.Fatal(err)
	}
	if id != 11 || mustRead(t, tb) != want[3] {
		t.Fatalf("rollback: id %d read %q", id, mustRead(t, tb))
	}
	// The rolled back table keeps working: a new writer, a commit, expiry
	// with the tag deleted, orphan cleanup, and reads still agree.
	w2, _ := tb.NewWriter("job")
	commitEpoch(t, tb, w2, 11, row(100, 1, "after"))
	after := mustRead(t, tb)
	if !strings.Contains(after, "(100, 1, after)") {
		t.Fatalf("after rollback: %q", after)
	}
	st.Snapshots.DeleteTag("t3")
	if _, err := maintain.Expire(st, keep2); err != nil {
		t.Fatal(err)
	}
	if _, err := tb.OrphanFiles(0, false); err != nil {
		t.Fatal(err)
	}
	if got := mustRead(t, tb); got != after {
		t.Fatalf("after expiry and cleanup: %q want %q", got, after)
	}
}

// Expiry races: one writer committing every millisecond, an expirer
// keeping 2 snapshots, and 50 streaming readers starting at the earliest
// snapshot; no reader may error or skip data.
func TestExpiryRace(t *testing.T) {
	fs := fileio.NewMem()
	tb := newTable(t, fs, map[string]string{"bucket": "2"})
	st := tb.Store()
	const epochs = 100
	const perEpoch = 4
	w, _ := tb.NewWriter("job")
	commitEpoch(t, tb, w, 1, rowsOf(perEpoch, 1*1000)...)
	var done sync.WaitGroup
	stop := make(chan struct{})
	errs := make(chan error, 100)
	done.Add(1)
	go func() { // writer
		defer done.Done()
		for e := base.Epoch(2); e <= epochs; e++ {
			for _, r := range rowsOf(perEpoch, int64(e)*1000) {
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
				errs <- fmt.Errorf("writer epoch %d: %w", e, err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var expiredDuringRace atomic.Int64
	var expired sync.WaitGroup
	expired.Add(1)
	go func() { // expirer
		defer expired.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			res, err := maintain.Expire(st, keep2)
			if err != nil {
				errs <- fmt.Errorf("expirer: %w", err)
				return
			}
			expiredDuringRace.Add(int64(len(res.Expired)))
			time.Sleep(200 * time.Microsecond)
		}
	}()
	for i := range 50 {
		done.Add(1)
		go func() { // reader
			defer done.Done()
			s, err := tb.StreamFromEarliest(fmt.Sprintf("reader-%d", i))
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			var lastEpoch base.Epoch
			count := 0
			for lastEpoch < epochs {
				b, ok, err := s.Next()
				if err != nil {
					ids, _ := st.Snapshots.IDs()
					c, _, _ := st.Snapshots.Consumer(fmt.Sprintf("reader-%d", i))
					errs <- fmt.Errorf("reader %d at %+v: ids %v fence %d consumer %d: %w", i, s.Position(), ids, st.Snapshots.EarliestFence(), c, err)
					return
				}
				if !ok {
					time.Sleep(time.Millisecond)
					continue
				}
				if lastEpoch != 0 && b.Epoch != lastEpoch && b.Epoch != lastEpoch+1 {
					errs <- fmt.Errorf("reader %d skipped from epoch %d to %d", i, lastEpoch, b.Epoch)
					return
				}
				for _, c := range b.Changes {
					if c.Kind != types.Insert || base.Epoch(c.Row[0].Int64()/1000) != b.Epoch {
						errs <- fmt.Errorf("reader %d: change %s %v in epoch %d", i, c.Kind, c.Row, b.Epoch)
						return
					}
					count++
				}
				if b.EndOfEpoch {
					if count != perEpoch {
						errs <- fmt.Errorf("reader %d: epoch %d had %d rows", i, b.Epoch, count)
						return
					}
					count = 0
				}
				lastEpoch = b.Epoch
			}
		}()
	}
	done.Wait()
	close(stop)
	expired.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if expiredDuringRace.Load() < epochs/2 {
		t.Errorf("only %d snapshots expired while readers ran: the race was not exercised", expiredDuringRace.Load())
	}
	// With the readers gone, nothing holds old snapshots any more.
	if _, err := maintain.Expire(st, keep2); err != nil {
		t.Fatal(err)
	}
	if ids, _ := st.Snapshots.IDs(); len(ids) != 2 {
		t.Errorf("%d snapshots left, the expirer keeps 2", len(ids))
	}
}

// TestExpireLeavesNoOrphans checks that expiration deletes every file
// only expired snapshots referenced, over runs of many expired snapshots
// of a table that compacts (files added and removed within the expired
// range, files live across it): afterwards no file is an orphan, and the
// retained snapshots read what they read before.
func TestExpireLeavesNoOrphans(t *testing.T) {
	fs := fileio.NewMem()
	tb := newTable(t, fs, map[string]string{"num-sorted-run.compaction-trigger": "2"})
	w, _ := tb.NewWriter("job")
	want := map[base.SnapshotID]string{}
	expired := 0
	for e := base.Epoch(1); e <= 60; e++ {
		ids := commitEpoch(t, tb, w, e, rowsOf(3, int64(e%9)*2)...)
		want[ids[len(ids)-1]] = mustRead(t, tb)
		if e%15 != 0 {
			continue
		}
		res, err := maintain.Expire(tb.Store(), keep2)
		if err != nil {
			t.Fatal(err)
		}
		expired += len(res.Expired)
		orphans, err := tb.OrphanFiles(0, true)
		if err != nil {
			t.Fatal(err)
		}
		if len(orphans) > 0 {
			t.Fatalf("epoch %d: expiring %v left orphans %v", e, res.Expired, orphans)
		}
		latest, _ := tb.Latest()
		for id := latest.ID - 1; id <= latest.ID; id++ {
			if rows, err := tb.ReadSnapshot(id); err != nil || (want[id] != "" && dump(rows) != want[id]) {
				t.Fatalf("epoch %d: snapshot %d after expiry: %v", e, id, err)
			}
		}
	}
	if expired < 40 {
		t.Fatalf("%d snapshots expired", expired)
	}
}
