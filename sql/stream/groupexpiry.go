package stream

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// GroupExpiry makes a GroupAgg free the state of groups whose window is
// closed (RisingWave's watermark state cleaning of a hash aggregation;
// Flink's window aggregate, which drops a window's state once the
// watermark passes its end). The planner sets it when one group key
// column is a window bound of the event time of an append-only input
// with a watermark (sql/planner, expiry.go): every row of the group whose
// key holds the window value w has its event time t in
//
//	w + Lo <= t <= w + Hi
//
// in microseconds. date_bin(S, t, origin) rounds t down to a bin start
// w <= t < w + S: Lo = 0, Hi = S - 1. TUMBLE(S) and HOP(slide, S) expand
// a row at t into windows [s, s + S) with s <= t < s + S; CUMULATE(step,
// S) into windows [s, e) of the S-aligned window [s, s + S) that holds t,
// with t < e <= s + S. So a window_start s has t in [s, s + S - 1] (Lo =
// 0, Hi = S - 1), and a window_end e, whose start is at least e - S, has
// t in [e - S, e - 1] (Lo = -S, Hi = -1); a date_bin of such a value
// adds its stride - 1 to Hi (the planner composes them).
//
// Watermark. As the interval join (JoinInterval), the operator derives a
// watermark from the rows it receives. When the input's rows come from
// one LateFilter subtask (delay D) over forward steps and one hash
// exchange, which keep their order, a row y that reaches a GroupAgg
// subtask after a row x passed the LateFilter after x, when the filter's
// largest time was already at least t(x); so t(y) >= t(x) - D. Let W be
// the largest window value this subtask has seen and x the row that
// brought it: t(x) >= W + Lo, so every row still to come has
// t >= W + Lo - D. A row of window w has t <= w + Hi; so once
//
//	w + Hi < W + Lo - D, that is w + Horizon <= W with Horizon = Hi - Lo + D + 1,
//
// no row of window w can arrive any more. For date_bin and TUMBLE
// windows of size S, Horizon is S + D: the window [w, w + S) closes once
// the largest window start seen is S + D past w. The argument survives
// restores: W is checkpointed with the groups, and every row delivered
// after a restore (replayed by the source through the restored
// LateFilter, or from an unaligned checkpoint's channel state) passed
// the LateFilter after the rows that brought W.
//
// Invariant (closed-window): a group is freed only when its window value
// w satisfies w + Horizon <= W, and then no row of its window can come;
// a row that would belong to a closed window is an error (it would
// re-create a group whose row the view already holds). Since the input is
// insert-only (a retraction is an error too), a group's output never
// changes after its window closed, and its last emitted row stays in the
// view's table: freeing emits nothing. Expiry runs at the end of OnEpoch
// (spread over the epochs after a window closes: expire),
// after the epoch's output, so the output never depends on it. A group
// whose window value is NULL (a row without an event time) or infinite
// never expires, and never raises W.
//
// State. W (with a flag for none yet) and, per open window, its anchor:
// the key of the first group of that window this subtask made, under
// which the window's group keys are kept as keyed value state in chunks
// window-groups-0, window-groups-1, ...: the keys of the groups the
// window got since the previous checkpoint are written as one new chunk
// at each checkpoint, so a checkpoint writes each key once, and the
// lists are restored with the groups they name. Operator state holds W
// and per open window its value, anchor and number of chunks (a few
// bytes per open window). Groups restored from a checkpoint written
// without expiry are in no list and are never freed.
//
// Tried first: one map state entry per group under the anchor. The heap
// backend writes its map entries whole at every checkpoint (its values
// go to shared files incrementally), which made the demo's t1 checkpoint
// take about twice as long (1.0-1.3 s instead of 0.5-0.7 s).
type GroupExpiry struct {
	// Col is the position of the window key among the GroupAgg's key
	// columns (its key row); the column is TIMESTAMP or TIMESTAMPTZ.
	Col int
	// Horizon in microseconds (> 0): a group whose window value w has
	// w + Horizon <= the largest window value seen is closed.
	Horizon int64
}

// expiryState is a GroupAgg's in-memory expiry state.
type expiryState struct {
	seen bool
	max  int64 // W, the largest finite window value seen
	// windows maps each open window value to its groups' list.
	windows map[int64]*windowList
	// freed counts the groups freed since Open.
	freed int64
}

// windowList is where an open window's group keys are: chunks in keyed
// state under anchor, and the keys made since the last checkpoint.
type windowList struct {
	anchor  string
	chunks  uint64
	pending []string
}

const (
	expiryName     = "group-expiry"
	expiryVersion1 = 1
)

// chunkName names chunk i of a window's group keys.
func chunkName(i uint64) string { return fmt.Sprintf("window-groups-%d", i) }

// closed reports whether window value w is closed (invariant
// closed-window).
func (g *GroupAgg) closed(w int64) bool {
	return g.exp.seen && satAdd(w, g.Expiry.Horizon) <= g.exp.max
}

// windowOf returns the finite window value of a key row, if it has one.
func (g *GroupAgg) windowOf(keys types.Row) (int64, bool) {
	d := keys[g.Expiry.Col]
	if d.IsNull() || infinite(d.Micros()) {
		return 0, false
	}
	return d.Micros(), true
}

func (g *GroupAgg) openExpiry() error {
	e := g.Expiry
	if e.Col < 0 || e.Col >= len(g.KeyTypes) || e.Horizon <= 0 {
		return fmt.Errorf("group aggregation %s: expiry column %d of %d, horizon %d us: %w", g.ctx.Vertex, e.Col, len(g.KeyTypes), e.Horizon, base.ErrInvalidArgument)
	}
	if k := g.KeyTypes[e.Col].Kind; k != types.KindTimestamp && k != types.KindTimestampTZ {
		return fmt.Errorf("group aggregation %s: expiry key column %d is %s, not a timestamp: %w", g.ctx.Vertex, e.Col, g.KeyTypes[e.Col], base.ErrInvalidArgument)
	}
	g.exp = expiryState{windows: map[int64]*windowList{}}
	b, ok, err := g.ctx.State.OperatorValue(expiryName).Get()
	if err != nil || !ok {
		return err
	}
	if len(b) < 2 || b[0] != expiryVersion1 || b[1] > 1 {
		return g.corrupt("expiry state version")
	}
	g.exp.seen = b[1] == 1
	b = b[2:]
	v, k := binary.Varint(b)
	if k <= 0 {
		return g.corrupt("expiry largest window")
	}
	g.exp.max, b = v, b[k:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)) {
		return g.corrupt("expiry window count")
	}
	b = b[k:]
	for range n {
		w, k := binary.Varint(b)
		if k <= 0 {
			return g.corrupt("expiry window")
		}
		b = b[k:]
		l, k := binary.Uvarint(b)
		if k <= 0 || uint64(len(b)-k) < l || l == 0 {
			return g.corrupt("expiry window anchor")
		}
		wl := &windowList{anchor: string(b[k : k+int(l)])}
		b = b[k+int(l):]
		if wl.chunks, k = binary.Uvarint(b); k <= 0 {
			return g.corrupt("expiry window chunks")
		}
		b = b[k:]
		g.exp.windows[w] = wl
	}
	if len(b) != 0 {
		return g.corrupt("trailing expiry state")
	}
	return nil
}

// Expiry state: version (1), seen flag (0 or 1), W (varint), the number
// of open windows (uvarint), then per window in ascending order its
// value (varint), its anchor key (uvarint length, bytes) and its number
// of chunks (uvarint). A chunk is its group keys, each with its length
// (uvarint) before it. snapshotExpiry first writes each window's pending
// keys as its next chunk.
func (g *GroupAgg) snapshotExpiry() error {
	b := []byte{expiryVersion1, 0}
	if g.exp.seen {
		b[1] = 1
	}
	b = binary.AppendVarint(b, g.exp.max)
	ws := g.openWindows(math.MaxInt64)
	b = binary.AppendUvarint(b, uint64(len(ws)))
	var chunk []byte
	for _, w := range ws {
		wl := g.exp.windows[w]
		if len(wl.pending) > 0 {
			chunk = chunk[:0]
			for _, k := range wl.pending {
				chunk = binary.AppendUvarint(chunk, uint64(len(k)))
				chunk = append(chunk, k...)
			}
			g.ctx.State.SetCurrentKey([]byte(wl.anchor))
			if err := g.ctx.State.Value(chunkName(wl.chunks)).Set(chunk); err != nil {
				return err
			}
			wl.chunks++
			wl.pending = nil
		}
		b = binary.AppendVarint(b, w)
		b = binary.AppendUvarint(b, uint64(len(wl.anchor)))
		b = append(b, wl.anchor...)
		b = binary.AppendUvarint(b, wl.chunks)
	}
	return g.ctx.State.OperatorValue(expiryName).Set(b)
}

// openWindows returns the open windows' values up to upTo, ascending.
func (g *GroupAgg) openWindows(upTo int64) []int64 {
	var ws []int64
	for w := range g.exp.windows {
		if w <= upTo {
			ws = append(ws, w)
		}
	}
	slices.Sort(ws)
	return ws
}

// observeWindow checks a row of key row keys and kind against the
// expiry rule and raises W.
func (g *GroupAgg) observeWindow(keys types.Row, kind types.RowKind) error {
	if kind != types.Insert {
		return fmt.Errorf("group aggregation %s: a %s in an input whose closed windows are freed (insert-only): %w", g.ctx.Vertex, kind, base.ErrInvalidArgument)
	}
	w, ok := g.windowOf(keys)
	if !ok {
		return nil
	}
	if g.closed(w) {
		return fmt.Errorf("group aggregation %s: a row of group %s, whose window closed when the largest window seen reached %s (invariant closed-window): %w",
			g.ctx.Vertex, keys, types.FormatText(timeMaker(g.KeyTypes[g.Expiry.Col])(g.exp.max), nil), base.ErrInvalidArgument)
	}
	if !g.exp.seen || w > g.exp.max {
		g.exp.max, g.exp.seen = w, true
	}
	return nil
}

// indexGroup lists a new group under its window.
func (g *GroupAgg) indexGroup(gr *group) {
	w, ok := g.windowOf(gr.keys)
	if !ok {
		return
	}
	wl := g.exp.windows[w]
	if wl == nil {
		wl = &windowList{anchor: gr.key}
		g.exp.windows[w] = wl
	}
	wl.pending = append(wl.pending, gr.key)
}

// expireBatch is the least number of closed windows' groups one OnEpoch
// frees; it frees a sixteenth of those waiting when that is more.
var expireBatch = 4096

// expire frees the groups of the closed windows: their cache entries,
// their keyed state and the window's list (invariant closed-window). A
// window's groups are freed over the epochs after it closed, at least
// expireBatch or a sixteenth of the groups waiting per epoch, so that the
// epoch at which a window of many groups closes is not held up by
// freeing them all: at 100K events/s, freeing one 10-second window's
// groups of the demo's t1 at once held its epoch 170-350 ms. Until
// freed, a closed window's groups sit in memory untouched: no row can
// reach them (observeWindow refuses one), so the output does not depend
// on when they go. The keys still to free are the window's pending keys,
// which a checkpoint writes as the window's chunk like any others, so a
// restore goes on freeing them.
func (g *GroupAgg) expire() error {
	if !g.exp.seen {
		return nil
	}
	closed := g.openWindows(satAdd(g.exp.max, -g.Expiry.Horizon))
	waiting := 0
	for _, w := range closed {
		wl := g.exp.windows[w]
		if err := g.loadWindow(w, wl); err != nil {
			return err
		}
		waiting += len(wl.pending)
	}
	budget := max(expireBatch, waiting/16)
	for _, w := range closed {
		wl := g.exp.windows[w]
		n := min(budget, len(wl.pending))
		for _, k := range wl.pending[len(wl.pending)-n:] {
			if gr := g.cache[k]; gr != nil {
				g.forget(gr)
			}
			g.ctx.State.SetCurrentKey([]byte(k))
			if err := g.ctx.State.Value(groupState).Clear(); err != nil {
				return err
			}
		}
		clear(wl.pending[len(wl.pending)-n:])
		wl.pending = wl.pending[:len(wl.pending)-n]
		g.exp.freed += int64(n)
		if budget -= n; len(wl.pending) == 0 {
			delete(g.exp.windows, w)
		}
		if budget == 0 {
			break
		}
	}
	return nil
}

// loadWindow moves the keys of window w's chunks in keyed state into its
// pending keys and clears the chunks.
func (g *GroupAgg) loadWindow(w int64, wl *windowList) error {
	for i := range wl.chunks {
		g.ctx.State.SetCurrentKey([]byte(wl.anchor))
		v := g.ctx.State.Value(chunkName(i))
		b, ok, err := v.Get()
		if err != nil {
			return err
		}
		if !ok {
			return g.corrupt(fmt.Sprintf("window %d chunk %d missing", w, i))
		}
		for len(b) > 0 {
			n, k := binary.Uvarint(b)
			if k <= 0 || uint64(len(b)-k) < n {
				return g.corrupt("window chunk")
			}
			wl.pending = append(wl.pending, string(b[k:k+int(n)]))
			b = b[k+int(n):]
		}
		if err := v.Clear(); err != nil {
			return err
		}
	}
	wl.chunks = 0
	return nil
}

// closedWaiting returns how many groups of closed windows are waiting
// to be freed (expire), for tests.
func (g *GroupAgg) closedWaiting() int {
	if !g.exp.seen {
		return 0
	}
	n := 0
	for _, w := range g.openWindows(satAdd(g.exp.max, -g.Expiry.Horizon)) {
		n += len(g.exp.windows[w].pending)
	}
	return n
}

// Groups returns the number of groups the subtask holds in memory (its
// cache), for tests and metrics.
func (g *GroupAgg) Groups() int { return len(g.cache) }

// FreedGroups returns the number of groups of closed windows the subtask
// freed since it was opened (zero without Expiry).
func (g *GroupAgg) FreedGroups() int64 { return g.exp.freed }
