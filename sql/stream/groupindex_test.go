package stream

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/dataflow/state"
	"github.com/stratadb/strata/dataflow/state/heap"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
	"github.com/stratadb/strata/sql/agg"
)

// TestFixedIndexMatchesMap drives a fixedIndex and a Go map with the same
// random puts and removes over few distinct hashes (long probe runs that
// wrap around) and checks every key's lookup after each step.
func TestFixedIndexMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	var x fixedIndex
	want := map[fixedKey]*group{}
	keyOf := func(i int) fixedKey {
		return fixedKey{v: [fixedKeyCols]int64{int64(i), -int64(i)}, nulls: uint8(i % 3)}
	}
	// A weak hash makes collisions and wrapped runs common.
	hashOf := func(fk fixedKey) uint64 { return uint64(fk.v[0]%7) * 0x9e3779b97f4a7c15 }
	for step := range 20000 {
		i := rng.IntN(300)
		fk := keyOf(i)
		if gr := want[fk]; gr != nil && rng.IntN(2) == 0 {
			x.remove(gr)
			delete(want, fk)
		} else if gr == nil {
			gr = &group{key: fmt.Sprint(i), fk: fk, fh: hashOf(fk)}
			x.put(gr)
			want[fk] = gr
		}
		if x.len() != len(want) {
			t.Fatalf("step %d: %d groups, want %d", step, x.len(), len(want))
		}
		if step%97 == 0 {
			for j := range 300 {
				fk := keyOf(j)
				if got := x.get(&fk, hashOf(fk)); got != want[fk] {
					t.Fatalf("step %d: key %d found %v, want %v", step, j, got, want[fk])
				}
			}
		}
	}
}

// fixedTypes is the input of the fixed-key tests: four int-family key
// columns (BIGINT, TIMESTAMP, BOOLEAN, INT), all nullable, and a BIGINT
// value.
var fixedTypes = []types.Type{types.Int64, types.Timestamp, types.Bool, types.Int32, types.Int64}

func newFixedAgg(keyCols []int, noFixed bool) *GroupAgg {
	kt := make([]types.Type, len(keyCols))
	for i, c := range keyCols {
		kt[i] = fixedTypes[c]
	}
	return &GroupAgg{
		KeyCols: keyCols, KeyTypes: kt, noFixed: noFixed,
		Aggs: []AggCall{
			{Spec: agg.Spec{Func: "count"}, FilterCol: -1},
			{Spec: agg.Spec{Func: "sum", Args: []types.Type{types.Int64}}, ArgCols: []int{4}, FilterCol: -1},
			{Spec: agg.Spec{Func: "max", Args: []types.Type{types.Int64}}, ArgCols: []int{4}, FilterCol: -1},
			{Spec: agg.Spec{Func: "count", Args: []types.Type{types.Int64}}, ArgCols: []int{4}, FilterCol: 2},
		},
	}
}

// randomFixedRow draws a row of fixedTypes from a domain of about
// groups key values per column, NULLs included.
func randomFixedRow(rng *rand.Rand, groups int) types.Row {
	r := make(types.Row, 5)
	if rng.IntN(10) > 0 {
		r[0] = types.NewInt64(rng.Int64N(int64(groups)) - int64(groups)/2)
	}
	if rng.IntN(10) > 0 {
		r[1] = types.NewTimestamp(rng.Int64N(4) * sec)
	}
	if rng.IntN(10) > 0 {
		r[2] = types.NewBool(rng.IntN(2) == 0)
	}
	if rng.IntN(10) > 0 {
		r[3] = types.NewInt32(int32(rng.IntN(3)))
	}
	r[4] = types.NewInt64(rng.Int64N(100))
	return r
}

// TestGroupAggFixedKeyMatchesEncodedKey runs a GroupAgg that finds groups
// by their fixedKey and one that finds them by their encoded key (the
// path before the index) side by side on random chunks with retractions,
// NULL keys and many groups, checkpointing both and restoring each from
// the other's checkpoint (the state layout is the same), and checks that
// both emit the same chunks, row for row, at every epoch.
func TestGroupAggFixedKeyMatchesEncodedKey(t *testing.T) {
	for _, keyCols := range [][]int{{0}, {0, 1}, {1, 0, 2, 3}} {
		for seed := range uint64(6) {
			rng := rand.New(rand.NewPCG(seed, uint64(len(keyCols))))
			groups := []int{4, 50, 2000}[seed%3]
			var backends [2]state.Backend
			var outs [2]*collector
			var aggs [2]*GroupAgg
			for i := range aggs {
				backends[i], outs[i] = heap.New(), &collector{}
				aggs[i] = newFixedAgg(keyCols, i == 1)
				if err := aggs[i].Open(newContext(t, backends[i], outs[i], 0)); err != nil {
					t.Fatal(err)
				}
			}
			if !aggs[0].fixed || aggs[1].fixed {
				t.Fatalf("keys %v: fixed %v and %v", keyCols, aggs[0].fixed, aggs[1].fixed)
			}
			var seen [2]int
			emitted := 0
			var live, liveAtSnap []types.Row
			var snap [2][]byte
			var snapID base.CheckpointID
			for e := base.Epoch(1); e <= 40; e++ {
				for range rng.IntN(4) {
					c := types.NewChunk(fixedTypes, 0)
					for range rng.IntN(300) {
						if len(live) > 0 && rng.IntN(3) == 0 {
							i := rng.IntN(len(live))
							c.Append([]types.RowKind{types.Delete, types.UpdateBefore}[rng.IntN(2)], live[i])
							live = slices.Delete(live, i, i+1)
							continue
						}
						r := randomFixedRow(rng, groups)
						live = append(live, r)
						c.Append([]types.RowKind{types.Insert, types.UpdateAfter}[rng.IntN(2)], r)
					}
					for _, g := range aggs {
						if err := g.Process(0, c); err != nil {
							t.Fatal(err)
						}
					}
				}
				for _, g := range aggs {
					if err := g.OnEpoch(e); err != nil {
						t.Fatal(err)
					}
				}
				var got [2][]string
				for i, o := range outs {
					for _, ch := range o.chunks[seen[i]:] {
						for r := range ch.Len() {
							got[i] = append(got[i], ch.Kind(r).String()+" "+ch.Row(r).String())
						}
					}
					seen[i] = len(o.chunks)
					emitted += len(got[i])
				}
				if a, b := got[0], got[1]; !slices.Equal(a, b) {
					t.Fatalf("keys %v seed %d epoch %d: fixed key emits\n%v\nencoded key\n%v", keyCols, seed, e, a, b)
				}
				if e%7 == 0 {
					snapID++
					for i, g := range aggs {
						if err := g.Snapshot(snapID); err != nil {
							t.Fatal(err)
						}
						s, err := backends[i].Snapshot(snapID, nil)
						if err != nil {
							t.Fatal(err)
						}
						snap[i] = s.Handle
					}
					liveAtSnap = slices.Clone(live)
				}
				if e%13 == 0 && snap[0] != nil {
					// Restore each from the other's checkpoint; both
					// continue from the same point, so they still agree.
					live = slices.Clone(liveAtSnap)
					for i := range aggs {
						restored, err := heap.Restore(snap[1-i], nil)
						if err != nil {
							t.Fatal(err)
						}
						backends[i] = restored
						aggs[i] = newFixedAgg(keyCols, i == 1)
						if err := aggs[i].Open(newContext(t, restored, outs[i], snapID)); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			if emitted < 200 {
				t.Fatalf("keys %v seed %d: only %d rows emitted", keyCols, seed, emitted)
			}
		}
	}
}

// TestGroupExpiryFixedKeyMatchesEncodedKey runs a windowed GroupAgg with
// expiry that finds groups by their fixedKey and one that finds them by
// their encoded key over the same admitted bids (NULL windows included)
// in multi-row chunks, checkpointing both at every epoch: they emit the
// same rows, hold and free the same number of groups, and both refuse a
// row of a closed window.
func TestGroupExpiryFixedKeyMatchesEncodedKey(t *testing.T) {
	for seed := range uint64(6) {
		epochs := admittedBids(seed, 80)
		var outs [2]*collector
		var aggs [2]*GroupAgg
		for i := range aggs {
			outs[i] = &collector{}
			aggs[i] = newWindowAgg(true)
			aggs[i].noFixed = i == 1
			if err := aggs[i].Open(newContext(t, heap.New(), outs[i], 0)); err != nil {
				t.Fatal(err)
			}
		}
		if !aggs[0].fixed || aggs[1].fixed {
			t.Fatalf("fixed %v and %v", aggs[0].fixed, aggs[1].fixed)
		}
		for e, ep := range epochs {
			c := types.NewChunk(winTypes, len(ep))
			for _, r := range ep {
				c.Append(types.Insert, r.row())
			}
			for _, g := range aggs {
				if err := g.Process(0, c); err != nil {
					t.Fatal(err)
				}
				if err := g.OnEpoch(base.Epoch(e + 1)); err != nil {
					t.Fatal(err)
				}
				if err := g.Snapshot(base.CheckpointID(e + 1)); err != nil {
					t.Fatal(err)
				}
			}
			if a, b := aggs[0].Groups(), aggs[1].Groups(); a != b {
				t.Fatalf("seed %d epoch %d: %d groups held, want %d", seed, e, a, b)
			}
		}
		if a, b := outs[0].rows(), outs[1].rows(); !slices.Equal(a, b) || len(a) < 50 {
			t.Fatalf("seed %d: fixed key emits %d rows\n%v\nencoded key %d\n%v", seed, len(a), a, len(b), b)
		}
		if a, b := aggs[0].FreedGroups(), aggs[1].FreedGroups(); a != b || a == 0 {
			t.Fatalf("seed %d: %d groups freed, want %d", seed, a, b)
		}
		// A bid of a window closed long ago.
		late := types.NewChunk(winTypes, 1)
		late.Append(types.Insert, winRow{auction: 1, us: -100 * sec}.row())
		var errs [2]string
		for i, g := range aggs {
			if err := g.Process(0, late); err != nil {
				errs[i] = err.Error()
			}
		}
		if errs[0] == "" || errs[0] != errs[1] {
			t.Fatalf("seed %d: a row of a closed window: %q, want %q", seed, errs[0], errs[1])
		}
	}
}
