package demo

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stratadb/strata/engine"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/meta/catalog"
	"github.com/stratadb/strata/server"
)

// TestDemoRunsConsistentAndVerified runs the demo for a few seconds and
// requires checks that passed (how many depends on the machine's load: the
// views start in 1 to 4 s of the 6), none violated and every view verified, with
// events ingested.
func TestDemoRunsConsistentAndVerified(t *testing.T) {
	var out bytes.Buffer
	sum, err := Run(context.Background(), Options{
		Engine:   engine.Options{Dir: t.TempDir(), EpochInterval: 200 * time.Millisecond, CheckpointInterval: 200 * time.Millisecond},
		Rate:     5000,
		Seed:     7,
		Duration: 6 * time.Second,
		Out:      &out,
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if sum.Violated != 0 || sum.Passed < 1 || sum.Verified != 3 || sum.Views != 3 || sum.Events < 5000 {
		t.Fatalf("summary %+v\n%s", sum, out.String())
	}
	if got := sum.Line(); !strings.HasPrefix(got, "consistency checks: ") || !strings.HasSuffix(got, "views verified: 3 of 3") {
		t.Fatalf("last line %q", got)
	}
	if sum.Warning != "" {
		t.Fatalf("a run with checks warns: %q", sum.Warning)
	}
}

// TestDurationCountsFromTheStart: --duration D counts from the start of
// the run, the creation of the topology included, so a creation that
// takes longer than D leaves no time for checks: the run goes straight to
// the final verification, and says how long that took.
func TestDurationCountsFromTheStart(t *testing.T) {
	var out bytes.Buffer
	sum, err := Run(context.Background(), Options{
		Engine:   engine.Options{Dir: t.TempDir(), EpochInterval: 50 * time.Millisecond, CheckpointInterval: 50 * time.Millisecond},
		Rate:     1000,
		Seed:     7,
		Duration: 2 * time.Second,
		Out:      &out,
		// The creation lasts past D.
		afterCreate: func() { time.Sleep(3 * time.Second) },
	})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if n := sum.Passed + sum.Violated; n != 0 {
		t.Fatalf("%d checks ran after the duration had passed\n%s", n, out.String())
	}
	if sum.Views != 3 || sum.Verified != 3 {
		t.Fatalf("summary %+v\n%s", sum, out.String())
	}
	if !strings.Contains(out.String(), "final verification took ") {
		t.Fatalf("the output does not say how long the verification took:\n%s", out.String())
	}
	if want := "warning: no consistency check ran: --duration 2s is shorter than the time to create the views and commit their first epoch ("; !strings.HasPrefix(sum.Warning, want) {
		t.Fatalf("warning %q, want it to start %q", sum.Warning, want)
	}
}

// TestNoCheckWarning: the warning of a run without checks says why and
// suggests a duration that leaves a few epochs of checks, in tens of
// seconds.
func TestNoCheckWarning(t *testing.T) {
	for _, tc := range []struct {
		duration, ready, epoch time.Duration
		stopped                bool
		lastErr, want          string
	}{
		{time.Second, 2900 * time.Millisecond, time.Second, false, "",
			"warning: no consistency check ran: --duration 1s is shorter than the time to create the views and commit their first epoch (2.9s here) plus one epoch (1s); give a longer --duration, such as --duration 20s"},
		{5 * time.Second, 8 * time.Second, 200 * time.Millisecond, false, "",
			"warning: no consistency check ran: --duration 5s is shorter than the time to create the views and commit their first epoch (8s here) plus one epoch (200ms); give a longer --duration, such as --duration 20s"},
		{0, 3 * time.Second, time.Second, true, "",
			"warning: no consistency check ran: the demo was stopped before the first one, which runs an epoch after the views are created and have committed their first epoch (3s here); let it run longer, or give --duration 20s"},
		{time.Minute, 3 * time.Second, time.Second, false, "relation t3 does not exist",
			"warning: no consistency check completed; the last one failed: relation t3 does not exist"},
	} {
		if got := noCheckWarning(tc.duration, tc.stopped, tc.ready, tc.epoch, tc.lastErr); got != tc.want {
			t.Errorf("noCheckWarning(%v, %v, %v, %v, %q)\n got %q\nwant %q", tc.duration, tc.stopped, tc.ready, tc.epoch, tc.lastErr, got, tc.want)
		}
	}
}

// TestCheckDetectsAMixedCut is the negative control of the consistency
// check: its invariant, evaluated over t1 at one epoch and t2 and t3 at an
// earlier one, fails, so a check that passes is evidence of a consistent
// read.
func TestCheckDetectsAMixedCut(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	opts := engine.Options{Dir: dir, EpochInterval: 100 * time.Millisecond, CheckpointInterval: 100 * time.Millisecond}
	e, err := engine.Open(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sess := server.NewSession(e, engine.DefaultDatabase)
	if _, err := exec(ctx, sess, Script(5000, 3)); err != nil {
		t.Fatal(err)
	}
	t3 := catalog.Name(engine.DefaultDatabase, "t3")
	// Wait until t3 has committed a few epochs with data.
	deadline := time.Now().Add(30 * time.Second)
	var e3 base.Epoch
	for time.Now().Before(deadline) {
		tb, err := e.Table(t3)
		if err == nil {
			if e3, err = tb.CommittedEpoch(); err == nil && e3 > 8 {
				if rows, _ := tb.ReadAtEpoch(e3 - 4); len(rows) > 0 {
					break
				}
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	if e3 <= 8 {
		t.Fatalf("t3 committed only epoch %d", e3)
	}
	sums := func(name string, ep base.Epoch, col int) (total int64, rows int) {
		tb, err := e.Table(catalog.Name(engine.DefaultDatabase, name))
		if err != nil {
			t.Fatal(err)
		}
		rs, err := tb.ReadAtEpoch(ep)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			n, err := strconv.ParseInt(types.FormatText(r[col], nil), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			total += n
		}
		return total, len(rs)
	}
	// At one epoch the invariant holds ...
	b1, _ := sums("t1", e3, 2)
	b2, _ := sums("t2", e3, 2)
	b3, _ := sums("t3", e3, 1)
	if b1 != b2 || b2 != b3 || b1 == 0 {
		t.Fatalf("at epoch %d: t1 %d, t2 %d, t3 %d bids", e3, b1, b2, b3)
	}
	// ... and across epochs it does not.
	old, _ := sums("t2", e3-4, 2)
	if old == b1 {
		t.Fatalf("t2 at epoch %d and t1 at %d both count %d bids: the check could not tell them apart", e3-4, e3, b1)
	}
}

// TestT1FreesClosedWindows: the demo's bid table declares a watermark,
// and t1's plan frees each window's groups 15 s (the 10 s window plus
// the 5 s delay) after the window starts, so its state stays bounded.
func TestT1FreesClosedWindows(t *testing.T) {
	script := Script(5000, 3)
	if !strings.Contains(script, bidWatermark) {
		t.Fatalf("the script does not declare the bid watermark:\n%s", script)
	}
	ctx := context.Background()
	e, err := engine.Open(ctx, engine.Options{Dir: t.TempDir(), EpochInterval: 100 * time.Millisecond, CheckpointInterval: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	sess := server.NewSession(e, engine.DefaultDatabase)
	var bid string
	for _, stmt := range strings.SplitAfter(script, ";\n") {
		if strings.HasPrefix(stmt, "CREATE TABLE bid ") {
			bid = stmt
		}
	}
	t1 := script[strings.Index(script, "CREATE MATERIALIZED VIEW t1"):]
	t1 = t1[:strings.Index(t1, ";")+1]
	res, err := exec(ctx, sess, bid+"\nEXPLAIN "+t1)
	if err != nil {
		t.Fatal(err)
	}
	var plan strings.Builder
	for _, r := range res[len(res)-1].Rows {
		plan.WriteString(types.FormatText(r[0], nil) + "\n")
	}
	if !strings.Contains(plan.String(), "groups freed once") || !strings.Contains(plan.String(), "+ 15s <= its largest value seen") {
		t.Fatalf("t1's plan does not free closed windows:\n%s", plan.String())
	}
}
