package coordinator

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/stratadb/strata/internal/base"
)

// TestScripts runs the stories under testdata/:
//
//	init tasks=<n> interval=<ms> timeout=<ms> tolerable=<n> [after=<id>] [on-epoch]
//	tick t=<ms>                    time is now t ms after init
//	epoch t=<ms>                   a source emitted an epoch barrier at t
//	ack cp=<id> task=<i>
//	decline cp=<id> task=<i>
//	persisted cp=<id> [fail] [t=<ms>]  at t, or at the last time given
func TestScripts(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		var c *Core
		t0 := time.Unix(1000, 0)
		var last time.Duration
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			num := func(k string) int {
				for _, a := range d.CmdArgs {
					if a.Key == k {
						n, err := strconv.Atoi(a.Vals[0])
						if err != nil {
							d.Fatalf(t, "%s: %v", k, err)
						}
						return n
					}
				}
				return 0
			}
			ms := func(k string) time.Duration { return time.Duration(num(k)) * time.Millisecond }
			// at is the command's time t, or the last one given.
			at := func() time.Time {
				if d.HasArg("t") {
					last = ms("t")
				}
				return t0.Add(last)
			}
			var acts []Action
			switch d.Cmd {
			case "init":
				c = New(Config{Tasks: num("tasks"), Interval: ms("interval"), Timeout: ms("timeout"), TolerableFailures: num("tolerable"),
					OnEpoch: d.HasArg("on-epoch")},
					base.CheckpointID(num("after")), t0)
			case "tick":
				acts = c.Tick(at())
			case "epoch":
				acts = c.OnEpoch(at())
			case "ack":
				acts = c.Ack(base.CheckpointID(num("cp")), num("task"), fmt.Sprintf("f%d", num("task")))
			case "decline":
				acts = c.Decline(base.CheckpointID(num("cp")), num("task"), "crossed barriers")
			case "persisted":
				var err error
				if d.HasArg("fail") {
					err = errors.New("disk full")
				}
				acts = c.Persisted(base.CheckpointID(num("cp")), err, at())
			default:
				d.Fatalf(t, "unknown command %s", d.Cmd)
			}
			var b strings.Builder
			for _, a := range acts {
				fmt.Fprintln(&b, a)
			}
			if id, ok := c.Pending(); ok {
				fmt.Fprintf(&b, "pending cp=%d\n", id)
			} else {
				fmt.Fprintln(&b, "idle")
			}
			return b.String()
		})
	})
}
