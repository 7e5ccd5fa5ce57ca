package task

import (
	"testing"
	"time"
)

// TestRestartBackoff: the pause doubles after attempts that completed no
// checkpoint, up to MaxDelay, and is Delay again after one that did;
// without MaxDelay it stays Delay.
func TestRestartBackoff(t *testing.T) {
	r := RestartStrategy{Delay: time.Second, MaxDelay: 5 * time.Second}
	d := r.Delay
	var got []time.Duration
	for _, progressed := range []bool{false, false, false, false, true, false} {
		d = r.next(d, progressed)
		got = append(got, d)
	}
	want := []time.Duration{2 * time.Second, 4 * time.Second, 5 * time.Second, 5 * time.Second, time.Second, 2 * time.Second}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("pauses %v, want %v", got, want)
		}
	}
	fixed := RestartStrategy{Delay: time.Second}
	if d := fixed.next(time.Second, false); d != time.Second {
		t.Fatalf("fixed delay grew to %v", d)
	}
}
