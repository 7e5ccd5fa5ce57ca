package stream

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/agg"
)

// Windowed input rows: (auction BIGINT, window_start TIMESTAMP, price
// BIGINT), as a pre-aggregation Map gives them for GROUP BY auction,
// date_bin('10 s', date_time, origin).
var winTypes = []types.Type{types.Int64, types.Timestamp, types.Int64}

const (
	winSize  = 10 * microsPerSecond
	winDelay = 5 * microsPerSecond
)

func newWindowAgg(expiry bool) *GroupAgg {
	g := &GroupAgg{
		KeyCols: []int{0, 1}, KeyTypes: []types.Type{types.Int64, types.Timestamp},
		Aggs: []AggCall{
			{Spec: agg.Spec{Func: "count", AppendOnly: true}, FilterCol: -1},
			{Spec: agg.Spec{Func: "sum", Args: []types.Type{types.Int64}, AppendOnly: true}, ArgCols: []int{2}, FilterCol: -1},
		},
	}
	if expiry {
		g.Expiry = &GroupExpiry{Col: 1, Horizon: winSize + winDelay}
	}
	return g
}

// winRow is a bid of auction at event time us, with its window.
type winRow struct {
	auction, us, price int64
	null               bool
}

func (r winRow) row() types.Row {
	w := types.NewTimestamp(r.us - floorMod(r.us, winSize))
	if r.null {
		w = types.Null
	}
	return types.Row{types.NewInt64(r.auction), w, types.NewInt64(r.price)}
}

// admittedBids draws epochs of bids whose event times rise by about 0.4 s
// a bid with up to 7 s of disorder, some without a time, and keeps those a
// LateFilter of delay winDelay admits in arrival order (the input a
// GroupAgg with expiry gets).
func admittedBids(seed uint64, epochs int) [][]winRow {
	rng := rand.New(rand.NewPCG(seed, 17))
	var out [][]winRow
	seen, maxT := false, int64(0)
	i := int64(0)
	for range epochs {
		var ep []winRow
		for range rng.IntN(25) {
			i++
			r := winRow{auction: int64(rng.IntN(4)), us: i*400_000 - int64(rng.IntN(71))*100_000 - 20*microsPerSecond, price: int64(rng.IntN(100))}
			if rng.IntN(20) == 0 {
				r.null = true
				ep = append(ep, r)
				continue
			}
			if seen && r.us < maxT-winDelay {
				continue // late: the LateFilter drops it
			}
			if !seen || r.us > maxT {
				seen, maxT = true, r.us
			}
			ep = append(ep, r)
		}
		out = append(out, ep)
	}
	return out
}

// windowModel recomputes the view: per (auction, window) the count and
// sum of its bids.
func windowModel(epochs [][]winRow) map[string]string {
	type acc struct{ n, sum int64 }
	groups := map[string]*acc{}
	for _, ep := range epochs {
		for _, r := range ep {
			row := r.row()
			k := row[0].String() + ", " + row[1].String()
			a := groups[k]
			if a == nil {
				a = &acc{}
				groups[k] = a
			}
			a.n++
			a.sum += r.price
		}
	}
	out := map[string]string{}
	for k, a := range groups {
		out[k] = fmt.Sprintf("(%s, %d, %d)", k, a.n, a.sum)
	}
	return out
}

// applyKeyed applies changelog lines to a view keyed by the first two
// columns.
func applyKeyed(t *testing.T, view map[string]string, rows []string) {
	t.Helper()
	for _, r := range rows {
		kind, body := r[:2], r[3:]
		f := strings.SplitN(strings.TrimPrefix(body, "("), ", ", 3)
		key := f[0] + ", " + f[1]
		switch kind {
		case "+I", "+U":
			if _, ok := view[key]; ok && kind == "+I" {
				t.Fatalf("+I of existing key %s", key)
			}
			view[key] = body
		case "-U", "-D":
			if view[key] != body {
				t.Fatalf("%s %s retracts a row the view holds as %q", kind, body, view[key])
			}
			delete(view, key)
		}
	}
}

// TestGroupExpiryFreesClosedWindows runs a windowed GroupAgg with and
// without expiry over the same admitted bids, checkpointing and
// restoring the one with expiry at random points (in the middle of
// epochs too) and replaying the input after the checkpoint: both views
// equal the independent recomputation, the one with expiry freed groups
// as their windows closed, holds only groups of open windows, and no
// freed group's keyed state is left.
func TestGroupExpiryFreesClosedWindows(t *testing.T) {
	defer func(b int) { expireBatch = b }(expireBatch)
	for seed := range uint64(8) {
		// Odd seeds free at most a few groups an epoch (or a sixteenth of
		// those waiting), so checkpoints and restores fall in the middle
		// of freeing a window.
		expireBatch = 4096
		if seed%2 == 1 {
			expireBatch = 2
		}
		epochs := admittedBids(seed, 60)
		want := windowModel(epochs)
		rng := rand.New(rand.NewPCG(seed, 23))

		// Without expiry, no restarts.
		plain := &collector{}
		p := newWindowAgg(false)
		if err := p.Open(newContext(t, heap.New(), plain, 0)); err != nil {
			t.Fatal(err)
		}
		// With expiry, restarts.
		backend := state.Backend(heap.New())
		out := &collector{}
		g := newWindowAgg(true)
		if err := g.Open(newContext(t, backend, out, 0)); err != nil {
			t.Fatal(err)
		}
		type pos struct{ epoch, row int }
		var snap struct {
			handle []byte
			at     pos
			out    int
			id     base.CheckpointID
		}
		restarts, maxGroups := 0, 0
		var freed int64
		for e := 0; e < len(epochs); e++ {
			start := 0
			if snap.handle != nil && rng.IntN(10) == 0 { // crash and restore
				restored, err := heap.Restore(snap.handle, nil)
				if err != nil {
					t.Fatal(err)
				}
				backend = restored
				out.chunks = out.chunks[:snap.out]
				freed += g.FreedGroups()
				g = newWindowAgg(true)
				if err := g.Open(newContext(t, backend, out, snap.id)); err != nil {
					t.Fatal(err)
				}
				e, start = snap.at.epoch, snap.at.row
				restarts++
			}
			for i := start; i <= len(epochs[e]); i++ {
				if rng.IntN(8) == 0 { // checkpoint here
					snap.id++
					if err := g.Snapshot(snap.id); err != nil {
						t.Fatal(err)
					}
					s, err := backend.Snapshot(snap.id, nil)
					if err != nil {
						t.Fatal(err)
					}
					snap.handle, snap.at, snap.out = s.Handle, pos{e, i}, len(out.chunks)
				}
				if i == len(epochs[e]) {
					break
				}
				c := types.NewChunk(winTypes, 1)
				c.Append(types.Insert, epochs[e][i].row())
				if err := g.Process(0, c); err != nil {
					t.Fatalf("seed %d epoch %d row %d: %v", seed, e, i, err)
				}
			}
			if err := g.OnEpoch(base.Epoch(e + 1)); err != nil {
				t.Fatal(err)
			}
			maxGroups = max(maxGroups, g.Groups())
			// Every group held belongs to an open window, has none, or
			// waits to be freed.
			waiting := waitingKeys(g)
			for _, gr := range g.cache {
				if w, ok := g.windowOf(gr.keys); ok && g.closed(w) && !waiting[gr.key] {
					t.Fatalf("seed %d epoch %d: group %s of a closed window held and not waiting to be freed", seed, e, gr.keys)
				}
			}
			if expireBatch == 4096 && len(waiting) > 0 {
				t.Fatalf("seed %d epoch %d: %d groups of closed windows wait, under a batch that frees them at once", seed, e, len(waiting))
			}
		}
		// Epochs without input free what still waits.
		for e := len(epochs); g.closedWaiting() > 0; e++ {
			if e > 4*len(epochs) {
				t.Fatalf("seed %d: %d groups of closed windows still wait", seed, g.closedWaiting())
			}
			if err := g.OnEpoch(base.Epoch(e + 1)); err != nil {
				t.Fatal(err)
			}
		}
		for e, ep := range epochs {
			c := types.NewChunk(winTypes, len(ep))
			for _, r := range ep {
				c.Append(types.Insert, r.row())
			}
			if err := p.Process(0, c); err != nil {
				t.Fatal(err)
			}
			if err := p.OnEpoch(base.Epoch(e + 1)); err != nil {
				t.Fatal(err)
			}
		}
		got, gotPlain := map[string]string{}, map[string]string{}
		applyKeyed(t, got, out.rows())
		applyKeyed(t, gotPlain, plain.rows())
		if fmt.Sprint(sortedMap(got)) != fmt.Sprint(sortedMap(want)) {
			t.Fatalf("seed %d with expiry: view\n%v\nwant\n%v", seed, sortedMap(got), sortedMap(want))
		}
		if fmt.Sprint(sortedMap(gotPlain)) != fmt.Sprint(sortedMap(want)) {
			t.Fatalf("seed %d without expiry: view\n%v\nwant\n%v", seed, sortedMap(gotPlain), sortedMap(want))
		}
		// The freed groups' keyed state is gone; the held ones' is there
		// once a checkpoint wrote them back.
		if err := g.Snapshot(snap.id + 1); err != nil {
			t.Fatal(err)
		}
		stored := 0
		for k := range want {
			f := strings.SplitN(k, ", ", 2)
			var keys types.Row
			for _, r := range epochs {
				for _, b := range r {
					if row := b.row(); row[0].String() == f[0] && row[1].String() == f[1] {
						keys = row[:2]
					}
				}
			}
			key := types.EncodeKey(nil, keys, []int{0, 1}, g.KeyTypes)
			g.ctx.State.SetCurrentKey(key)
			_, ok, err := g.ctx.State.Value(groupState).Get()
			if err != nil {
				t.Fatal(err)
			}
			w, windowed := g.windowOf(keys)
			switch {
			case ok:
				stored++
				if windowed && g.closed(w) {
					t.Fatalf("seed %d: state of group %s of a closed window remains", seed, keys)
				}
			case !windowed || !g.closed(w):
				t.Fatalf("seed %d: state of open group %s missing", seed, keys)
			}
		}
		freed += g.FreedGroups()
		// A restored subtask holds in memory only the groups it touched
		// since; every stored group is of an open window (above).
		if g.Groups() > stored || freed == 0 || stored >= len(want)/4 {
			t.Fatalf("seed %d: %d groups stored, %d held, %d freed, of %d", seed, stored, g.Groups(), freed, len(want))
		}
		t.Logf("seed %d: %d groups, at most %d held, %d stored at the end, %d freed over %d restarts (plain holds %d)",
			seed, len(want), maxGroups, stored, freed, restarts, p.Groups())
	}
}

// waitingKeys returns the keys of closed windows' groups that wait to be
// freed.
func waitingKeys(g *GroupAgg) map[string]bool {
	out := map[string]bool{}
	if !g.exp.seen {
		return out
	}
	for _, w := range g.openWindows(satAdd(g.exp.max, -g.Expiry.Horizon)) {
		for _, k := range g.exp.windows[w].pending {
			out[k] = true
		}
	}
	return out
}

// TestGroupExpiryRefusesRowsOfClosedWindows: a retraction, and a row of
// a window already closed, are errors naming the operator; neither
// happens behind a LateFilter (invariant closed-window).
func TestGroupExpiryRefusesRowsOfClosedWindows(t *testing.T) {
	g := newWindowAgg(true)
	if err := g.Open(newContext(t, heap.New(), &collector{}, 0)); err != nil {
		t.Fatal(err)
	}
	c := types.NewChunk(winTypes, 2)
	c.Append(types.Insert, winRow{auction: 1, us: 0, price: 1}.row())
	c.Append(types.Insert, winRow{auction: 1, us: 15 * microsPerSecond, price: 1}.row())
	if err := g.Process(0, c); err != nil {
		t.Fatal(err)
	}
	if err := g.OnEpoch(1); err != nil {
		t.Fatal(err)
	}
	// The largest window is 10 s: the window at 0 closes at 15 s, not yet.
	if g.FreedGroups() != 0 || g.Groups() != 2 {
		t.Fatalf("freed %d, held %d; want 0 and 2", g.FreedGroups(), g.Groups())
	}
	c = types.NewChunk(winTypes, 1)
	c.Append(types.Insert, winRow{auction: 2, us: 20 * microsPerSecond, price: 1}.row())
	if err := g.Process(0, c); err != nil {
		t.Fatal(err)
	}
	if err := g.OnEpoch(2); err != nil {
		t.Fatal(err)
	}
	if g.FreedGroups() != 1 || g.Groups() != 2 {
		t.Fatalf("freed %d, held %d; want 1 and 2", g.FreedGroups(), g.Groups())
	}
	c = types.NewChunk(winTypes, 1)
	c.Append(types.Insert, winRow{auction: 3, us: 9 * microsPerSecond, price: 1}.row())
	if err := g.Process(0, c); err == nil || !strings.Contains(err.Error(), "closed-window") {
		t.Fatalf("row of a closed window: %v", err)
	}
	c = types.NewChunk(winTypes, 1)
	c.Append(types.Delete, winRow{auction: 2, us: 20 * microsPerSecond, price: 1}.row())
	if err := g.Process(0, c); err == nil || !strings.Contains(err.Error(), "insert-only") {
		t.Fatalf("retraction: %v", err)
	}
}
