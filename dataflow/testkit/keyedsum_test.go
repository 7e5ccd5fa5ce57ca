package testkit

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stratadb/strata/dataflow/operator"
	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/internal/types"
)

type collectOutput struct{ chunks []*types.Chunk }

func (o *collectOutput) Emit(c *types.Chunk) error { o.chunks = append(o.chunks, c); return nil }

// TestKeyedSumMatchesMap feeds KeyedSum random chunks (inserts and
// retractions, keys from a few shapes, enough keys to grow the table many
// times) and checks every epoch's output against a map: exactly the keys
// the epoch changed, in key order, with their running sum and count. Now
// and then it snapshots and carries on with a new KeyedSum over the same
// state, as a restore from that snapshot does, so that accumulators come
// back from keyed state and the changed keys from operator state.
func TestKeyedSumMatchesMap(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	out := &collectOutput{}
	ctx := benchContext(out)
	s := NewKeyedSum()
	if err := s.Open(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[int64][2]int64{}
	changed := map[int64]bool{}
	key := func() int64 {
		switch r.IntN(4) {
		case 0:
			return int64(r.IntN(300000)) * 7919 % 150000
		case 1:
			return r.Int64() - r.Int64()
		case 2:
			return int64(r.IntN(64)) << 58
		}
		return -int64(r.IntN(500))
	}
	for round := range 300 {
		n := 1 + r.IntN(2000)
		c := &types.Chunk{Kinds: make([]types.RowKind, n), Cols: []types.Vector{
			{Type: types.Int64, Nulls: make([]bool, n), Ints: make([]int64, n)},
			{Type: types.Int64, Nulls: make([]bool, n), Ints: make([]int64, n)},
		}}
		for i := range n {
			k, v := key(), int64(r.IntN(1000))-500
			c.Kinds[i] = types.RowKind(r.IntN(4))
			c.Cols[0].Ints[i], c.Cols[1].Ints[i] = k, v
			w := want[k]
			if c.Kinds[i].IsRetract() {
				want[k] = [2]int64{w[0] - v, w[1] - 1}
			} else {
				want[k] = [2]int64{w[0] + v, w[1] + 1}
			}
			changed[k] = true
		}
		if err := s.Process(0, c); err != nil {
			t.Fatal(err)
		}
		switch {
		case round%7 == 6:
			out.chunks = nil
			if err := s.OnEpoch(base.Epoch(round)); err != nil {
				t.Fatal(err)
			}
			var got []sumRow
			for _, ch := range out.chunks {
				for i := range ch.Len() {
					if ch.Kinds[i] != types.UpdateAfter {
						t.Fatalf("round %d: row kind %v", round, ch.Kinds[i])
					}
					got = append(got, sumRow{ch.Cols[0].Ints[i], ch.Cols[1].Ints[i], ch.Cols[2].Ints[i]})
				}
			}
			var exp []sumRow
			for k := range changed {
				exp = append(exp, sumRow{k, want[k][0], want[k][1]})
			}
			slices.SortFunc(exp, func(a, b sumRow) int { return cmp.Compare(a.key, b.key) })
			if !slices.Equal(got, exp) {
				t.Fatalf("round %d: epoch output of %d rows differs from the %d expected", round, len(got), len(exp))
			}
			clear(changed)
		case round%11 == 10:
			if err := s.Snapshot(base.CheckpointID(round)); err != nil {
				t.Fatal(err)
			}
			s = NewKeyedSum()
			if err := s.Open(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(want) < 100000 {
		t.Fatalf("only %d keys: the table did not grow enough", len(want))
	}
}

var _ operator.Output = (*collectOutput)(nil)
