package stream

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

// Top-N input rows: (k BIGINT, v BIGINT, s TEXT) followed by the
// partition key k again, as the planner's Map appends it.
var topTypes = []types.Type{types.Int64, types.Int64, types.Text, types.Int64}

func topRow(k, v int64, s string) types.Row {
	return types.Row{types.NewInt64(k), types.NewInt64(v), types.NewText(s), types.NewInt64(k)}
}

func topChunk(kind types.RowKind, rows ...types.Row) *types.Chunk {
	c := types.NewChunk(topTypes, len(rows))
	for _, r := range rows {
		c.Append(kind, r)
	}
	return c
}

// newTop2 keeps per k the 2 rows of largest v (ties by s ascending), with
// the row number.
func newTop2() *TopN {
	return &TopN{InTypes: topTypes, Width: 3, PartCols: []int{3}, PartTypes: []types.Type{types.Int64},
		Order: []OrderCol{{Col: 1, Type: types.Int64, Desc: true, NullsFirst: true}, {Col: 2, Type: types.Text}},
		N:     2, RankCol: true}
}

func TestTopNRetractionBringsTheNextRowIn(t *testing.T) {
	out := &collector{}
	tn := newTop2()
	if err := tn.Open(newContext(t, heap.New(), out, 0)); err != nil {
		t.Fatal(err)
	}
	n := 0
	step := func(e base.Epoch, chunks ...*types.Chunk) string {
		t.Helper()
		for _, c := range chunks {
			if err := tn.Process(0, c); err != nil {
				t.Fatal(err)
			}
		}
		if err := tn.OnEpoch(e); err != nil {
			t.Fatal(err)
		}
		rows := out.rows()
		s := strings.Join(rows[n:], "; ")
		n = len(rows)
		return s
	}
	if got, want := step(1, topChunk(types.Insert, topRow(1, 5, "a"), topRow(1, 9, "b"), topRow(1, 7, "c"), topRow(2, 1, "x"))),
		"+I (1, 9, b, 1); +I (1, 7, c, 2); +I (2, 1, x, 1)"; got != want {
		t.Fatalf("epoch 1: %s, want %s", got, want)
	}
	// Retracting the top row pushes 7 up and brings 5 in.
	if got, want := step(2, topChunk(types.Delete, topRow(1, 9, "b"))),
		"-D (1, 9, b, 1); -D (1, 7, c, 2); +I (1, 7, c, 1); +I (1, 5, a, 2)"; got != want {
		t.Fatalf("epoch 2: %s, want %s", got, want)
	}
	// A row below the top changes nothing visible.
	if got := step(3, topChunk(types.Insert, topRow(1, 2, "d"))); got != "" {
		t.Fatalf("epoch 3 emitted %s, want nothing", got)
	}
	// An update that moves a row out and back within one epoch, and an
	// insert and delete of a new top row: no net change.
	if got := step(4, topChunk(types.UpdateBefore, topRow(1, 7, "c")), topChunk(types.UpdateAfter, topRow(1, 1, "c")),
		topChunk(types.UpdateBefore, topRow(1, 1, "c")), topChunk(types.UpdateAfter, topRow(1, 7, "c")),
		topChunk(types.Insert, topRow(1, 99, "z")), topChunk(types.Delete, topRow(1, 99, "z"))); got != "" {
		t.Fatalf("epoch 4 emitted %s, want nothing", got)
	}
	// An equal copy of a top row takes rank 2; the old second row leaves.
	if got, want := step(5, topChunk(types.Insert, topRow(1, 7, "c"))), "-D (1, 5, a, 2); +I (1, 7, c, 2)"; got != want {
		t.Fatalf("epoch 5: %s, want %s", got, want)
	}
	// A NULL v sorts first in descending order (Postgres's NULLS FIRST).
	if got, want := step(6, topChunk(types.Insert, types.Row{types.NewInt64(2), types.Null, types.NewText("n"), types.NewInt64(2)})),
		"-D (2, 1, x, 1); +I (2, NULL, n, 1); +I (2, 1, x, 2)"; got != want {
		t.Fatalf("epoch 6: %s, want %s", got, want)
	}
}

// topModel recomputes the top 2 per k with rank from the live rows.
func topModel(live map[int]types.Row) []string {
	byK := map[int64][]types.Row{}
	for _, r := range live {
		byK[r[0].Int64()] = append(byK[r[0].Int64()], r)
	}
	var out []string
	for _, rows := range byK {
		sort.Slice(rows, func(i, j int) bool {
			if a, b := rows[i][1].Int64(), rows[j][1].Int64(); a != b {
				return a > b
			}
			return rows[i][2].Str() < rows[j][2].Str()
		})
		for i, r := range rows[:min(2, len(rows))] {
			out = append(out, fmt.Sprintf("(%d, %d, %s, %d)", r[0].Int64(), r[1].Int64(), r[2].Str(), i+1))
		}
	}
	sort.Strings(out)
	return out
}

// TestTopNRandomWithRestarts feeds random inserts and retractions,
// restarts the operator from snapshots taken at random points (also in the
// middle of epochs) with the input after the snapshot replayed, and
// checks the changelog materializes to the model's top 2 at the end.
func TestTopNRandomWithRestarts(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 77))
		type ev struct {
			kind  types.RowKind
			row   types.Row
			epoch base.Epoch
		}
		var history []ev
		live := map[int]types.Row{}
		var ids []int
		next := 0
		for e := base.Epoch(1); e <= 30; e++ {
			for range rng.IntN(10) {
				if len(ids) > 0 && rng.IntN(3) == 0 {
					i := rng.IntN(len(ids))
					id := ids[i]
					ids = append(ids[:i], ids[i+1:]...)
					history = append(history, ev{kind: types.Delete, row: live[id]})
					delete(live, id)
					continue
				}
				r := topRow(int64(rng.IntN(3)), int64(rng.IntN(8)), fmt.Sprint(next))
				live[next] = r
				ids = append(ids, next)
				next++
				history = append(history, ev{kind: types.Insert, row: r})
			}
			history = append(history, ev{epoch: e})
		}
		backend := state.Backend(heap.New())
		out := &collector{}
		tn := newTop2()
		if err := tn.Open(newContext(t, backend, out, 0)); err != nil {
			t.Fatal(err)
		}
		var snapHandle []byte
		var snapPos, snapOut int
		var snapID base.CheckpointID
		restarts := 0
		for pos := 0; pos < len(history); pos++ {
			e := history[pos]
			if e.epoch != 0 {
				if err := tn.OnEpoch(e.epoch); err != nil {
					t.Fatal(err)
				}
			} else if err := tn.Process(0, topChunk(e.kind, e.row)); err != nil {
				t.Fatalf("seed %d pos %d: %v", seed, pos, err)
			}
			if rng.IntN(5) == 0 {
				snapID++
				if err := tn.Snapshot(snapID); err != nil {
					t.Fatal(err)
				}
				snap, err := backend.Snapshot(snapID, nil)
				if err != nil {
					t.Fatal(err)
				}
				snapHandle, snapPos, snapOut = snap.Handle, pos+1, len(out.chunks)
			}
			if snapHandle != nil && rng.IntN(12) == 0 {
				restored, err := heap.Restore(snapHandle, nil)
				if err != nil {
					t.Fatal(err)
				}
				backend = restored
				out.chunks = out.chunks[:snapOut]
				tn = newTop2()
				if err := tn.Open(newContext(t, backend, out, snapID)); err != nil {
					t.Fatal(err)
				}
				pos = snapPos - 1
				restarts++
			}
		}
		bag := map[string]int{}
		for _, r := range out.rows() {
			if r[0] == '+' {
				bag[r[3:]]++
			} else {
				if bag[r[3:]] == 0 {
					t.Fatalf("seed %d: %s retracts a row not in the view", seed, r)
				}
				bag[r[3:]]--
			}
		}
		var got []string
		for r, n := range bag {
			for range n {
				got = append(got, r)
			}
		}
		sort.Strings(got)
		if want := topModel(live); strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("seed %d after %d restarts:\n%s\nwant\n%s", seed, restarts, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// TestAppendOnlyTopNKeepsOnlyTheTop: over an append-only input, rows
// below the top leave state at the end of each epoch.
func TestAppendOnlyTopNKeepsOnlyTheTop(t *testing.T) {
	backend := heap.New()
	out := &collector{}
	tn := newTop2()
	tn.AppendOnly = true
	ctx := newContext(t, backend, out, 0)
	if err := tn.Open(ctx); err != nil {
		t.Fatal(err)
	}
	for e := range base.Epoch(20) {
		c := topChunk(types.Insert)
		for i := range 10 {
			c.Append(types.Insert, topRow(1, int64(i)*int64(e), fmt.Sprint(e, "/", i)))
		}
		if err := tn.Process(0, c); err != nil {
			t.Fatal(err)
		}
		if err := tn.OnEpoch(e + 1); err != nil {
			t.Fatal(err)
		}
	}
	stored := 0
	if err := tn.st.scan(partKey(nil, topRow(1, 0, ""), []int{3}, []types.Type{types.Int64}), func(types.Row, int64) (bool, error) {
		stored++
		return false, nil
	}); err != nil {
		t.Fatal(err)
	}
	if stored != 2 {
		t.Fatalf("%d rows in state, want the top 2", stored)
	}
	got := map[string]int{}
	for _, r := range out.rows() {
		if r[0] == '+' {
			got[r[3:]]++
		} else {
			got[r[3:]]--
		}
	}
	if got["(1, 171, 19/9, 1)"] != 1 || got["(1, 162, 18/9, 2)"] != 1 || len(out.rows()) == 0 {
		t.Fatalf("final top: %v", got)
	}
	if err := tn.Process(0, topChunk(types.Delete, topRow(1, 171, "19/9"))); err == nil {
		t.Fatal("a retraction into an append-only Top-N was accepted")
	}
}
