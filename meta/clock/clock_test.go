package clock

import (
	"testing"
	"time"
)

func TestManualFiresInOrderOnce(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	m := NewManual(t0)
	a := m.NewTimer(3 * time.Second)
	b := m.NewTimer(1 * time.Second)
	c := m.NewTimer(5 * time.Second)
	if !c.Stop() || c.Stop() {
		t.Fatal("Stop should report true once")
	}
	m.Advance(2 * time.Second)
	select {
	case at := <-b.C():
		if !at.Equal(t0.Add(2 * time.Second)) {
			t.Fatalf("b fired at %v", at)
		}
	default:
		t.Fatal("b did not fire")
	}
	select {
	case <-a.C():
		t.Fatal("a fired early")
	default:
	}
	if m.Pending() != 1 {
		t.Fatalf("pending = %d, want 1", m.Pending())
	}
	m.Set(t0) // never backwards
	if !m.Now().Equal(t0.Add(2 * time.Second)) {
		t.Fatalf("Set moved time back to %v", m.Now())
	}
	m.Advance(10 * time.Second)
	<-a.C()
	if a.Stop() || m.Pending() != 0 {
		t.Fatal("fired timer still pending")
	}
	select {
	case <-c.C():
		t.Fatal("stopped timer fired")
	default:
	}
	if d := m.NewTimer(0); len(d.C()) != 1 {
		t.Fatal("zero timer did not fire at once")
	}
}
