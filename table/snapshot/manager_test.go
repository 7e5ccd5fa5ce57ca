package snapshot

import (
	"errors"
	"testing"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

func TestPublishLatestEpochs(t *testing.T) {
	fs := fileio.NewMem()
	m := NewManager(fs, "t")
	if s, err := m.Latest(); s != nil || err != nil {
		t.Fatalf("empty table: %v %v", s, err)
	}
	for i, e := range []base.Epoch{2, 2, 5, 9} {
		s := &Snapshot{ID: base.SnapshotID(i + 1), Epoch: e, CommitKind: Append}
		if err := m.Publish(s); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Publish(&Snapshot{ID: 4}); !errors.Is(err, base.ErrConflict) {
		t.Fatalf("second publish of 4: %v", err)
	}
	m.SetLatestHint(2) // a stale hint: probing finds 4
	if id, _ := m.LatestID(); id != 4 {
		t.Fatalf("latest %d", id)
	}
	for _, tc := range []struct {
		e    base.Epoch
		want base.SnapshotID
	}{{1, 0}, {2, 2}, {4, 2}, {5, 3}, {100, 4}} {
		s, err := m.AtOrBeforeEpoch(tc.e)
		var got base.SnapshotID
		if s != nil {
			got = s.ID
		}
		if err != nil || got != tc.want {
			t.Errorf("at epoch %d: snapshot %d (%v), want %d", tc.e, got, err, tc.want)
		}
	}
	if ce, _ := m.CommittedEpoch(); ce != 9 {
		t.Fatalf("committed epoch %d", ce)
	}
	m.AdvanceCommittedEpoch(12, "job")
	m.AdvanceCommittedEpoch(10, "job") // never lowers
	if ce, _ := m.CommittedEpoch(); ce != 12 {
		t.Fatalf("committed epoch %d after marker", ce)
	}
	m.Delete(1)
	if id, _ := m.EarliestID(); id != 2 {
		t.Fatalf("earliest %d", id)
	}
	if _, err := m.Get(1); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("deleted snapshot: %v", err)
	}
}

func TestTagsAndConsumers(t *testing.T) {
	m := NewManager(fileio.NewMem(), "t")
	m.Publish(&Snapshot{ID: 1, Epoch: 3})
	if err := m.CreateTag("v1", 1); err != nil {
		t.Fatal(err)
	}
	if err := m.CreateTag("bad/name", 1); !errors.Is(err, base.ErrInvalidArgument) {
		t.Fatalf("bad tag name: %v", err)
	}
	if err := m.CreateTag("v2", 7); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("tag of a missing snapshot: %v", err)
	}
	tags, _ := m.Tags()
	if len(tags) != 1 || tags["v1"].Epoch != 3 {
		t.Fatalf("tags %v", tags)
	}
	if _, ok, _ := m.MinConsumer(); ok {
		t.Fatal("consumer without registration")
	}
	m.SetConsumer("a", 5)
	m.SetConsumer("b", 3)
	m.SetConsumer("a", 7)
	if c, ok, _ := m.MinConsumer(); !ok || c != 3 {
		t.Fatalf("min consumer %d", c)
	}
	m.DeleteConsumer("b")
	if c, _, _ := m.MinConsumer(); c != 7 {
		t.Fatalf("min consumer %d after delete", c)
	}
}

// closedNow reports whether ch is closed, without waiting.
func closedNow(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestChangedWakesOnPublishAndMarker checks invariant wake-or-poll's
// in-process half: the channel handed out before a publish or a marker
// advance is closed by it; a marker write that does not raise the marker
// wakes nobody; a manager over the same files that did not write does not
// wake its own waiters.
func TestChangedWakesOnPublishAndMarker(t *testing.T) {
	fs := fileio.NewMem()
	m := NewManager(fs, "t")
	other := NewManager(fs, "t")
	ch, otherCh := m.Changed(), other.Changed()
	if closedNow(ch) {
		t.Fatal("closed before any change")
	}
	if err := m.Publish(&Snapshot{ID: 1, Epoch: 3, CommitKind: Append}); err != nil {
		t.Fatal(err)
	}
	if !closedNow(ch) {
		t.Fatal("publish did not close the channel taken before it")
	}
	if closedNow(otherCh) {
		t.Fatal("another manager's waiters woke: only the writing manager notifies")
	}
	ch = m.Changed()
	if closedNow(ch) {
		t.Fatal("a channel taken after the publish is closed already")
	}
	if err := m.AdvanceCommittedEpoch(2, "w"); err != nil { // no marker yet: 2 raises it
		t.Fatal(err)
	}
	if !closedNow(ch) {
		t.Fatal("raising the marker to 2 did not wake")
	}
	ch = m.Changed()
	if err := m.AdvanceCommittedEpoch(2, "w"); err != nil {
		t.Fatal(err)
	}
	if closedNow(ch) {
		t.Fatal("a marker write that raised nothing woke the waiters")
	}
	if err := m.AdvanceCommittedEpoch(7, "w"); err != nil {
		t.Fatal(err)
	}
	if !closedNow(ch) {
		t.Fatal("raising the marker to 7 did not wake")
	}
	if e, err := other.CommittedEpoch(); err != nil || e != 7 {
		t.Fatalf("committed epoch seen by the other manager: %d, %v; want 7", e, err)
	}
}
