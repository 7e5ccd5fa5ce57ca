package version

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/meta/catalog"
)

func tn(s string) Name { return catalog.Name("db", s) }

func commit(t *testing.T, tr *Tracker, table string, e base.Epoch) {
	t.Helper()
	changed, err := tr.CheckCommit(tn(table), e)
	if err != nil {
		t.Fatal(err)
	}
	if changed {
		tr.Commit(tn(table), Committed{Epoch: e})
	}
}

func TestCommitIsMonotonic(t *testing.T) {
	tr := NewTracker(nil, nil)
	commit(t, tr, "a", 5)
	if changed, err := tr.CheckCommit(tn("a"), 5); changed || err != nil {
		t.Fatalf("repeat: changed %v, err %v", changed, err)
	}
	_, err := tr.CheckCommit(tn("a"), 4)
	if !errors.Is(err, ErrEpochBackwards) || !errors.Is(err, base.ErrConflict) || !strings.Contains(err.Error(), "db.a") || !strings.Contains(err.Error(), "epoch 4 is below its committed epoch 5") {
		t.Fatalf("backwards: %v", err)
	}
	if c, _ := tr.Committed(tn("a")); c.Epoch != 5 {
		t.Fatalf("committed = %d", c.Epoch)
	}
	defer func() {
		if recover() == nil {
			t.Fatal("Commit backwards did not panic")
		}
	}()
	tr.Commit(tn("a"), Committed{Epoch: 3})
}

func TestResolveWeakAndStrong(t *testing.T) {
	tr := NewTracker(nil, nil)
	commit(t, tr, "a", 10)
	commit(t, tr, "b", 7)
	commit(t, tr, "c", 12)
	ab := [][]Name{{tn("a"), tn("b")}}
	// Weak: group at its minimum, unrelated table at its own latest.
	r := tr.Resolve([][]Name{{tn("a"), tn("b")}, {tn("c")}}, Weak)
	if want := map[Name]base.Epoch{tn("a"): 7, tn("b"): 7, tn("c"): 12}; !reflect.DeepEqual(r.Epochs, want) || r.RaiseFloors != nil || r.Wait != nil {
		t.Fatalf("weak = %+v", r)
	}
	// Strong read of a alone raises a's floor to 10.
	r = tr.Resolve([][]Name{{tn("a")}}, Strong)
	if r.Epochs[tn("a")] != 10 || !reflect.DeepEqual(r.RaiseFloors, map[Name]base.Epoch{tn("a"): 10}) {
		t.Fatalf("strong a = %+v", r)
	}
	tr.RaiseFloors(r.RaiseFloors)
	// Now a strong read of {a, b} must wait for b to reach 10.
	r = tr.Resolve(ab, Strong)
	if r.Wait == nil || r.Epochs != nil || *r.Wait != (Lag{Table: tn("b"), Committed: 7, Other: tn("a"), Floor: 10}) {
		t.Fatalf("strong ab = %+v", r)
	}
	if !strings.Contains(r.Wait.Error(), "db.b has committed epoch 7, behind epoch 10 already read from related table db.a") {
		t.Fatalf("lag text = %q", r.Wait.Error())
	}
	// Weak does not wait.
	if r = tr.Resolve(ab, Weak); r.Epochs[tn("a")] != 7 {
		t.Fatalf("weak ab = %+v", r)
	}
	commit(t, tr, "b", 11)
	r = tr.Resolve(ab, Strong)
	if r.Wait != nil || r.Epochs[tn("a")] != 10 || r.Epochs[tn("b")] != 10 || !reflect.DeepEqual(r.RaiseFloors, map[Name]base.Epoch{tn("b"): 10}) {
		t.Fatalf("strong ab after b caught up = %+v", r)
	}
	tr.RaiseFloors(map[Name]base.Epoch{tn("b"): 10, tn("a"): 3}) // lower is ignored
	if tr.Floor(tn("a")) != 10 || tr.Floor(tn("b")) != 10 {
		t.Fatalf("floors = %d, %d", tr.Floor(tn("a")), tr.Floor(tn("b")))
	}
	// A table nothing was committed to reads at epoch 0, and so does its group.
	if r = tr.Resolve([][]Name{{tn("c"), tn("new")}}, Weak); r.Epochs[tn("c")] != 0 || r.Epochs[tn("new")] != 0 {
		t.Fatalf("group with an empty table = %+v", r)
	}
}

func TestPins(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p := NewPins(0, nil)
	a := p.Make("q1", map[Name]base.Epoch{tn("a"): 5, tn("b"): 5}, t0.Add(time.Minute))
	p.Add(a)
	b := p.Make("job1", map[Name]base.Epoch{tn("a"): 3}, t0.Add(2*time.Minute))
	p.Add(b)
	if a.ID != 1 || b.ID != 2 || p.Next() != 3 {
		t.Fatalf("ids %d, %d, next %d", a.ID, b.ID, p.Next())
	}
	if e, ok := p.Min(tn("a")); !ok || e != 3 {
		t.Fatalf("Min(a) = %d, %v", e, ok)
	}
	if _, ok := p.Min(tn("c")); ok {
		t.Fatal("Min(c) found a pin")
	}
	if got := p.Expired(t0.Add(time.Minute)); !reflect.DeepEqual(got, []PinID{1}) {
		t.Fatalf("Expired = %v", got)
	}
	if err := p.SetExpiry(1, t0.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if got := p.Expired(t0.Add(time.Minute)); len(got) != 0 {
		t.Fatalf("Expired after renewal = %v", got)
	}
	if got := p.Held("job1"); !reflect.DeepEqual(got, []PinID{2}) {
		t.Fatalf("Held = %v", got)
	}
	if !p.Remove(2) || p.Remove(2) {
		t.Fatal("Remove should report true once")
	}
	if e, _ := p.Min(tn("a")); e != 5 {
		t.Fatalf("Min(a) after release = %d", e)
	}
	if _, err := p.Get(2); !errors.Is(err, base.ErrNotFound) {
		t.Fatalf("Get released = %v", err)
	}
	// Restored pins keep their ids; new ids are above them.
	if q := NewPins(p.Next(), p.All()); q.Next() != 3 || len(q.All()) != 1 {
		t.Fatalf("restored next = %d, pins %v", q.Next(), q.All())
	}
	if q := NewPins(0, p.All()); q.Next() != 2 {
		t.Fatalf("restored without a counter: next = %d, want above pin 1", q.Next())
	}
}
