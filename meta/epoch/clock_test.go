package epoch

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/internal/base"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// trace ticks c at each offset (ms after t0), advances it, and describes
// what happened, one line per tick.
func trace(t *testing.T, c *Clock, offsets ...int) string {
	t.Helper()
	var b strings.Builder
	for _, off := range offsets {
		r := c.Tick(t0.Add(ms(off)))
		fmt.Fprintf(&b, "t=%d:", off)
		if r.Open {
			fmt.Fprintf(&b, " open %d", r.Epoch)
		}
		if r.Persist != nil {
			fmt.Fprintf(&b, " persist ceiling=%d", r.Persist.Ceiling)
		}
		fmt.Fprintf(&b, " due=%d\n", r.Due.Sub(t0).Milliseconds())
		c.Advance(r)
	}
	return b.String()
}

func TestClockSchedule(t *testing.T) {
	// 50 ms epochs, ranges of 4 epochs (200 ms).
	c, err := NewClock(ms(50), ms(200), State{})
	if err != nil {
		t.Fatal(err)
	}
	got := trace(t, c, 0, 20, 50, 103, 150, 200, 260, 400, 420, 450)
	want := `t=0: open 1 persist ceiling=4 due=50
t=20: due=50
t=50: open 2 due=100
t=103: open 3 due=150
t=150: open 4 due=200
t=200: open 5 persist ceiling=8 due=250
t=260: open 6 due=300
t=400: open 7 due=450
t=420: due=450
t=450: open 8 due=500
`
	// t=103 is late by 3 ms: the next epoch is still due at 150 (drift
	// free). t=400 is 100 ms behind schedule: one epoch, schedule restarts.
	if got != want {
		t.Fatalf("trace:\n%s\nwant:\n%s", got, want)
	}
	if cur := c.Current(); cur.Epoch != 8 || !cur.Start.Equal(t0.Add(ms(450))) {
		t.Fatalf("current = %+v", cur)
	}
	st := c.State()
	if st.Ceiling != 8 || len(st.Anchors) != 2 || st.Anchors[1] != (Anchor{Epoch: 5, Start: t0.Add(ms(200))}) {
		t.Fatalf("state = %+v", st)
	}
}

func TestClockResumesAboveCeiling(t *testing.T) {
	restored := State{Ceiling: 40, Interval: ms(50), Anchors: []Anchor{{Epoch: 1, Start: t0}, {Epoch: 21, Start: t0.Add(ms(1000))}}}
	c, err := NewClock(ms(50), ms(200), restored)
	if err != nil {
		t.Fatal(err)
	}
	later := 5000
	got := trace(t, c, later, later+50)
	want := "t=5000: open 41 persist ceiling=44 due=5050\nt=5050: open 42 due=5100\n"
	if got != want {
		t.Fatalf("trace:\n%s\nwant:\n%s", got, want)
	}
	for _, tc := range []struct {
		e     base.Epoch
		start int
		exact bool
		ok    bool
	}{
		{42, 5050, true, true},
		{41, 5000, true, true},
		{21, 1000, true, true},  // an anchor
		{25, 1200, false, true}, // estimated: anchor 21 + 4 * 50 ms
		{3, 100, false, true},   // estimated from anchor 1
		{40, 1950, false, true}, // estimated, below the next anchor (41 at 5000)
		{43, 0, false, false},   // not opened yet
		{0, 0, false, false},
	} {
		start, exact, ok := c.StartOf(tc.e)
		if ok != tc.ok || exact != tc.exact || (ok && !start.Equal(t0.Add(ms(tc.start)))) {
			t.Errorf("StartOf(%d) = %v (+%v), exact %v, ok %v; want +%dms, %v, %v", tc.e, start, start.Sub(t0), exact, ok, tc.start, tc.exact, tc.ok)
		}
	}
}

func TestClockEstimateIsCappedByNextAnchor(t *testing.T) {
	// The clock stalled inside the range that began at 1: epoch 2..9 did
	// not open 50 ms apart, so the estimate must not pass the next anchor.
	c, _ := NewClock(ms(50), ms(200), State{Ceiling: 20, Interval: ms(50), Anchors: []Anchor{{Epoch: 1, Start: t0}, {Epoch: 10, Start: t0.Add(ms(100))}}})
	trace(t, c, 1000)
	if start, exact, ok := c.StartOf(9); !ok || exact || !start.Equal(t0.Add(ms(100))) {
		t.Fatalf("StartOf(9) = +%v, %v, %v; want capped at +100ms", start.Sub(t0), exact, ok)
	}
}

func TestClockRefusesTinyInterval(t *testing.T) {
	if _, err := NewClock(time.Microsecond, time.Second, State{}); err == nil {
		t.Fatal("accepted a 1µs interval")
	}
}

func TestAdvancePanicsOnBackwardEpoch(t *testing.T) {
	c, _ := NewClock(ms(50), ms(200), State{})
	r := c.Tick(t0)
	c.Advance(r)
	defer func() {
		if p := recover(); p == nil || !strings.Contains(fmt.Sprint(p), "epoch-monotonic") {
			t.Fatalf("recover() = %v", p)
		}
	}()
	c.Advance(r) // opening epoch 1 again
}
