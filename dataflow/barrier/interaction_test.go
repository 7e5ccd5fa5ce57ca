package barrier

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"

	"github.com/stratadb/strata/dataflow/message"
	"github.com/stratadb/strata/dataflow/queue"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// harness drives a Handler the way the task driver does, over real queues,
// with an operator whose state is the list of chunk labels it processed.
// The scripts under testdata/ tell stories with it:
//
//	init inputs=<n> policy=<aligned|unaligned|timeout>
//	send ch=<i> chunk=<a,b,...> | epoch=<e> | barrier=<id> [unaligned] | eos
//	take ch=<i>          take one message from channel i (a blocked channel
//	                     only yields a priority barrier)
//	run                  take round-robin until no channel yields
//	timeout cp=<id>      the alignment timer fires
//	abort cp=<id>        the coordinator aborts
//
// Every command prints what happened and then the handler's state, the
// queues and the channel state of checkpoints in progress or completed.
type harness struct {
	h         *Handler
	queues    []*queue.Queue
	processed []string
	snapshots map[base.CheckpointID][]string
	chanState map[base.CheckpointID][][]string
	completed []base.CheckpointID
	out       *strings.Builder

	// consumed lists, per channel, the chunks and epoch barriers taken
	// from it; cut holds a copy per checkpoint taken at its snapshot.
	consumed [][]string
	cut      map[base.CheckpointID][][]string
}

func label(m message.Message) string {
	switch m.Kind {
	case message.KindChunk:
		return m.Chunk.Datum(0, 0).Str()
	case message.KindEpochBarrier:
		return "E" + m.Epoch.String()
	}
	return m.String()
}

func (x *harness) init(inputs int, p Policy) {
	x.h = New(inputs, p, AlignState{})
	x.queues = make([]*queue.Queue, inputs)
	notify := make(chan struct{}, 1)
	for i := range x.queues {
		x.queues[i] = queue.New(fmt.Sprintf("ch%d", i), 100, 0, notify)
	}
	x.processed = nil
	x.snapshots = map[base.CheckpointID][]string{}
	x.chanState = map[base.CheckpointID][][]string{}
	x.completed = nil
	x.consumed = make([][]string, inputs)
	x.cut = map[base.CheckpointID][][]string{}
}

// take takes one message from channel ch and handles it; it reports
// whether there was one.
func (x *harness) take(ch int) bool {
	m, ok := x.queues[ch].Take(x.h.Blocked(ch))
	if !ok {
		return false
	}
	fmt.Fprintf(x.out, "ch%d: %s", ch, label(m))
	if m.Kind != message.KindCheckpointBarrier && m.Kind != message.KindEndOfStream && x.h.Recording(ch) {
		cp, _ := x.h.Current()
		x.chanState[cp][ch] = append(x.chanState[cp][ch], label(m))
		fmt.Fprintf(x.out, " (recorded for cp=%d)", cp)
	}
	if m.Kind == message.KindChunk || m.Kind == message.KindEpochBarrier {
		x.consumed[ch] = append(x.consumed[ch], label(m))
	}
	var acts []Action
	switch m.Kind {
	case message.KindChunk:
		x.processed = append(x.processed, label(m))
	case message.KindEpochBarrier:
		acts = x.h.OnEpochBarrier(ch, m.Epoch)
	case message.KindCheckpointBarrier:
		acts = x.h.OnCheckpointBarrier(ch, m.Checkpoint)
	case message.KindEndOfStream:
		acts = x.h.OnEndOfStream(ch)
	}
	fmt.Fprintln(x.out)
	x.apply(acts, m)
	return true
}

func (x *harness) apply(acts []Action, m message.Message) {
	for _, a := range acts {
		fmt.Fprintf(x.out, "  %s", a)
		switch a.Kind {
		case Snapshot:
			x.snapshots[a.Checkpoint] = slices.Clone(x.processed)
			x.chanState[a.Checkpoint] = make([][]string, len(x.queues))
			x.cut[a.Checkpoint] = make([][]string, len(x.queues))
			for ch := range x.consumed {
				x.cut[a.Checkpoint][ch] = slices.Clone(x.consumed[ch])
			}
			fmt.Fprintf(x.out, " state=[%s]", strings.Join(x.processed, " "))
			if a.Align.PendingEpoch != base.NoEpoch {
				fmt.Fprintf(x.out, " aligning-epoch=%d arrived=%v", a.Align.PendingEpoch, a.Align.Arrived)
			}
		case CaptureOvertaken:
			for _, o := range m.Overtaken {
				x.chanState[a.Checkpoint][a.Channel] = append(x.chanState[a.Checkpoint][a.Channel], label(o))
			}
			fmt.Fprintf(x.out, " (%d messages)", len(m.Overtaken))
		case Promote:
			if x.queues[a.Channel].Promote(a.Checkpoint) {
				fmt.Fprint(x.out, " (moved to head)")
			} else {
				fmt.Fprint(x.out, " (not queued)")
			}
		case Complete:
			x.completed = append(x.completed, a.Checkpoint)
		case Abort, Decline:
			delete(x.snapshots, a.Checkpoint)
			delete(x.chanState, a.Checkpoint)
		case CloseEpoch:
			x.processed = append(x.processed, "E"+a.Epoch.String())
		}
		fmt.Fprintln(x.out)
	}
}

func (x *harness) status() {
	fmt.Fprintf(x.out, "state: %s\n", x.h)
	for i, q := range x.queues {
		var ls []string
		for _, m := range q.Snapshot() {
			ls = append(ls, label(m))
		}
		fmt.Fprintf(x.out, "queue ch%d: [%s]\n", i, strings.Join(ls, " "))
	}
	fmt.Fprintf(x.out, "processed: [%s]\n", strings.Join(x.processed, " "))
	var cps []base.CheckpointID
	for cp := range x.chanState {
		cps = append(cps, cp)
	}
	slices.Sort(cps)
	for _, cp := range cps {
		done := ""
		if slices.Contains(x.completed, cp) {
			done = " complete"
		}
		var parts []string
		for ch, ls := range x.chanState[cp] {
			parts = append(parts, fmt.Sprintf("ch%d=[%s]", ch, strings.Join(ls, " ")))
		}
		fmt.Fprintf(x.out, "checkpoint %d%s: state=[%s] channel-state %s\n", cp, done,
			strings.Join(x.snapshots[cp], " "), strings.Join(parts, " "))
		if done != "" {
			// Shown once, when it completes.
			delete(x.chanState, cp)
			delete(x.snapshots, cp)
		}
	}
}

func textChunk(s string) *types.Chunk {
	c := types.NewChunk([]types.Type{types.Text}, 1)
	c.Append(types.Insert, types.Row{types.NewText(s)})
	return c
}

func TestInteraction(t *testing.T) {
	datadriven.Walk(t, "testdata", func(t *testing.T, path string) {
		x := &harness{}
		datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
			var b strings.Builder
			x.out = &b
			arg := func(key string) (string, bool) {
				for _, a := range d.CmdArgs {
					if a.Key == key {
						if len(a.Vals) == 0 {
							return "", true
						}
						return strings.Join(a.Vals, ","), true
					}
				}
				return "", false
			}
			num := func(key string) int {
				v, ok := arg(key)
				if !ok {
					d.Fatalf(t, "%s needs %s=", d.Cmd, key)
				}
				n, err := strconv.Atoi(v)
				if err != nil {
					d.Fatalf(t, "%s=%s: %v", key, v, err)
				}
				return n
			}
			switch d.Cmd {
			case "init":
				p, err := ParsePolicy(func() string { v, _ := arg("policy"); return v }())
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
				x.init(num("inputs"), p)
			case "send":
				q := x.queues[num("ch")]
				var err error
				if v, ok := arg("chunk"); ok {
					for _, l := range strings.Split(v, ",") {
						err = q.Put(message.Chunk(textChunk(l)), nil)
					}
				} else if _, ok := arg("epoch"); ok {
					err = q.Put(message.EpochBarrier(base.Epoch(num("epoch"))), nil)
				} else if _, ok := arg("barrier"); ok {
					id := base.CheckpointID(num("barrier"))
					if _, un := arg("unaligned"); un {
						err = q.PutHead(message.Barrier(id, message.Unaligned))
					} else {
						err = q.Put(message.Barrier(id, message.Aligned), nil)
					}
				} else if _, ok := arg("eos"); ok {
					err = q.Put(message.EndOfStream(), nil)
				}
				if err != nil {
					d.Fatalf(t, "%v", err)
				}
			case "take":
				if !x.take(num("ch")) {
					fmt.Fprintf(&b, "ch%d: nothing to take\n", num("ch"))
				}
			case "run":
				for progress := true; progress; {
					progress = false
					for ch := range x.queues {
						if x.take(ch) {
							progress = true
						}
					}
				}
			case "timeout":
				fmt.Fprintf(&b, "timeout cp=%d\n", num("cp"))
				x.apply(x.h.OnTimeout(base.CheckpointID(num("cp"))), message.Message{})
			case "abort":
				fmt.Fprintf(&b, "abort cp=%d\n", num("cp"))
				x.apply(x.h.OnAbort(base.CheckpointID(num("cp"))), message.Message{})
			default:
				d.Fatalf(t, "unknown command %s", d.Cmd)
			}
			x.status()
			return b.String()
		})
	})
}
