package stream

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/agg"
	"github.com/stratadb/strata/sql/expr"
)

// collector is an operator.Output that keeps what it is given.
type collector struct{ chunks []*types.Chunk }

func (c *collector) Emit(ch *types.Chunk) error {
	c.chunks = append(c.chunks, ch)
	return nil
}

func (c *collector) rows() []string {
	var out []string
	for _, ch := range c.chunks {
		for i := range ch.Len() {
			out = append(out, ch.Kind(i).String()+" "+ch.Row(i).String())
		}
	}
	return out
}

const maxPar = 128

func newContext(t *testing.T, b state.Backend, out operator.Output, restored base.CheckpointID) *operator.Context {
	t.Helper()
	return &operator.Context{
		Vertex: "agg", Subtask: 0, Parallelism: 1,
		State:    state.NewStore(b, state.RangeOf(0, 1, maxPar), maxPar),
		Output:   out,
		Restored: restored,
	}
}

// input schema: (k BIGINT, v BIGINT, s TEXT)
var inTypes = []types.Type{types.Int64, types.Int64, types.Text}

func newAgg() *GroupAgg {
	return &GroupAgg{
		KeyCols: []int{0}, KeyTypes: []types.Type{types.Int64},
		Aggs: []AggCall{
			{Spec: agg.Spec{Func: "count"}, FilterCol: -1},
			{Spec: agg.Spec{Func: "sum", Args: []types.Type{types.Int64}}, ArgCols: []int{1}, FilterCol: -1},
			{Spec: agg.Spec{Func: "max", Args: []types.Type{types.Text}}, ArgCols: []int{2}, FilterCol: -1},
			{Spec: agg.Spec{Func: "count", Args: []types.Type{types.Int64}, Distinct: true}, ArgCols: []int{1}, FilterCol: -1},
		},
	}
}

func chunkOf(kind types.RowKind, rows ...types.Row) *types.Chunk {
	c := types.NewChunk(inTypes, len(rows))
	for _, r := range rows {
		c.Append(kind, r)
	}
	return c
}

func row(k, v int64, s string) types.Row {
	return types.Row{types.NewInt64(k), types.NewInt64(v), types.NewText(s)}
}

func TestGroupAggEmitsNetChangesPerEpoch(t *testing.T) {
	out := &collector{}
	g := newAgg()
	if err := g.Open(newContext(t, heap.New(), out, 0)); err != nil {
		t.Fatal(err)
	}
	step := func(c *types.Chunk) {
		if err := g.Process(0, c); err != nil {
			t.Fatal(err)
		}
	}
	epoch := func(e base.Epoch) string {
		n := len(out.rows())
		if err := g.OnEpoch(e); err != nil {
			t.Fatal(err)
		}
		return strings.Join(out.rows()[n:], "; ")
	}
	step(chunkOf(types.Insert, row(1, 5, "a"), row(2, 7, "b"), row(1, 5, "c")))
	if got, want := epoch(1), "+I (1, 2, 10, c, 1); +I (2, 1, 7, b, 1)"; got != want {
		t.Fatalf("epoch 1: %s, want %s", got, want)
	}
	// Insert and retract the same row: no net change, nothing emitted.
	step(chunkOf(types.Insert, row(2, 9, "z")))
	step(chunkOf(types.Delete, row(2, 9, "z")))
	if got := epoch(2); got != "" {
		t.Fatalf("epoch 2 emitted %s, want nothing", got)
	}
	// An update retracts the max.
	step(chunkOf(types.UpdateBefore, row(1, 5, "c")))
	step(chunkOf(types.UpdateAfter, row(1, 6, "b")))
	if got, want := epoch(3), "-U (1, 2, 10, c, 1); +U (1, 2, 11, b, 2)"; got != want {
		t.Fatalf("epoch 3: %s, want %s", got, want)
	}
	// The last rows of a group go: -D.
	step(chunkOf(types.Delete, row(2, 7, "b")))
	if got, want := epoch(4), "-D (2, 1, 7, b, 1)"; got != want {
		t.Fatalf("epoch 4: %s, want %s", got, want)
	}
	// A lone retraction of an unknown group is an error naming it.
	if err := g.Process(0, chunkOf(types.Delete, row(9, 1, "x"))); err == nil || !strings.Contains(err.Error(), "(9)") {
		t.Fatalf("lone retraction: %v", err)
	}
}

func TestGlobalAggregateStartsAtTheFirstEpoch(t *testing.T) {
	out := &collector{}
	g := &GroupAgg{Aggs: []AggCall{
		{Spec: agg.Spec{Func: "count"}, FilterCol: -1},
		{Spec: agg.Spec{Func: "max", Args: []types.Type{types.Int64}}, ArgCols: []int{1}, FilterCol: -1},
	}}
	if err := g.Open(newContext(t, heap.New(), out, 0)); err != nil {
		t.Fatal(err)
	}
	// The MAX case: +5, +9, -9, -5, +3, one per epoch.
	steps := []struct {
		kind types.RowKind
		v    int64
	}{{types.Insert, 5}, {types.Insert, 9}, {types.Delete, 9}, {types.Delete, 5}, {types.Insert, 3}}
	if err := g.OnEpoch(1); err != nil {
		t.Fatal(err)
	}
	for i, s := range steps {
		if err := g.Process(0, chunkOf(s.kind, row(0, s.v, ""))); err != nil {
			t.Fatal(err)
		}
		if err := g.OnEpoch(base.Epoch(i + 2)); err != nil {
			t.Fatal(err)
		}
	}
	want := "+I (0, NULL); -U (0, NULL); +U (1, 5); -U (1, 5); +U (2, 9); -U (2, 9); +U (1, 5); -U (1, 5); +U (0, NULL); -U (0, NULL); +U (1, 3)"
	if got := strings.Join(out.rows(), "; "); got != want {
		t.Fatalf("global max:\n got %s\nwant %s", got, want)
	}
}

// model is an independent recomputation: the live rows grouped by k, with
// count(*), sum(v), max(s), count(DISTINCT v) computed in plain Go.
func model(live map[int]types.Row) map[string]string {
	type acc struct {
		n, sum   int64
		max      string
		distinct map[int64]bool
	}
	groups := map[int64]*acc{}
	for _, r := range live {
		k := r[0].Int64()
		a := groups[k]
		if a == nil {
			a = &acc{distinct: map[int64]bool{}}
			groups[k] = a
		}
		a.n++
		a.sum += r[1].Int64()
		if s := r[2].Str(); a.n == 1 || s > a.max {
			a.max = s
		}
		a.distinct[r[1].Int64()] = true
	}
	out := map[string]string{}
	for k, a := range groups {
		out[fmt.Sprint(k)] = fmt.Sprintf("(%d, %d, %d, %s, %d)", k, a.n, a.sum, a.max, len(a.distinct))
	}
	return out
}

// view applies a changelog to a keyed table and checks it is consistent:
// every -U/-D retracts exactly the row that is there.
func apply(t *testing.T, view map[string]string, rows []string) {
	t.Helper()
	for _, r := range rows {
		kind, body := r[:2], r[3:]
		key := strings.SplitN(strings.TrimPrefix(body, "("), ",", 2)[0]
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

// TestGroupAggRandomWithRestarts feeds random inserts and retractions over
// many epochs, restarts the operator from a snapshot at random points (in
// the middle of epochs too), replays the input after the snapshot as the
// runtime would, and checks the view built from its changelog against the
// independent model after every epoch.
func TestGroupAggRandomWithRestarts(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 42))
		type event struct {
			kind  types.RowKind
			row   types.Row
			epoch base.Epoch // non-zero: close this epoch
		}
		// Build the input history first, so that it can be replayed.
		var history []event
		live := map[int]types.Row{}
		var liveIDs []int
		next := 0
		for e := base.Epoch(1); e <= 30; e++ {
			for range rng.IntN(12) {
				if len(liveIDs) > 0 && rng.IntN(3) == 0 {
					i := rng.IntN(len(liveIDs))
					id := liveIDs[i]
					liveIDs = append(liveIDs[:i], liveIDs[i+1:]...)
					kind := types.Delete
					if rng.IntN(2) == 0 {
						kind = types.UpdateBefore
					}
					history = append(history, event{kind: kind, row: live[id]})
					delete(live, id)
					continue
				}
				r := row(int64(rng.IntN(5)), int64(rng.IntN(4)), string(rune('a'+rng.IntN(6))))
				live[next] = r
				liveIDs = append(liveIDs, next)
				next++
				kind := types.Insert
				if rng.IntN(2) == 0 {
					kind = types.UpdateAfter
				}
				history = append(history, event{kind: kind, row: r})
			}
			history = append(history, event{epoch: e})
		}

		// Run, with snapshots and restarts.
		backend := state.Backend(heap.New())
		out := &collector{}
		g := newAgg()
		if err := g.Open(newContext(t, backend, out, 0)); err != nil {
			t.Fatal(err)
		}
		var snapPos, snapOut int
		var snapHandle []byte
		var snapID base.CheckpointID
		view := map[string]string{}
		applied := 0
		for pos := 0; pos < len(history); pos++ {
			ev := history[pos]
			if ev.epoch != 0 {
				if err := g.OnEpoch(ev.epoch); err != nil {
					t.Fatal(err)
				}
			} else if err := g.Process(0, chunkOf(ev.kind, ev.row)); err != nil {
				t.Fatalf("seed %d pos %d: %v", seed, pos, err)
			}
			if rng.IntN(6) == 0 { // checkpoint here
				snapID++
				if err := g.Snapshot(snapID); err != nil {
					t.Fatal(err)
				}
				snap, err := backend.Snapshot(snapID, nil)
				if err != nil {
					t.Fatal(err)
				}
				snapHandle, snapPos, snapOut = snap.Handle, pos+1, len(out.chunks)
			}
			if snapHandle != nil && rng.IntN(15) == 0 { // crash and restore
				restored, err := heap.Restore(snapHandle, nil)
				if err != nil {
					t.Fatal(err)
				}
				backend = restored
				out.chunks = out.chunks[:snapOut]
				g = newAgg()
				if err := g.Open(newContext(t, backend, out, snapID)); err != nil {
					t.Fatal(err)
				}
				pos = snapPos - 1
				// The view is rebuilt from the surviving changelog.
				view = map[string]string{}
				applied = 0
				continue
			}
		}
		rows := out.rows()
		apply(t, view, rows[applied:])
		want := model(live)
		if fmt.Sprint(sortedMap(view)) != fmt.Sprint(sortedMap(want)) {
			t.Fatalf("seed %d: view\n%v\nwant\n%v", seed, sortedMap(view), sortedMap(want))
		}
	}
}

func sortedMap(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

func TestMapFiltersAndProjects(t *testing.T) {
	gt, _, err := expr.Builtins.Lookup(">", []types.Type{types.Int64, types.Int64})
	if err != nil {
		t.Fatal(err)
	}
	plus, _, _ := expr.Builtins.Lookup("+", []types.Type{types.Int64, types.Int64})
	v := &expr.ColumnRef{Index: 1, Typ: types.Int64, Name: "v"}
	m := &Map{
		Filter: expr.NewCall(gt, v, &expr.Const{Value: types.NewInt64(5), Typ: types.Int64}),
		Exprs:  []expr.Expr{&expr.ColumnRef{Index: 0, Typ: types.Int64}, expr.NewCall(plus, v, &expr.Const{Value: types.NewInt64(1), Typ: types.Int64})},
	}
	out := &collector{}
	if err := m.Open(newContext(t, heap.New(), out, 0)); err != nil {
		t.Fatal(err)
	}
	c := types.NewChunk(inTypes, 3)
	c.Append(types.UpdateBefore, row(1, 9, "a")) // passes: retracts
	c.Append(types.UpdateAfter, row(1, 2, "a"))  // filtered out
	c.Append(types.Insert, row(2, 6, "b"))
	if err := m.Process(0, c); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(out.rows(), "; "), "-U (1, 10); +I (2, 7)"; got != want {
		t.Fatalf("Map: %s, want %s", got, want)
	}
}

// A projection that drops the column that changed emits nothing for an
// unchanged projected row (invariant quiet-projection): an adjacent
// -U x, +U x pair and a -D x ... +I x of a join's epoch both cancel; a
// -U whose +U cancelled becomes -D and a +U whose -U cancelled +I; what
// remains keeps its order.
func TestMapCancelsNoise(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []types.RowKind
		rows []types.Row
		want string
	}{
		{"update of a dropped column",
			[]types.RowKind{types.UpdateBefore, types.UpdateAfter, types.UpdateBefore, types.UpdateAfter},
			[]types.Row{row(1, 5, "a"), row(1, 5, "b"), row(2, 5, "a"), row(3, 5, "a")},
			"-U (2); +U (3)"},
		{"join epoch: retractions, then additions",
			[]types.RowKind{types.Delete, types.Delete, types.Insert, types.Insert, types.Insert},
			[]types.Row{row(1, 1, "a"), row(2, 1, "a"), row(1, 1, "b"), row(3, 1, "b"), row(1, 1, "c")},
			"-D (2); +I (3); +I (1)"},
		{"pairs across groups",
			[]types.RowKind{types.UpdateBefore, types.UpdateAfter, types.UpdateBefore, types.UpdateAfter},
			[]types.Row{row(1, 1, "a"), row(2, 1, "a"), row(2, 2, "a"), row(3, 2, "a")},
			"-D (1); +I (3)"},
		{"half of a pair cancelled",
			[]types.RowKind{types.Delete, types.UpdateBefore, types.UpdateAfter},
			[]types.Row{row(7, 1, "a"), row(1, 1, "a"), row(7, 1, "b")},
			"-D (1)"},
		{"nothing to cancel",
			[]types.RowKind{types.UpdateBefore, types.UpdateAfter, types.Insert},
			[]types.Row{row(1, 1, "a"), row(2, 1, "a"), row(2, 1, "a")},
			"-U (1); +U (2); +I (2)"},
	} {
		m := &Map{Exprs: []expr.Expr{&expr.ColumnRef{Index: 0, Typ: types.Int64}}}
		out := &collector{}
		if err := m.Open(newContext(t, heap.New(), out, 0)); err != nil {
			t.Fatal(err)
		}
		c := types.NewChunk(inTypes, len(tc.rows))
		for i, r := range tc.rows {
			c.Append(tc.in[i], r)
		}
		if err := m.Process(0, c); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(out.rows(), "; "); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// A group of equal NUMERICs spelled differently shows the live spelling
// last by exact encoding (invariant key-spelling), whatever the arrival
// order, also after a restore from a checkpoint, and never a spelling
// whose rows were all retracted.
func TestGroupAggKeySpelling(t *testing.T) {
	num := func(s string) types.Row {
		d, err := types.ParseText(types.Numeric, s, nil)
		if err != nil {
			t.Fatal(err)
		}
		return types.Row{d}
	}
	newG := func() *GroupAgg {
		return &GroupAgg{KeyCols: []int{0}, KeyTypes: []types.Type{types.Numeric},
			Aggs: []AggCall{{Spec: agg.Spec{Func: "count"}, FilterCol: -1}}}
	}
	run := func(order []string) []string {
		b := heap.New()
		out := &collector{}
		g := newG()
		if err := g.Open(newContext(t, b, out, 0)); err != nil {
			t.Fatal(err)
		}
		var outs []string
		epoch := func(e base.Epoch) {
			n := len(out.rows())
			if err := g.OnEpoch(e); err != nil {
				t.Fatal(err)
			}
			outs = append(outs, strings.Join(out.rows()[n:], "; "))
		}
		c := types.NewChunk([]types.Type{types.Numeric}, 3)
		for _, s := range order {
			c.Append(types.Insert, num(s))
		}
		if err := g.Process(0, c); err != nil {
			t.Fatal(err)
		}
		epoch(1)
		if err := g.Snapshot(1); err != nil {
			t.Fatal(err)
		}
		snap, err := b.Snapshot(1, nil)
		if err != nil {
			t.Fatal(err)
		}
		// Restart from checkpoint 1, then delete the shown spelling's row.
		restored, err := heap.Restore(snap.Handle, nil)
		if err != nil {
			t.Fatal(err)
		}
		g = newG()
		out = &collector{}
		if err := g.Open(newContext(t, restored, out, 1)); err != nil {
			t.Fatal(err)
		}
		shown := strings.TrimPrefix(strings.Split(outs[0], ",")[0], "+I (")
		c = types.NewChunk([]types.Type{types.Numeric}, 1)
		c.Append(types.Delete, num(shown))
		if err := g.Process(0, c); err != nil {
			t.Fatal(err)
		}
		epoch(2)
		return outs
	}
	a := run([]string{"2.50", "2.5", "2.500"})
	b := run([]string{"2.500", "2.5", "2.50"})
	if strings.Join(a, "|") != strings.Join(b, "|") {
		t.Fatalf("output depends on arrival order: %q vs %q", a, b)
	}
	shown := strings.TrimPrefix(strings.Split(a[0], ",")[0], "+I (")
	next := strings.TrimPrefix(strings.Split(strings.Split(a[1], "; ")[1], ",")[0], "+U (")
	if shown == next || !strings.HasPrefix(a[1], "-U ("+shown+", 3)") || !strings.HasSuffix(a[1], ", 2)") {
		t.Fatalf("after deleting %s's row: %q", shown, a[1])
	}
}

// Consolidate emits an epoch's net changes across its inputs, retractions
// first, and keeps the open epoch's counts across a checkpoint.
func TestConsolidateNetChangesAcrossRestore(t *testing.T) {
	b := heap.New()
	out := &collector{}
	c := &Consolidate{Types: inTypes}
	if err := c.Open(newContext(t, b, out, 0)); err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.Process(0, chunkOf(types.Insert, row(1, 1, "a"), row(2, 2, "b"))))
	must(c.Process(1, chunkOf(types.Insert, row(3, 3, "c"))))
	must(c.OnEpoch(1))
	// Epoch 2: input 0 retracts (1, 1, a), input 1 adds it back; (2, 2, b)
	// goes, (4, 4, d) comes; a checkpoint and a restore in between.
	must(c.Process(0, chunkOf(types.Delete, row(1, 1, "a"), row(2, 2, "b"))))
	must(c.Snapshot(1))
	snap, err := b.Snapshot(1, nil)
	must(err)
	restored, err := heap.Restore(snap.Handle, nil)
	must(err)
	c = &Consolidate{Types: inTypes}
	must(c.Open(newContext(t, restored, out, 1)))
	must(c.Process(1, chunkOf(types.Insert, row(1, 1, "a"), row(4, 4, "d"))))
	n := len(out.rows())
	must(c.OnEpoch(2))
	if got, want := strings.Join(out.rows()[n:], "; "), "-D (2, 2, b); +I (4, 4, d)"; got != want {
		t.Fatalf("epoch 2: %s, want %s", got, want)
	}
	if got, want := strings.Join(out.rows()[:n], "; "), "+I (1, 1, a); +I (2, 2, b); +I (3, 3, c)"; got != want {
		t.Fatalf("epoch 1: %s, want %s", got, want)
	}
}

// Repeat emits a row as often as its count says; a count going from 3 to
// 4 emits the one more copy only, and NULL or zero nothing.
func TestRepeat(t *testing.T) {
	r := &Repeat{Types: []types.Type{types.Int64}}
	out := &collector{}
	if err := r.Open(newContext(t, heap.New(), out, 0)); err != nil {
		t.Fatal(err)
	}
	in := []types.Type{types.Int64, types.Int64}
	c := types.NewChunk(in, 4)
	c.Append(types.Insert, types.Row{types.NewInt64(7), types.NewInt64(2)})
	c.Append(types.Insert, types.Row{types.NewInt64(8), types.Null})
	c.Append(types.Insert, types.Row{types.NewInt64(9), types.NewInt64(0)})
	if err := r.Process(0, c); err != nil {
		t.Fatal(err)
	}
	c = types.NewChunk(in, 2)
	c.Append(types.UpdateBefore, types.Row{types.NewInt64(7), types.NewInt64(3)})
	c.Append(types.UpdateAfter, types.Row{types.NewInt64(7), types.NewInt64(4)})
	if err := r.Process(0, c); err != nil {
		t.Fatal(err)
	}
	if got, want := strings.Join(out.rows(), "; "), "+I (7); +I (7); +I (7)"; got != want {
		t.Fatalf("Repeat: %s, want %s", got, want)
	}
}

// A Map whose expressions are input columns copies them column by column,
// all rows or the filter's; one that only filters selects whole rows; a
// column reference of another type than its column is evaluated row by
// row. Each gives the rows the row-at-a-time evaluation gives.
func TestMapCopiesColumns(t *testing.T) {
	gt, _, err := expr.Builtins.Lookup(">", []types.Type{types.Int64, types.Int64})
	if err != nil {
		t.Fatal(err)
	}
	v := &expr.ColumnRef{Index: 1, Typ: types.Int64, Name: "v"}
	over5 := expr.NewCall(gt, v, &expr.Const{Value: types.NewInt64(5), Typ: types.Int64})
	text := &expr.ColumnRef{Index: 2, Typ: types.Text}
	for _, tc := range []struct {
		name string
		m    *Map
		want string
	}{
		{"columns, all rows", &Map{Exprs: []expr.Expr{text, &expr.ColumnRef{Index: 0, Typ: types.Int64}}}, "+I (a, 1); +I (b, 2); -D (c, 3)"},
		{"columns, filtered", &Map{Filter: over5, Exprs: []expr.Expr{text, v}}, "+I (b, 9)"},
		{"filter only", &Map{Filter: over5}, "+I (2, 9, b)"},
		{"an expression", &Map{Exprs: []expr.Expr{&expr.Cast{Arg: &expr.ColumnRef{Index: 0, Typ: types.Int64}, To: types.Text}}}, "+I (1); +I (2); -D (3)"},
		{"a reference of another type", &Map{Exprs: []expr.Expr{&expr.ColumnRef{Index: 2, Typ: types.Varchar}}}, "+I (a); +I (b); -D (c)"},
	} {
		out := &collector{}
		if err := tc.m.Open(newContext(t, heap.New(), out, 0)); err != nil {
			t.Fatal(err)
		}
		c := types.NewChunk(inTypes, 3)
		c.Append(types.Insert, row(1, 4, "a"))
		c.Append(types.Insert, row(2, 9, "b"))
		c.Append(types.Delete, row(3, 5, "c"))
		if err := tc.m.Process(0, c); err != nil {
			t.Fatal(err)
		}
		if got := strings.Join(out.rows(), "; "); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}
