package coordinator

import (
	"testing"
	"time"
)

// TestAbortedEpochCheckpointKeepsItsEpoch: under Config.OnEpoch, a
// checkpoint triggered by an epoch and then declined did not cover that
// epoch, so the epoch is still waiting for a checkpoint: the next one is
// due as an epoch's is (three quarters of an interval after the failed
// trigger), not only at the clock's fallback one and a half intervals
// after it. The job loop counts the epochs a trigger's cut covers as told
// (the aligned policy), so an epoch whose barrier the loop reads after
// the trigger is not counted either; before, an abort left both waiting
// for the next epoch, or, when the epochs stalled, for the fallback.
func TestAbortedEpochCheckpointKeepsItsEpoch(t *testing.T) {
	const interval = 100 * time.Millisecond
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	c := New(Config{Tasks: 1, Interval: interval, Timeout: 10 * interval, TolerableFailures: 5, OnEpoch: true}, 0, t0)
	acts := c.OnEpoch(at(100))
	if len(acts) != 1 || acts[0].Kind != Trigger || acts[0].ID != 1 {
		t.Fatalf("epoch at 100 ms: %v, want the trigger of checkpoint 1", acts)
	}
	acts = c.Decline(1, 0, "storage failed")
	if len(acts) != 1 || acts[0].Kind != Abort {
		t.Fatalf("decline: %v, want the abort of checkpoint 1", acts)
	}
	for ms := 110; ms < 250; ms += 5 {
		for _, a := range c.Tick(at(ms)) {
			if a.Kind == Trigger {
				if ms > 200 {
					t.Fatalf("the epoch of the aborted checkpoint 1 got checkpoint %d at %d ms, want by 200 ms", a.ID, ms)
				}
				return
			}
		}
	}
	t.Fatal("no checkpoint for the epoch of the aborted checkpoint 1 before the clock's fallback at 250 ms")
}
